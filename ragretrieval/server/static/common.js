// What every page's script shares: the API call with the same-origin token, elements built from text only (never
// innerHTML: user text stays text), a status line, and dates as the server writes them.

export function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

function describe(status, data) {
  const detail = data && data.detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).filter((p) => p !== "body").join(" → ")}: ${d.msg}`).join("; ");
  }
  if (typeof detail === "string") return detail;
  return `the server answered HTTP ${status}`;
}

export async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (method !== "GET") options.headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw new Error(`the server cannot be reached (${error.message})`);
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch (error) {
    data = null;
  }
  if (!response.ok) throw new Error(describe(response.status, data));
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

export function flash(message, kind = "info") {
  const box = document.getElementById("flash");
  box.textContent = message;
  box.className = `flash ${kind}`;
  box.hidden = false;
  if (kind === "info") {
    clearTimeout(flash.timer);
    flash.timer = setTimeout(() => { box.hidden = true; }, 6000);
  }
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
    if (!window.confirm(`Delete “${button.dataset.name}”? This cannot be undone.`)) return;
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
