#!/bin/sh
# Stand-in hook for the e2e harness: appends one JSON line per hook call to the file given as
# the first argument (baked into the hook command in settings.json, because Claude runs hooks
# with Claude's own environment):
#   {"ts": <unix seconds>, "pane": "<$TMUX_PANE>" | null, "payload": <the JSON from stdin>}
# Prints nothing and always exits 0, so it never influences Claude.
out="${1:?usage: record_hook.sh OUTFILE}"
ts="$(date +%s.%N 2>/dev/null || date +%s)"
case "$ts" in *N) ts="$(date +%s)" ;; esac
if [ -n "${TMUX_PANE:-}" ]; then pane="\"$TMUX_PANE\""; else pane=null; fi
# JSON never holds a raw newline inside a string, so dropping newlines keeps it one line.
payload="$(tr -d '\n\r')"
[ -n "$payload" ] || payload=null
tmp="${out}.$$.tmp"
printf '{"ts": %s, "pane": %s, "payload": %s}\n' "$ts" "$pane" "$payload" >"$tmp" 2>/dev/null
# One cat = one append write for any payload below its buffer size (128 KiB).
cat "$tmp" >>"$out" 2>/dev/null
rm -f "$tmp"
exit 0
