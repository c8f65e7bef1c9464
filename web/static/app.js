// The live dashboard: adopts the server-rendered page, then follows WS /api/stream (follow.js).
// What the list shows (groups, counts, title, favicon, the recent list, the ended page) comes
// with every message as the server's `list` (purplemux/core/listing.py); this file applies it.
// Plain ES module, no build step, no inline code (the page's CSP allows only 'self' scripts).

import { follow } from "./follow.js";
import * as view from "./view.js";
import { pageKey } from "./pagekey.js";
import { api } from "./api.js";
import { fillLimits } from "./limits.js";

const ENDED_PAGE = 50;
const FLUSH_FALLBACK_MS = 250; // a hidden tab gets no animation frames: draw anyway, less often

const body = document.body;
const els = {
  groups: body.querySelector('[data-slot="groups"]'),
  empty: body.querySelector('[data-slot="empty"]'),
  endedSection: body.querySelector('[data-slot="ended-section"]'),
  endedCount: body.querySelector('[data-slot="ended-count"]'),
  ended: body.querySelector('[data-slot="ended"]'),
  endedMore: body.querySelector('[data-slot="ended-more"]'),
  recent: body.querySelector('[data-slot="recent"]'),
  recentEmpty: body.querySelector('[data-slot="recent-empty"]'),
  connection: document.getElementById("connection"),
  broker: document.getElementById("broker"),
  limits: body.querySelector('[data-slot="limits"]'),
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
let list = null; // the server's list (listing.Board), once the first snapshot arrived
let older = []; // ended rows fetched with "Show more" (views), newest first
let olderMore = false;
let revealed = false;
// Changes since the last frame, keyed by session: a burst is drawn once, in its newest state.
const pending = { sessions: new Map(), removed: new Set(), list: null, reset: false, frame: null };

// --- adopting the server-rendered page ----------------------------------------------------------

function adopt() {
  for (const row of body.querySelectorAll(".row[data-session-id]")) rows.set(row.dataset.sessionId, row);
  for (const g of els.groups.querySelectorAll(".group[data-group]")) groupEls.set(g.dataset.group, g);
  for (const w of els.groups.querySelectorAll(".window[data-window]")) windowEls.set(w.dataset.window, w);
  // The server wrote clock times in its own time zone; show the browser's.
  for (const t of els.recent.querySelectorAll("time[data-at]")) t.textContent = view.clock(Number(t.dataset.at));
  if (els.broker && els.broker.dataset.since) {
    const since = Number(els.broker.dataset.since);
    els.broker.textContent = `${els.broker.textContent.replace(/ [^ ]*$/, "")} ${view.clock(since)}`;
  }
}

// --- taking the feed in: queued per session, drawn once a frame --------------------------------

function onSnapshot(msg) {
  pending.sessions.clear();
  pending.removed.clear();
  pending.reset = true;
  for (const s of msg.sessions || []) pending.sessions.set(s.id, s);
  pending.list = withLayout(msg.list, null);
  if (msg.badge) view.fillBroker(els.broker, msg.badge);
  if (els.limits) fillLimits(els.limits, msg.limits || []);
  schedule();
}

function onMessage(msg) {
  if (msg.type === "sessions") {
    for (const s of msg.sessions || []) {
      pending.sessions.set(s.id, s);
      pending.removed.delete(s.id);
    }
    for (const id of msg.removed || []) {
      pending.sessions.delete(id);
      pending.removed.add(id);
    }
    if (msg.list) pending.list = withLayout(msg.list, pending.list || list);
    schedule();
  } else if (msg.type === "broker") {
    view.fillBroker(els.broker, msg.badge);
  } else if (msg.type === "limits") {
    if (els.limits) fillLimits(els.limits, msg.limits || []);
  }
}

// A list without `layout` keeps the one last sent (the feed sends it only when it changes).
function withLayout(next, prev) {
  if (!next) return prev;
  if (next.layout || !prev) return next;
  return { ...next, layout: prev.layout };
}

function schedule() {
  if (pending.frame !== null) return;
  const run = () => flush();
  const raf = requestAnimationFrame(run);
  const timer = setTimeout(run, FLUSH_FALLBACK_MS);
  pending.frame = { raf, timer };
}

function flush() {
  if (pending.frame === null) return;
  cancelAnimationFrame(pending.frame.raf);
  clearTimeout(pending.frame.timer);
  pending.frame = null;
  const before = new Set(list ? list.recent.map((r) => r.key) : []);
  const first = list === null || pending.reset;
  if (pending.reset) {
    const keep = pending.sessions;
    for (const id of [...sessions.keys()]) if (!keep.has(id)) forget(id);
    sessions.clear();
    older = older.filter((v) => !keep.has(v.id));
  }
  const fresh = new Set();
  const dirty = pending.reset || list === null ? null : fresh;
  for (const s of pending.sessions.values()) {
    const prev = sessions.get(s.id);
    if (prev && s.seq < prev.seq) continue; // an older copy (a dismiss reply racing the feed)
    sessions.set(s.id, s);
    fresh.add(s.id);
  }
  for (const id of pending.removed) forget(id);
  if (pending.list) list = pending.list;
  pending.sessions = new Map();
  pending.removed.clear();
  pending.list = null;
  pending.reset = false;
  if (list === null) return;
  render(dirty);
  // A live entry into the attention set: a notification when the page is not in front, and
  // the chime's cue (app-shell.js, chime.js follow the page through purplemux:* events).
  if (!first) {
    for (const r of list.recent) {
      if (!before.has(r.key) && fresh.has(r.id)) {
        const s = sessions.get(r.id);
        if (!document.hasFocus()) notifyLocally(s);
        announce("purplemux:entered", { session: s });
      }
    }
  }
}

function forget(id) {
  sessions.delete(id);
  const row = rows.get(id);
  if (row) row.remove();
  rows.delete(id);
}

// --- rendering: move elements only when their place changes, so badge animations keep running ---

// The row of a view, filled when it is new or its session changed since the last frame (`dirty`:
// the ids that changed, or null for all): a frame of a 1,000-row page touches only what moved.
function rowFor(v, dirty = null) {
  let row = rows.get(v.id);
  if (!row) {
    row = els.template.content.querySelector(".row").cloneNode(true);
    rows.set(v.id, row);
  } else if (dirty !== null && !dirty.has(v.id)) {
    return row;
  }
  return view.fillRow(row, v, now());
}

function placeAt(parent, child, index) {
  const current = parent.children[index] || null;
  if (current !== child) parent.insertBefore(child, current);
}

function render(dirty = null) {
  const wantGroups = new Set();
  const wantWindows = new Set();
  const shown = new Set();
  (list.layout || []).forEach((g, gi) => {
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
      const target = box.querySelector(".rows");
      let at = 0;
      for (const id of w.ids) {
        const s = sessions.get(id);
        if (!s) continue;
        shown.add(id);
        placeAt(target, rowFor(s.view, dirty), at++);
      }
    });
  });
  renderEnded(shown, dirty);
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
  // A row in no list any more (an ended one past the first page): gone from the page.
  for (const id of [...rows.keys()]) {
    if (!shown.has(id)) {
      rows.get(id).remove();
      rows.delete(id);
      if (sessions.has(id) && sessions.get(id).ended) sessions.delete(id);
    }
  }
  els.empty.hidden = list.active > 0;
  renderSummary();
  renderRecent();
  revealTarget();
  announce("purplemux:rendered", { sessions: [...sessions.values()], list });
}

