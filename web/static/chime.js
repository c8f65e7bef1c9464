// An optional chime when a session enters needs-input or review: off by default, switched on per
// state from the page's settings (kept in this browser), one sound per state, played only once a
// user gesture has allowed audio (as browsers require), and not for a row the user is looking at.

const KEY = "purplemux:chime";
// Two rising notes: something waits for you. One lower, softer note: a turn is done.
const SOUNDS = {
  "needs-input": { notes: [880, 1175], gain: 0.18 },
  review: { notes: [587], gain: 0.12 },
};
const NOTE_S = 0.14;

const boxes = [...document.querySelectorAll("input[data-chime]")];
let audio = null; // made by the first gesture; never before

function load() {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) || "{}");
    return value && typeof value === "object" ? value : {};
  } catch (_) {
    return {};
  }
}

const wanted = load();
for (const box of boxes) box.checked = wanted[box.dataset.chime] === true;

function anyOn() {
  return Object.values(wanted).some((on) => on === true);
}

// A gesture (the toggle itself, or any click or key after a reload) may start audio.
function unlock() {
  if (!anyOn()) return;
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  if (!audio) audio = new Context();
  if (audio.state === "suspended") audio.resume().catch(() => {});
}

for (const type of ["pointerdown", "keydown", "touchend"]) {
  document.addEventListener(type, unlock, { capture: true, passive: true });
}

for (const box of boxes) {
  box.addEventListener("change", () => {
    wanted[box.dataset.chime] = box.checked;
    try {
      localStorage.setItem(KEY, JSON.stringify(wanted));
    } catch (_) {
      // Not kept: it still applies to this page.
    }
    unlock();
  });
}

// The page is focused on that row: the user jumped to it (#session-…) or is working in it.
function looking(id) {
  if (!document.hasFocus() || document.visibilityState !== "visible") return false;
  const row = document.querySelector(`.row[data-session-id="${CSS.escape(id)}"]`);
  if (!row) return false;
  return location.hash === `#session-${id}` || row.contains(document.activeElement);
}

function play(sound) {
  const start = audio.currentTime + 0.02;
  sound.notes.forEach((frequency, i) => {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = "sine";
    osc.frequency.value = frequency;
    const at = start + i * NOTE_S;
    gain.gain.setValueAtTime(0, at);
    gain.gain.linearRampToValueAtTime(sound.gain, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + NOTE_S);
    osc.connect(gain).connect(audio.destination);
    osc.start(at);
    osc.stop(at + NOTE_S + 0.02);
  });
}

document.addEventListener("purplemux:entered", (event) => {
  const s = event.detail.session;
  const sound = SOUNDS[s.state];
  if (!sound || wanted[s.state] !== true) return;
  if (!audio || audio.state !== "running") return; // no gesture yet: browsers would refuse
  if (looking(s.id)) return;
  play(sound);
});
