// purplemux service worker: opens the app offline, shows Web Push messages and brings the
// dashboard back on click. Served at /static/sw.js with `Service-Worker-Allowed: /`,
// registered with scope `/`; the daemon stamps SHELL_VERSION with a digest of the page's files
// and SHELL_FILES with the list of the files the shell loads.

const SHELL_VERSION = "dev";
const CACHE_PREFIX = "purplemux-shell-";
const CACHE = `${CACHE_PREFIX}${SHELL_VERSION}`;
// The app shell: the page without sessions, its code, styles and icons. No API answer is ever
// cached here: the only session data kept offline is the last snapshot the page saved itself.
const SHELL_PAGE = "/app-shell";
// Every file the shell page loads: its tags' files, the modules they import, the manifest's
// icons and the tab's icon for each state. The daemon lists them as it serves this file
// (purplemux/server/webapp.py, from the page and its modules), so none can be left out.
const SHELL_FILES = [];
const SHELL = [SHELL_PAGE, ...SHELL_FILES];

self.addEventListener("install", (event) => {
  // A new version caches its own shell, then takes over at once.
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // One by one: a file that fails costs the offline shell that file, never the worker
      // (which also delivers the notifications).
      await Promise.allSettled(SHELL.map((path) => cache.add(new Request(path, { cache: "reload" }))));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

// The dashboard comes from the daemon while it answers; when it cannot be reached, from the
// shell (no browser error page). The shell's own files come from the cache of this version.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && url.pathname === "/") {
    event.respondWith(
      fetch(request).catch(async () => (await caches.match(SHELL_PAGE, { cacheName: CACHE })) || Response.error()),
    );
    return;
  }
  if (SHELL.includes(url.pathname) && url.pathname !== SHELL_PAGE && !url.search) {
    event.respondWith(
      (async () => (await caches.match(url.pathname, { cacheName: CACHE })) || fetch(request))(),
    );
  }
});

function readPayload(event) {
  if (!event.data) return {};
  try {
    const value = event.data.json();
    return value && typeof value === "object" ? value : { body: String(value) };
  } catch (_) {
    // Not JSON: show the text rather than nothing.
    return { body: event.data.text() };
  }
}

self.addEventListener("push", (event) => {
  const data = readPayload(event);
  const title = data.title || "purplemux";
  const options = {
    body: data.body || "",
    // Same tag per session: a newer state replaces the older notification, renotify alerts again.
    tag: data.tag || "purplemux",
    renotify: true,
    data: { url: data.url || "/", session_id: data.session_id || null },
  };
  if (data.prompt_id) options.data.prompt_id = data.prompt_id;
  // A permission prompt answers from the notification: one action per option label.
  if (data.prompt_id && Array.isArray(data.actions)) {
    // The action is the option's label (what /answer takes); its title may be shorter.
    const titles = Array.isArray(data.action_titles) ? data.action_titles : data.actions;
    options.actions = data.actions.map((label, i) => ({
      action: String(label),
      title: String(titles[i] ?? label),
    }));
    options.requireInteraction = true;
  }
  event.waitUntil(self.registration.showNotification(title, options));
});

// The page key the login link handed to the page (pagekey.js keeps it in this origin's
// IndexedDB; a worker has no localStorage). The cookie alone may not answer: another local
// server receives it too. "" when there is none.
function pageKey() {
  return new Promise((resolve) => {
    const request = indexedDB.open("purplemux", 1);
    request.onupgradeneeded = () => request.result.createObjectStore("keys");
    request.onerror = () => resolve("");
    request.onsuccess = () => {
      const db = request.result;
      try {
        const get = db.transaction("keys", "readonly").objectStore("keys").get("page");
        get.onsuccess = () => resolve(typeof get.result === "string" ? get.result : "");
        get.onerror = () => resolve("");
      } catch (_) {
        resolve("");
      } finally {
        db.close(); // closes once the transaction is done
      }
    };
  });
}

async function keyHeaders(headers) {
  const key = await pageKey();
  return key ? { ...headers, "X-Purplemux-Key": key } : headers;
}

// An action button: answer the prompt the notification was about, with the page key (and the
// dashboard's cookie, same origin). If it cannot be answered, say why and open the page.
async function answerFromNotification(data, option) {
  const path = `/api/sessions/${encodeURIComponent(data.session_id)}/answer`;
  let reason = "";
  try {
    const response = await fetch(new URL(path, self.registration.scope), {
      method: "POST",
      credentials: "same-origin",
      headers: await keyHeaders({ "Content-Type": "application/json", Accept: "application/json" }),
      body: JSON.stringify({ prompt_id: data.prompt_id, option, by: "push" }),
    });
    if (response.ok) return true;
    const body = await response.json().catch(() => ({}));
    reason = body.error || `HTTP ${response.status}`;
  } catch (_) {
    reason = "the daemon did not answer";
  }
  await self.registration.showNotification("Not answered", {
    body: `${option}: ${reason}`,
    tag: `purplemux-${data.session_id}`,
    data: { url: data.url || "/", session_id: data.session_id },
  });
  return false;
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data || {};
  const url = new URL(data.url || "/", self.registration.scope).href;
  if (event.action && data.prompt_id && data.session_id) {
    event.waitUntil(answerFromNotification(data, event.action));
    return;
  }
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const dashboard = windows.find((client) => client.url.startsWith(self.registration.scope));
      if (dashboard) {
        try {
          await dashboard.focus();
        } catch (_) {
          // Focus can be refused (no user activation on some platforms); the message still helps.
        }
        dashboard.postMessage({ type: "purplemux:open-session", session_id: data.session_id, url });
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});

// The browser replaced the subscription (expiry, key rotation): subscribe again and tell the
// daemon, or pushes stop silently. The old endpoint is pruned by the daemon on its next 410.
self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(
    (async () => {
      let subscription = event.newSubscription;
      if (!subscription && event.oldSubscription) {
        subscription = await self.registration.pushManager.subscribe(event.oldSubscription.options);
      }
      if (!subscription) return;
      await fetch(new URL("/api/push/subscriptions", self.registration.scope), {
        method: "POST",
        credentials: "same-origin",
        headers: await keyHeaders({ "Content-Type": "application/json" }),
        body: JSON.stringify(subscription.toJSON()),
      });
    })(),
  );
});
