// deltavacuum serve: the page's script. Vanilla, no build step. Every POST is JSON to the
// service's own API (same origin), so the API's guard (token or login cookie, Content-Type,
// cross-origin protection) covers the page too.
"use strict";

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body || {});
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = { error: "the service answered " + resp.status }; }
  if (!resp.ok) {
    const err = new Error((data && data.error) || ("HTTP " + resp.status));
    err.status = resp.status;
    err.data = data;
    throw err;
  }
  return data;
}

function $(id) { return document.getElementById(id); }

function showError(el, err) {
  if (!el) { alert(err.message); return; }
  el.textContent = err.message;
  el.hidden = false;
}

function humanBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0, f = n;
  while (Math.abs(f) >= 1024 && i < units.length - 1) { f /= 1024; i++; }
  return i === 0 ? n + " B" : f.toFixed(1) + " " + units[i];
}

function tablePath(id) { return "/api/tables/" + encodeURIComponent(id); }

// Preview: POST .../preview, then open the preview's page.
async function preview(table, button, extra) {
  if (button) button.disabled = true;
  try {
    const res = await api("POST", tablePath(table) + "/preview", {});
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
  const ins = $("inspect");
  if (ins) ins.addEventListener("click", async () => {
    ins.disabled = true;
    try { await api("GET", tablePath(ins.dataset.inspect) + "/inspect"); location.reload(); }
    catch (err) { ins.disabled = false; showError($("action-error"), err); }
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
      location.href = "/runs/" + encodeURIComponent(res.id);
    } catch (err) {
      b.disabled = false;
      showError($("action-error"), err);
    }
  });
}

// The run page polls GET /api/runs/{id}/progress until the run ends.
function setupRun() {
  const card = $("run");
  if (!card) return;
  const id = card.dataset.run;
  const status = $("run-status"), phase = $("run-phase"), bar = $("run-progress"), counts = $("run-counts");
  const cancel = $("cancel");
  if (cancel) cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try { await api("POST", "/api/runs/" + encodeURIComponent(id) + "/cancel", {}); }
    catch (err) { showError($("run-error"), err); }
  });
  function setStatus(s) {
    status.replaceChildren();
    const span = document.createElement("span");
    span.className = "status status-" + s;
    span.textContent = s;
    status.appendChild(span);
    card.dataset.status = s;
  }
  async function poll() {
    let data;
    try { data = await api("GET", "/api/runs/" + encodeURIComponent(id) + "/progress"); }
    catch (err) { showError($("run-error"), err); setTimeout(poll, 2000); return; }
    const run = data.run, p = data.progress;
    setStatus(run.status);
    if (run.status === "RUNNING") {
      if (p) {
        phase.textContent = p.phase;
        card.dataset.phase = p.phase;
        bar.hidden = false;
        bar.max = Math.max(p.candidates, 1);
        bar.value = p.deleted;
        counts.textContent = p.deleted + " of " + p.candidates + " files deleted (" + humanBytes(p.deletedBytes) + ")" +
          (p.failed ? ", " + p.failed + " failed" : "") + " · " + p.listed + " entries listed";
      }
      setTimeout(poll, 400);
      return;
    }
    phase.textContent = "";
    bar.hidden = true;
    if (cancel) cancel.hidden = true;
    const f = run.figures || {};
    counts.textContent = (f.numDeletedFiles || 0) + " files deleted (" + humanBytes(f.sizeOfDeletedData || 0) + ") of " +
      (f.numFilesToDelete || 0) + " planned (" + humanBytes(f.sizeOfDataToDelete || 0) + ")";
    if (run.error) { const e = $("run-error"); e.textContent = run.error; e.hidden = false; }
    if (f.planChanged) {
      $("run-moved").hidden = false;
      preview(run.table, null, "?moved=" + encodeURIComponent(run.id));
      return;
    }
    if (run.recordId) { $("record").textContent = run.recordId; $("undo").hidden = false; }
  }
  poll();
}

// Undo: a dry run first, then the restore.
function setupUndo() {
  const sec = $("undo");
  if (!sec) return;
  const id = sec.dataset.run;
  const dry = $("undo-dry"), run = $("undo-run");
  function show(rep) {
    const verb = rep.dryRun ? "would restore" : "restored";
    $("undo-summary").textContent = (rep.dryRun ? "Dry run: " : "Done: ") + verb + " " + rep.numRestored + " files (" +
      humanBytes(rep.bytesRestored) + ") via " + rep.via + "; " + rep.numPresent + " already there, " +
      rep.numNotRestorable + " not restorable, " + rep.numFailed + " failed.";
    sec.dataset.undo = rep.dryRun ? "dry" : "done";
    const body = $("undo-files");
    body.replaceChildren();
    const files = rep.files || [];
    files.slice(0, 200).forEach((f) => {
      const tr = document.createElement("tr");
      [["Path", f.path], ["Size", humanBytes(f.size)], ["Outcome", f.outcome + (f.why ? ": " + f.why : "")]].forEach(([label, v]) => {
        const td = document.createElement("td");
        td.dataset.label = label;
        td.textContent = v;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    const more = $("undo-more");
    more.hidden = files.length <= 200;
    more.textContent = (files.length - 200) + " more files are not shown.";
    $("undo-report").hidden = false;
  }
  dry.addEventListener("click", async () => {
    dry.disabled = true;
    try {
      const rep = await api("POST", "/api/runs/" + encodeURIComponent(id) + "/undo", { dryRun: true });
      show(rep);
      run.textContent = "Restore " + rep.numRestored + " files";
      run.hidden = false;
    } catch (err) { showError($("undo-error"), err); }
    dry.disabled = false;
  });
  run.addEventListener("click", async () => {
    run.disabled = true;
    try { show(await api("POST", "/api/runs/" + encodeURIComponent(id) + "/undo", {})); run.hidden = true; }
    catch (err) { run.disabled = false; showError($("undo-error"), err); if (err.data && err.data.report) show(err.data.report); }
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
  setupPreviewButtons();
  setupRunNow();
  setupRun();
  setupUndo();
  setupLogin();
});
