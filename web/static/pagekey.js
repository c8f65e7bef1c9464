// This page's key to act (read a pane, answer, focus, notifications): handed over once by the
// login link (signin.js) and kept in this origin's IndexedDB. Storage is per scheme, host AND
// port, unlike the login cookie, which every server on this host receives: another local server
// replaying the cookie has no way to this key. The service worker reads the same record (sw.js).
// Plain ES module: import { pageKey, storeKey, keyHeaders } from "/static/pagekey.js".

export const HEADER = "X-Purplemux-Key";
const DB = "purplemux";
const STORE = "keys";
const RECORD = "page";

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function run(mode, act) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = act(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

/** The stored key, or "" when this browser has none (it can then only view). Read each time,
 * not kept: a login in another tab replaces the cookie and the key together. */
export async function pageKey() {
  try {
    const value = await run("readonly", (store) => store.get(RECORD));
    return typeof value === "string" ? value : "";
  } catch (_) {
    return ""; // storage refused (a locked-down profile): this page views only
  }
}

/** Keep the key the login link handed over; true once stored. */
export async function storeKey(key) {
  try {
    await run("readwrite", (store) => store.put(key, RECORD));
    return true;
  } catch (_) {
    return false;
  }
}

/** Headers for a request that acts: the key, when there is one. */
export async function keyHeaders(headers = {}) {
  const key = await pageKey();
  return key ? { ...headers, [HEADER]: key } : { ...headers };
}

export const NO_KEY =
  "This page can only view: to act from it, open the link `purplemux open` prints, in this browser.";
