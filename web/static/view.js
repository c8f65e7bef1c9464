// DOM updates for the dashboard and its ticking clock. What a row says, where it goes and in
// what order is decided once on the server (purplemux/core/present.py) and sent as each session's
// `view`; this file only places it. Session text only ever reaches the page through textContent
// and attributes, never as markup.

import { el } from "./dom.js";

// A compact, exact-enough age: 42s, 3m 05s, 2h 07m, 4d 3h (purplemux/core/timefmt.py's duration).
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

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// A limit's reset in the viewer's local time: "22:32" today, else "Dec 4 20:36"
// (purplemux/core/timefmt.py's wall_clock).
export function wallClock(ts, now) {
  const when = new Date(ts * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  const hm = `${pad(when.getHours())}:${pad(when.getMinutes())}`;
  return when.toDateString() === new Date(now * 1000).toDateString()
    ? hm
    : `${MONTHS[when.getMonth()]} ${when.getDate()} ${hm}`;
}

export function iso(ts) {
  return ts ? new Date(Math.floor(ts) * 1000).toISOString().replace(".000Z", "+00:00") : "";
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

// Fill a row element (cloned from the page's <template>) from a view; only touches what changed.
export function fillRow(row, v, now) {
  if (row.id !== `session-${v.id}`) row.id = `session-${v.id}`;
  row.dataset.sessionId = v.id;
  if (row.dataset.state !== v.state) row.dataset.state = v.state;
  if (row.dataset.colour !== v.colour) row.dataset.colour = v.colour; // the state table's token
  row.toggleAttribute("data-ended", v.ended);
  setText(slot(row, "label"), v.label);

  const project = slot(row, "project");
  setText(project, v.name);
  project.title = v.folder;
  const agent = slot(row, "agent");
  if (agent) {
    setText(agent, v.agent_label || "Claude");
    if (agent.dataset.agent !== v.agent) agent.dataset.agent = v.agent || "claude";
  }
  // The account (a Claude config dir, a Codex home): shown when several of the agent's are
  // watched (the view leaves it "" otherwise).
  const account = slot(row, "account");
  if (account) {
    setText(account, v.account || "");
    account.title = v.account ? `account: ${v.account}` : "";
    if (account.dataset.agent !== v.agent) account.dataset.agent = v.agent || "claude";
    show(account, Boolean(v.account));
  }
  const bg = slot(row, "background");
  if (bg) {
    show(bg, Boolean(v.background));
    bg.title = `background session (claude --bg): job ${v.job_id || ""}`;
  }
  const pane = slot(row, "pane");
  setText(pane, v.pane);
  show(pane, Boolean(v.pane));

  const mode = slot(row, "mode");
  setText(mode, v.mode);
  show(mode, Boolean(v.mode));
  mode.toggleAttribute("data-bypass", v.bypass);
  mode.title = `permission mode: ${v.permission_mode}`;

  // The facts line: context bar (coloured by band), cost, retries, background tasks.
  const ctx = slot(row, "ctx");
  const hasCtx = v.context_percent !== null && v.context_percent !== undefined;
  if (hasCtx) ctx.value = Math.min(v.context_percent, 100);
  if (ctx.dataset.band !== v.context_band) ctx.dataset.band = v.context_band;
  ctx.title = v.context_title;
  show(ctx, hasCtx);
  for (const name of ["ctx-text", "cost", "retrying", "tasks"]) {
    const key = name === "ctx-text" ? "context_text" : name;
    setText(slot(row, name), v[key]);
    show(slot(row, name), Boolean(v[key]));
  }
  show(slot(row, "facts"), Boolean(v.context_text || v.cost || v.tasks || v.retrying));

  const since = slot(row, "since");
  const sinceValue = String(v.since);
  if (since.dataset.since !== sinceValue) {
    since.dataset.since = sinceValue;
    since.dateTime = iso(v.since);
    since.title = v.since ? `in this state since ${clock(v.since)}` : "";
  }
  setText(since, v.since ? duration(now - v.since) : "");
  show(since, Boolean(v.since));

  const line = slot(row, "detail");
  line.dataset.kind = v.detail_kind;
  setText(slot(line, "prefix"), v.detail_prefix);
  show(slot(line, "prefix"), Boolean(v.detail_prefix));
  // The limit wall's time is written here, in the viewer's own time zone.
  const wall = v.detail_kind === "limit" && v.wall_at ? `${v.wall} ${wallClock(v.wall_at, now)}` : "";
  setText(slot(line, "text"), wall || v.detail);
  line.title = v.detail_kind === "limit" ? v.wall_window : "";
  show(line, Boolean(v.detail));

  // A row of a host that stopped beating: greyed, with "<host>: host offline since <time>".
  row.toggleAttribute("data-stale", Boolean(v.stale));
  const away = slot(row, "offline");
  if (away) {
    setText(away, v.offline ? `${v.offline}${v.offline_since ? ` ${clock(v.offline_since)}` : ""}` : "");
    show(away, Boolean(v.stale));
  }

  // Resume at the reset: "resumes after 22:32" in the browser's own clock while armed.
  const note = slot(row, "resume");
  if (note) {
    const said = v.resume_at ? `resumes after ${wallClock(v.resume_at, now)}` : v.resume || "";
    setText(note, said);
    show(note, Boolean(said));
  }
  show(row.querySelector('[data-action="resume"]'), v.actions.includes("resume"));
  show(row.querySelector('[data-action="cancel-resume"]'), v.actions.includes("cancel-resume"));

  setText(slot(row, "error-text"), v.error);
  show(slot(row, "error"), Boolean(v.error));

  const actions = v.actions.join(" ");
  if (row.dataset.actions !== actions) row.dataset.actions = actions;
  show(row.querySelector('[data-action="jump"]'), v.actions.includes("jump"));

  const dismiss = row.querySelector('[data-action="dismiss"]');
  const allowed = v.actions.includes("dismiss");
  if (allowed && !dismiss) {
    const button = document.getElementById("dismiss-template").content.firstElementChild;
    slot(row, "side").append(button.cloneNode(true));
  } else if (!allowed && dismiss) {
    dismiss.remove();
  }
  return row;
}

export function makeGroup(place) {
  const section = el("section", "group");
  section.dataset.group = place.key;
  section.dataset.kind = place.kind;
  const head = el("h2", "group-head");
  head.title = place.title;
  if (place.host) {
    section.dataset.host = place.host;
    head.append(el("span", "group-host", place.host), " ");
  }
  head.append(el("span", "group-kind", place.noun), " ", el("span", "group-label", place.label));
  section.append(head);
  return section;
}

export function makeWindow(place) {
  const box = el("div", "window");
  box.dataset.window = place.key;
  if (place.label) box.append(el("h3", "window-head", place.label));
  box.append(el("ul", "rows"));
  return box;
}

// An entry of the "needs you — recent" panel, from the server's list (purplemux/core/listing.py's
// Recent; dashboard.html renders the same shape).
export function makeRecent(r) {
  const item = el("li", "recent-item");
  item.dataset.key = r.key;
  item.dataset.ref = r.id;
  item.dataset.state = r.state;
  item.dataset.colour = r.colour;
  item.dataset.at = String(r.since);
  const link = el("a");
  link.href = `#session-${r.id}`;
  const dot = el("span", "mini-badge");
  dot.setAttribute("aria-hidden", "true");
  const what = el("span", "recent-what");
  what.append(dot, el("span", "recent-state", r.label), " ", el("span", "recent-project", r.where));
  const at = el("time", "recent-at", clock(r.since));
  at.dataset.at = String(r.since);
  at.dateTime = iso(r.since);
  link.append(what, at, el("span", "recent-why", r.reason));
  item.append(link);
  return item;
}

// The broker's badge (several hosts), as the server's list says it (listing.BrokerBadge): its
// words, then the time it changed in the browser's own clock.
export function fillBroker(el, badge) {
  if (!el || !badge) return;
  el.dataset.broker = badge.state;
  setText(el, badge.since ? `${badge.text} ${clock(badge.since)}` : badge.text);
  show(el, !badge.hidden);
}
