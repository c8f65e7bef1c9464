// The live dashboard: adopts the server-rendered page, then follows WS /api/stream.
// Plain ES module, no build step, no inline code (the page's CSP allows only 'self' scripts).

import * as view from "./view.js";
import { pageKey } from "./pagekey.js";

const RECENT_LIMIT = 20;
const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 5000;

const body = document.body;
const els = {
  groups: body.querySelector('[data-slot="groups"]'),
  empty: body.querySelector('[data-slot="empty"]'),
  endedSection: body.querySelector('[data-slot="ended-section"]'),
  endedCount: body.querySelector('[data-slot="ended-count"]'),
  ended: body.querySelector('[data-slot="ended"]'),
  recent: body.querySelector('[data-slot="recent"]'),
  recentEmpty: body.querySelector('[data-slot="recent-empty"]'),
  connection: document.getElementById("connection"),
  broker: document.getElementById("broker"),
  notifyResult: body.querySelector('[data-slot="notify-result"]'),
  favicon: document.querySelector("link[data-favicon]"),
  template: document.getElementById("row-template"),
};

// Durations use the server's clock: a dashboard reached over SSH may run on a skewed machine.
const clockOffset = Number(body.dataset.now || 0) ? Number(body.dataset.now) - Date.now() / 1000 : 0;
const now = () => Date.now() / 1000 + clockOffset;

const sessions = new Map(); // id -> Session JSON, once the first snapshot arrived
const rows = new Map(); // id -> row element
const groupEls = new Map(); // group key -> <section>
const windowEls = new Map(); // window key -> <div>
const recentKeys = new Set();

const live = { ws: null, lastSeq: null, backoff: BACKOFF_START_MS, retry: null, everLive: false };
let revealed = false;

// --- adopting the server-rendered page ----------------------------------------------------------

function adopt() {
  for (const row of body.querySelectorAll(".row[data-session-id]")) rows.set(row.dataset.sessionId, row);
  for (const g of els.groups.querySelectorAll(".group[data-group]")) groupEls.set(g.dataset.group, g);
  for (const w of els.groups.querySelectorAll(".window[data-window]")) windowEls.set(w.dataset.window, w);
  for (const item of els.recent.children) recentKeys.add(item.dataset.key);
  // The server wrote clock times in its own time zone; show the browser's.
  for (const t of els.recent.querySelectorAll("time[data-at]")) t.textContent = view.clock(Number(t.dataset.at));
}

// --- applying the feed --------------------------------------------------------------------------

function applySnapshot(list) {
  const incoming = new Map(list.map((s) => [s.id, s]));
  for (const id of [...sessions.keys(), ...rows.keys()]) {
    if (!incoming.has(id)) forget(id);
  }
  sessions.clear();
  for (const s of list) {
    sessions.set(s.id, s);
    // Entries missed while disconnected still belong in the recent list, without a notification.
    if (enteredAttention(null, s)) addRecent(s);
  }
  render();
}

// Apply one session; `fresh` is true for a live change from the feed (may notify).
function applySession(s, fresh) {
  if (take(s, fresh)) render();
}

// A `sessions` message: what changed together, applied together and drawn once.
function applyChanges(msg) {
  let changed = false;
  for (const s of msg.sessions || []) changed = take(s, true) || changed;
  for (const id of msg.removed || []) {
    forget(id);
    changed = true;
  }
  if (changed) render();
}

// Keep one session's new JSON (not drawn yet); false for an older copy than the one held.
function take(s, fresh) {
  const prev = sessions.get(s.id);
  if (prev && s.seq < prev.seq) return false; // an older copy (a dismiss reply racing the feed)
  sessions.set(s.id, s);
  if (enteredAttention(prev, s)) {
    addRecent(s);
    if (fresh && !document.hasFocus()) notifyLocally(s);
    if (fresh) announce("purplemux:entered", { session: s }); // app-shell.js, chime.js
  }
  return true;
}

function forget(id) {
  sessions.delete(id);
  const row = rows.get(id);
  if (row) row.remove();
  rows.delete(id);
}

function enteredAttention(prev, s) {
  if (s.ended || !s.view.attention) return false;
  return !prev || prev.state !== s.state || prev.state_since !== s.state_since;
}

// --- rendering: move elements only when their place changes, so badge animations keep running ---

function rowFor(v) {
  let row = rows.get(v.id);
  if (!row) {
    row = els.template.content.querySelector(".row").cloneNode(true);
    rows.set(v.id, row);
  }
  return view.fillRow(row, v, now());
}

function placeAt(parent, child, index) {
  const current = parent.children[index] || null;
  if (current !== child) parent.insertBefore(child, current);
}

