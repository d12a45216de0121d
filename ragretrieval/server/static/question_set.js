// The question-set editor: an editable table of question_type / question_text / ground_truth rows, a file import
// parsed here in the browser (a file that is not UTF-8 is decoded by the server first), the "Generate" dialog
// (generate_dialog.js), and one save (a new set is created with all its questions in one request; an existing one
// sends its whole list back, applied in one transaction, to the same set).
import { api, el, flash, onDelete, t } from "./common.js";
import { questionsFromFile } from "./csv.js";
import { installGenerate } from "./generate_dialog.js";

const TYPES = ["FACTUAL", "INFERENTIAL", "USER_DEFINED"];
// Not form.dataset: the form has a control named "dataset", which hides the element's own dataset property.
const state = JSON.parse(document.getElementById("editor-state").textContent);
const form = document.getElementById("question-set");
const body = document.getElementById("rows");
let rows = JSON.parse(document.getElementById("initial-questions").textContent);
let dirty = false;

function count() {
  document.getElementById("row-count").textContent = t("{n} questions", { n: rows.length });
}

function changed() {
  dirty = true;
  count();
}

function typeSelect(row) {
  const select = el("select", { className: "type", "aria-label": t("question type") });
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
    const remove = el("button", { type: "button", className: "remove", title: t("delete this question") },
      t("Delete"));
    remove.addEventListener("click", () => { rows.splice(index, 1); changed(); render(); });
    return el("tr", { className: "question-row" },
      el("td", { className: "number" }, String(index + 1)),
      el("td", {}, typeSelect(row)),
      el("td", {}, textArea(row, "question_text", t("question {n}", { n: index + 1 }))),
      el("td", {}, textArea(row, "ground_truth", t("ground truth {n}", { n: index + 1 }))),
      el("td", {}, remove));
  }));
  document.getElementById("no-rows").hidden = rows.length > 0;
  count();
}

function append(questions, message) {
  rows.push(...questions);
  changed();
  render();
  flash(message);
}

document.getElementById("add-row").addEventListener("click", () => {
  rows.push({ question_type: "USER_DEFINED", question_text: "", ground_truth: "" });
  changed();
  render();
  body.lastElementChild.querySelector("textarea.question_text").focus();
});

// ------------------------------------------------------------------------------------------------------ the import
// The file's text: UTF-8 is read here; other bytes go to the server, whose charset detector converts them (with a
// notice) or says to save the file as "CSV UTF-8".
async function fileText(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), notice: "" };
  } catch (error) {
    const decoded = await api("POST", `/api/v1/question-sets/decode?name=${encodeURIComponent(file.name)}`, bytes);
    return { text: decoded.text,
             notice: t("{name} is not UTF-8: it was read as {encoding} and converted.",
                       { name: file.name, encoding: decoded.encoding.toUpperCase().replace("_", "-") }) };
  }
}

document.getElementById("import-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (!file) return;
  const limit = state.max_upload;
  if (file.size > limit) {
    flash(t("{name} is {size} MiB; files up to {limit} MiB can be imported.", {
      name: file.name, size: (file.size / 1048576).toFixed(1), limit: (limit / 1048576).toFixed(1) }), "error");
    return;
  }
  try {
    const { text, notice } = await fileText(file);
    const { questions, blank } = questionsFromFile(file.name, text);
    const parts = [t("Added {n} question(s) from {name}.", { n: questions.length, name: file.name })];
    if (blank.length) parts.push(t("Blank lines skipped: {lines}.", { lines: blank.join(", ") }));
    if (notice) parts.push(notice);
    append(questions, parts.join(" "));
  } catch (error) {
    flash(`${file.name}: ${error.message}`, "error");
  }
});

// -------------------------------------------------------------------------------------------------------- saving
function questionsToSave() {
  const blank = rows.flatMap((r, i) => ((r.question_text || "").trim() || (r.ground_truth || "").trim() ? [] : [i + 1]));
  if (blank.length) {
    throw new Error(t("Rows {rows} are empty: write their question or delete them.", { rows: blank.join(", ") }));
  }
  const untold = rows.findIndex((r) => !(r.question_text || "").trim());
  if (untold >= 0) throw new Error(t("Row {n} has a ground truth but no question.", { n: untold + 1 }));
  return rows.map((r) => {
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
    if (state.set_id) {
      const saved = await api("PUT", `/api/v1/question-sets/${encodeURIComponent(state.set_id)}`, payload);
      rows = saved.questions;
      dirty = false;
      render();
      flash(t("Saved: {n} questions.", { n: saved.question_count }));
    } else {
      const created = await api("POST", "/api/v1/question-sets", payload);
      dirty = false;
      window.location.assign(`/evaluations/question-sets/${encodeURIComponent(created.id)}?created=1`);
    }
  } catch (error) {
    flash(t("Not saved: {reason}", { reason: error.message }), "error");
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

installGenerate((questions) => {
  append(questions, t("Added {n} question(s) from the model.", { n: questions.length }));
  if (!form.elements.dataset.value) form.elements.dataset.value = document.getElementById("generate-form").elements.dataset.value;
});

render();
dirty = false;
if (new URLSearchParams(window.location.search).has("created")) {
  flash(t("Question set created."));
  const url = new URL(window.location.href); // said once: a reload or a bookmark of the page does not say it again
  url.searchParams.delete("created");
  history.replaceState(history.state, "", url.toString());
}
