// The login link's page: keep the page key it carries (pagekey.js), then go to the dashboard.
// The key is in this response only; the dashboard itself never carries it, so a server that
// replays the login cookie cannot fetch it.

import { storeKey } from "./pagekey.js";

const meta = document.querySelector('meta[name="purplemux-page-key"]');
const key = meta ? meta.content : "";
if (meta) meta.remove();
const stored = key ? await storeKey(key) : false;
if (!stored) {
  const status = document.querySelector('[data-slot="signin-status"]');
  if (status) status.textContent = "Signed in to view; this browser could not keep the key to act.";
}
// replace(): the login link (it holds the token) leaves the tab's history; a #session-… stays.
location.replace("/" + location.hash);
