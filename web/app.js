// plotq status page. Talks to the real API (docs/api.md). Everything the server sends is
// inserted as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { session: null, turn: null, lastId: 0, done: true, controller: null, retryAfter: 0 };

const STEP_LABELS = {
  ready: "ready", queued: "queued", validating: "checking", running: "running",
  rendering: "rendering", done: "done",
};
// What a person reads for each code: the server's one table (GET /v1/sentences,
// server/sentences.cpp), read once at load; until it arrives (or if it cannot), the code itself.
let SENTENCES = {};
async function loadSentences() {
  try {
    const r = await api("GET", "/v1/sentences");
    if (r.ok && r.data && typeof r.data === "object") SENTENCES = r.data;
  } catch (_) { /* the codes stand in */ }
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function headers(extra) {
  return Object.assign({ "X-Plotq-User": $("user").value.trim() || "dev" }, extra || {});
}

async function api(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (_) { /* not JSON */ }
  return { ok: res.ok, status: res.status, data };
}

// ---- session -----------------------------------------------------------------------------
async function newSession() {
  const r = await api("POST", "/v1/sessions");
  if (!r.ok) { note(problemText(r.data && r.data.detail)); return; }
  state.session = r.data.id;
  $("session-id").textContent = "session " + state.session;
  $("turns").replaceChildren();
  $("versions").replaceChildren();
  $("no-data").hidden = false;
  $("send").disabled = false;
  $("paste-send").disabled = false;
  $("paste-note").textContent = "";
  note("");
}

// The libraries plotq draws (GET /v1/libraries, runs/libraries.hpp): the ones this node draws now
// are offered; the others are listed, disabled, so the page never offers a library that fails.
async function loadLibraries() {
  try {
    const r = await api("GET", "/v1/libraries");
    if (!r.ok || !r.data || !Array.isArray(r.data.libraries)) return;
    const select = $("library");
    select.replaceChildren();
    for (const lib of r.data.libraries) {
      const o = el("option", null, `${lib.name} (${lib.language})`);
      o.value = lib.name;
      o.disabled = !lib.available;
      select.append(o);
    }
    const first = r.data.libraries.find((l) => l.available);
    if (first) select.value = first.name;
  } catch (_) { /* the list stays empty: the plot mode cannot be sent */ }
}

function note(text) { $("form-note").textContent = text || ""; }
function problemText(code) { return SENTENCES[code] || (code ? "Refused: " + code : "Request failed."); }

// ---- pasting a table -----------------------------------------------------------------------

async function paste(ev) {
  ev.preventDefault();
  if (!state.session) return;
  const r = await api("POST", `/v1/sessions/${state.session}/datasets`, { text: $("paste").value });
  if (!r.ok) {
    const code = r.data && r.data.detail;
    $("paste-note").textContent = problemText(code);
    return;
  }
  $("paste-note").textContent = `Added version ${r.data.version}: ${r.data.rows} rows × ${r.data.cols} columns.`;
  $("paste").value = "";
  loadVersions();
}

// ---- turns -------------------------------------------------------------------------------
function turnView(text) {
  const li = el("li", "turn");
  li.append(el("div", "you", text || "(no text)"));
  const steps = el("ul", "steps");
  const body = el("div", "body");
  li.append(steps, body);
  $("turns").append(li);
  li.scrollIntoView({ block: "end" });
  return { li, steps, body, stepEls: {} };
}

function markStep(view, step, label) {
  for (const s of Object.values(view.stepEls)) s.classList.remove("current");
  let s = view.stepEls[step];
  if (!s) { s = el("li", "step"); view.stepEls[step] = s; view.steps.append(s); }
  s.textContent = label || STEP_LABELS[step] || step;
  s.classList.add(step === "done" ? "done" : "current");
}

function showEvent(view, name, data) {
  switch (name) {
    case "ready": markStep(view, "ready"); break;
    case "status":
      pollStatus();  // the slot line follows the turn's own steps (and done), not only the 2 s poll
      if (data.step === "queued") markStep(view, "queued", `queued: ${data.position} of ${data.waiting}`);
      else markStep(view, data.step, (STEP_LABELS[data.step] || data.step) + (data.attempt > 1 ? ` (try ${data.attempt})` : ""));
      break;
    case "dataset": view.body.append(datasetCard(data, true)); loadVersions(); break;
    case "plot": view.body.append(plotView(data)); break;
    case "message": view.body.append(el("div", "reply", data.text)); break;
    case "refusal": {
      // The server's own words (e.g. why a snippet was not run) follow the fixed sentence.
      const p = el("div", "problem", problemText(data.code));
      if (typeof data.text === "string" && data.text) p.append(el("div", "why", data.text));
      view.body.append(p);
      break;
    }
    case "error": {
      const p = el("div", "problem", problemText(data.code));
      if (data.ref) p.append(el("span", "muted", ` (ref ${data.ref})`));
      view.body.append(p);
      break;
    }
    case "closing": note("The server is restarting. This turn goes on; the page reconnects by itself."); break;
    case "done": markStep(view, "done"); pollStatus(); break;
    default: break;
  }
}

function plotView(data) {
  const wrap = el("div", "plots");
  for (const [theme, p] of Object.entries(data.themes || {})) {
    const fig = el("figure");
    const img = el("img");
    img.alt = `plot, ${theme} theme`;
    if (typeof p.url === "string" && p.url.startsWith("/")) img.src = p.url;  // same origin only
    fig.append(img, el("figcaption", null, `${theme}: ${p.width}×${p.height}`));
    wrap.append(fig);
  }
  return wrap;
}

// Reads an SSE body (fetch stream) frame by frame.
async function readStream(res, view) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = "message", id = null, data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (field === "event") name = val;
        else if (field === "id") id = val;
        else if (field === "data") data += (data ? "\n" : "") + val;
      }
      if (!data) continue;
      if (id !== null) state.lastId = Number(id);
      let parsed = {};
      try { parsed = JSON.parse(data); } catch (_) { continue; }
      if (name === "ready" && parsed.turn) state.turn = parsed.turn;
      if (name === "closing") state.retryAfter = Number(parsed.retry_after_s) || 1;
      showEvent(view, name, parsed);
      if (name === "done") { state.done = true; return true; }
    }
  }
  return state.done;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Milliseconds before the next try: 1, 2, 4, 8 ... seconds as tries fail in a row, never more
