#!/bin/sh
# Stand-in statusLine command for the e2e harness: appends what Claude sends on stdin as one
# JSON line to the file given as the first argument,
#   {"ts": <unix seconds>, "input": <the JSON from stdin>}
# and prints the status line "SL-OK" (so a test can see its output on screen). Exits 0.
out="${1:?usage: record_statusline.sh OUTFILE}"
ts="$(date +%s.%N 2>/dev/null || date +%s)"
case "$ts" in *N) ts="$(date +%s)" ;; esac
input="$(tr -d '\n\r')"
[ -n "$input" ] || input=null
tmp="${out}.$$.tmp"
printf '{"ts": %s, "input": %s}\n' "$ts" "$input" >"$tmp" 2>/dev/null
cat "$tmp" >>"$out" 2>/dev/null
rm -f "$tmp"
printf 'SL-OK\n'
exit 0
