// The one follower of WS /api/stream (purplemux/daemon/feed.py, protocol 3), for the dashboard and the
// history page: a snapshot, then messages with a gap-free seq; a gap, or a message that arrives
// long after the server sent it (the page fell behind), means a fresh snapshot (resync). The
// Python twin is purplemux/cli/follow.py (`purplemux status --watch`).

export const PROTOCOL = 3;
const BACKOFF_START_MS = 500;
const BEHIND_S = 5; // seconds a message may wait in the page before it resyncs instead

// follow({onSnapshot, onMessage, onStatus, onOpen, backoffMaxMs, initialOffset}) connects and
// returns {send, connected, reconnectNow}. onStatus(status, text) gets "connecting", "live",
// "behind", "disconnected" or "signed-out"; onMessage gets every message after the snapshot, in
// seq order, never a replay.
export function follow(options) {
  const backoffMax = options.backoffMaxMs || 5000;
  const state = { ws: null, lastSeq: null, backoff: BACKOFF_START_MS, retry: null, everLive: false };
  // The server's clock less ours, as tight as seen: a message's `at` plus the wait it had is
  // our clock plus this, so the wait is never overestimated by a skewed machine.
  let offset = Number.isFinite(options.initialOffset) ? options.initialOffset : -Infinity;

  const status = (name, text) => options.onStatus && options.onStatus(name, text);

  function lag(msg) {
    if (typeof msg.at !== "number") return 0;
    const mine = Date.now() / 1000;
    offset = Math.max(offset, msg.at - mine);
    return mine + offset - msg.at;
  }

  function connect() {
    clearTimeout(state.retry);
    const url = new URL("/api/stream", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url);
    state.ws = ws;
    state.lastSeq = null;
    if (!state.everLive) status("connecting", "connecting…");
    ws.addEventListener("open", () => options.onOpen && options.onOpen(ws));
    ws.addEventListener("message", (event) => onMessage(ws, event));
    ws.addEventListener("close", (event) => onClose(ws, event));
  }

  function onMessage(ws, event) {
    if (ws !== state.ws) return;
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch (_) {
      return;
    }
    if (msg.type === "snapshot") {
      lag(msg);
      state.lastSeq = msg.seq;
      state.backoff = BACKOFF_START_MS;
      state.everLive = true;
      options.onSnapshot(msg);
      status("live", "live");
      return;
    }
    if (state.lastSeq === null || msg.seq <= state.lastSeq) return;
    if (msg.seq !== state.lastSeq + 1) {
      resync(); // a message was lost: the only way back to the truth is a fresh snapshot
      return;
    }
    if (lag(msg) > BEHIND_S) {
      // What is queued behind this is as old: skip it all for one snapshot of now.
      status("behind", "behind — catching up");
      resync();
      return;
    }
    state.lastSeq = msg.seq;
    options.onMessage(msg);
  }

  function resync() {
    const ws = state.ws;
    state.ws = null;
    if (ws) ws.close();
    connect();
  }

  function onClose(ws, event) {
    if (ws !== state.ws) return;
    state.ws = null;
    if (event.code === 4401) {
      status("signed-out", "signed out — open the link from `purplemux open`");
      state.retry = setTimeout(connect, backoffMax);
      return;
    }
    if (event.code === 1013) {
      // The daemon is at its cap of live feeds: say so (its reason), try again later.
      status("refused", `not live — ${event.reason || "too many open tabs"}; retrying…`);
      state.retry = setTimeout(connect, backoffMax);
      return;
    }
    const delay = state.backoff;
    state.backoff = Math.min(state.backoff * 2, backoffMax);
    status("disconnected", "disconnected — reconnecting…");
    state.retry = setTimeout(connect, delay);
  }

  connect();
  return {
    send(message) {
      const ws = state.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) return;
      ws.send(JSON.stringify(message));
    },
    connected: () => state.ws !== null,
    reconnectNow() {
      if (!state.ws) connect();
    },
  };
}
