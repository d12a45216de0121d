// Reviewing on an evaluation's page: the cards' filters (a plain GET form: the URL is the filtered view, to share;
// it is sent as soon as a choice changes, without its empty fields), and a reviewer's verdict on a card, saved with
// the version the page showed, so a colleague's verdict saved meanwhile is reported instead of overwritten.
import { api, flash, t } from "./common.js";

const filters = document.getElementById("result-filters");
if (filters) {
  filters.addEventListener("submit", () => {
    for (const field of filters.elements) if (field.name && !field.value) field.disabled = true;
  });
  filters.addEventListener("change", (event) => {
    if (event.target.tagName === "SELECT") filters.requestSubmit();
  });
}

const evaluationId = document.getElementById("live")?.dataset.id;

document.addEventListener("submit", async (event) => {
  const form = event.target.closest("form.annotation");
  if (!form) return;
  event.preventDefault();
  const chosen = form.querySelector('input[type="radio"]:checked');
  if (!chosen) {
    flash(t("Choose correct, partly correct or incorrect first."), "error");
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  const path = `/api/v1/evaluations/${encodeURIComponent(evaluationId)}/results/`
    + `${encodeURIComponent(form.dataset.question)}/annotation`;
  try {
    const saved = await api("PUT", path, { verdict: chosen.value, note: form.elements.note.value,
                                          version: Number(form.dataset.version),
                                          reviewer: localStorage.getItem("rr-reviewer") || "" }); // the review mode's name
    form.dataset.version = String(saved.version);
    form.querySelector(".saved").textContent = t("saved");
    for (const verdict of form.querySelectorAll(".verdict")) {
      verdict.classList.toggle("agrees", verdict.classList.contains(saved.verdict));
    }
    flash(t("Verdict saved."));
  } catch (error) {
    flash(t("Not saved: {reason}", { reason: error.message }), "error");
  } finally {
    button.disabled = false;
  }
});