// The installed app's pieces (app-shell.js, chime.js) follow the page through these events.
function announce(type, detail) {
  document.dispatchEvent(new CustomEvent(type, { detail }));
}

// The ended section: the server's first page, then what "Show more" fetched after it.
function renderEnded(shown, dirty) {
  const first = list.ended.filter((id) => sessions.has(id));
  const firstSet = new Set(first);
  older = older.filter((v) => !firstSet.has(v.id) && !shown.has(v.id) && !(sessions.has(v.id) && !sessions.get(v.id).ended));
  const views = [...first.map((id) => sessions.get(id).view), ...older];
  views.forEach((v, i) => {
    shown.add(v.id);
    placeAt(els.ended, rowFor(v, dirty), i);
  });
  els.endedSection.hidden = list.ended_total === 0;
  els.endedCount.textContent = String(list.ended_total);
  const more = older.length ? olderMore : list.ended_total > views.length;
  els.endedMore.hidden = !more;
}

async function moreEnded(button) {
  const last = [...(list ? list.ended : [])].map((id) => sessions.get(id)).filter(Boolean).pop();
  const tail = older.length ? older[older.length - 1] : last && last.view;
  if (!tail) return;
  button.disabled = true;
  try {
    const query = new URLSearchParams({ ended: "1", before: String(tail.updated_at), limit: String(ENDED_PAGE) });
    const response = await fetch(`/api/sessions?${query}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (!response.ok) return;
    const page = await response.json();
    const have = new Set(older.map((v) => v.id));
    for (const s of page.sessions) if (!have.has(s.id)) older.push(s.view);
    olderMore = Boolean(page.more);
    render();
  } catch (_) {
    // The daemon is unreachable: the connection status already says so.
  } finally {
    button.disabled = false;
  }
}

function renderSummary() {
  for (const c of list.counts) {
    const item = body.querySelector(`[data-count="${c.state}"]`);
    if (!item) continue;
    item.querySelector('[data-slot="n"]').textContent = String(c.n);
    item.toggleAttribute("data-zero", c.n === 0);
  }
  if (document.title !== list.title) document.title = list.title;
  const icon = `/static/icon-${list.favicon}.svg`;
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

// The "Needs you — recent" list: the server's, entry by entry (kept elements keep their place).
function renderRecent() {
  const have = new Map([...els.recent.children].map((item) => [item.dataset.key, item]));
  list.recent.forEach((r, i) => {
    let item = have.get(r.key);
    if (!item) item = view.makeRecent(r);
    have.delete(r.key);
    placeAt(els.recent, item, i);
  });
  for (const item of have.values()) item.remove();
  els.recentEmpty.hidden = list.recent.length > 0;
}

// --- the stream ---------------------------------------------------------------------------------

function setConnection(status, text) {
  body.dataset.connection = status;
  els.connection.dataset.connection = status;
  els.connection.textContent = text;
  els.connection.hidden = false;
  announce("purplemux:connection", { status });
}

adopt();
const feed = follow({
  onSnapshot,
  onMessage,
  onStatus: setConnection,
  onOpen: () => sendVisibility(),
  initialOffset: clockOffset || undefined,
});

// The page key goes with each report: without it the daemon ignores the report (a login cookie
// alone, which other local servers also receive, must not hold anyone's pushes back).
async function sendVisibility() {
  const key = await pageKey();
  feed.send({
    type: "visibility",
    visible: document.visibilityState === "visible",
    focused: document.hasFocus(),
    key,
  });
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
    if (response.ok) {
      const s = await response.json();
      const prev = sessions.get(s.id);
      // The list (counts, title, recent) comes with the feed's message for the same change.
      if (!prev || s.seq >= prev.seq) {
        sessions.set(s.id, s);
        rowFor(s.view);
      }
    }
  } catch (_) {
    // The daemon is unreachable: the connection status already says so.
  } finally {
    button.disabled = false;
  }
}

// Resume at the reset: arm (POST {at_reset: true}) or cancel (DELETE); the reply is the session.
async function resumeAtReset(button, arm) {
  const row = button.closest("[data-session-id]");
  if (!row) return;
  button.disabled = true;
  try {
    const path = `/api/sessions/${encodeURIComponent(row.dataset.sessionId)}/resume`;
    const answer = arm ? await api("POST", path, { at_reset: true, by: "page" }) : await api("DELETE", path);
    if (answer.ok) {
      const s = answer.data;
      const prev = sessions.get(s.id);
      if (!prev || s.seq >= prev.seq) {
        sessions.set(s.id, s);
        rowFor(s.view);
      }
    } else {
      button.title = answer.data.error || `refused (${answer.status})`;
    }
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
  else if (button.dataset.action === "resume") resumeAtReset(button, true);
  else if (button.dataset.action === "cancel-resume") resumeAtReset(button, false);
  else if (button.dataset.action === "more-ended") moreEnded(button);
  else if (button.dataset.action === "enable-notifications") enableNotifications(button);
});
document.addEventListener("visibilitychange", () => {
  sendVisibility();
  // Back on a tab that gave up waiting: try now rather than at the next backoff step.
  if (document.visibilityState === "visible") feed.reconnectNow();
});
window.addEventListener("focus", sendVisibility);
window.addEventListener("blur", sendVisibility);
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.addEventListener("message", (event) => {
    const data = event.data || {};
    if (data.type === "purplemux:open-session" && data.session_id) reveal(data.session_id);
  });
}

// Offline, app-shell.js hands over the rows (and their list) it saved when the page was live.
document.addEventListener("purplemux:restore", (event) => {
  if (list === null && event.detail.list) onSnapshot({ sessions: event.detail.sessions || [], list: event.detail.list });
});

setInterval(tick, 1000);
