// The question-set editor: an editable table of question_type / question_text / ground_truth rows, a file import
// parsed here in the browser, the "Generate" dialog, and one save (a new set is created with all its questions in one
// request; an existing one sends its whole list back, applied in one transaction).
import { api, el, flash, onDelete } from "./common.js";
import { questionsFromFile } from "./csv.js";

const TYPES = ["FACTUAL", "INFERENTIAL", "USER_DEFINED"];
const form = document.getElementById("question-set");
const body = document.getElementById("rows");
const setId = form.dataset.id;
let rows = JSON.parse(document.getElementById("initial-questions").textContent);
let dirty = false;

function changed() {
  dirty = true;
  document.getElementById("row-count").textContent = String(rows.length);
}

function typeSelect(row) {
  const select = el("select", { className: "type", "aria-label": "question type" });
  for (const kind of TYPES.includes(row.question_type) ? TYPES : [...TYPES, row.question_type]) {
    select.append(el("option", { value: kind, selected: kind === row.question_type }, kind));
  }
  select.addEventListener("change", () => { row.question_type = select.value; changed(); });
  return select;
}

function textArea(row, field, label) {
  const area = el("textarea", { className: field, rows: 2, "aria-label": label });
  area.value = row[field] || "";
  area.addEventListener("input", () => { row[field] = area.value; changed(); });
  return area;
}

function render() {
  body.replaceChildren(...rows.map((row, index) => {
    const remove = el("button", { type: "button", className: "remove", title: "delete this question" }, "Delete");
    remove.addEventListener("click", () => { rows.splice(index, 1); changed(); render(); });
    return el("tr", { className: "question-row" },
      el("td", { className: "number" }, String(index + 1)),
      el("td", {}, typeSelect(row)),
      el("td", {}, textArea(row, "question_text", `question ${index + 1}`)),
      el("td", {}, textArea(row, "ground_truth", `ground truth ${index + 1}`)),
      el("td", {}, remove));
  }));
  document.getElementById("no-rows").hidden = rows.length > 0;
  document.getElementById("row-count").textContent = String(rows.length);
}

function append(questions, from) {
  rows.push(...questions);
  changed();
  render();
  flash(`Added ${questions.length} question${questions.length === 1 ? "" : "s"} from ${from}.`);
}

document.getElementById("add-row").addEventListener("click", () => {
  rows.push({ question_type: "USER_DEFINED", question_text: "", ground_truth: "" });
  changed();
  render();
  body.lastElementChild.querySelector("textarea.question_text").focus();
});

