"""What a notification says about a session (pure: no I/O)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from purplemux.agents import registry
from purplemux.core.model import Session, State
from purplemux.core.present import ANSWER, LOCAL, Origin, allows, present, who
from purplemux.core.termtext import clean

if TYPE_CHECKING:
    from purplemux.core.prompts import Prompt

PUSH_ACTIONS = ("Yes", "No")
"""A permission prompt's notification answers with these buttons (when it shows both): each
the option its agent labels so (agents/base.py `Agent.approve`: a one-time approval and the
refusal, never "always allow")."""

BODY_LIMIT = 180
"""Longest body, in characters: phones cut longer ones anyway."""
TITLE_LIMIT = 120
"""Longest title: the need and its detail stay on it, a long command is cut."""


def push_payload(
    session: Session,
    prompt: Prompt | None = None,
    origin: Origin = LOCAL,
    named: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The JSON the service worker turns into a notification. With the prompt on screen: its id
    and kind, and for a permission prompt the actions that answer it from the notification.
    `named`: the agents whose sessions name their account (several are watched)."""
    payload: dict[str, Any] = {
        "title": title(session, origin, named),
        "body": body(session, origin),
        "tag": f"purplemux-{session.id}",
        "session_id": session.id,
        "state": session.state.value,
        "url": f"/#session-{session.id}",
    }
    if prompt is not None and allows(session, ANSWER):
        payload["prompt_id"] = prompt.id
        payload["prompt_kind"] = prompt.kind
        labels = {o.label for o in prompt.options}
        options = [x if x in labels else None for x in registry.get(session.agent).approve]
        # A prompt with two readings gets no buttons: any answer to it is refused anyway.
        if prompt.kind == "permission" and prompt.ambiguous is None and all(options):
            payload["actions"] = options  # the labels /answer takes
            if options != list(PUSH_ACTIONS):
                payload["action_titles"] = list(PUSH_ACTIONS)  # what the buttons say
    return payload


def context_payload(session: Session, window: int | None = None) -> dict[str, Any]:
    """The push for a session whose context has entered the critical band (opt-in); `window`:
    the context window setting."""
    v = present(session, context_window=window)
    return {
        "title": f"context {v.context_band}: {v.where}",
        "body": shorten(f"{v.context_text} — {v.context_title}; compaction is near"),
        "tag": f"purplemux-{session.id}-context",
        "session_id": session.id,
        "state": session.state.value,
        "url": f"/#session-{session.id}",
    }


def resume_payload(
    session: Session, origin: Origin = LOCAL, named: frozenset[str] = frozenset()
) -> dict[str, Any] | None:
    """The push for resume at the reset, once it happened: typed ("resumed after the usage
    limit's reset"), skipped with its reason, or auto-resume stopped for the session (told
    once: the setting arms nothing more there); None for anything else (armed, cancelled)."""
    r = session.resume
    if r is None or r.state not in ("typed", "skipped", "stopped"):
        return None
    v = present(session, origin, named_accounts=named)
    head = f"{who(v.agent_label, v.account)} · {v.name}"
    if r.state == "typed":
        what = "resumed after the usage limit's reset"
        text = f"typed “continue” in {v.where}"
    elif r.state == "stopped":
        what = "auto-resume stopped"
        text = f"{r.reason or 'see the event log'} — {v.where}"
    else:
        what = "not resumed at the reset"
        text = f"{r.reason or 'see the event log'} — {v.where}"
    return {
        "title": shorten(_clean(f"{head} · {what}"), TITLE_LIMIT),
        "body": shorten(_clean(text)),
        "tag": f"purplemux-{session.id}-resume",
        "session_id": session.id,
        "state": session.state.value,
        "url": f"/#session-{session.id}",
    }


def urgency_for(state: State) -> str:
    """The Web Push `Urgency`: a waiting dialog wakes a phone, a finished turn need not."""
    return "high" if state is State.NEEDS_INPUT else "normal"


def title(session: Session, origin: Origin = LOCAL, named: frozenset[str] = frozenset()) -> str:
    """`agent · name · what is needed: detail` ("Claude · api-server · needs your approval:
    Bash rm -rf build"), the agent with its account when `named` has it ("Claude (work)"), and
    `on host` when several hosts share a broker."""
    view = present(session, origin, named_accounts=named)
    return shorten(_clean(view.headline), TITLE_LIMIT)


def body(session: Session, origin: Origin = LOCAL) -> str:
    """The answer's first words on a review, else where the session is (tmux, pane, folder)."""
    return shorten(_clean(present(session, origin).notice))


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
    """One paragraph of plain text (termtext.clean: no escape, control or bidi character), runs
    of blanks collapsed."""
    return " ".join(clean(text).split()) if text else ""
