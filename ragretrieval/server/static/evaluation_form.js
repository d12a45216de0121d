// The new-evaluation form: the set's own corpus chosen with the set (a warning when another is picked), judges that
// need reference answers warned about (refused when the set has none), the defaults shown as values (rendered by
// the server from the engine's settings, never typed here), the last endpoint and model remembered in this browser,
// and "Run again" (the settings of an earlier evaluation, given by the server) filled in.
import { api, flash, t } from "./common.js";

const form = document.getElementById("new-evaluation");
const f = form.elements;
const REMEMBERED = "ragretrieval.lastEvaluation";  // localStorage: endpoints and models only, never a key
const REMEMBER = ["system", "openai_model", "base_url", "http_url", "retriever", "judge_model", "judge_base_url",
                  "kind", "grid_retriever", "model"];
const again = JSON.parse(document.getElementById("again").textContent);

function setValue(name, value) {
  if (value === null || value === undefined || !f[name]) return;
  if (name === "system" || name === "kind") {
    for (const radio of f[name]) radio.checked = radio.value === value;
  } else if (f[name].tagName === "SELECT" && ![...f[name].options].some((o) => o.value === value)) {
    return;  // a retriever this server no longer has: keep the default
  } else {
    f[name].value = String(value);
  }
}

// ------------------------------------------------------------------------------------------ what answers, shown
function showSystem() {
  const system = f.system.value;
  for (const part of form.querySelectorAll("[data-system]")) {
    part.hidden = !part.dataset.system.split(" ").includes(system);
  }
  showKind();  // which fields are required depends on both
}

// --------------------------------------------------------------------------- answers, or retrieval alone, shown
function showKind() {
  const kind = f.kind.value;
  for (const part of form.querySelectorAll("fieldset[data-kind]")) part.hidden = part.dataset.kind !== kind;
  const answers = kind === "answer";
  f.openai_model.required = answers && f.system.value === "openai";
  f.http_url.required = answers && f.system.value === "http";
  f.ks.required = !answers;
  const embeds = f.grid_retriever.selectedOptions[0]?.dataset.embeds === "yes";
  for (const label of form.querySelectorAll("label[data-embeds]")) label.hidden = !embeds;
}

// ----------------------------------------------------------------------------------------- the set and its corpus
const chosenSet = () => f.question_set_id.selectedOptions[0];
const corpora = new Set([...f.dataset.options].map((o) => o.value));

function followSet() {
  const corpus = chosenSet()?.dataset.corpus;
  if (corpus && corpora.has(corpus)) f.dataset.value = corpus;
  checkCorpus();
  checkReferences();
}

function checkCorpus() {
  const warning = document.getElementById("corpus-warning");
  const corpus = chosenSet()?.dataset.corpus;
  if (!corpus || corpus === f.dataset.value) {
    warning.hidden = true;
    return;
  }
  warning.textContent = (corpora.has(corpus) ? warning.dataset.other : warning.dataset.missing)
    .replace("{corpus}", corpus);
  warning.hidden = false;
}

// ---------------------------------------------------------------------------------- judges needing a reference
function checkReferences() {
  const warning = document.getElementById("reference-warning");
  const set = chosenSet();
  const needing = [...form.querySelectorAll('input[name="judge"]:checked')]
    .filter((box) => box.dataset.needsReference === "yes").map((box) => box.value);
  const missing = Number(set?.dataset.withoutReference || 0);
  const total = Number(set?.dataset.questions || 0);
  const submit = form.querySelector('button[type="submit"]');
  if (!needing.length || !missing) {
    warning.hidden = true;
    submit.dataset.noReference = "";
    return;
  }
  const none = missing >= total;
  const one = needing.length === 1 ? "One" : ""; // "score5 needs", "score5, correctness need"
  warning.textContent = (none ? warning.dataset[`all${one}`] : warning.dataset[`some${one}`])
    .replace("{judges}", needing.join(", "))
    .replace("{missing}", String(missing)).replace("{total}", String(total));
  warning.className = none ? "error-text" : "warning";
  warning.hidden = false;
  submit.dataset.noReference = none ? "yes" : "";
}

