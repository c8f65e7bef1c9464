"""The three ways Claude Code can be logged in, as throw-away files and variables (no network).

Why: Claude 2.1.332 applies the unified rate-limit headers only for a claude.ai subscription
or a gateway, never for an API key (claude-code-bg-and-limits.md, "Set-up" and "B. Usage
limits"), so each limit behaviour needs its own login. harness.py's ``make_claude_home(...,
login=...)`` writes the files and ``claude_env(..., login=...)`` sets the variables.

============  ==========================================================================
login         what it is
============  ==========================================================================
apikey        ``ANTHROPIC_API_KEY=sk-ant-fake`` (the default of the whole tier)
gateway       ``ANTHROPIC_AUTH_TOKEN`` = an unsigned JWT whose payload has ``aud``
              "claude-gateway"; no API key. Requests carry ``Authorization: Bearer``.
subscription  ``~/.claude/.credentials.json`` with a made-up ``claudeAiOauth`` (Max,
              OAuth scopes; mode 600) and ``oauthAccount`` in ``~/.claude.json``; no API
              key. The banner says "Claude Max".
============  ==========================================================================

Everything here is fake: the tokens only ever reach the local stand-in API.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

LOGINS = ("apikey", "gateway", "subscription")
GATEWAY_AUDIENCE = "claude-gateway"
FAKE_ACCESS_TOKEN = "sk-ant-oat01-FAKE-" + "0" * 40
FAKE_REFRESH_TOKEN = "sk-ant-ort01-FAKE-" + "0" * 40
OAUTH_SCOPES = ["user:inference", "user:profile", "user:sessions:claude_code"]
FAKE_ACCOUNT = {
    "accountUuid": "00000000-0000-4000-8000-00000000a11c",
    "emailAddress": "fake-user@example.com",
    "organizationUuid": "00000000-0000-4000-8000-0000000000f9",
    "organizationName": "Fake Org",
    "displayName": "Fake User",
}
FAKE_API_KEY = "sk-ant-fake"
YEAR = 365 * 24 * 3600


def check_login(login: str) -> str:
    if login not in LOGINS:
        raise ValueError(f"unknown login {login!r}: use one of {', '.join(LOGINS)}")
    return login


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def gateway_token(expires_in: int = YEAR) -> str:
    """An unsigned JWT (``alg: none``) with ``aud`` "claude-gateway": what makes Claude treat
    a non-Anthropic ``ANTHROPIC_BASE_URL`` as a gateway and apply the unified headers."""
    header = _b64url(json.dumps({"alg": "none"}).encode())
    payload = {"aud": GATEWAY_AUDIENCE, "sub": "fake-user", "exp": int(time.time()) + expires_in}
    return f"{header}.{_b64url(json.dumps(payload).encode())}.x"


def credentials(subscription_type: str = "max") -> dict[str, Any]:
    """The ``.credentials.json`` of a fake claude.ai subscription."""
    return {
        "claudeAiOauth": {
            "accessToken": FAKE_ACCESS_TOKEN,
            "refreshToken": FAKE_REFRESH_TOKEN,
            "expiresAt": int((time.time() + YEAR) * 1000),
            "scopes": OAUTH_SCOPES,
            "subscriptionType": subscription_type,
            "rateLimitTier": "default_claude_max_5x",
        }
    }


def login_variables(login: str, api_key: str = FAKE_API_KEY) -> dict[str, str]:
    """The variables a login adds to the environment (besides the base URL); only the API-key
    login has ``ANTHROPIC_API_KEY``."""
    if check_login(login) == "apikey":
        return {"ANTHROPIC_API_KEY": api_key}
    if login == "gateway":
        return {"ANTHROPIC_AUTH_TOKEN": gateway_token()}
    return {}


def write_login_files(home: Path, login: str) -> None:
    """Add the files of ``login`` to a HOME that already has ``.claude.json`` and ``.claude/``
    (only the subscription has any: credentials, mode 600, and ``oauthAccount``)."""
    if check_login(login) != "subscription":
        return
    creds = home / ".claude" / ".credentials.json"
    creds.write_text(json.dumps(credentials(), indent=2))
    os.chmod(creds, 0o600)
    config_path = home / ".claude.json"
    config = json.loads(config_path.read_text())
    config["oauthAccount"] = dict(FAKE_ACCOUNT)
    config_path.write_text(json.dumps(config, indent=2))
