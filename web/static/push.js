// Turning on Web Push for this device, and local notifications while the page is open.
// Plain ES module, no bundler: import { enablePush, showLocalNotification } from "/static/push.js".
// The daemon's push routes need this page's key (pagekey.js), not just the login cookie.

import { NO_KEY, keyHeaders, pageKey } from "./pagekey.js";

const SW_URL = "/static/sw.js";
const SW_SCOPE = "/";
const BLOCKED =
  "Notifications are blocked for this site. " +
  "Allow them in the browser's site settings, then try again.";

function failure(reason) {
  return { ok: false, reason };
}

class Timeout extends Error {}

// Settles with the promise, or rejects with Timeout after ms: some browser calls never settle.
function within(promise, ms) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function base64UrlToBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
  const raw = atob(padded);
  return Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
}

function sameBytes(a, b) {
  if (!a || !b) return false;
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

// The worker must be active before pushManager.subscribe() accepts the registration.
function activated(registration) {
  if (registration.active) return Promise.resolve(registration);
  const worker = registration.installing || registration.waiting;
  return new Promise((resolve, reject) => {
    if (!worker) {
      reject(new Error("no service worker is installing"));
      return;
    }
    worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve(registration);
      if (worker.state === "redundant") reject(new Error("the service worker was discarded"));
    });
  });
}

async function fetchJson(url, options, ms) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await fetch(url, { credentials: "same-origin", ...options, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

async function fetchKey(keyUrl, ms) {
  const response = await fetchJson(keyUrl, { headers: await keyHeaders({ Accept: "application/json" }) }, ms);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const text = (await response.text()).trim();
  let key = text;
  if (text.startsWith("{")) {
    const body = JSON.parse(text);
    key = body.key || body.applicationServerKey || body.public_key || "";
  }
  const bytes = base64UrlToBytes(key);
  if (bytes.length !== 65 || bytes[0] !== 4) throw new Error("not a P-256 public key");
  return bytes;
}

/**
 * Turn on Web Push for this device: permission, service worker, subscription, and telling the
 * daemon. Resolves to {ok: true} or {ok: false, reason} (a sentence to show the user); never
 * rejects and never waits on the network longer than timeoutMs per step.
 */
export async function enablePush({
  keyUrl = "/api/push/key",
  subscribeUrl = "/api/push/subscriptions",
  timeoutMs = 8000,
} = {}) {
  const supported =
    "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  if (!supported) {
    return failure("This browser cannot receive push notifications.");
  }
  if (!window.isSecureContext) {
    return failure(
      "Notifications need a secure page: open the dashboard over https or on localhost.",
    );
  }
  let permission = Notification.permission;
  if (permission === "default") {
    try {
      permission = await Notification.requestPermission();
    } catch (_) {
      permission = Notification.permission;
    }
  }
  if (permission !== "granted") {
    return failure(BLOCKED);
  }
  if (!(await pageKey())) {
    return failure(NO_KEY);
  }

  let registration;
  try {
    registration = await within(
      navigator.serviceWorker.register(SW_URL, { scope: SW_SCOPE }).then(activated),
      timeoutMs,
    );
  } catch (_) {
    return failure("The notification helper (service worker) could not start in this browser.");
  }

  let key;
  try {
    key = await fetchKey(keyUrl, timeoutMs);
  } catch (_) {
    return failure("Could not get the notification key from purplemux. Is the daemon running?");
  }

  let subscription;
  try {
    subscription = await within(registration.pushManager.getSubscription(), timeoutMs);
    if (subscription && !sameBytes(subscription.options.applicationServerKey, key)) {
      // The daemon's key changed (new home folder, say): the old subscription is useless.
      await within(subscription.unsubscribe(), timeoutMs);
      subscription = null;
    }
    if (!subscription) {
      // Offline this can fail at once or never settle at all: hence the race.
      subscription = await within(
        registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
        timeoutMs,
      );
    }
  } catch (error) {
    if (error instanceof Timeout) {
      return failure(
        "The browser's push service did not answer. Check the internet connection and try again.",
      );
    }
    if (error && error.name === "NotAllowedError") {
      return failure(BLOCKED);
    }
    return failure(
      "The browser could not reach its push service. Check the internet connection and try again.",
    );
  }

  try {
    const response = await fetchJson(
      subscribeUrl,
      {
        method: "POST",
        headers: await keyHeaders({ "Content-Type": "application/json" }),
        body: JSON.stringify(subscription.toJSON()),
      },
      timeoutMs,
    );
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      if (response.status === 403 || response.status === 409) {
        return failure(body.error || `purplemux did not save this device (HTTP ${response.status}).`);
      }
      return failure(
        `purplemux did not save this device (HTTP ${response.status}). ` +
          "Reload the page and try again.",
      );
    }
  } catch (_) {
    return failure("Could not reach purplemux to save this device. Is the daemon running?");
  }
  return { ok: true };
}

/**
 * Show a notification from the page itself (open but not focused). Resolves to true if shown.
 * Uses the service worker when there is one, so a click focuses the dashboard as pushes do.
 */
export async function showLocalNotification(title, body, tag, data = {}) {
  if (!("Notification" in window) || Notification.permission !== "granted") return false;
  const options = { body, tag, renotify: Boolean(tag), data: { url: "/", ...data } };
  try {
    const registration =
      "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistration(SW_SCOPE) : null;
    if (registration && registration.active) {
      await registration.showNotification(title, options);
      return true;
    }
    const notification = new Notification(title, options);
    notification.addEventListener("click", () => {
      window.focus();
      notification.close();
    });
    return true;
  } catch (_) {
    return false;
  }
}
