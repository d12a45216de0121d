// An evaluation's detail page. Its live part (heading, summary, score filter: #live) is rendered by the server from
// one snapshot of the evaluation; while the evaluation is pending, running or paused this script fetches that part
// again every two seconds (/evaluations/{id}/live) and puts it in place whole, so every figure on it comes from the
// same moment. It stops once the evaluation is completed or failed, after showing that last state (with its stored
// run). Also: a link when new results are in, pause / resume / delete, and correcting a failed or paused run's
// endpoint, then resuming it.
import { api, flash, onDelete, t, unflash } from "./common.js";

const POLL_MS = 2000;
let live = document.getElementById("live");
const id = live.dataset.id;
const shownCount = Number(live.dataset.completed);
const filters = new URLSearchParams(window.location.search);  // the cards' filters: the live part's links keep them
filters.delete("page");
let timer = null;

async function refresh() {
  const query = filters.toString() ? `?${filters}` : "";
  const response = await fetch(`/evaluations/${encodeURIComponent(id)}/live${query}`, { credentials: "same-origin" });
  if (!response.ok) throw new Error(t("the server answered HTTP {status}", { status: response.status }));
  // server-rendered, every value escaped there; parsed inert (no script runs) and put in place as nodes
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("live");
  if (!fresh) throw new Error(t("the server answered HTTP {status}", { status: response.status }));
  live.replaceWith(document.adoptNode(fresh));
  live = fresh;
  const completed = Number(live.dataset.completed);
  document.getElementById("new-results").hidden = Number.isNaN(completed) || completed === shownCount;
  const endpoint = document.getElementById("endpoint");
  if (endpoint) endpoint.hidden = !["FAILED", "PAUSED"].includes(live.dataset.status);
}

function schedule() {
  clearTimeout(timer);
  if (live.dataset.live === "yes") timer = setTimeout(poll, POLL_MS);
}

async function poll() {
  try {
    await refresh();
    unflash("refresh");
  } catch (error) {
    flash(t("Could not refresh: {reason}", { reason: error.message }), "error", "refresh");
  }
  schedule();
}

schedule();

document.addEventListener("click", async (event) => {
  const button = event.target.closest('button[data-action="pause"], button[data-action="resume"]');
  if (!button) return;
  button.disabled = true;
  try {
    const e = await api("POST", `/api/v1/evaluations/${encodeURIComponent(id)}/${button.dataset.action}`);
    flash(e.status === "PAUSED" ? t("Paused: a question being answered is finished and stored.") : t("Resumed."));
    await refresh();
  } catch (error) {
    flash(error.message, "error");
  } finally {
    button.disabled = false;
    schedule();
  }
});

onDelete("delete", (eid) => `/api/v1/evaluations/${encodeURIComponent(eid)}`, () => {
  window.location.assign("/evaluations/list");
});

// ------------------------------------------------------------------------------ a failed run's endpoint, corrected
const endpointForm = document.getElementById("endpoint-form");
if (endpointForm) {
  endpointForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const fields = endpointForm.elements;
    const body = {};
    if (fields.http_url) body.generator = `http:${fields.http_url.value.trim()}`;
    if (fields.base_url) body.base_url = fields.base_url.value.trim() || null;
    if (fields.judge_base_url) body.judge_base_url = fields.judge_base_url.value.trim() || null;
    const save = endpointForm.querySelector('button[type="submit"]');
    save.disabled = true;
    try {
      await api("PATCH", `/api/v1/evaluations/${encodeURIComponent(id)}`, body);
    } catch (error) {
      flash(t("Not saved: {reason}", { reason: error.message }), "error");
      save.disabled = false;
      return;
    }
    try {
      await api("POST", `/api/v1/evaluations/${encodeURIComponent(id)}/resume`);
      flash(t("Saved and resumed: the questions left are asked at the new endpoint."));
    } catch (error) {
      flash(t("Saved, but not resumed: {reason}", { reason: error.message }), "error");
    }
    save.disabled = false;
    await refresh().catch(() => {});
    schedule();
  });
}
