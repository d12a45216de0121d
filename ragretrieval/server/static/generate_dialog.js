// The editor's "Generate" dialog: a corpus, a model (required: none is chosen for the user; the last one used on
// this browser is offered), how many questions and an editable prompt; the server asks the model
// (POST /api/v1/question-sets/generate, nothing stored) and the checked questions are handed to `onAdd`.
import { api, el, t } from "./common.js";

const REMEMBERED = "ragretrieval.lastEvaluation";  // the new-evaluation form's memory: the model and its base URL

export function installGenerate(onAdd) {
  const dialog = document.getElementById("generate-dialog");
  const form = document.getElementById("generate-form");
  const prompts = JSON.parse(document.getElementById("default-prompts").textContent);
  const promptBox = form.elements.prompt;
  const preview = document.getElementById("generate-preview");
  const status = document.getElementById("generate-status");
  let generated = [];
  const defaultPrompt = () => prompts[form.elements.language.value];

  form.elements.language.addEventListener("change", () => {
    if (Object.values(prompts).includes(promptBox.value)) promptBox.value = defaultPrompt();
  });

  document.getElementById("open-generate").addEventListener("click", () => {
    if (!promptBox.value) promptBox.value = defaultPrompt();
    try {
      const last = JSON.parse(window.localStorage.getItem(REMEMBERED) || "{}");
      if (!form.elements.model.value && last.openai_model) form.elements.model.value = last.openai_model;
      if (!form.elements.base_url.value && last.base_url) form.elements.base_url.value = last.base_url;
    } catch (error) {
      // storage blocked or spoiled: the fields stay empty
    }
    dialog.showModal();
  });
  document.getElementById("generate-close").addEventListener("click", () => dialog.close());

  document.getElementById("generate-run").addEventListener("click", async () => {
    if (!form.reportValidity()) return;
    const f = form.elements;
    const types = [...form.querySelectorAll('input[name="type"]:checked')].map((box) => box.value);
    if (!types.length) {
      status.textContent = t("Check at least one question type.");
      return;
    }
    const request = { dataset: f.dataset.value, model: f.model.value.trim(), base_url: f.base_url.value.trim() || null,
                      count: Number(f.count.value), per_doc: Number(f.per_doc.value), question_types: types,
                      language: f.language.value, prompt: promptBox.value === defaultPrompt() ? null : promptBox.value };
    const run = document.getElementById("generate-run");
    run.disabled = true;
    status.textContent = t("Asking the model… (one request per document; this can take a minute)");
    preview.replaceChildren();
    try {
      const answer = await api("POST", "/api/v1/question-sets/generate", request);
      generated = answer.questions;
      preview.replaceChildren(...generated.map((q, index) => el("li", { className: "generated" },
        el("label", {}, el("input", { type: "checkbox", checked: true, dataset: { index: String(index) } }),
          el("span", { className: "type" }, q.question_type), " ",
          el("span", { className: "question" }, q.question_text)),
        el("div", { className: "sub" }, q.ground_truth))));
      const failed = answer.failed_documents.length;
      status.textContent = t("{n} question(s) from {documents} document(s).", {
        n: generated.length, documents: answer.counts.documents ?? "?" }) +
        (failed ? ` ${t("{n} document(s) failed.", { n: failed })}` : "");
      document.getElementById("generate-append").disabled = generated.length === 0;
    } catch (error) {
      status.textContent = t("Failed: {reason}", { reason: error.message });
    } finally {
      run.disabled = false;
    }
  });

  document.getElementById("generate-append").addEventListener("click", () => {
    const chosen = [...preview.querySelectorAll("input[type=checkbox]:checked")]
      .map((box) => generated[Number(box.dataset.index)]);
    dialog.close();
    onAdd(chosen);
  });
}
