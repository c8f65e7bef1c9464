// The JSON call to the daemon's API that devices.js and prompt.js make: it carries this page's
// key (pagekey.js).

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
