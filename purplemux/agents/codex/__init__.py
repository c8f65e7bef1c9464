"""OpenAI's Codex CLI (0.171.0): its hooks, rollout files, state DB, panes, dialogs and install.

Codex runs every thread in a shared app-server daemon (one per CODEX_HOME), so a hook's
$TMUX_PANE names the pane that started the daemon, never the session's: nothing here takes a
pane from a hook. See the README's "Codex" section for how a session finds its pane.
"""
