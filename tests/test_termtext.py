"""Session text printed to a terminal carries no escape sequence: `purplemux status` on a pty."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from purplemux.cli import TERMINAL_COLOURS
from purplemux.core.checks import Check
from purplemux.core.termtext import clean, tmux_text
from tests.support import Daemon, run_hook, wait_for

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
HOSTILE = [
    TITLE,
    CLEAR,
    CLIPBOARD,
    "\x1bP1$qm\x1b\\",  # DCS
    "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",  # OSC 8 hyperlink, ST-terminated
    "\x9b2J",  # an 8-bit CSI
    "\x9d0;c1 title\x9c",  # an 8-bit OSC
    "a\rFAKE",
    "b\nFAKE ROW",
    "\x1bc",  # full reset
    "\x08\x7f\x00",
    "\u202egnp.exe",  # right-to-left override
]


@pytest.mark.parametrize("text", HOSTILE)
def test_clean_leaves_no_control_character(text: str) -> None:
    out = clean("x" + text + "y")
    assert out.startswith("x") and out.endswith("y")
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out), repr(out)


# One table for the one cleaning function every caller uses (cli, report, doctor, tmux-status,
# peek, notifications): (what a session said, what a terminal is given).
TABLE = [
    # C0 controls: gone; line breaks and tabs become a space (one line), NUL/BEL/BS/DEL gone.
    ("a\x00b\x07c\x08d\x7fe", "abcde"),
    ("a\tb\nc\r\nd\ve\ff", "a b c d e f"),
    ("row\rFAKE", "row FAKE"),
    # C1 controls, as characters: NEL is a line break, the rest gone.
    ("a\x85b", "a b"),
    ("a\x80\x8d\x9ab", "ab"),
    # ESC sequences: removed whole, with their parameters.
    ("a\x1b[31;1mred\x1b[0mb", "aredb"),
    ("a\x1b[2J\x1b[Hb", "ab"),
    ("a\x1b[?1049hb", "ab"),
    ("a\x1bcb", "ab"),  # RIS, a full reset
    ("a\x1b(0b", "ab"),  # charset switch
    ("a\x1b7\x1b8b", "ab"),  # save/restore cursor
    ("a\x9b2Jb", "ab"),  # 8-bit CSI
    # OSC, DCS, APC, PM, SOS strings: removed up to their terminator (BEL or ST), or the end.
    ("a\x1b]0;title\x07b", "ab"),
    ("a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"),
    ("a\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),
    ("a\x9d0;title\x9cb", "ab"),  # 8-bit OSC ... ST
    ("a\x1bP1$qm\x1b\\b", "ab"),
    ("a\x1b_apc\x1b\\b", "ab"),
    ("a\x1b^pm\x1b\\b", "ab"),
    ("a\x1bXsos\x1b\\b", "ab"),
    ("a\x1b]0;never ends", "a"),
    ("a\x1b", "a"),
    # Bidi marks, embeddings, overrides and isolates: gone (they reorder what is shown).
    ("\u202egnp.exe", "gnp.exe"),
    ("a\u202a\u202b\u202c\u202d\u202eb", "ab"),
    ("a\u2066\u2067\u2068\u2069b", "ab"),
    ("a\u200e\u200f\u061cb", "ab"),
    # Other invisible format characters: zero-width space, word joiner, BOM, soft hyphen, tags.
    ("a\u200bb\u2060c\ufeffd\u00ade", "abcde"),
    ("a\U000e0041\U000e007fb", "ab"),
    ("a\u2028b\u2029c", "a b c"),  # line and paragraph separators: a space
    ("a\ud800b", "a\ufffdb"),  # a lone surrogate cannot be written: U+FFFD
    # What stays: text, emoji (with their joiner), and tmux's `#` (tmux_text escapes it).
    ("ünïcødé 🚀 ~/w/p-1 [x] 50%", "ünïcødé 🚀 ~/w/p-1 [x] 50%"),
    ("👩\u200d💻 \u0645\u0631\u062d\u0628\u0627", "👩\u200d💻 \u0645\u0631\u062d\u0628\u0627"),
    ("#[fg=red]##[x]#{pane}#(cmd)", "#[fg=red]##[x]#{pane}#(cmd)"),
    (123, "123"),
]


@pytest.mark.parametrize(("text", "shown"), TABLE)
def test_clean_table(text: object, shown: str) -> None:
    assert clean(text) == shown


LINES = [
    ("one\ntwo\r\nthree\tfour", "one\ntwo\nthree\tfour"),  # a screen keeps its lines and tabs
    ("a\x1b[31mb\x1b[0m\nc\x1b]0;t\x07", "ab\nc"),
    ("a\rb\vc\fd\x85e\u2028f", "abcdef"),  # no other break moves the cursor
    ("a\x00\x07\x9b2J\u202eb", "ab"),
]


@pytest.mark.parametrize(("text", "shown"), LINES)
def test_clean_lines_table(text: str, shown: str) -> None:
    assert clean(text, lines=True) == shown


TMUX = [
    # tmux draws `##` as `#`: every `#` doubled, so none opens a style, a format or a command.
    ("#[fg=red]x", "##[fg=red]x"),
    ("##[fg=red]x", "####[fg=red]x"),  # was made `#[fg=red]x` by the old filter: a style
    ("#{pane_id}#(id)#,#}", "##{pane_id}##(id)##,##}"),
    ("a\x1b[31mb#\n", "ab## "),  # cleaned first
]


@pytest.mark.parametrize(("text", "shown"), TMUX)
def test_tmux_text_table(text: str, shown: str) -> None:
    assert tmux_text(text) == shown


def test_clean_keeps_ordinary_text() -> None:
    assert clean("ünïcødé 🚀 ~/work/proj-1 [x] 50%") == "ünïcødé 🚀 ~/work/proj-1 [x] 50%"
    assert clean("two\nlines\r\n") == "two lines "
    assert clean(TITLE + "kept") == "kept"


def test_doctor_lines_are_plain_text_but_keep_their_colour() -> None:
    line = Check("daemon", "fail", f"running {TITLE}1.0{CLEAR}", f"fix{CLIPBOARD}").line(True)
    assert line.count("\x1b") == 2  # the FAIL label's colour and its reset
    assert line.startswith("\x1b[31;1mFAIL\x1b[0m")
    assert "running 1.0" in line and "\x07" not in line


OURS = re.compile("|".join(re.escape(c) for c in [*TERMINAL_COLOURS.values(), "\x1b[0m"]))


def test_status_on_a_terminal_prints_no_escape_sequence_but_its_colours(daemon: Daemon) -> None:
    evil = "".join(HOSTILE)
    base = {"transcript_path": "/nowhere.jsonl"}
    run_hook(
        daemon.home,
        {
            **base,
            "session_id": "s1",
            "cwd": f"/w/{evil}",
            "hook_event_name": "PreToolUse",
            "tool_name": f"Bash{CLIPBOARD}",
            "tool_input": {"command": evil},
        },
        pane=f"%1{TITLE}",
    )
    run_hook(
        daemon.home,
        {
            **base,
            "session_id": f"{CLEAR}s2",
            "cwd": "/w/p",
            "hook_event_name": "Stop",
            "last_assistant_message": f"done{evil}",
        },
    )
    run_hook(
        daemon.home,
        {
            **base,
            "session_id": "s3",
            "cwd": "/w/q",
            "hook_event_name": "PermissionRequest",
            "tool_name": f"Edit{TITLE}",
            "tool_input": {"file_path": evil},
        },
    )
    wait_for(lambda: len(daemon.sessions()) == 3)
    env = {**daemon.env, "TERM": "xterm"}
    command = shlex.join([sys.executable, "-m", "purplemux", "status"])
    out = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        env=env,
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out
    text = out.stdout.decode("utf-8")
    assert text.count("\x1b[0m") == 3  # each state badge is coloured: we did run on a terminal
    plain = OURS.sub("", text).replace("\r\n", "\n")
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", plain), repr(plain)
    lines = plain.splitlines()
    assert len(lines) == 4, lines  # the header and one row per session: no faked rows
    assert lines[0].split() == ["STATE", "NAME", "AGENT", "PANE", "FOR", "DETAIL", "FACTS", "ID"]
    assert "pwned" not in plain  # the title payload went with its sequence


def test_the_status_table_cleans_every_remote_string_with_the_host_column() -> None:
    from purplemux.cli import render_table

    view = {"label": "idle", "ended": False, "pane": "%1", "since": 0, "reason": "", "facts": ""}
    rows = [
        {"id": "local-1", "view": {**view, "name": "site", "host": "bravo", "colour": "grey"}},
        {
            "id": f"r{TITLE}",
            "view": {
                **view,
                "name": f"n{CLEAR}",
                "host": f"evil{TITLE}\r\nFAKE{CLIPBOARD}\u202e",
                "stale": True,
                "colour": "grey",
                "reason": f"why{CLIPBOARD}",
            },
        },
    ]
    text = render_table(rows, now=10.0, colour=False)
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text), repr(text)
    lines = text.splitlines()
    assert len(lines) == 3 and lines[0].split()[0] == "HOST"
    assert any(line.startswith("evil FAKE (offline)") for line in lines), lines


def test_a_daemon_error_reason_is_plain_text() -> None:
    from purplemux.cli.client import ApiError

    error = ApiError(409, f"the owning host failed: {TITLE}no{CLEAR}\r\nFAKE")
    assert str(error) == "the owning host failed: no FAKE" and error.status == 409
