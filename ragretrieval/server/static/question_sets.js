// The question-set list: delete a set (refused with the server's message while an evaluation uses it), delete the
// selected sets at once, and open a corpus's own questions as a set.
import { api, flash, installBulkDelete, onDelete, t } from "./common.js";

onDelete("delete-set", (id) => `/api/v1/question-sets/${encodeURIComponent(id)}`, (button) => {
  button.closest("tr").remove();
  flash(t("Deleted “{name}”.", { name: button.dataset.name }));
});
const table = document.getElementById("question-sets");
if (table) installBulkDelete(table, "/api/v1/question-sets/delete");

document.addEventListener("click", async (event) => {
  const button = event.target.closest('button[data-action="open-dataset"]');
  if (!button) return;
  button.disabled = true;
  try {
    const opened = await api("POST", "/api/v1/question-sets/from-dataset", { dataset: button.dataset.dataset });
    window.location.assign(`/evaluations/question-sets/${encodeURIComponent(opened.id)}`);
  } catch (error) {
    flash(error.message, "error");
    button.disabled = false;
  }
});
