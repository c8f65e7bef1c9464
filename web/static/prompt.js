// Acting from the dashboard: a needs-input row opens to show the prompt on its pane (title, the
// pane's last lines, one button per option, a text field for a question's free answer), and
// a row in a pane has "Jump" (bring its tmux pane to the front); which rows may do either is
// the session's view (its actions, on the row as data-actions). Talks to GET /screen, POST /answer,
// POST /focus. Watches the rows app.js renders; needs nothing from it.
// Session and screen text only ever reaches the page through textContent.
// Each of these calls acts, so it carries this page's key (pagekey.js); a page opened with the
// login cookie alone has none, and says how to get it back instead of acting.

import { api } from "./api.js";
import { el } from "./dom.js";
import { NO_KEY, pageKey } from "./pagekey.js";

const POLL_MS = 1500;
const LAST_LINES = 12;

const open = new Map(); // session id -> {timer, promptId, busy}

function sessionPath(id, what) {
  return `/api/sessions/${encodeURIComponent(id)}/${what}`;
}

function panelOf(row) {
  let panel = row.querySelector('[data-slot="prompt"]');
  if (!panel) {
    panel = el("div", "prompt");
    panel.dataset.slot = "prompt";
    panel.hidden = true;
    const body = row.querySelector(".row-body") || row;
    body.append(panel);
  }
  return panel;
}

function say(panel, text, ok) {
  let line = panel.querySelector('[data-slot="prompt-result"]');
  if (!line) {
    line = el("p", "prompt-result");
    line.dataset.slot = "prompt-result";
    line.setAttribute("role", "status");
    panel.append(line);
  }
  line.textContent = text;
  line.dataset.ok = String(Boolean(ok));
  line.hidden = !text;
}

function lastLines(text) {
  const lines = text.replace(/\s+$/, "").split("\n");
  return lines.slice(-LAST_LINES).join("\n");
}

function render(row, screen) {
  const id = row.dataset.sessionId;
  const panel = panelOf(row);
  const prompt = screen.prompt;
  const state = open.get(id);
  if (!prompt) {
    panel.hidden = true;
    panel.replaceChildren();
    delete panel.dataset.noKey;
    if (state) state.promptId = null;
    return;
  }
  if (state && state.promptId === prompt.id && panel.dataset.promptId === prompt.id) return;
  if (state) state.promptId = prompt.id;
  panel.dataset.promptId = prompt.id;
  panel.dataset.kind = prompt.kind;
  const title = el("p", "prompt-title");
  title.dataset.slot = "prompt-title";
  const kind = el("span", "prompt-kind", prompt.kind);
  title.append(kind, " ", el("span", "prompt-title-text", prompt.title));
  const question = prompt.question && prompt.question !== prompt.title ? el("p", "prompt-question", prompt.question) : null;
  const pre = el("pre", "prompt-screen", lastLines(screen.text));
  pre.dataset.slot = "prompt-screen";
  const buttons = el("div", "prompt-options");
  for (const option of prompt.options) {
    if (option.free_text) continue;
    const button = el("button", "prompt-option", option.label);
    button.type = "button";
    button.dataset.action = "answer";
    button.dataset.option = option.label;
    if (option.selected) button.dataset.selected = "";
    buttons.append(button);
  }
  const parts = [title];
  if (question) parts.push(question);
  parts.push(pre, buttons);
  if (prompt.free_text) {
    const form = el("form", "prompt-text");
    form.dataset.action = "answer-text";
    const input = el("input");
    input.type = "text";
    input.name = "text";
    input.placeholder = "Type an answer";
    input.setAttribute("aria-label", "Your answer");
    input.maxLength = 2000;
    const send = el("button", "prompt-send", "Send");
    send.type = "submit";
    form.append(input, send);
    parts.push(form);
  }
  const cancel = el("button", "prompt-cancel", "Esc");
  cancel.type = "button";
  cancel.dataset.action = "answer-cancel";
  cancel.title = "Cancel the prompt (Esc)";
  buttons.append(cancel);
  if (prompt.ambiguous) {
    // Two readings of the screen: the daemon answers nothing, so the page offers nothing.
    buttons.replaceChildren();
    const form = parts.find((p) => p.dataset && p.dataset.action === "answer-text");
    if (form) parts.splice(parts.indexOf(form), 1);
    const why = el("p", "prompt-result", `Answer this one in the terminal: ${prompt.ambiguous}.`);
    why.dataset.slot = "prompt-ambiguous";
    parts.push(why);
  } else if (screen.input === false) {
    for (const b of [...buttons.querySelectorAll("button")]) b.disabled = true;
    parts.push(el("p", "prompt-result", "Answering is off on this daemon (PURPLEMUX_INPUT)."));
  }
  panel.replaceChildren(...parts);
  delete panel.dataset.noKey;
  panel.hidden = false;
}

