// What every page's script shares: the API call with the same-origin token, elements built from text only (never
// innerHTML: user text stays text), a status line, dates as the server writes them, and the page's language.

// The page's translations of the scripts' messages (server/i18n.py), English being the key: t("Deleted “{name}”.",
// {name}) fills {placeholders} after the lookup, so a value is never read as a message.
const MESSAGES = JSON.parse(document.getElementById("messages")?.textContent || "{}");
export function t(message, values = {}) {
  const text = Object.hasOwn(MESSAGES, message) ? MESSAGES[message] : message;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
}

export function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

function describe(status, data) {
  if (data && typeof data.message === "string") return data.message;  // the refusal in the page's language
  const detail = data && data.detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).filter((p) => p !== "body").join(" → ")}: ${d.msg}`).join("; ");
  }
  if (typeof detail === "string") return detail;
  return t("the server answered HTTP {status}", { status });
}

// `body`: sent as JSON; bytes (a Uint8Array: a file's content) are sent as they are.
export async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (method !== "GET") options.headers["X-CSRF-Token"] = csrfToken();
  if (body instanceof Uint8Array) {
    options.headers["Content-Type"] = "application/octet-stream";
    options.body = body;
  } else if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw new Error(t("the server cannot be reached ({reason})", { reason: error.message }));
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch (error) {
    data = null;
  }
  if (!response.ok) throw Object.assign(new Error(describe(response.status, data)), { status: response.status });
  return data;
}

// el("li", {className: "x", dataset: {id: "1"}, hidden: true}, "text", child): text children become text nodes.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name in node && typeof value !== "string") node[name] = value;
    else node.setAttribute(name === "className" ? "class" : name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function flash(message, kind = "info", topic = "") {
  const box = document.getElementById("flash");
  box.dataset.topic = topic; // unflash(topic) takes it back once it no longer holds ("Could not refresh")
  box.textContent = message;
  box.className = `flash ${kind}`;
  box.hidden = false;
  if (kind === "info") {
    clearTimeout(flash.timer);
    flash.timer = setTimeout(() => { box.hidden = true; }, 6000);
  }
}

// Hide the message `topic` shows, if it is still the one shown (a refresh that works again clears its failure).
export function unflash(topic) {
  const box = document.getElementById("flash");
  if (box && !box.hidden && box.dataset.topic === topic) box.hidden = true;
}

export function when(stamp) {
  return stamp ? `${stamp.slice(0, 10)} ${stamp.slice(11, 19)}` : "–";
}

export function scoreText(score) {
  if (score === null || score === undefined) return "–";
  return Number.isInteger(score) ? String(score) : score.toFixed(2).replace(/0$/, "");
}

// The score badge's class: s1..s5 by the nearest whole score, "none" without one.
export function scoreClass(score) {
  if (score === null || score === undefined) return "score none";
  return `score s${Math.min(5, Math.max(1, Math.floor(score + 0.5)))}`;
}

// Buttons with data-action="delete" (an evaluation) or "delete-set" (a question set), anywhere on a page.
export function onDelete(action, path, after) {
  document.addEventListener("click", async (event) => {
    const button = event.target.closest(`button[data-action="${action}"]`);
    if (!button) return;
    if (!window.confirm(t("Delete “{name}”? This cannot be undone.", { name: button.dataset.name }))) return;
    button.disabled = true;
    try {
      await api("DELETE", path(button.dataset.id));
      after(button);
    } catch (error) {
      flash(error.message, "error");
      button.disabled = false;
    }
  });
}

// A status as the page names it (PENDING... in English, their translations in another language).
const STATUS_NAMES = { PENDING: t("PENDING"), RUNNING: t("RUNNING"), PAUSED: t("PAUSED"), COMPLETED: t("COMPLETED"),
                       FAILED: t("FAILED") };
export function statusName(status) {
  return STATUS_NAMES[status] || status;
}

// Rows of `table` with a checkbox (data-select="ID", data-name) and a "Delete selected" button before the table:
// the selected ones are deleted in one request to `path` ({"ids": [...]}: all or none), after one confirmation.
export function installBulkDelete(table, path) {
  const bar = table.previousElementSibling;
  const button = bar.querySelector('button[data-action="delete-selected"]');
  const all = table.querySelector('input[data-action="select-all"]');
  const boxes = () => [...table.querySelectorAll("input[data-select]")];
  const update = () => {
    const chosen = boxes().filter((box) => box.checked);
    bar.querySelector(".selected-count").textContent = String(chosen.length);
    button.disabled = chosen.length === 0;
    all.checked = chosen.length > 0 && chosen.length === boxes().length;
  };
  table.addEventListener("change", (event) => {
    if (event.target === all) for (const box of boxes()) box.checked = all.checked;
    update();
  });
  button.addEventListener("click", async () => {
    const chosen = boxes().filter((box) => box.checked);
    const names = chosen.map((box) => `“${box.dataset.name}”`).join(", ");
    if (!window.confirm(t("Delete {n}: {names}? This cannot be undone.", { n: chosen.length, names }))) return;
    button.disabled = true;
    try {
      const answer = await api("POST", path, { ids: chosen.map((box) => box.dataset.select) });
      for (const box of chosen) box.closest("tr").remove();
      flash(t("Deleted {n}.", { n: answer.deleted.length }));
    } catch (error) {
      flash(t("Nothing was deleted: {reason}", { reason: error.message }), "error");
    }
    update();
  });
  update();
}

// Long texts start collapsed (the server marks them): their button shows all of it, or less again.
document.addEventListener("click", (event) => {
  const button = event.target.closest('button[data-action="expand"]');
  if (!button) return;
  const open = button.parentElement.classList.toggle("open");
  button.textContent = open ? t("Show less") : t("Show all");
  button.setAttribute("aria-expanded", String(open));
});
