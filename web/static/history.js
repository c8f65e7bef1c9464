// The live /history page: open spans grow with the clock; a state change from WS /api/stream
// (followed by follow.js, as the dashboard does) closes a lane's open span and starts the next
// one. No inline code (the page's CSP).

import { follow } from "./follow.js";
import * as view from "./view.js";

const SVG = "http://www.w3.org/2000/svg";
const TICK_MS = 1000;
const BACKOFF_MAX_MS = 10000;

const body = document.body;
const start = Number(body.dataset.start);
const end = Number(body.dataset.end);
// Durations use the server's clock, as the dashboard does (a daemon reached over SSH may differ).
const clockOffset = Number(body.dataset.now || 0) ? Number(body.dataset.now) - Date.now() / 1000 : 0;
const now = () => Date.now() / 1000 + clockOffset;
// The least width of a wait's mark, as a share of the chart (the server's, so a short prompt shows).
const minMark = Number(body.dataset.minMark || 0);

function title(label, from, to) {
  const until = to === null ? "now" : view.clock(to);
  return `${label} · ${view.duration((to ?? now()) - from)} (${view.clock(from)}–${until})`;
}

function setTitle(mark, text) {
  let t = mark.querySelector("title");
  if (!t) {
    t = document.createElementNS(SVG, "title");
    mark.append(t);
  }
  t.textContent = text;
}

// Width of a span from `from` to `to` (or now), clipped to the chart.
function place(mark, from, to) {
  const a = Math.max(from, start);
  const b = Math.min(to ?? now(), end);
  const least = mark.hasAttribute("data-wait") ? (end - start) * minMark : 0;
  mark.setAttribute("x", String(Math.max(0, a - start)));
  mark.setAttribute("width", String(Math.max(least, b - a)));
}

export function grow() {
  if (now() > end) {
    location.reload(); // the chart's hour is over: draw a longer one
    return;
  }
  for (const mark of document.querySelectorAll(".lane-bar .mark[data-open]")) {
    const from = Number(mark.dataset.from);
    place(mark, from, null);
    setTitle(mark, title(mark.dataset.label, from, null));
  }
}

// A session's state changed: close the open mark at the change, open one in the new state.
export function applySession(s) {
  const lane = document.querySelector(`.lane[data-session-id="${CSS.escape(s.id)}"]`);
  if (!lane) return; // a session new today: it gets its lane on the next load
  const bar = lane.querySelector(".lane-bar");
  const open = bar.querySelector(".mark[data-open]");
  const since = Number(s.state_since);
  if (open && open.dataset.state === s.state && !s.ended) return;
  if (open) {
    if (since < Number(open.dataset.from)) return; // an older copy of the session
    delete open.dataset.open;
    place(open, Number(open.dataset.from), since);
    setTitle(open, title(open.dataset.label, Number(open.dataset.from), since));
  }
  if (s.ended) {
    lane.dataset.ended = "";
    return;
  }
  const mark = document.createElementNS(SVG, "rect");
  mark.setAttribute("class", "mark");
  mark.dataset.state = s.state;
  mark.dataset.colour = s.view.colour; // the state table's token (present.py), as the server draws
  mark.dataset.label = s.view.label;
  if (s.view.attention) mark.dataset.wait = ""; // the state table's `attention`: a wait
  mark.dataset.from = String(since);
  mark.dataset.open = "";
  mark.setAttribute("y", "1");
  mark.setAttribute("height", "8");
  place(mark, since, null);
  setTitle(mark, title(s.view.label, since, null));
  bar.append(mark);
}

if (body.hasAttribute("data-today")) {
  grow();
  setInterval(grow, TICK_MS);
  follow({
    onSnapshot: (msg) => {
      for (const s of msg.sessions || []) applySession(s);
    },
    onMessage: (msg) => {
      if (msg.type === "sessions") for (const s of msg.sessions || []) applySession(s);
    },
    onStatus: (status) => {
      body.dataset.connection = status;
    },
    backoffMaxMs: BACKOFF_MAX_MS,
    initialOffset: clockOffset || undefined,
  });
}
