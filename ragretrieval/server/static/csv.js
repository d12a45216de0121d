// Question files read in the browser: CSV as spreadsheets write it (RFC 4180 quoting, a byte-order mark, CRLF or LF,
// line breaks and separators inside quoted cells; comma, semicolon or tab separated) and JSON (a list of questions,
// or {"questions": [...]}). Problems name the line (CSV) or the item (JSON); blank CSV lines are skipped and their
// numbers returned, so the page can say so. The text is already decoded (question_set.js: UTF-8 here, anything else
// by the server).
import { t } from "./common.js";

const COLUMNS = ["question_type", "question_text", "ground_truth"];

function separatorOf(text) {
  const header = text.slice(0, text.search(/\r|\n|$/));
  if (header.includes(",")) return ",";
  if (header.includes(";")) return ";";
  if (header.includes("\t")) return "\t";
  return ",";
}

// Records as [line number of their first line, cells]; a blank line is a record of one empty cell.
export function parseCSV(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const separator = separatorOf(text);
  const records = [];
  let cells = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let start = 1;
  let i = 0;
  const endCell = () => { cells.push(cell); cell = ""; };
  const endRecord = () => {
    endCell();
    records.push([start, cells]);  // a blank line too: the caller reports it
    cells = [];
  };
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
      if (ch === '"') { quoted = false; i += 1; continue; }
      if (ch === "\n" || (ch === "\r" && text[i + 1] !== "\n")) line += 1;
      cell += ch;
      i += 1;
      continue;
    }
    if (ch === '"' && cell === "") { quoted = true; i += 1; continue; }
    if (ch === separator) { endCell(); i += 1; continue; }
    if (ch === "\r" || ch === "\n") {
      endRecord();
      i += ch === "\r" && text[i + 1] === "\n" ? 2 : 1;
      line += 1;
      start = line;
      continue;
    }
    cell += ch;
    i += 1;
  }
  if (quoted) throw new Error(t("line {line}: a quoted cell is not closed", { line: start }));
  if (cell !== "" || cells.length) endRecord();
  return records;
}

function question(item, where) {
  const text = String(item.question_text ?? "").trim();
  if (!text) throw new Error(t("{where}: question_text is empty", { where }));
  const kind = String(item.question_type ?? "").trim().toUpperCase() || "USER_DEFINED";
  if (kind.length > 50) throw new Error(t("{where}: question_type is longer than 50 characters", { where }));
  return { question_type: kind, question_text: text, ground_truth: String(item.ground_truth ?? "") };
}

// {questions, blank}: the questions, and the numbers of the lines that were blank or held only separators.
export function questionsFromCSV(text) {
  const records = parseCSV(text);
  while (records.length && !records[0][1].some((c) => c.trim())) records.shift();  // blank lines before the header
  if (!records.length) throw new Error(t("the file is empty"));
  const header = records[0][1].map((name) => name.trim().toLowerCase());
  const index = Object.fromEntries(COLUMNS.map((name) => [name, header.indexOf(name)]));
  if (index.question_text < 0) {
    throw new Error(t("line 1 must name the columns (question_type, question_text, ground_truth); found: {found}",
                      { found: header.join(", ") }));
  }
  const blank = [];
  const questions = [];
  for (const [line, cells] of records.slice(1)) {
    if (!cells.some((c) => c.trim())) {
      blank.push(line);
      continue;
    }
    const item = {};
    for (const name of COLUMNS) if (index[name] >= 0) item[name] = cells[index[name]] ?? "";
    questions.push(question(item, t("line {line}", { line })));
  }
  return { questions, blank };
}

export function questionsFromJSON(text) {
  let data;
  try {
    data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new Error(t("not valid JSON: {reason}", { reason: error.message }));
  }
  if (data && !Array.isArray(data) && Array.isArray(data.questions)) data = data.questions;
  if (!Array.isArray(data)) throw new Error(t("expected a list of questions, or {\"questions\": [...]}"));
  const questions = data.map((item, number) => {
    const where = t("item {n}", { n: number + 1 });
    if (!item || typeof item !== "object") throw new Error(t("{where}: not an object", { where }));
    return question(item, where);
  });
  return { questions, blank: [] };
}

export function questionsFromFile(name, text) {
  const looksJSON = /\.json$/i.test(name) || /^\ufeff?\s*[[{]/.test(text);
  return looksJSON ? questionsFromJSON(text) : questionsFromCSV(text);
}