// ------------------------------------------------------------------------------------------- filled in at load
if (again) {
  for (const [name, value] of Object.entries(again.fields)) setValue(name, value);
  for (const box of form.querySelectorAll('input[name="judge"]')) box.checked = again.judges.includes(box.value);
} else {
  try {
    const last = JSON.parse(window.localStorage.getItem(REMEMBERED) || "{}");
    for (const name of REMEMBER) setValue(name, last[name]);
  } catch (error) {
    // storage blocked or spoiled: start from the defaults
  }
}
for (const radio of f.system) radio.addEventListener("change", showSystem);
for (const radio of f.kind) radio.addEventListener("change", showKind);
f.grid_retriever.addEventListener("change", showKind);
f.question_set_id.addEventListener("change", followSet);
f.dataset.addEventListener("change", checkCorpus);
for (const box of form.querySelectorAll('input[name="judge"]')) box.addEventListener("change", checkReferences);
showSystem();
showKind();
if (again) {
  checkCorpus();
  checkReferences();
} else {
  followSet();
}

// ------------------------------------------------------------------------------------------------ the request
function gridRequest() {
  const value = (name) => f[name].value.trim() || null;
  const changed = (name) => f[name].value.trim() !== f[name].dataset.default;
  const options = { ...(again ? again.extra_options : {}) };
  const retriever = value("grid_retriever");
  if (f.grid_retriever.selectedOptions[0]?.dataset.embeds === "yes" && changed("model")) options.model = value("model");
  // the cutoffs as the engine's settings take them: a list of numbers ("1, 3" -> [1, 3]); the field's pattern
  // lets only digits and commas through
  if (changed("ks")) options.ks = value("ks").split(",").map((k) => Number(k.trim()));
  // the precision of a local embedding model: one field of the engine's embedding settings
  if (f.grid_retriever.selectedOptions[0]?.dataset.embeds === "yes" && changed("embed_dtype")) {
    options.embed = { ...(options.embed || {}), dtype: value("embed_dtype") };
  }
  for (const name of ["chunk_size", "chunk_overlap", "search_concurrency"]) {
    if (changed(name)) options[name] = Number(f[name].value);
  }
  return { name: value("name"), kind: "retrieval", dataset: f.dataset.value, question_set_id: f.question_set_id.value,
           retriever, options };
}

function request() {
  if (f.kind.value === "retrieval") return gridRequest();
  const value = (name) => f[name].value.trim() || null;
  const system = f.system.value;
  const generator = system === "openai" ? `openai:${value("openai_model")}`
    : system === "http" ? `http:${value("http_url")}` : "extractive";
  const judges = [...form.querySelectorAll('input[name="judge"]:checked')].map((box) => box.value);
  const options = { ...(again ? again.extra_options : {}) };
  const changed = (name) => f[name].value !== f[name].dataset.default;  // a default is left to the server
  if (system !== "http" && changed("context_k")) options.context_k = Number(f.context_k.value);
  if (judges.length && changed("judge_samples")) options.judge_samples = Number(f.judge_samples.value);
  if (judges.length && value("judge_temperature") !== null) {
    options.judge_temperature = Number(f.judge_temperature.value);
  }
  return {
    name: value("name"), dataset: f.dataset.value, question_set_id: f.question_set_id.value, generator,
    base_url: system === "openai" ? value("base_url") : null, retriever: system === "http" ? null : value("retriever"),
    judge: judges.join(",") || null, judge_model: judges.length ? value("judge_model") : null,
    judge_base_url: judges.length ? value("judge_base_url") : null, options,
  };
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const submit = form.querySelector('button[type="submit"]');
  if (submit.dataset.noReference === "yes" && f.kind.value === "answer") {
    flash(document.getElementById("reference-warning").textContent, "error");
    return;
  }
  submit.disabled = true;
  try {
    const created = await api("POST", "/api/v1/evaluations", request());
    try {
      window.localStorage.setItem(REMEMBERED, JSON.stringify(Object.fromEntries(REMEMBER.map((name) => [
        name, name === "system" || name === "kind" ? f[name].value : f[name].value.trim()]))));
    } catch (error) {
      // not remembered: nothing else depends on it
    }
    window.location.assign(`/evaluations/${encodeURIComponent(created.id)}`);
  } catch (error) {
    flash(t("Not started: {reason}", { reason: error.message }), "error");
    submit.disabled = false;
  }
});
