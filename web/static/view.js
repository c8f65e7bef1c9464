// What the dashboard shows for sessions: labels, grouping, row contents.
// Mirrors purplemux/server/page.py and web/templates/_row.html (tests/browser checks they agree).
// Session text only ever reaches the page through textContent and attributes, never as markup.

export const LABELS = {
  idle: "idle",
  busy: "busy",
  "needs-input": "needs input",
  review: "review",
  unknown: "unknown",
};
export const STATES = ["needs-input", "review", "busy", "idle", "unknown"];
const ATTENTION = new Set(["needs-input", "review"]);
// unknown was busy before a daemon restart, so for the favicon it ranks with busy.
const URGENCY = { "needs-input": 4, review: 3, busy: 2, unknown: 2, idle: 1 };
const FAVICON_FOR = { 4: "needs-input", 3: "review", 2: "busy", 1: "idle", 0: "idle" };
const KIND_ORDER = { tmux: 0, socket: 1, project: 2 };
export const KIND_NAMES = { tmux: "tmux session", socket: "tmux server", project: "project" };

export function label(state) {
  return LABELS[state] || state;
}

export function isAttention(session) {
  return ATTENTION.has(session.state);
}

export function title(attention) {
  return attention ? `(${attention}) purplemux` : "purplemux";
}

export function favicon(sessions) {
  let top = 0;
  for (const s of sessions) top = Math.max(top, URGENCY[s.state] || 0);
  return FAVICON_FOR[top];
}

export function paneOf(session) {
  return (session.tmux && session.tmux.pane) || "";
}

export function projectOf(session) {
  return session.project || session.id.slice(0, 8);
}

// A compact, exact-enough age: 42s, 3m 05s, 2h 07m, 4d 3h (page.py's duration).
export function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function clock(ts) {
  return ts ? new Date(ts * 1000).toLocaleTimeString([], { hour12: false }) : "";
}

export function iso(ts) {
  return ts ? new Date(Math.floor(ts) * 1000).toISOString().replace(".000Z", "+00:00") : "";
}

// [kind, prefix, text] of a row's second line (page.py's detail).
export function detail(s) {
  switch (s.state) {
    case "needs-input":
      return ["waiting", "Waiting for", s.waiting_for || "your input"];
    case "busy":
      if (s.compacting) return ["note", "", "Compacting the conversation…"];
      return s.current_tool ? ["tool", "Running", s.current_tool] : ["note", "", "Working…"];
    case "unknown":
      return ["note", "", "Checking what it is doing after a restart…"];
    default:
      // A failed turn's snippet is the error itself: the error line says it once.
      if (s.snippet && s.snippet !== s.error) return ["snippet", "", s.snippet];
      if (s.state === "review" && !s.error) return ["snippet", "", "Finished; ready for review."];
      return ["", "", ""];
  }
}

// --- grouping (page.py's place / group_sessions) ----------------------------------------------

export function place(s) {
  const tmux = s.tmux;
  if (tmux && tmux.pane) {
    const socket = tmux.socket || "";
    const name = socket.replace(/\/+$/, "").split("/").pop() || "tmux";
    if (tmux.session !== null && tmux.session !== undefined) {
      const key = `tmux:${socket}:${tmux.session}`;
      const win = tmux.window;
      const known = win !== null && win !== undefined;
      return {
        key,
        kind: "tmux",
        label: String(tmux.session),
        title: socket,
        windowKey: `${key}:${known ? win : ""}`,
        windowLabel: known ? `window ${win}` : "",
      };
    }
    const key = `socket:${socket}`;
    return { key, kind: "socket", label: name, title: socket, windowKey: `${key}:`, windowLabel: "" };
  }
  const project = s.project || "";
  const key = `project:${project}`;
  return {
    key,
    kind: "project",
    label: project || "no folder",
    title: s.cwd || "",
    windowKey: `${key}:`,
    windowLabel: "",
  };
}

// Code-unit order, like Python's str comparison for the names people use.
function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpTuples(a, b) {
  for (let i = 0; i < a.length; i++) {
    const c = typeof a[i] === "number" ? a[i] - b[i] : cmp(a[i], b[i]);
    if (c) return c;
  }
  return 0;
}

function natural(text) {
  const m = /\d+/.exec(text);
  return m ? [0, Number(m[0]), text] : [1, 0, text];
}

function rowOrder(s) {
  const pane = paneOf(s);
  const m = /^%(\d+)$/.exec(pane);
  return m ? [0, Number(m[1]), "", s.id] : [1, 0, pane, s.id];
}

// Sidebar sections in display order: tmux sessions, bare tmux sockets, then projects.
export function groupSessions(sessions) {
  const groups = new Map();
  const windows = new Map();
  // Several hosts (a shared broker): groups go by host first (page.py's group_sessions).
  const several = new Set(sessions.map((s) => s.host || "")).size > 1;
  for (const s of sessions) {
    const p = place(s);
    const host = several ? String(s.host || "") : "";
    const key = host ? `host:${host}|${p.key}` : p.key;
    const windowKey = host ? `host:${host}|${p.windowKey}` : p.windowKey;
    let group = groups.get(key);
    if (!group) {
      group = { key, kind: p.kind, label: p.label, title: p.title, host, windows: [] };
      groups.set(key, group);
    }
    let win = windows.get(windowKey);
    if (!win) {
      win = { key: windowKey, label: p.windowLabel, sessions: [] };
      windows.set(windowKey, win);
      group.windows.push(win);
    }
    win.sessions.push(s);
  }
  const out = [...groups.values()];
  for (const g of out) {
    g.windows.sort((a, b) => cmpTuples(natural(a.label), natural(b.label)));
    for (const w of g.windows) w.sessions.sort((a, b) => cmpTuples(rowOrder(a), rowOrder(b)));
  }
  out.sort((a, b) =>
    cmpTuples([a.host, KIND_ORDER[a.kind], a.label, a.key], [b.host, KIND_ORDER[b.kind], b.label, b.key]),
  );
  return out;
}

