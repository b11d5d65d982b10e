// deltavacuum serve: the page's script. Vanilla, no build step. Every POST is JSON to the
// service's own API (same origin), so the API's guard (token or login cookie, Content-Type,
// cross-origin protection) covers the page too. Its words are the service's catalogue
// (service/messages.go): the layout gives it the messages it uses, in data-messages.
"use strict";

let messages = {};

// msg is message id with its values ({name} in the message).
function msg(id, vals) {
  const m = messages[id];
  if (m === undefined) return "[" + id + "]";
  return m.replace(/\{([a-zA-Z0-9]+)\}/g, (p, name) => (vals && name in vals ? String(vals[name]) : p));
}

// plural is the form of id for the count n (id.one for 1, id.other otherwise), with {n} set.
function plural(id, n, vals) {
  return msg(id + (n === 1 ? ".one" : ".other"), Object.assign({ n: count(n) }, vals || {}));
}

// The page's language (<html lang>): numbers are written as the service writes them in it.
const lang = document.documentElement.lang || "en";

function count(n) { return Number(n).toLocaleString(lang); }

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body || {});
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  if (!resp.ok) {
    const err = new Error((data && data.error) || "");
    err.status = resp.status;
    err.data = data;
    throw err;
  }
  return data;
}

function $(id) { return document.getElementById(id); }

// showError says that a request failed in the page's words (the status it was answered),
// then what the service said, as it said it (in English), marked as such (data-raw).
function showError(el, err) {
  const lead = err.status ? msg("js.error.status", { status: err.status }) : "";
  if (!el) { alert(lead + (lead && err.message ? ": " : "") + err.message); return; }
  el.textContent = lead + (lead && err.message ? ": " : "");
  if (err.message) {
    const raw = document.createElement("span");
    raw.className = "raw";
    raw.lang = "en";
    raw.setAttribute("translate", "no");
    raw.setAttribute("data-raw", "");
    raw.textContent = err.message;
    el.append(raw);
  }
  el.hidden = false;
}

function humanBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0, f = n;
  while (Math.abs(f) >= 1024 && i < units.length - 1) { f /= 1024; i++; }
  return i === 0 ? n + " B" : f.toLocaleString(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1, useGrouping: false }) + " " + units[i];
}

function tablePath(id) { return "/api/tables/" + encodeURIComponent(id); }

// Preview: POST .../preview (with a one-off retention, when body has one), then open the
// preview's page.
async function preview(table, button, extra, body) {
  if (button) button.disabled = true;
  try {
    const res = await api("POST", tablePath(table) + "/preview", body || {});
    location.href = res.previewUrl + (extra || "");
  } catch (err) {
    if (button) button.disabled = false;
    showError($("action-error") || $("page-error"), err);
  }
}

function setupPreviewButtons() {
  document.querySelectorAll("[data-preview]").forEach((b) => {
    b.addEventListener("click", () => preview(b.dataset.preview, b));
  });
  // The table page's form: the retention field, when filled, is a one-off retention. The
  // service checks it (a number, within the table's floor and the safety check): what is not
  // a number is sent as written, for the service to refuse.
  const form = $("preview-form");
  if (form) form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = $("retention").value.trim();
    const body = {};
    if (v !== "") {
      const n = Number(v);
      body.retentionHours = Number.isFinite(n) ? n : v;
    }
    $("action-error").hidden = true;
    preview(form.dataset.table, $("preview"), "", body);
  });
  const ins = $("inspect");
  if (ins) ins.addEventListener("click", async () => {
    ins.disabled = true;
    try { await api("GET", tablePath(ins.dataset.inspect) + "/inspect"); location.reload(); }
    catch (err) { ins.disabled = false; showError($("action-error"), err); }
  });
}

// Pins: the table page's form creates one (POST .../pins), each Unpin button removes one
// (DELETE .../pins/{pin}); the page is then shown again. The service checks every field.
function setupPins() {
  const form = $("pin-form");
  if (form) form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { reason: $("pin-reason").value, hours: Number($("pin-hours").value.trim()) };
    const v = $("pin-version").value.trim();
    if (v !== "") body.version = Number(v);
    else body.timestamp = new Date().toISOString();
    $("pin-error").hidden = true;
    $("pin-create").disabled = true;
    try { await api("POST", tablePath(form.dataset.table) + "/pins", body); location.reload(); }
    catch (err) { $("pin-create").disabled = false; showError($("pin-error"), err); }
  });
  document.querySelectorAll("button.unpin").forEach((b) => {
    b.addEventListener("click", async () => {
      b.disabled = true;
      try { await api("DELETE", tablePath(b.dataset.table) + "/pins/" + encodeURIComponent(b.dataset.pin)); location.reload(); }
      catch (err) { b.disabled = false; showError($("pin-error"), err); }
    });
  });
}

