// The header's usage gauges: one per account (agent + account label), its 5-hour and weekly
// use as bars with the percent and the reset time in the browser's local time, "reset" once
// that time has passed. Fed by the feed's snapshot (`limits`) and its `limits` messages
// (purplemux/daemon/limit_keeper.py); hidden while no agent has reported its limits.

const WINDOWS = [
  ["five_hour", "5h"],
  ["seven_day", "7d"],
];

let shown = [];
let box = null;

function resetClock(ts) {
  const d = new Date(ts * 1000);
  const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

function windowEl(name, w, now) {
  const el = document.createElement("span");
  el.className = "limit-window";
  el.dataset.window = name;
  const passed = w.reset || (w.resets_at && w.resets_at <= now);
  const used = passed ? 0 : Math.round(Number(w.used_percent) || 0);
  const bar = document.createElement("meter");
  bar.className = "limit-bar";
  bar.min = 0;
  bar.max = 100;
  bar.low = 75;
  bar.high = 90;
  bar.optimum = 0;
  bar.value = used;
  const text = document.createElement("span");
  text.className = "limit-text";
  text.dataset.slot = "text";
  if (passed) {
    text.textContent = `${name} reset`;
    el.dataset.reset = "";
  } else {
    text.textContent = `${name} ${used}%`;
  }
  if (w.resets_at) {
    el.title = `${name}: ${used}% used; ${passed ? "reset at" : "resets"} ${resetClock(w.resets_at)}`;
    if (!passed) {
      const at = document.createElement("time");
      at.className = "limit-reset";
      at.dateTime = new Date(w.resets_at * 1000).toISOString();
      at.textContent = resetClock(w.resets_at);
      text.append(" · ", at);
    }
  }
  el.append(bar, text);
  return el;
}

function draw() {
  if (!box) return;
  const now = Date.now() / 1000;
  const items = shown.map((r) => {
    const li = document.createElement("li");
    li.className = "limit";
    li.dataset.agent = r.agent;
    li.dataset.account = r.account;
    const who = document.createElement("span");
    who.className = "limit-who";
    who.textContent = r.account === r.agent ? r.agent : `${r.agent} · ${r.account}`;
    li.append(who);
    for (const [key, name] of WINDOWS) if (r[key]) li.append(windowEl(name, r[key], now));
    return li;
  });
  box.replaceChildren(...items);
  box.hidden = items.length === 0;
}

// fillLimits(el, readings): show these readings (every account's, as GET /api/limits has them).
export function fillLimits(el, readings) {
  box = el;
  shown = Array.isArray(readings) ? readings.filter((r) => r && r.agent && r.account) : [];
  draw();
}

// A reset time passes while the page is open: redraw each half minute so it reads "reset".
setInterval(draw, 30000);
