// The installed app around the dashboard: the service worker that opens it offline, the last
// rows it saved for then, the "offline since" mark, buttons that cannot act while offline, and
// the count on the app's icon. Follows app.js through its purplemux:* events; needs nothing else.

const SW_URL = "/static/sw.js";
const SAVED = "purplemux:last-rows";
const SAVE_EVERY_MS = 2000;
const OFFLINE_REASON = "Offline: this needs the daemon, which cannot be reached now.";
// Buttons that act on a session: none of them can work without the daemon.
const ACTING =
  '[data-action="dismiss"], [data-action="answer"], [data-action="jump"], [data-action="resume"], [data-action="cancel-resume"], .prompt button, .prompt input';

const body = document.body;
const connection = document.getElementById("connection");
const reason = body.querySelector('[data-slot="offline-reason"]');
let badged = null; // the count the icon shows
const state = {
  status: body.dataset.connection,
  liveAt: null,
  offlineSince: null,
  saveTimer: null,
  latest: null,
  list: null,
};

// --- the service worker: registered on load, so the app opens offline next time -------------

if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register(SW_URL, { scope: "/" }).catch(() => {
    // No worker (a private window, an old browser): the page still works while online.
  });
}

// --- the last rows, saved while live, drawn when the page opens offline ----------------------

function readSaved() {
  try {
    const saved = JSON.parse(localStorage.getItem(SAVED) || "null");
    return saved && Array.isArray(saved.sessions) ? saved : null;
  } catch (_) {
    return null;
  }
}

function save() {
  state.saveTimer = null;
  if (!state.latest || !state.list || state.status === "signed-out") return;
  // The rows a person would see, and the server's list of them (its layout, counts, title):
  // ended ones are left out (they can be many, and are history).
  const sessions = state.latest.filter((s) => !s.ended);
  const list = { ...state.list, ended: [], ended_total: 0 };
  try {
    localStorage.setItem(SAVED, JSON.stringify({ at: state.liveAt || Date.now() / 1000, sessions, list }));
  } catch (_) {
    // Storage full or refused: offline then shows what the shell has, with the mark.
  }
}

document.addEventListener("purplemux:rendered", (event) => {
  state.latest = event.detail.sessions;
  state.list = event.detail.list;
  updateBadge(state.list);
  if (state.status === "live" && !state.saveTimer) state.saveTimer = setTimeout(save, SAVE_EVERY_MS);
});

// --- online, offline ----------------------------------------------------------------------------

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
}

function age(seconds) {
  if (seconds < 60) return `${Math.max(0, Math.floor(seconds))}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
}

function offline() {
  return state.status === "disconnected" || (body.hasAttribute("data-shell") && state.status !== "live");
}

function drawOffline() {
  if (!offline() || state.offlineSince === null) return;
  const since = state.offlineSince;
  connection.textContent = `offline since ${clock(since)} · ${age(Date.now() / 1000 - since)} — reconnecting…`;
  connection.dataset.offline = "";
  connection.hidden = false;
}

function disableActing(root) {
  for (const el of root.querySelectorAll(ACTING)) {
    if (el.disabled) continue;
    el.disabled = true;
    el.dataset.offlineDisabled = "";
    el.dataset.titleBefore = el.title || "";
    el.title = OFFLINE_REASON;
  }
}

function enableActing() {
  for (const el of body.querySelectorAll("[data-offline-disabled]")) {
    el.disabled = false;
    el.title = el.dataset.titleBefore || "";
    delete el.dataset.offlineDisabled;
    delete el.dataset.titleBefore;
  }
}

// Rows and prompt panels drawn while offline get their buttons disabled too.
const watcher = new MutationObserver(() => {
  if (offline()) disableActing(body);
});

function setStatus(status) {
  const was = offline();
  state.status = status;
  if (status === "live") {
    state.liveAt = Date.now() / 1000;
    state.offlineSince = null;
    body.removeAttribute("data-shell");
    body.removeAttribute("data-offline");
    delete connection.dataset.offline;
    reason.hidden = true;
    watcher.disconnect();
    enableActing();
    if (state.latest && !state.saveTimer) state.saveTimer = setTimeout(save, SAVE_EVERY_MS);
    return;
  }
  if (status === "signed-out") {
    // Signed out: the rows are not this browser's to keep, nor is a save still due.
    clearTimeout(state.saveTimer);
    state.saveTimer = null;
    localStorage.removeItem(SAVED);
    return;
  }
  if (!offline()) return;
  if (!was || state.offlineSince === null) {
    state.offlineSince = state.liveAt || readSaved()?.at || Date.now() / 1000;
  }
  body.setAttribute("data-offline", "");
  reason.hidden = false;
  disableActing(body);
  watcher.observe(body, { childList: true, subtree: true });
  drawOffline();
}

document.addEventListener("purplemux:connection", (event) => setStatus(event.detail.status));
setInterval(drawOffline, 1000);

// Opened from the service worker's cache (the daemon unreachable): draw the rows saved last.
if (body.hasAttribute("data-shell")) {
  const saved = readSaved();
  state.offlineSince = saved ? saved.at : Date.now() / 1000;
  if (saved) {
    const detail = { sessions: saved.sessions, list: saved.list };
    document.dispatchEvent(new CustomEvent("purplemux:restore", { detail }));
  }
  setStatus(state.status === "live" ? "live" : "disconnected");
}

// --- the count on the installed app's icon (App Badging API, where the platform has it) -------

// The server's one attention set (purplemux/core/listing.py), as the title counts it.
function updateBadge(list) {
  if (!list) return;
  const n = list.attention.length;
  if (n === badged || !("setAppBadge" in navigator)) return;
  badged = n;
  const done = n ? navigator.setAppBadge(n) : navigator.clearAppBadge();
  done.catch(() => {
    // Not installed, or the platform has no badge: the title and favicon still count.
  });
}