// than a draining server's hint (its closing event's retry_after_s or a 503's Retry-After: when it
// will surely be back) and never more than 30 s. A restart that is quicker than its hint is found.
function retryDelay(failures, hint) {
  const cap = Math.min(30, Math.max(1, Number(hint) || 30));
  return Math.min(cap, 2 ** Math.min(failures, 5)) * 1000;
}

async function follow(res, view) {
  // Reconnect with Last-Event-ID until the turn's done event arrived. A server that drains ends
  // the stream with `closing` and answers a resume 503 with Retry-After until it is back (or
  // another instance answers); a server that is down refuses the connection: both are retried.
  let failures = 0;
  for (let attempt = 0; attempt < 60; ++attempt) {
    if (res) {
      let finished = false;
      try { finished = await readStream(res, view); } catch (_) { finished = false; }
      if (finished || !state.turn) break;
      failures = 0;
    }
    await sleep(retryDelay(failures++, state.retryAfter));
    res = null;
    try {
      const next = await fetch(`/v1/sessions/${state.session}/turns/${state.turn}/events`,
        { headers: headers({ "Last-Event-ID": String(state.lastId) }) });
      if (next.status === 503) state.retryAfter = next.headers.get("Retry-After");
      else if (!next.ok) break;
      else res = next;
    } catch (_) { /* not reachable: try again */ }
  }
  state.retryAfter = 0;
  if (state.done) note("");
  turnEnded();
}

function turnEnded() {
  state.done = true;
  $("send").disabled = !state.session;
  $("cancel").disabled = true;
}

async function send(ev) {
  ev.preventDefault();
  if (!state.session || !state.done) return;
  const mode = document.querySelector("input[name=mode]:checked").value;
  const body = { text: $("text").value };
  if (mode === "data") body.action = { kind: "data", code: $("code").value, source_language: "python" };
  if (mode === "plot") {
    const themes = [];
    if ($("theme-light").checked) themes.push("light");
    if ($("theme-dark").checked) themes.push("dark");
    body.action = { kind: "plot", code: $("code").value, library: $("library").value, themes };
  }
  const view = turnView(body.text || (body.action ? `(${mode})` : ""));
  state.done = false; state.turn = null; state.lastId = 0;
  $("send").disabled = true;
  $("cancel").disabled = false;
  note("");
  let res;
  try {
    res = await fetch(`/v1/sessions/${state.session}/messages`,
      { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) });
  } catch (_) {
    view.body.append(el("div", "problem", "The server cannot be reached."));
    turnEnded();
    return;
  }
  if (!res.ok) {
    let code = null;
    try { code = (await res.json()).detail; } catch (_) { /* not JSON */ }
    view.body.append(el("div", "problem", problemText(code)));
    turnEnded();
    return;
  }
  $("text").value = "";
  await follow(res, view);
}

