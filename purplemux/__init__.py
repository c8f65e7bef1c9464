"""purplemux: know at a glance what each Claude Code session is doing."""

__version__ = "0.1.0"