function render() {
  const all = [...sessions.values()].map((s) => s.view);
  const active = all.filter((v) => !v.ended);
  const ended = all.filter((v) => v.ended).sort((a, b) => b.updated_at - a.updated_at);

  const wantGroups = new Set();
  const wantWindows = new Set();
  view.groupSessions(active).forEach((g, gi) => {
    wantGroups.add(g.place.key);
    let section = groupEls.get(g.place.key);
    if (!section) {
      section = view.makeGroup(g.place);
      groupEls.set(g.place.key, section);
    }
    section.querySelector(".group-head").title = g.place.title;
    placeAt(els.groups, section, gi);
    g.windows.forEach((w, wi) => {
      wantWindows.add(w.place.key);
      let box = windowEls.get(w.place.key);
      if (!box) {
        box = view.makeWindow(w.place);
        windowEls.set(w.place.key, box);
      }
      placeAt(section, box, wi + 1); // child 0 is the group's heading
      const list = box.querySelector(".rows");
      w.views.forEach((v, vi) => placeAt(list, rowFor(v), vi));
    });
  });
  ended.forEach((v, i) => placeAt(els.ended, rowFor(v), i));
  for (const [key, box] of windowEls) {
    if (!wantWindows.has(key)) {
      box.remove();
      windowEls.delete(key);
    }
  }
  for (const [key, section] of groupEls) {
    if (!wantGroups.has(key)) {
      section.remove();
      groupEls.delete(key);
    }
  }

  els.empty.hidden = active.length > 0;
  els.endedSection.hidden = ended.length === 0;
  els.endedCount.textContent = String(ended.length);
  renderSummary(active);
  renderRecentCurrency();
  revealTarget();
  announce("purplemux:rendered", { sessions: [...sessions.values()] });
}

// The installed app's pieces (app-shell.js, chime.js) follow the page through these events.
function announce(type, detail) {
  document.dispatchEvent(new CustomEvent(type, { detail }));
}

function renderSummary(active) {
  const counts = {};
  for (const v of active) counts[v.state] = (counts[v.state] || 0) + 1;
  for (const item of body.querySelectorAll("[data-count]")) {
    const n = counts[item.dataset.count] || 0;
    item.querySelector('[data-slot="n"]').textContent = String(n);
    item.toggleAttribute("data-zero", n === 0);
  }
  const attention = active.filter((v) => v.attention).length;
  const title = attention ? `(${attention}) purplemux` : "purplemux";
  if (document.title !== title) document.title = title;
  const top = active.reduce((a, v) => (!a || v.urgency > a.urgency ? v : a), null);
  const icon = `/static/icon-${top ? top.icon : "idle"}.svg`;
  if (els.favicon && els.favicon.getAttribute("href") !== icon) els.favicon.setAttribute("href", icon);
}

function tick() {
  const t = now();
  for (const el of body.querySelectorAll(".row time[data-since]")) {
    const since = Number(el.dataset.since);
    if (since) {
      const text = view.duration(t - since);
      if (el.textContent !== text) el.textContent = text;
    }
  }
}

// --- the recent "needs you" list -----------------------------------------------------------------

function addRecent(s) {
  const key = view.recentKey(s.view);
  if (recentKeys.has(key)) return;
  recentKeys.add(key);
  const item = view.makeRecent(s.view);
  let before = null;
  for (const other of els.recent.children) {
    if (Number(other.dataset.at) < s.state_since) {
      before = other;
      break;
    }
  }
  els.recent.insertBefore(item, before);
  while (els.recent.children.length > RECENT_LIMIT) {
    const last = els.recent.lastElementChild;
    recentKeys.delete(last.dataset.key);
    last.remove();
  }
  els.recentEmpty.hidden = true;
}

// An entry stays listed after it is handled, greyed out: "current" means the session still waits.
function renderRecentCurrency() {
  for (const item of els.recent.children) {
    const s = sessions.get(item.dataset.ref);
    const current =
      Boolean(s) && !s.ended && s.state === item.dataset.state && String(s.state_since) === item.dataset.at;
    item.toggleAttribute("data-current", current);
  }
}

// --- the stream ---------------------------------------------------------------------------------

function setConnection(status, text) {
  body.dataset.connection = status;
  els.connection.dataset.connection = status;
  els.connection.textContent = text;
  els.connection.hidden = false;
  announce("purplemux:connection", { status });
}