async function cancel() {
  if (!state.turn || state.done) return;
  await api("POST", `/v1/sessions/${state.session}/turns/${state.turn}/cancel`);
}

// ---- datasets ----------------------------------------------------------------------------
function previewTable(columns, rows) {
  const t = el("table", "preview");
  const head = el("tr");
  for (const c of columns) head.append(el("th", null, typeof c === "string" ? c : c.name));
  t.append(head);
  for (const r of rows) {
    const tr = el("tr");
    for (const cell of r) tr.append(el("td", null, cell));
    t.append(tr);
  }
  return t;
}

function datasetCard(d, inTurn) {
  const card = el("div", "version");
  const head = el("div", "head");
  head.append(el("strong", null, `version ${d.version}`), el("span", "muted", `${d.rows} rows × ${d.cols} columns`));
  card.append(head);
  if (d.columns && d.preview) card.append(previewTable(d.columns, d.preview));
  if (d.code) {
    const det = el("details");
    det.append(el("summary", null, "code that made this data"), el("pre", null, d.code));
    card.append(det);
  }
  if (!inTurn && !d.confirmed) {
    const b = el("button", "secondary", "Confirm");
    b.type = "button";
    b.addEventListener("click", async () => {
      const r = await api("POST", `/v1/sessions/${state.session}/datasets/${d.version}/confirm`);
      if (r.ok) loadVersions();
    });
    card.append(b);
  } else if (!inTurn) {
    card.append(el("span", "muted", "confirmed"));
  }
  return card;
}

async function loadVersions() {
  if (!state.session) return;
  const r = await api("GET", `/v1/sessions/${state.session}/datasets`);
  if (!r.ok) return;
  const list = $("versions");
  list.replaceChildren();
  const versions = (r.data.versions || []).slice().reverse();
  $("no-data").hidden = versions.length > 0;
  for (const v of versions) {
    const full = await api("GET", `/v1/sessions/${state.session}/datasets/${v.version}`);
    const d = full.ok ? full.data : v;
    const li = el("li");
    li.dataset.version = String(v.version);
    const preview = d.csv ? csvPreview(d.csv, 20) : null;
    li.append(datasetCard(Object.assign({}, d, preview || {}), false));
    list.append(li);
  }
}

// A small CSV reader for the preview (the server's CSV is canonical: comma, \n, RFC 4180 quotes).
function csvPreview(text, maxRows) {
  const rows = [];
  let row = [], field = "", quoted = false;
  for (let i = 0; i < text.length && rows.length <= maxRows; ++i) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; ++i; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(field); field = ""; }
    else if (c === "\n") { row.push(field); rows.push(row); row = []; field = ""; }
    else field += c;
  }
  if (!rows.length) return null;
  return { columns: rows[0], preview: rows.slice(1, maxRows + 1) };
}

// ---- slot status -------------------------------------------------------------------------
async function pollStatus() {
  try {
    const r = await api("GET", "/v1/status");
    if (r.ok) {
      const s = r.data;
      // Free but with turns waiting happens under the rate window: say so.
      $("slot-text").textContent = (s.in_flight > 0 ? `busy (${s.in_flight} running)` : "free") +
        (s.waiting > 0 ? `, ${s.waiting} waiting` : "");
    }
  } catch (_) { $("slot-text").textContent = "unreachable"; }
}

function modeChanged() {
  const mode = document.querySelector("input[name=mode]:checked").value;
  $("code").hidden = mode === "message";
  $("plot-options").hidden = mode !== "plot";
}

document.addEventListener("DOMContentLoaded", () => {
  $("new-session").addEventListener("click", newSession);
  $("composer").addEventListener("submit", send);
  $("paste-form").addEventListener("submit", paste);
  $("cancel").addEventListener("click", cancel);
  for (const r of document.querySelectorAll("input[name=mode]")) r.addEventListener("change", modeChanged);
  loadSentences();
  loadLibraries();
  pollStatus();
  setInterval(pollStatus, 2000);
});
