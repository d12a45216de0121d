// The evaluation pages: the list (polled while any evaluation on it is pending or running), an evaluation's detail
// (its summary polled the same way, with a link when new results are in), the new-evaluation form, and the pause,
// resume and delete buttons of both.
import { api, flash, onDelete, scoreClass, scoreText, when } from "./common.js";

const POLL_MS = 2000;
const ACTIVE = new Set(["PENDING", "RUNNING"]);

// ------------------------------------------------------------------------------------- one evaluation's shown state
function showState(root, e) {
  root.dataset.status = e.status;
  const badge = root.querySelector(".status");
  badge.textContent = e.status;
  badge.className = `status ${e.status.toLowerCase()}`;
  const bar = root.querySelector("progress");
  bar.max = e.total_questions;
  bar.value = e.completed_questions;
  root.querySelector(".count").textContent = `${e.completed_questions} / ${e.total_questions}`;
  root.querySelector(".percent").textContent = `${e.progress} %`;
  const average = root.querySelector(".average .score");
  average.textContent = scoreText(e.average_score);
  average.className = scoreClass(e.average_score);
  for (const name of ["started", "finished"]) {
    const stamp = root.querySelector(`time.${name}`);
    if (stamp) stamp.textContent = when(e[`${name}_at`]);
  }
  const error = root.querySelector(".error-text");
  if (error) {
    error.textContent = e.error || "";
    error.hidden = !e.error;
  }
  const buttons = root.querySelector(".actions") ? root : document;
  for (const button of buttons.querySelectorAll(`button[data-id="${CSS.escape(e.id)}"]`)) {
    if (button.dataset.action === "pause") button.hidden = !ACTIVE.has(e.status);
    if (button.dataset.action === "resume") button.hidden = !["PAUSED", "FAILED"].includes(e.status);
  }
}

// ------------------------------------------------------------------------------------------------------- the list
const table = document.getElementById("evaluations");
if (table) {
  const rowOf = (id) => table.querySelector(`tr.evaluation[data-id="${CSS.escape(id)}"]`);
  const poll = async () => {
    const active = [...table.querySelectorAll("tr.evaluation")].some((row) => ACTIVE.has(row.dataset.status));
    if (active) {
      try {
        const query = new URLSearchParams({ offset: table.dataset.offset, limit: "50" });
        if (table.dataset.status) query.set("status", table.dataset.status);
        const page = await api("GET", `/api/v1/evaluations?${query}`);
        for (const e of page.items) {
          const row = rowOf(e.id);
          if (row) showState(row, e);
        }
      } catch (error) {
        flash(`Could not refresh: ${error.message}`, "error");
      }
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
  onDelete("delete", (id) => `/api/v1/evaluations/${encodeURIComponent(id)}`, (button) => {
    button.closest("tr").remove();
    flash(`Deleted “${button.dataset.name}”.`);
  });
}

// ----------------------------------------------------------------------------------------------------- the detail
const summary = document.getElementById("summary");
if (summary) {
  const id = summary.dataset.id;
  const shown = Number(summary.dataset.completed);
  const poll = async () => {
    if (ACTIVE.has(summary.dataset.status)) {
      try {
        const e = await api("GET", `/api/v1/evaluations/${encodeURIComponent(id)}?limit=0`);
        showState(summary, e);
        summary.querySelector(".finished-count").textContent = String(e.summary.finished);
        document.getElementById("new-results").hidden = e.completed_questions === shown;
      } catch (error) {
        flash(`Could not refresh: ${error.message}`, "error");
      }
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
  onDelete("delete", (eid) => `/api/v1/evaluations/${encodeURIComponent(eid)}`, () => {
    window.location.assign("/evaluations/list");
  });
}

// ------------------------------------------------------------------------------------------- pause and resume
document.addEventListener("click", async (event) => {
  const button = event.target.closest('button[data-action="pause"], button[data-action="resume"]');
  if (!button) return;
  button.disabled = true;
  try {
    const e = await api("POST", `/api/v1/evaluations/${encodeURIComponent(button.dataset.id)}/${button.dataset.action}`);
    const root = summary || button.closest("tr");
    showState(root, e);
    flash(e.status === "PAUSED" ? "Paused: a question being answered is finished and stored." : "Resumed.");
  } catch (error) {
    flash(error.message, "error");
  } finally {
    button.disabled = false;
  }
});

// ------------------------------------------------------------------------------------------------------ the form
const create = document.getElementById("new-evaluation");
if (create) {
  const showSystem = () => {
    const system = create.elements.system.value;
    for (const part of create.querySelectorAll("[data-system]")) part.hidden = part.dataset.system !== system;
  };
  for (const radio of create.elements.system) radio.addEventListener("change", showSystem);
  showSystem();
  create.addEventListener("submit", async (event) => {
    event.preventDefault();
    const f = create.elements;
    const system = f.system.value;
    const value = (name) => (f[name] ? f[name].value.trim() || null : null);  // judges: absent without any
    const generator = system === "openai" ? `openai:${value("openai_model") || "gpt-4o-mini"}`
      : system === "http" ? `http:${value("http_url") || ""}` : "extractive";
    const request = { name: value("name"), dataset: f.dataset.value, question_set_id: f.question_set_id.value,
                      generator, base_url: system === "openai" ? value("base_url") : null,
                      retriever: system === "http" ? null : value("retriever"), judge: value("judge"),
                      judge_model: value("judge_model"), judge_base_url: value("judge_base_url"), options: {} };
    const samples = value("judge_samples"), temperature = value("judge_temperature");
    if (samples !== null && Number(samples) !== 1) request.options.judge_samples = Number(samples);
    if (temperature !== null) request.options.judge_temperature = Number(temperature);
    const submit = create.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const e = await api("POST", "/api/v1/evaluations", request);
      window.location.assign(`/evaluations/${encodeURIComponent(e.id)}`);
    } catch (error) {
      flash(`Not started: ${error.message}`, "error");
      submit.disabled = false;
    }
  });
}
