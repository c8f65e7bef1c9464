"""Anthropic's Claude Code: its hooks, transcripts, session files, dialogs and install."""
