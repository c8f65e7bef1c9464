"""What a notification says about a session (pure: no I/O)."""

from __future__ import annotations

from typing import Any

from purplemux import session_facts
from purplemux.model import Session, State

BODY_LIMIT = 180
"""Longest body, in characters: phones cut longer ones anyway."""


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


def urgency_for(state: State) -> str:
    """The Web Push `Urgency`: a waiting dialog wakes a phone, a finished turn need not."""
    return "high" if state is State.NEEDS_INPUT else "normal"


def title(session: Session) -> str:
    """`name · pane` (Claude's name for the session, else the project), or the name alone
    outside tmux."""
    name = session_facts.display_name(session.title, session.project, session.id)
    pane = session.tmux.pane if session.tmux else None
    return f"{name} · {pane}" if pane else name


def body(session: Session) -> str:
    """What the session wants: the pending question or command, or the answer's first words."""
    if session.state is State.NEEDS_INPUT:
        waiting = _clean(session.waiting_for)
        return shorten(f"Waiting for: {waiting}" if waiting else "Waiting for your input")
    if session.state is State.REVIEW:
        if session.error:
            why = session_facts.failure_reason(session.error_kind)
            failed = f"Failed ({why})" if why else "Failed"
            return shorten(f"{failed}: {_clean(session.error)}")
        snippet = _clean(session.snippet)
        running = session_facts.running_tasks(session.background_tasks)
        if running:
            # "finished · 1 task still running": the turn is over, its work is not.
            head = session_facts.review_text(session.background_tasks)
            return shorten(f"{head} — {snippet}" if snippet else head)
        return shorten(snippet) if snippet else "Finished; ready for review"
    return shorten(f"Now {session.state.value}")


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
