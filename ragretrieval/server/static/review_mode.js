// The review mode (/evaluations/{id}/review): one answer at a time. Keys 1, 2, 3 give the verdict (correct, partly
// correct, incorrect) and move on to the next answer nobody reviewed; j and k move along the order; Enter goes to the
// next unreviewed one. The card is rendered by the server (/evaluations/{id}/review/card) and put in place whole.
// A verdict is saved with the version the card showed and the reviewer's name (asked once, kept in this browser);
// when a colleague saved one meanwhile (409), the page shows theirs and offers "Keep theirs" or "Use mine". The note
// being typed is kept as a draft in this browser until it is saved, so no move, reload or conflict loses it.
import { csrfToken, el, flash, t } from "./common.js";

const head = document.getElementById("review-head");
const evalId = head.dataset.id;
const order = head.dataset.order;
const nameInput = document.getElementById("reviewer");
const NAME_KEY = "rr-reviewer";
const draftKey = (question) => `rr-note:${evalId}:${question}`;
const verdictNames = () => ({ correct: t("correct"), partly_correct: t("partly correct"), incorrect: t("incorrect") });

nameInput.value = localStorage.getItem(NAME_KEY) || "";
document.getElementById("reviewer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = nameInput.value.trim();
  if (!name) return flash(t("Tell your name once first: it is recorded with every verdict."), "error");
  localStorage.setItem(NAME_KEY, name);
  nameInput.blur();
  flash(t("Saved: your verdicts are recorded as {name}.", { name }));
});

const card = () => document.getElementById("review-item");

function restoreDraft() {
  const item = card();
  if (!item) return;
  const note = document.getElementById("review-note");
  const draft = localStorage.getItem(draftKey(item.dataset.question));
  if (draft !== null && draft !== note.value) {
    note.value = draft;
    note.classList.add("draft");
    note.title = t("your note, not saved yet");
  }
  note.addEventListener("input", () => localStorage.setItem(draftKey(item.dataset.question), note.value));
}

async function load(params) {
  const query = new URLSearchParams({ order, ...params });
  const response = await fetch(`/evaluations/${encodeURIComponent(evalId)}/review/card?${query}`,
                               { credentials: "same-origin" });
  if (!response.ok) return flash(t("the server answered HTTP {status}", { status: response.status }), "error");
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const box = document.getElementById("review-card");
  box.replaceChildren(...[...fresh.body.childNodes].map((node) => document.adoptNode(node)));
  const item = card();
  const url = new URL(window.location.href);
  url.searchParams.set("order", order);
  if (item) url.searchParams.set("q", item.dataset.question);
  else url.searchParams.delete("q");
  history.replaceState(null, "", url);
  restoreDraft();
}

async function put(question, body) {
  const response = await fetch(
    `/api/v1/evaluations/${encodeURIComponent(evalId)}/results/${encodeURIComponent(question)}/annotation`,
    { method: "PUT", credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body) });
  let data = null;
  try { data = await response.json(); } catch (error) { data = null; }
  return { status: response.status, data };
}

async function saved(question) {
  localStorage.removeItem(draftKey(question));
  flash(t("Verdict saved."));
  await load({ after: question });
}

function showConflict(question, mine, theirs) {
  const box = document.getElementById("review-conflict");
  const names = verdictNames();
  const who = theirs.reviewer || t("someone");
  box.replaceChildren(
    el("p", {}, t("{who} saved “{verdict}” meanwhile (your verdict: “{mine}”).",
                  { who, verdict: names[theirs.verdict], mine: names[mine.verdict] })),
    theirs.note ? el("p", { className: "their-note" }, t("Their note: {note}", { note: theirs.note })) : null,
    mine.note ? el("p", { className: "my-note" }, t("Your note is kept: {note}", { note: mine.note })) : null,
    el("div", { className: "toolbar" },
       el("button", { type: "button", dataset: { resolve: "theirs" } }, t("Keep theirs")),
       el("button", { type: "button", className: "primary", dataset: { resolve: "mine" } }, t("Use mine"))));
  box.hidden = false;
  box.onclick = async (event) => {
    const choice = event.target.closest("button[data-resolve]")?.dataset.resolve;
    if (choice === "theirs") {
      await load({ q: question }); // their verdict shown; the note typed stays in the box as a draft
      flash(t("Their verdict is kept; your note is still in the note box, not saved."));
    } else if (choice === "mine") {
      const again = await put(question, { ...mine, version: theirs.version });
      if (again.status === 200) await saved(question);
      else flash(t("Not saved: {reason}", { reason: again.data?.detail || again.status }), "error");
    }
  };
}

async function give(verdict) {
  const item = card();
  if (!item) return;
  const reviewer = localStorage.getItem(NAME_KEY) || "";
  if (!reviewer) {
    nameInput.focus();
    return flash(t("Tell your name once first: it is recorded with every verdict."), "error");
  }
  const question = item.dataset.question;
  const mine = { verdict, note: document.getElementById("review-note").value, reviewer };
  const result = await put(question, { ...mine, version: Number(item.dataset.version) });
  if (result.status === 200) return saved(question);
  if (result.status === 409) {
    const fresh = await fetch(`/api/v1/evaluations/${encodeURIComponent(evalId)}/review/items/`
                              + `${encodeURIComponent(question)}?order=${order}`, { credentials: "same-origin" });
    const theirs = fresh.ok ? (await fresh.json()).result.annotation : null;
    if (theirs) return showConflict(question, mine, theirs);
  }
  const detail = result.data?.detail;
  flash(t("Not saved: {reason}", { reason: typeof detail === "string" ? detail : result.status }), "error");
}

function move(where) {
  const item = card();
  if (!item) return load({});
  if (where === "unreviewed") return load({ after: item.dataset.question });
  const target = item.dataset[where];
  if (target) return load({ q: target });
  return null;
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("input, textarea, select")) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.target.closest("button, a") && (event.key === "Enter" || event.key === " ")) return;
  const verdict = { 1: "correct", 2: "partly_correct", 3: "incorrect" }[event.key];
  if (verdict) give(verdict);
  else if (event.key === "j") move("next");
  else if (event.key === "k") move("previous");
  else if (event.key === "Enter") move("unreviewed");
  else return;
  event.preventDefault();
});

document.getElementById("review-card").addEventListener("click", (event) => {
  const verdict = event.target.closest("button[data-verdict]")?.dataset.verdict;
  if (verdict) return give(verdict);
  const where = event.target.closest("button[data-move]")?.dataset.move;
  if (where) move(where);
  return null;
});

restoreDraft();
