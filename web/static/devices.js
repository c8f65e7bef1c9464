// "Your devices": this login's push subscriptions (the daemon shows a page only its own login's),
// listed when the settings open, each with a test notification and Remove. Talks to
// GET /api/push/subscriptions,
// POST /api/push/subscriptions/test and DELETE /api/push/subscriptions, with this page's key
// (pagekey.js, sent by api.js): a page with only the login cookie cannot list or change them. Text via
// textContent only.

import { api } from "/static/api.js";
import { el } from "/static/dom.js";

const settings = document.querySelector('[data-slot="settings"]');
const list = document.querySelector('[data-slot="devices"]');
const empty = document.querySelector('[data-slot="devices-empty"]');
const result = document.querySelector('[data-slot="devices-result"]');

function when(seconds) {
  return new Date(seconds * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function say(text, ok) {
  result.textContent = text;
  result.dataset.ok = String(ok);
  result.hidden = false;
}

function lastLine(device) {
  if (device.gone_at) return `Removed by its push service (${device.last ? device.last.result : "gone"}) on ${when(device.gone_at)}`;
  if (!device.last) return "No notification sent yet";
  return `Last notification ${when(device.last.at)}: ${device.last.result}`;
}

function item(device) {
  const li = el("li", "device");
  li.dataset.deviceId = device.id;
  if (device.gone_at) li.dataset.gone = "";
  li.append(el("span", "device-name", device.name));
  li.append(el("span", "device-meta muted", `added ${when(device.added_at)} · ${device.push_service}`));
  li.append(el("span", "device-last", lastLine(device)));
  const actions = el("span", "device-actions");
  if (!device.gone_at) {
    const test = el("button", "device-test", "Send test");
    test.type = "button";
    test.dataset.deviceAction = "test";
    actions.append(test);
  }
  const remove = el("button", "device-remove", "Remove");
  remove.type = "button";
  remove.dataset.deviceAction = "remove";
  actions.append(remove);
  li.append(actions);
  return li;
}

async function refresh() {
  let answer;
  try {
    answer = await api("GET", "/api/push/subscriptions");
  } catch (_) {
    say("The daemon did not answer: the list is not current.", false);
    return;
  }
  if (!answer.ok) {
    say(answer.data.error || `Could not list the devices (HTTP ${answer.status}).`, false);
    return;
  }
  const devices = answer.data.devices || [];
  list.replaceChildren(...devices.map(item));
  empty.hidden = devices.length > 0;
}

async function act(button) {
  const li = button.closest("[data-device-id]");
  const id = li.dataset.deviceId;
  const name = li.querySelector(".device-name").textContent;
  button.disabled = true;
  try {
    if (button.dataset.deviceAction === "test") {
      const answer = await api("POST", "/api/push/subscriptions/test", { id });
      if (answer.data.gone) say(`${name}: its push service says it is gone; it was removed.`, false);
      else if (answer.ok) say(answer.data.ok ? `Test sent to ${name}.` : `${name}: ${answer.data.result}`, answer.data.ok);
      else say(answer.data.error || `HTTP ${answer.status}`, false);
    } else {
      const answer = await api("DELETE", "/api/push/subscriptions", { id });
      say(answer.ok ? `${name} removed: it gets no more notifications.` : answer.data.error || `HTTP ${answer.status}`, answer.ok);
    }
  } catch (_) {
    say("The daemon did not answer.", false);
  } finally {
    button.disabled = false;
  }
  await refresh();
}

settings.addEventListener("toggle", () => {
  if (settings.open) refresh();
});
list.addEventListener("click", (event) => {
  const button = event.target.closest("[data-device-action]");
  if (button) act(button);
});
document.addEventListener("purplemux:push-enabled", refresh);
