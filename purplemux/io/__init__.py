"""Adapters to one outside thing each: SQLite, tmux, the process table, the folder watch, the
daemon's home and settings, logs. Nothing here knows an agent."""
