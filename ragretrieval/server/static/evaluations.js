// The evaluation list: refreshed from the API every two seconds while an evaluation on the page is pending, running
// or paused (a paused one may be resumed from elsewhere), pause / resume / delete on each row, and rows selected
// for deleting several at once.
import { api, flash, unflash, installBulkDelete, onDelete, scoreClass, scoreText, statusName, t, when } from "./common.js";

const POLL_MS = 2000;
const ACTIVE = new Set(["PENDING", "RUNNING", "PAUSED"]);
const table = document.getElementById("evaluations");

function showState(row, e) {
  row.dataset.status = e.status;
  const badge = row.querySelector(".status");
  badge.textContent = statusName(e.status);
  badge.className = `status ${e.status.toLowerCase()}`;
  const failures = row.querySelector(".with-failures");
  failures.hidden = !e.completed_with_failures;
  failures.title = t("{n} of {total} questions got no answer; the means are over the others",
    { n: e.failed_questions, total: e.total_questions });
  const bar = row.querySelector("progress");
  bar.max = e.total_questions;
  bar.value = e.completed_questions;
  row.querySelector(".count").textContent = `${e.completed_questions} / ${e.total_questions}`;
  row.querySelector(".percent").textContent = `${e.progress} %`;
  const average = row.querySelector(".average .score");
  average.textContent = scoreText(e.average_score);
  average.className = scoreClass(e.average_score);
  row.querySelector("time.finished").textContent = when(e.finished_at);
  const error = row.querySelector(".error-text");
  error.textContent = e.error || "";
  error.title = e.error || "";
  error.hidden = !e.error;
  for (const button of row.querySelectorAll("button[data-action]")) {
    if (button.dataset.action === "pause") button.hidden = !["PENDING", "RUNNING"].includes(e.status);
    if (button.dataset.action === "resume") button.hidden = !["PAUSED", "FAILED"].includes(e.status);
  }
}

if (table) {
  const rowOf = (id) => table.querySelector(`tr.evaluation[data-id="${CSS.escape(id)}"]`);
  const poll = async () => {
    if ([...table.querySelectorAll("tr.evaluation")].some((row) => ACTIVE.has(row.dataset.status))) {
      try {
        const query = new URLSearchParams({ offset: table.dataset.offset, limit: "50" });
        if (table.dataset.status) query.set("status", table.dataset.status);
        if (table.dataset.q) query.set("q", table.dataset.q);
        const page = await api("GET", `/api/v1/evaluations?${query}`);
        for (const e of page.items) {
          const row = rowOf(e.id);
          if (row) showState(row, e);
        }
        unflash("refresh");
      } catch (error) {
        flash(t("Could not refresh: {reason}", { reason: error.message }), "error", "refresh");
      }
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);

  onDelete("delete", (id) => `/api/v1/evaluations/${encodeURIComponent(id)}`, (button) => {
    button.closest("tr").remove();
    flash(t("Deleted “{name}”.", { name: button.dataset.name }));
  });
  installBulkDelete(table, "/api/v1/evaluations/delete");

  // "Compare selected": 2 or 3 checked evaluations, in the order they were checked (the first is the baseline)
  const compare = document.querySelector('button[data-action="compare-selected"]');
  const checked = [];
  table.addEventListener("change", () => {
    const now = [...table.querySelectorAll("input[data-select]")].filter((box) => box.checked)
      .map((box) => box.dataset.select);
    for (const id of [...checked]) if (!now.includes(id)) checked.splice(checked.indexOf(id), 1);
    for (const id of now) if (!checked.includes(id)) checked.push(id);
    const why = compareRefusal(checked);
    compare.disabled = why !== "";
    compare.title = why || t("2 or 3 completed evaluations, the first checked one as the baseline");
  });
  // Why the checked evaluations cannot be compared ("" when they can): said in the button's title, never an error page
  const compareRefusal = (ids) => {
    if (ids.length < 2 || ids.length > 3) return t("2 or 3 completed evaluations, the first checked one as the baseline");
    const rows = ids.map((id) => table.querySelector(`tr[data-id="${CSS.escape(id)}"]`)).filter(Boolean);
    const name = (row) => row.querySelector("input[data-select]").dataset.name;
    const unfinished = rows.find((row) => row.dataset.status !== "COMPLETED");
    if (unfinished) {
      return t("“{name}” is {status}: only completed evaluations can be compared.",
        { name: name(unfinished), status: statusName(unfinished.dataset.status) });
    }
    const other = rows.find((row) => row.dataset.questionSet !== rows[0].dataset.questionSet);
    if (other) {
      return t("“{name}” evaluated another question set than “{first}”: its questions cannot be paired.",
        { name: name(other), first: name(rows[0]) });
    }
    return "";
  };
  compare.addEventListener("click", () => {
    window.location.assign(`/compare?ids=${checked.map(encodeURIComponent).join(",")}`);
  });

  document.addEventListener("click", async (event) => {
    const button = event.target.closest('button[data-action="pause"], button[data-action="resume"]');
    if (!button) return;
    button.disabled = true;
    try {
      const e = await api("POST", `/api/v1/evaluations/${encodeURIComponent(button.dataset.id)}/${button.dataset.action}`);
      showState(button.closest("tr"), e);
      flash(e.status === "PAUSED" ? t("Paused: a question being answered is finished and stored.") : t("Resumed."));
    } catch (error) {
      flash(error.message, "error");
    } finally {
      button.disabled = false;
    }
  });
}