// Run now: the run request carries the preview's plan digest.
function setupRunNow() {
  const b = $("run-now");
  if (!b) return;
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      const res = await api("POST", tablePath(b.dataset.table) + "/runs", { plan: b.dataset.plan });
      location.href = "/runs/" + encodeURIComponent(res.id) + "?started=1";
    } catch (err) {
      b.disabled = false;
      showError($("action-error"), err);
    }
  });
}

// The run page polls GET /api/runs/{id}/progress while the run is in progress, then shows the
// page again: the server says the run's state, its figures and what an undo can do. A run
// whose table changed since its preview deleted nothing: the page opens a new preview.
function setupRun() {
  const card = $("run");
  if (!card) return;
  const id = card.dataset.run;
  const state = $("run-state"), phase = $("run-phase"), bar = $("run-progress"), counts = $("run-counts");
  const cancel = $("cancel");
  if (cancel) cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try { await api("POST", "/api/runs/" + encodeURIComponent(id) + "/cancel", {}); }
    catch (err) { showError($("run-error"), err); }
  });
  // A run just started from a preview is followed even when it ended before the page
  // showed (a table that changed since the preview: the page opens the new preview).
  const started = new URLSearchParams(location.search).has("started");
  if (card.dataset.status !== "RUNNING" && !started) return;
  function setState(s) {
    if (card.dataset.state === s) return;
    const span = document.createElement("span");
    span.className = "state state-" + s.replace(/ /g, "-");
    span.dataset.state = s;
    span.textContent = msg("state." + s);
    state.replaceChildren(span);
    card.dataset.state = s;
    // The detail says the state in words: "Accepted: it is planning…" must not outlive the
    // planning (the page reloads once the run ends, with the ended run's detail).
    if (s === "planned" || s === "running") $("run-detail").textContent = msg("detail." + s);
  }
  async function poll() {
    let data;
    try { data = await api("GET", "/api/runs/" + encodeURIComponent(id) + "/progress"); }
    catch (err) { showError($("run-error"), err); setTimeout(poll, 2000); return; }
    const run = data.run, p = data.progress;
    setState(run.state);
    if (run.status === "RUNNING") {
      if (p) {
        phase.textContent = msg("js.phase." + p.phase);
        card.dataset.phase = p.phase;
        bar.hidden = false;
        bar.max = Math.max(p.candidates, 1);
        bar.value = p.deleted;
        const verb = card.dataset.trash || run.trash ? "js.progress.moved" : "js.progress.deleted";
        counts.textContent = plural(verb, p.candidates, { done: count(p.deleted), bytes: humanBytes(p.deletedBytes) }) +
          (p.failed ? msg("js.progress.failed", { n: count(p.failed) }) : "") + plural("js.progress.listed", p.listed);
      }
      setTimeout(poll, 400);
      return;
    }
    const f = run.figures || {};
    if (f.planChanged) {
      phase.textContent = "";
      bar.hidden = true;
      $("run-moved").hidden = false;
      preview(run.table, null, "?moved=" + encodeURIComponent(run.id));
      return;
    }
    location.replace("/runs/" + encodeURIComponent(id));
  }
  poll();
}

// Undo: the page shows the dry run (?undo=dry); Restore runs the undo, then shows the run
// again with what came back.
function setupUndo() {
  const run = $("undo-run");
  if (!run) return;
  const id = run.dataset.run;
  run.addEventListener("click", async () => {
    run.disabled = true;
    try {
      await api("POST", "/api/runs/" + encodeURIComponent(id) + "/undo", {});
      location.replace("/runs/" + encodeURIComponent(id));
    } catch (err) {
      if (err.data && err.data.report) { location.replace("/runs/" + encodeURIComponent(id)); return; }
      run.disabled = false;
      showError($("undo-error"), err);
    }
  });
}

function setupLogin() {
  const form = $("login");
  if (form) form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", "/api/login", { token: $("token").value });
      location.href = form.dataset.next || "/";
    } catch (err) { showError($("login-error"), err); }
  });
  const out = $("logout");
  if (out) out.addEventListener("click", async () => {
    try { await api("POST", "/api/logout", {}); } finally { location.href = "/login"; }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  try { messages = JSON.parse(document.body.dataset.messages || "{}"); } catch (e) { messages = {}; }
  setupPreviewButtons();
  setupRunNow();
  setupPins();
  setupRun();
  setupUndo();
  setupLogin();
  document.body.dataset.ready = "1"; // the buttons work from now on (the browser tests wait for it)
});
