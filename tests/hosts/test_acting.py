"""Answer, focus and screen on another host's session: sent to the owner over the broker and
acknowledged; the owner's own input switch applies. A real redis-server, real daemons, a real
tmux pane (private socket) showing a captured Claude Code permission dialog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon, wait_for
from tests.support.hosts import RedisServer, health, host_daemon, row, start_all
from tests.support.screens import asking, call, capture, dialog_pane


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(socket path, pane id) of a pane showing the classic dialog (tests/support/screens.py)."""
    with dialog_pane(tmp_path) as found:
        yield found


def test_answer_focus_and_screen_on_another_host_reach_the_owner(
    redis: RedisServer, daemons: list[Daemon], base: Path, pane: tuple[str, str]
) -> None:
    sock, pane_id = pane
    alpha = host_daemon(base, "alpha", redis, PURPLEMUX_INPUT="on")  # takes answers from others
    bravo = host_daemon(base, "bravo", redis)  # the loopback default: its own page only
    charlie = host_daemon(base, "charlie", redis, PURPLEMUX_INPUT="off")
    daemons.extend([alpha, bravo, charlie])
    start_all([alpha, bravo, charlie])
    for d in daemons:
        wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
    asking(alpha, "s-alpha", sock, pane_id)
    asking(charlie, "s-charlie", sock, pane_id)
    asking(bravo, "s-bravo", sock, pane_id)

    def asks(sid: str) -> dict[str, Any] | None:
        r = row(bravo, sid)
        return r if r is not None and r["state"] == "needs-input" else None

    remote = wait_for(lambda: asks("s-alpha"), timeout=15)
    wait_for(lambda: asks("s-charlie"), timeout=15)
    # Bravo lists alpha's prompt with alpha's name, and offers to answer and jump to it.
    assert remote["host"] == "alpha" and remote["view"]["host"] == "alpha"
    assert remote["view"]["actions"] == ["answer", "jump"]
    assert remote["view"]["group"]["key"].startswith("host:alpha|")

    # The screen comes from alpha's pane, through alpha.
    status, shown = call(bravo, "GET", "/api/sessions/s-alpha/screen")
    assert status == 200, shown
    assert "Do you want to proceed?" in shown["text"]
    prompt = shown["prompt"]
    assert prompt["kind"] == "permission" and shown["input"] is True

    before = capture(sock, pane_id)
    # Bad input is refused by bravo before it travels; a stale prompt id by alpha, nothing typed.
    status, reply = call(bravo, "POST", "/api/sessions/s-alpha/answer", {"option": "Yes"})
    assert status == 422 and "prompt_id" in reply["error"]
    status, reply = call(
        bravo, "POST", "/api/sessions/s-alpha/answer", {"prompt_id": "p-stale", "option": "Yes"}
    )
    assert status == 409 and reply["error"], reply
    assert capture(sock, pane_id) == before

    # A real answer: alpha types it (the stand-in is not Claude: the dialog stays, 504).
    status, reply = call(
        bravo,
        "POST",
        "/api/sessions/s-alpha/answer",
        {"prompt_id": prompt["id"], "option": "Yes", "by": "page"},
    )
    assert status == 504, reply
    assert reply["keys"] == ["1"] and "still on screen" in reply["error"]
    [audit] = [
        e
        for e in alpha.api("GET", "/api/sessions/s-alpha/events")["events"]
        if e["kind"] == "answer"
    ]
    assert (audit["by"], audit["option"]) == ("page", "Yes")
    wait_for(
        lambda: (
            (r := row(bravo, "s-alpha")) is not None
            and r["last_event"]["name"] == "Answer: Yes (page)"
        ),
        timeout=10,
    )

    # Charlie has input off: its refusal comes back as it is, and nothing is typed.
    status, reply = call(bravo, "GET", "/api/sessions/s-charlie/screen")
    assert status == 200 and reply["input"] is False
    status, reply = call(
        bravo,
        "POST",
        "/api/sessions/s-charlie/answer",
        {"prompt_id": reply["prompt"]["id"], "option": "Yes"},
    )
    assert status == 403, reply
    assert "turned off on this daemon" in reply["error"]
    assert not [
        e
        for e in charlie.api("GET", "/api/sessions/s-charlie/events")["events"]
        if e["kind"] == "answer"
    ]

    # Bravo answers on its own page (loopback default) but not for other hosts: only an explicit
    # PURPLEMUX_INPUT=on lets whoever writes to the shared Redis type into its panes.
    wait_for(
        lambda: (r := row(alpha, "s-bravo")) is not None and r["state"] == "needs-input",
        timeout=15,
    )
    status, shown = call(alpha, "GET", "/api/sessions/s-bravo/screen")
    assert status == 200 and shown["prompt"] is not None, shown
    status, reply = call(
        alpha,
        "POST",
        "/api/sessions/s-bravo/answer",
        {"prompt_id": shown["prompt"]["id"], "option": "Yes"},
    )
    assert status == 403 and "does not take answers from other hosts" in reply["error"], reply
    assert not [
        e
        for e in bravo.api("GET", "/api/sessions/s-bravo/events")["events"]
        if e["kind"] == "answer"
    ]

    # Focus: alpha brings its pane to the front and says so.
    status, reply = call(bravo, "POST", "/api/sessions/s-alpha/focus", {})
    assert status == 200, reply
    assert reply["pane"] == pane_id
    # A session nobody owns is still a 404.
    assert call(bravo, "GET", "/api/sessions/nope/screen")[0] == 404
    assert call(bravo, "POST", "/api/sessions/nope/focus", {})[0] == 404