document.getElementById("import-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (!file) return;
  const limit = Number(form.dataset.maxUpload);
  if (file.size > limit) {
    flash(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB; files up to ${(limit / 1048576).toFixed(1)} MiB can be imported.`, "error");
    return;
  }
  try {
    append(questionsFromFile(file.name, await file.text()), file.name);
  } catch (error) {
    flash(`${file.name}: ${error.message}`, "error");
  }
});

function questionsToSave() {
  const kept = rows.filter((r) => (r.question_text || "").trim() || (r.ground_truth || "").trim());
  const empty = kept.findIndex((r) => !(r.question_text || "").trim());
  if (empty >= 0) throw new Error(`question ${rows.indexOf(kept[empty]) + 1} has a ground truth but no question`);
  return kept.map((r) => {
    const item = { question_type: r.question_type || "USER_DEFINED", question_text: r.question_text.trim(),
                   ground_truth: r.ground_truth || "" };
    if (r.id) item.id = r.id;
    if (r.source_record) item.source_record = r.source_record;
    return item;
  });
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const save = document.getElementById("save");
  const data = new FormData(form);
  let payload;
  try {
    payload = { name: data.get("name").trim(), description: data.get("description"),
                dataset: data.get("dataset") || null, questions: questionsToSave() };
  } catch (error) {
    flash(error.message, "error");
    return;
  }
  save.disabled = true;
  try {
    if (setId) {
      const saved = await api("PUT", `/api/v1/question-sets/${encodeURIComponent(setId)}`, payload);
      rows = saved.questions;
      dirty = false;
      render();
      flash(`Saved: ${saved.question_count} questions.`);
    } else {
      const created = await api("POST", "/api/v1/question-sets", payload);
      dirty = false;
      window.location.assign(`/evaluations/question-sets/${encodeURIComponent(created.id)}?created=1`);
    }
  } catch (error) {
    flash(`Not saved: ${error.message}`, "error");
  } finally {
    save.disabled = false;
  }
});

window.addEventListener("beforeunload", (event) => {
  if (dirty) event.preventDefault();
});

onDelete("delete-set", (id) => `/api/v1/question-sets/${encodeURIComponent(id)}`, () => {
  dirty = false;
  window.location.assign("/evaluations/question-sets");
});

// ------------------------------------------------------------------------------------------------ the Generate dialog
const dialog = document.getElementById("generate-dialog");
const generateForm = document.getElementById("generate-form");
const prompts = JSON.parse(document.getElementById("default-prompts").textContent);
const promptBox = generateForm.elements.prompt;
const preview = document.getElementById("generate-preview");
const status = document.getElementById("generate-status");
let generated = [];

function defaultPrompt() {
  return prompts[generateForm.elements.language.value];
}

generateForm.elements.language.addEventListener("change", () => {
  if (Object.values(prompts).includes(promptBox.value)) promptBox.value = defaultPrompt();
});

document.getElementById("open-generate").addEventListener("click", () => {
  if (!promptBox.value) promptBox.value = defaultPrompt();
  dialog.showModal();
});
document.getElementById("generate-close").addEventListener("click", () => dialog.close());

document.getElementById("generate-run").addEventListener("click", async () => {
  if (!generateForm.reportValidity()) return;
  const f = generateForm.elements;
  const types = [...generateForm.querySelectorAll('input[name="type"]:checked')].map((box) => box.value);
  if (!types.length) { status.textContent = "Check at least one question type."; return; }
  const request = { dataset: f.dataset.value, model: f.model.value.trim(), base_url: f.base_url.value.trim() || null,
                    count: Number(f.count.value), per_doc: Number(f.per_doc.value), question_types: types,
                    language: f.language.value, prompt: promptBox.value === defaultPrompt() ? null : promptBox.value };
  const run = document.getElementById("generate-run");
  run.disabled = true;
  status.textContent = "Asking the model… (one request per document; this can take a minute)";
  preview.replaceChildren();
  try {
    const answer = await api("POST", "/api/v1/question-sets/generate", request);
    generated = answer.questions;
    preview.replaceChildren(...generated.map((q, index) => el("li", { className: "generated" },
      el("label", {}, el("input", { type: "checkbox", checked: true, dataset: { index: String(index) } }),
        el("span", { className: "type" }, q.question_type), " ",
        el("span", { className: "question" }, q.question_text)),
      el("div", { className: "sub" }, q.ground_truth))));
    const failed = answer.failed_documents.length ? `, ${answer.failed_documents.length} document(s) failed` : "";
    status.textContent = `${generated.length} question(s) from ${answer.counts.documents ?? "?"} document(s)${failed}.`;
    document.getElementById("generate-append").disabled = generated.length === 0;
  } catch (error) {
    status.textContent = `Failed: ${error.message}`;
  } finally {
    run.disabled = false;
  }
});

document.getElementById("generate-append").addEventListener("click", () => {
  const chosen = [...preview.querySelectorAll("input[type=checkbox]:checked")]
    .map((box) => generated[Number(box.dataset.index)]);
  dialog.close();
  append(chosen, "the model");
  if (!form.elements.dataset.value) form.elements.dataset.value = generateForm.elements.dataset.value;
});

render();
dirty = false;
if (new URLSearchParams(window.location.search).has("created")) flash("Question set created.");
