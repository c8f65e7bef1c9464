// What devices.js and prompt.js share: a JSON call to the daemon's API that carries this page's
// key (pagekey.js), and making an element whose text is only ever set through textContent.

import { keyHeaders } from "./pagekey.js";

// Resolves to {ok, status, data}; data is {} when the answer is not JSON (or is null).
export async function api(method, path, body) {
  const base = body ? { "Content-Type": "application/json", Accept: "application/json" } : { Accept: "application/json" };
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: await keyHeaders(base),
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => null);
  return { ok: response.ok, status: response.status, data: data || {} };
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
