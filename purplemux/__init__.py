"""purplemux: know at a glance what each Claude Code and Codex session is doing."""

__version__ = "0.1.0"
