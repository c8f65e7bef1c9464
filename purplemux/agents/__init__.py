"""What only one agent knows, one package per agent (claude/, codex/).

The core (events, machine, timeline, present) is agent-neutral. Each agent package says how its
hooks become typed events, how its transcript is read, how its processes and panes are found,
how its prompts look on screen and which keys answer them, and how its hooks are installed.
The sources and adapters above call into these packages; no agent package imports another.
"""