// --- rows ---------------------------------------------------------------------------------------

function slot(el, name) {
  return el.querySelector(`[data-slot="${name}"]`);
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function show(el, visible) {
  if (el.hidden === visible) el.hidden = !visible;
}

// Fill a row element (cloned from the page's <template>) with a session; only touches what changed.
export function fillRow(row, s, now) {
  if (row.id !== `session-${s.id}`) row.id = `session-${s.id}`;
  row.dataset.sessionId = s.id;
  if (row.dataset.state !== s.state) row.dataset.state = s.state;
  row.toggleAttribute("data-ended", Boolean(s.ended));
  setText(slot(row, "label"), label(s.state));

  const project = slot(row, "project");
  setText(project, projectOf(s));
  project.title = s.cwd || "";
  const pane = slot(row, "pane");
  setText(pane, paneOf(s));
  show(pane, Boolean(paneOf(s)));

  const since = slot(row, "since");
  const sinceValue = String(s.state_since || 0);
  if (since.dataset.since !== sinceValue) {
    since.dataset.since = sinceValue;
    since.dateTime = iso(s.state_since);
    since.title = s.state_since ? `in this state since ${clock(s.state_since)}` : "";
  }
  setText(since, s.state_since ? duration(now - s.state_since) : "");
  show(since, Boolean(s.state_since));

  const [kind, prefix, text] = detail(s);
  const line = slot(row, "detail");
  line.dataset.kind = kind;
  setText(slot(line, "prefix"), prefix);
  show(slot(line, "prefix"), Boolean(prefix));
  setText(slot(line, "text"), text);
  show(line, Boolean(text));

  // A row of a host that stopped beating (page.py's offline).
  row.toggleAttribute("data-stale", Boolean(s.stale));
  const away = slot(row, "offline");
  if (away) {
    setText(away, offline(s));
    show(away, Boolean(s.stale));
  }

  setText(slot(row, "error-text"), s.error || "");
  show(slot(row, "error"), Boolean(s.error));

  let dismiss = row.querySelector('[data-action="dismiss"]');
  if (s.state === "review" && !dismiss) {
    dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "dismiss";
    dismiss.dataset.action = "dismiss";
    dismiss.title = "Mark as seen (review → idle)";
    dismiss.textContent = "Dismiss";
    slot(row, "side").append(dismiss);
  } else if (s.state !== "review" && dismiss) {
    dismiss.remove();
  }
  return row;
}

export function makeGroup(g) {
  const section = document.createElement("section");
  section.className = "group";
  section.dataset.group = g.key;
  section.dataset.kind = g.kind;
  const head = document.createElement("h2");
  head.className = "group-head";
  head.title = g.title;
  if (g.host) {
    section.dataset.host = g.host;
    const host = document.createElement("span");
    host.className = "group-host";
    host.textContent = g.host;
    head.append(host, " ");
  }
  const kind = document.createElement("span");
  kind.className = "group-kind";
  kind.textContent = KIND_NAMES[g.kind];
  const name = document.createElement("span");
  name.className = "group-label";
  name.textContent = g.label;
  head.append(kind, " ", name);
  section.append(head);
  return section;
}

export function makeWindow(w) {
  const box = document.createElement("div");
  box.className = "window";
  box.dataset.window = w.key;
  if (w.label) {
    const head = document.createElement("h3");
    head.className = "window-head";
    head.textContent = w.label;
    box.append(head);
  }
  const list = document.createElement("ul");
  list.className = "rows";
  box.append(list);
  return box;
}

// An entry of the "needs you — recent" panel (dashboard.html renders the same shape).
export function makeRecent(s) {
  const item = document.createElement("li");
  item.className = "recent-item";
  item.dataset.key = recentKey(s);
  item.dataset.ref = s.id;
  item.dataset.state = s.state;
  item.dataset.at = String(s.state_since);
  item.dataset.current = "";
  const link = document.createElement("a");
  link.href = `#session-${s.id}`;
  const what = document.createElement("span");
  what.className = "recent-what";
  const dot = document.createElement("span");
  dot.className = "mini-badge";
  dot.setAttribute("aria-hidden", "true");
  const state = document.createElement("span");
  state.className = "recent-state";
  state.textContent = label(s.state);
  const where = document.createElement("span");
  where.className = "recent-project";
  where.textContent = projectOf(s) + (paneOf(s) ? ` · ${paneOf(s)}` : "");
  what.append(dot, state, " ", where);
  const at = document.createElement("time");
  at.className = "recent-at";
  at.dataset.at = String(s.state_since);
  at.dateTime = iso(s.state_since);
  at.textContent = clock(s.state_since);
  const why = document.createElement("span");
  why.className = "recent-why";
  why.textContent = reason(s);
  link.append(what, at, why);
  item.append(link);
  return item;
}

export function offline(s) {
  if (!s.stale) return "";
  const note = s.offline_since ? `host offline since ${clock(s.offline_since)}` : "host offline";
  return `${s.host || "?"}: ${note}`;
}

// Why a session wants the user, in one line (the recent panel).
export function reason(s) {
  return s.error ? `Failed: ${s.error}` : detail(s)[2];
}

export function recentKey(s) {
  return `${s.id}:${s.state}:${s.state_since}`;
}