function connect() {
  clearTimeout(live.retry);
  const url = new URL("/api/stream", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(url);
  live.ws = ws;
  live.lastSeq = null;
  if (!live.everLive) setConnection("connecting", "connecting…");
  ws.addEventListener("open", () => sendVisibility());
  ws.addEventListener("message", (event) => onMessage(ws, event));
  ws.addEventListener("close", (event) => onClose(ws, event));
}

function onMessage(ws, event) {
  if (ws !== live.ws) return;
  let msg;
  try {
    msg = JSON.parse(event.data);
  } catch (_) {
    return;
  }
  if (msg.type === "snapshot") {
    live.lastSeq = msg.seq;
    live.backoff = BACKOFF_START_MS;
    live.everLive = true;
    applySnapshot(msg.sessions);
    if (msg.broker) view.fillBroker(els.broker, msg.broker);
    setConnection("live", "live");
    return;
  }
  if (live.lastSeq === null || msg.seq <= live.lastSeq) return;
  if (msg.seq !== live.lastSeq + 1) {
    // A message was lost: the only way back to the truth is a fresh snapshot.
    resync(ws);
    return;
  }
  live.lastSeq = msg.seq;
  if (msg.type === "sessions") applyChanges(msg);
  else if (msg.type === "broker") view.fillBroker(els.broker, msg.broker);
}

function resync(ws) {
  live.ws = null;
  ws.close();
  connect();
}

function onClose(ws, event) {
  if (ws !== live.ws) return;
  live.ws = null;
  if (event.code === 4401) {
    setConnection("signed-out", "signed out — open the link from `purplemux open`");
    live.retry = setTimeout(connect, BACKOFF_MAX_MS);
    return;
  }
  if (event.code === 1013) {
    // The daemon is at its cap of live feeds: say so (its reason), try again later.
    setConnection("disconnected", `not live — ${event.reason || "too many open tabs"}; retrying…`);
    live.retry = setTimeout(connect, BACKOFF_MAX_MS);
    return;
  }
  const delay = live.backoff;
  live.backoff = Math.min(live.backoff * 2, BACKOFF_MAX_MS);
  setConnection("disconnected", "disconnected — reconnecting…");
  live.retry = setTimeout(connect, delay);
}

// The page key goes with each report: without it the daemon ignores the report (a login cookie
// alone, which other local servers also receive, must not hold anyone's pushes back).
async function sendVisibility() {
  const key = await pageKey();
  const ws = live.ws;
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  ws.send(
    JSON.stringify({
      type: "visibility",
      visible: document.visibilityState === "visible",
      focused: document.hasFocus(),
      key,
    }),
  );
}

// --- actions ------------------------------------------------------------------------------------

async function dismiss(button) {
  const row = button.closest("[data-session-id]");
  if (!row) return;
  button.disabled = true;
  try {
    const response = await fetch(`/api/sessions/${encodeURIComponent(row.dataset.sessionId)}/dismiss`, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    // 409: no longer in review (someone else dismissed it); the feed brings the real state.
    if (response.ok) applySession(await response.json(), false);
  } catch (_) {
    // The daemon is unreachable: the connection status already says so.
  } finally {
    button.disabled = false;
  }
}

function showNotifyResult(text, ok) {
  els.notifyResult.textContent = text;
  els.notifyResult.dataset.ok = String(ok);
  els.notifyResult.hidden = false;
}

async function enableNotifications(button) {
  button.disabled = true;
  showNotifyResult("Turning on notifications…", true);
  try {
    const push = await import("/static/push.js");
    const result = await push.enablePush();
    showNotifyResult(result.ok ? "Notifications are on for this device." : result.reason, result.ok);
  } catch (_) {
    showNotifyResult("Notifications are not available: the notification script did not load.", false);
  } finally {
    button.disabled = false;
  }
}

async function notifyLocally(s) {
  try {
    const push = await import("/static/push.js");
    // Same words and tag as the daemon's Web Push for this session, so one replaces the other.
    await push.showLocalNotification(s.view.headline, s.view.notice, `purplemux-${s.id}`, {
      session_id: s.id,
      url: `/#session-${s.id}`,
    });
  } catch (_) {
    // No push.js or notifications refused: the title and favicon still say it.
  }
}

function revealTarget() {
  if (revealed || !location.hash.startsWith("#session-")) return;
  let id;
  try {
    id = decodeURIComponent(location.hash.slice(1));
  } catch (_) {
    return;
  }
  const row = document.getElementById(id);
  if (row) {
    revealed = true;
    row.scrollIntoView({ block: "center" });
  }
}

function reveal(id) {
  revealed = false;
  if (location.hash === `#session-${id}`) revealTarget();
  else location.hash = `session-${id}`;
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-action]");
  if (!button) return;
  if (button.dataset.action === "dismiss") dismiss(button);
  else if (button.dataset.action === "enable-notifications") enableNotifications(button);
});
document.addEventListener("visibilitychange", () => {
  sendVisibility();
  // Back on a tab that gave up waiting: try now rather than at the next backoff step.
  if (document.visibilityState === "visible" && !live.ws) connect();
});
window.addEventListener("focus", sendVisibility);
window.addEventListener("blur", sendVisibility);
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.addEventListener("message", (event) => {
    const data = event.data || {};
    if (data.type === "purplemux:open-session" && data.session_id) reveal(data.session_id);
  });
}

// Offline, app-shell.js hands over the rows it saved when the page was last live.
document.addEventListener("purplemux:restore", (event) => {
  if (live.lastSeq === null) applySnapshot(event.detail.sessions || []);
});

adopt();
connect();
setInterval(tick, 1000);