// This page may not act (no page key, or not this login's): say how to get the key back.
function cannotAct(row, text) {
  const panel = panelOf(row);
  if (panel.dataset.noKey === text && !panel.hidden) return;
  const line = el("p", "prompt-result", text);
  line.dataset.slot = "prompt-result";
  line.dataset.ok = "false";
  panel.replaceChildren(line);
  panel.dataset.noKey = text;
  delete panel.dataset.promptId;
  panel.hidden = false;
}

async function refresh(row) {
  const id = row.dataset.sessionId;
  const state = open.get(id);
  if (!state || state.busy) return;
  try {
    const { ok, status, data } = await api("GET", sessionPath(id, "screen"));
    if (open.get(id) !== state || state.busy) return;
    if (ok) render(row, data);
    else if (status === 403) cannotAct(row, (await pageKey()) ? data.error || NO_KEY : NO_KEY);
  } catch (_) {
    // The daemon is unreachable: the connection status says so.
  }
}

function watch(row) {
  const id = row.dataset.sessionId;
  if (!id) return;
  // The session's view says when there is a prompt to answer (present.py's "answer" action).
  const wants = (row.dataset.actions || "").split(" ").includes("answer");
  const state = open.get(id);
  if (wants && !state) {
    const entry = { timer: null, promptId: null, busy: false };
    open.set(id, entry);
    entry.timer = setInterval(() => {
      if (document.visibilityState === "visible") refresh(row);
    }, POLL_MS);
    refresh(row);
  } else if (!wants && state) {
    clearInterval(state.timer);
    open.delete(id);
    const panel = row.querySelector('[data-slot="prompt"]');
    if (panel) {
      panel.hidden = true;
      panel.replaceChildren();
      delete panel.dataset.promptId;
    }
  }
}

async function answer(row, body) {
  const id = row.dataset.sessionId;
  const panel = panelOf(row);
  const state = open.get(id);
  const promptId = panel.dataset.promptId;
  if (!promptId || (state && state.busy)) return;
  if (state) state.busy = true;
  for (const b of panel.querySelectorAll("button, input")) b.disabled = true;
  say(panel, "Answering…", true);
  try {
    const { status, data } = await api("POST", sessionPath(id, "answer"), { prompt_id: promptId, by: "page", ...body });
    if (status === 200) {
      say(panel, `Answered: ${data.answered}`, true);
      panel.dataset.answered = data.answered;
    } else {
      say(panel, data.error || `Not answered (HTTP ${status})`, false);
      for (const b of panel.querySelectorAll("button, input")) b.disabled = false;
      if (state) state.promptId = null; // show what the pane shows now
    }
  } catch (_) {
    say(panel, "The daemon did not answer.", false);
  } finally {
    if (state) state.busy = false;
  }
}

async function jump(row, button) {
  const id = row.dataset.sessionId;
  button.disabled = true;
  try {
    const { ok, status, data } = await api("POST", sessionPath(id, "focus"), {});
    button.dataset.result = ok ? "ok" : "failed";
    const refused = status === 403 && !(await pageKey()) ? NO_KEY : data.error;
    button.title = ok
      ? data.client
        ? `Switched ${data.client} to ${data.pane}`
        : `Selected ${data.pane}; no terminal is attached to its tmux server`
      : refused || "Could not focus the pane";
  } catch (_) {
    button.dataset.result = "failed";
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("click", (event) => {
  const target = event.target.closest("[data-action]");
  if (!target) return;
  const row = target.closest("[data-session-id]");
  if (!row) return;
  if (target.dataset.action === "answer") answer(row, { option: target.dataset.option });
  else if (target.dataset.action === "answer-cancel") answer(row, { cancel: true });
  else if (target.dataset.action === "jump") jump(row, target);
});

document.addEventListener("submit", (event) => {
  const form = event.target.closest('[data-action="answer-text"]');
  if (!form) return;
  event.preventDefault();
  const row = form.closest("[data-session-id]");
  const text = form.elements.text.value.trim();
  if (row && text) answer(row, { text });
});

function scan() {
  for (const row of document.querySelectorAll(".row[data-session-id]")) watch(row);
  for (const id of [...open.keys()]) {
    if (!document.getElementById(`session-${id}`)) {
      clearInterval(open.get(id).timer);
      open.delete(id);
    }
  }
}

// Rows change actions (data-actions) and come and go as the feed moves: look again on each change.
const groups = document.querySelector(".sidebar") || document.body;
new MutationObserver(scan).observe(groups, {
  subtree: true,
  childList: true,
  attributes: true,
  attributeFilter: ["data-actions"],
});
scan();
