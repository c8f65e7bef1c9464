"""Fast checks (no Claude, no tmux) of the usage-limit parts of the harness: the fake API's
LIMIT answers and rate-limit headers (fake_limits.py), the three logins (logins.py) and the
recording statusLine command (statusline.py). Not marked e2e."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import time
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .fake_limits import ACCOUNT_MESSAGE, PLAIN_MESSAGE, LimitControl, usage_headers
from .harness import claude_env, make_claude_home
from .logins import GATEWAY_AUDIENCE, gateway_token
from .statusline import STATUSLINE_OUTPUT, StatusLineLog
from .test_fake_api import body, post, text, user

P = "anthropic-ratelimit-unified-"


@pytest.fixture
def api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as fake:
        yield fake


@dataclass(frozen=True)
class Rejection:
    code: int
    headers: Message
    payload: Any


def rejected(api: FakeAnthropicAPI, prompt: str) -> Rejection:
    with pytest.raises(urllib.error.HTTPError) as caught:
        post(api, body(user(text(prompt)))).close()
    with caught.value as error:
        return Rejection(error.code, error.headers, json.loads(error.read()))


def test_limit_5h_is_a_429_with_the_headers_of_a_subscription_at_its_5_hour_limit(
    api: FakeAnthropicAPI,
) -> None:
    api.limits = LimitControl(retry_after=3, reset_in=600)
    before = int(time.time())
    error = rejected(api, "LIMIT:5h")
    assert error.code == 429
    payload = error.payload
    assert payload["error"] == {"type": "rate_limit_error", "message": ACCOUNT_MESSAGE}
    h = error.headers
    assert h[P + "status"] == "rejected"
    assert h[P + "representative-claim"] == "five_hour"
    assert before + 600 <= int(h[P + "reset"]) <= int(time.time()) + 600
    assert h[P + "5h-reset"] == h[P + "reset"]
    assert (h[P + "5h-utilization"], h[P + "5h-status"]) == ("1.0", "rejected")
    assert (h[P + "7d-utilization"], h[P + "7d-status"]) == ("0.62", "allowed")
    assert h[P + "overage-disabled-reason"] == "org_level_disabled"
    assert h["retry-after"] == "3"
    assert "x-should-retry" not in h
    assert api.messages_requests()[0].status == 429


def test_limit_7d_and_plain(api: FakeAnthropicAPI) -> None:
    week = rejected(api, "LIMIT:7d").headers
    assert week[P + "representative-claim"] == "seven_day"
    assert (week[P + "7d-utilization"], week[P + "7d-status"]) == ("1.0", "rejected")
    assert (week[P + "5h-utilization"], week[P + "5h-status"]) == ("0.35", "allowed")
    assert week[P + "7d-reset"] == week[P + "reset"]
    plain = rejected(api, "LIMIT:plain")
    assert plain.payload["error"]["message"] == PLAIN_MESSAGE
    assert not [k for k in plain.headers if k.lower().startswith(P)]
    assert "retry-after" not in plain.headers


def test_ok_after_lets_a_limit_prompt_through_and_side_calls_are_never_limited(
    api: FakeAnthropicAPI,
) -> None:
    with post(api, body(user(text("LIMIT:5h")), tools=False, stream=False)) as side:
        assert side.status == 200
    api.limits.allow_from_now()
    with post(api, body(user(text("LIMIT:5h")), stream=False)) as response:
        assert json.loads(response.read())["content"][0]["text"] == PLAIN_ANSWER


def test_control_headers_go_on_every_200_with_resets_from_now(api: FakeAnthropicAPI) -> None:
    api.limits.headers = usage_headers(0.42, 0.81)
    now = time.time()
    with post(api, body(user(text("hi")))) as streamed:
        h = streamed.headers
        assert streamed.read()
    assert (h[P + "status"], h[P + "5h-utilization"], h[P + "7d-utilization"]) == (
        "allowed",
        "0.42",
        "0.81",
    )
    assert abs(int(h[P + "5h-reset"]) - (now + 7200)) <= 2
    assert abs(int(h[P + "7d-reset"]) - (now + 3 * 86400)) <= 2
    with post(api, body(user(text("hi")), tools=False, stream=False)) as side:
        assert side.headers[P + "7d-utilization"] == "0.81"
    warn = usage_headers(0.1, 0.81, status="allowed_warning", surpassed=0.75)
    assert warn[P + "7d-surpassed-threshold"] == "0.75"
    assert warn[P + "representative-claim"] == "seven_day"


def jwt_payload(token: str) -> dict[str, object]:
    middle = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(middle + "=" * (-len(middle) % 4))))


def test_each_login_has_its_own_files_and_variables(tmp_path: Path) -> None:
    api_home = make_claude_home(tmp_path / "a", login="apikey")
    env = claude_env(api_home.home, "http://127.0.0.1:1", login="apikey")
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-fake" and "ANTHROPIC_AUTH_TOKEN" not in env
    assert not (api_home.config_dir / ".credentials.json").exists()

    gw_home = make_claude_home(tmp_path / "g", login="gateway")
    env = claude_env(gw_home.home, "http://127.0.0.1:1", login="gateway")
    assert "ANTHROPIC_API_KEY" not in env
    claims = jwt_payload(env["ANTHROPIC_AUTH_TOKEN"])
    assert claims["aud"] == GATEWAY_AUDIENCE and int(str(claims["exp"])) > time.time()
    assert json.loads(base64.urlsafe_b64decode(gateway_token().split(".")[0] + "=="))["alg"] == (
        "none"
    )

    sub_home = make_claude_home(tmp_path / "s", login="subscription")
    env = claude_env(sub_home.home, "http://127.0.0.1:1", login="subscription")
    assert "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env
    creds_path = sub_home.config_dir / ".credentials.json"
    assert stat.S_IMODE(creds_path.stat().st_mode) == 0o600
    oauth = json.loads(creds_path.read_text())["claudeAiOauth"]
    assert oauth["subscriptionType"] == "max" and oauth["expiresAt"] > time.time() * 1000
    assert "user:inference" in oauth["scopes"]
    config = json.loads((sub_home.home / ".claude.json").read_text())
    assert config["oauthAccount"]["accountUuid"]
    assert config["hasCompletedOnboarding"] is True

    with pytest.raises(ValueError, match="use one of apikey, gateway, subscription"):
        make_claude_home(tmp_path / "x", login="sso")


def test_the_statusline_recorder_keeps_each_input_and_prints_its_line(tmp_path: Path) -> None:
    log = StatusLineLog(tmp_path / "sl.jsonl")
    home = make_claude_home(tmp_path, login="gateway", statusline_command=log.command)
    settings = json.loads(home.settings_path.read_text())
    assert settings["statusLine"] == {"type": "command", "command": log.command}
    reading = {"five_hour": {"used_percentage": 42, "resets_at": 1}}
    for stdin in ('{"session_id": "s1"}', json.dumps({"rate_limits": reading}, indent=2)):
        out = subprocess.run(
            log.command, shell=True, input=stdin, capture_output=True, text=True, check=True
        )
        assert out.stdout == STATUSLINE_OUTPUT + "\n"
    assert log.inputs()[0] == {"session_id": "s1"}
    assert log.rate_limits() == [reading]
    assert log.wait_for_rate_limits("five_hour", timeout=1) == reading
