// The question-set editor: an editable table of question_type / question_text / ground_truth rows, a file import
// parsed here in the browser (a file that is not UTF-8 is decoded by the server first), the "Generate" dialog
// (generate_dialog.js), and one save (a new set is created with all its questions in one request; an existing one
// sends its whole list back, applied in one transaction, to the same set). A set longer than a page, or a search,
// is shown a page at a time (the server's ?page= and ?q=): then a save sends only what changed, one question at a
// time (changed, deleted and added questions).
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
const paged = Boolean(state.paged);
const removed = []; // ids of the page's questions deleted since the last save (paged: deleted one by one)

function count() {
  const n = paged ? state.total - removed.length + rows.filter((r) => !r.id).length : rows.length;
  document.getElementById("row-count").textContent = t("{n} questions", { n });
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
  select.addEventListener("change", () => { row.question_type = select.value; row.changed = true; changed(); });
  return select;
}

function textArea(row, field, label) {
  const area = el("textarea", { className: field, rows: 2, "aria-label": label });
  area.value = row[field] || "";
  area.addEventListener("input", () => { row[field] = area.value; row.changed = true; changed(); });
  return area;
}

function render() {
  body.replaceChildren(...rows.map((row, index) => {
    const remove = el("button", { type: "button", className: "remove", title: t("delete this question") },
      t("Delete"));
    remove.addEventListener("click", () => {
      if (paged && row.id) removed.push(row.id);
      rows.splice(index, 1);
      changed();
      render();
    });
    const number = rowNumber(row, index);
    return el("tr", { className: "question-row" },
      el("td", { className: "number" }, number),
      el("td", {}, typeSelect(row)),
      el("td", {}, textArea(row, "question_text", t("question {n}", { n: number }))),
      el("td", {}, textArea(row, "ground_truth", t("ground truth {n}", { n: number }))),
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
// a row as the table numbers it: its place in the whole set when the set is paged ("+" for a row added on this page)
function rowNumber(row, index) {
  return paged ? (row.number ? String(row.number) : "+") : String(index + 1);
}

function questionsToSave() {
  const blank = rows.flatMap((r, i) => ((r.question_text || "").trim() || (r.ground_truth || "").trim()
    ? [] : [rowNumber(r, i)]));
  if (blank.length) {
    throw new Error(t("Rows {rows} are empty: write their question or delete them.", { rows: blank.join(", ") }));
  }
  const untold = rows.findIndex((r) => !(r.question_text || "").trim());
  if (untold >= 0) {
    throw new Error(t("Row {n} has a ground truth but no question.", { n: rowNumber(rows[untold], untold) }));
  }
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
    if (paged) {
      await savePage(payload);
    } else if (state.set_id) {
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

// A page of a long set: the set's fields, then each deleted, changed and added question on its own.
async function savePage(payload) {
  const id = encodeURIComponent(state.set_id);
  const { questions, ...fields } = payload;
  await api("PUT", `/api/v1/question-sets/${id}`, fields);
  while (removed.length) {
    await api("DELETE", `/api/v1/question-sets/questions/${encodeURIComponent(removed[0])}`);
    removed.shift();
    state.total -= 1;
  }
  for (const [index, row] of rows.entries()) {
    if (!row.id || !row.changed) continue;
    const { question_type, question_text, ground_truth } = questions[index];
    await api("PUT", `/api/v1/question-sets/questions/${encodeURIComponent(row.id)}`,
      { question_type, question_text, ground_truth });
    row.changed = false;
  }
  const added = rows.filter((r) => !r.id);
  if (added.length) {
    const made = await api("POST", `/api/v1/question-sets/${id}/questions`,
      { questions: questions.filter((q) => !q.id) });
    made.questions.forEach((question, i) => Object.assign(added[i], { id: question.id, changed: false }));
    state.total += added.length;
  }
  dirty = false;
  render();
  flash(t("Saved: {n} questions.", { n: state.total }));
}

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
