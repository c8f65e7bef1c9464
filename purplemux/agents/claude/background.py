"""Claude's background sessions (2.1.332: claude --bg, the agent view): hooks that are no row.

The agent view (`claude agents`, a TUI in a pane) is not a session, yet it fires hooks under a
session id of its own: Notifications about *other* sessions (`agent_needs_input`,
`agent_completed`, with its own pane) and a SessionEnd when it closes. While it is open it keeps
a spare worker ready for "new session", which fires SessionStart (`agent_type: "claude"`, no
pane: a background worker's hook has no $TMUX) and, unclaimed, SessionEnd when the view closes.
A claimed spare's next hook (UserPromptSubmit) and its session file list it as any other job.
Facts: ../shared/claude-code-bg-and-limits.md, A.
"""

from __future__ import annotations

from purplemux.core import events as ev

AGENT_VIEW_NOTICES = frozenset({"agent_needs_input", "agent_completed"})
"""Notifications the agent view sends about other sessions (2.1.332 auto mode also sends
`agent_needs_input` about a session itself: that session is listed by then, so it counts)."""
SPARE_AGENT_TYPE = "claude"


def not_a_row(event: ev.Event) -> str | None:
    """Why a hook event of a session with no row must not make one; None: it may."""
    if event.agent not in (None, "claude") or event.source is not ev.Source.HOOK:
        return None
    if isinstance(event, ev.SessionStart):
        if event.agent_type == SPARE_AGENT_TYPE and event.tmux is None:
            return "a spare background worker: no session until a job claims it"
    elif isinstance(event, ev.Attention | ev.Notice):
        if event.notification_type in AGENT_VIEW_NOTICES:
            return "the agent view's notice about another session"
    elif isinstance(event, ev.SessionEnd):
        return "the end of a session never listed (a spare worker, the agent view)"
    return None
