"""What a notification says about a session (pure: no I/O)."""

from __future__ import annotations

from typing import Any

from purplemux.model import Session, State
from purplemux.present import present

BODY_LIMIT = 180
"""Longest body, in characters: phones cut longer ones anyway."""
TITLE_LIMIT = 120
"""Longest title: the need and its detail stay on it, a long command is cut."""


def push_payload(session: Session) -> dict[str, Any]:
    """The JSON the service worker turns into a notification."""
    return {
        "title": title(session),
        "body": body(session),
        "tag": f"purplemux-{session.id}",
        "session_id": session.id,
        "state": session.state.value,
        "url": f"/#session-{session.id}",
    }


def context_payload(session: Session) -> dict[str, Any]:
    """The push for a session whose context has entered the critical band (opt-in)."""
    v = present(session)
    return {
        "title": f"context {v.context_band}: {v.where}",
        "body": shorten(f"{v.context_text} — {v.context_title}; compaction is near"),
        "tag": f"purplemux-{session.id}-context",
        "session_id": session.id,
        "state": session.state.value,
        "url": f"/#session-{session.id}",
    }


def urgency_for(state: State) -> str:
    """The Web Push `Urgency`: a waiting dialog wakes a phone, a finished turn need not."""
    return "high" if state is State.NEEDS_INPUT else "normal"


def title(session: Session) -> str:
    """`name · what is needed: detail` ("api-server · needs your approval: Bash rm -rf build")."""
    return shorten(_clean(present(session).headline), TITLE_LIMIT)


def body(session: Session) -> str:
    """The answer's first words on a review, else where the session is (tmux, pane, folder)."""
    return shorten(_clean(present(session).notice))


def shorten(text: str, limit: int = BODY_LIMIT) -> str:
    """Cut at a word boundary when one is near, and mark the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def _clean(text: str | None) -> str:
    """Collapse newlines and runs of blanks: a notification shows one paragraph."""
    return " ".join(text.split()) if text else ""
