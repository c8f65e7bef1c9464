#!/bin/sh
# purplemux statusLine wrapper: hands Claude's statusLine input (stdin, JSON with `rate_limits`)
# to the purplemux daemon, then runs the user's own statusLine command with the same stdin.
#
# Usage (install-hooks writes it into settings.json):
#   PURPLEMUX_HOME=<home> <home>/statusline.sh ['<the user's own statusLine command>']
# What Claude shows is exactly what the user's command prints (its stdout and stderr go straight
# through, untouched) and its exit code: this script execs it. No command: it prints nothing.
# The POST never delays or changes that: it runs in the background with its own copy of the
# input, its output thrown away, with the hook script's timeouts; a daemon that is down loses
# this reading only (Claude re-runs the statusLine on its next refresh). POSIX sh: runs under dash.

home=${PURPLEMUX_HOME:-$HOME/.purplemux}

# post: the input (fd 4) to the daemon; silent, bounded, never a failure for the caller.
post() {
	port=
	read -r port <"$home/port" || [ -n "$port" ] || return 0
	case $port in '' | *[!0-9]*) return 0 ;; esac
	command -v curl >/dev/null 2>&1 || return 0
	# -q: ignore ~/.curlrc; --noproxy: an http_proxy in Claude's environment must not see this.
	curl -q -s -o /dev/null --noproxy '*' --connect-timeout 1 --max-time 3 \
		-H @"$home/auth-header" -H 'Content-Type: application/json' \
		-H 'X-Purplemux-Agent: claude' \
		--data-binary @- "http://127.0.0.1:$port/api/statusline"
	return 0
}

if [ "${1-}" = --purplemux-post ]; then # re-run detached by the foreground below
	trap '' HUP INT QUIT
	post
	exit 0
fi

tmp=$( (umask 077 && mktemp "${TMPDIR:-/tmp}/purplemux-statusline.XXXXXX") 2>/dev/null) || tmp=
if [ -n "$tmp" ] && cat >"$tmp" 2>/dev/null && exec 3<"$tmp" 4<"$tmp"; then
	# Two descriptors with their own offsets, the file itself gone: nothing is left behind.
	rm -f "$tmp"
	# Out of Claude's process group when setsid exists: a kill of the group once the line is
	# drawn must not cut the POST short.
	if command -v setsid >/dev/null 2>&1 && [ -f "$0" ]; then
		setsid /bin/sh "$0" --purplemux-post <&4 >/dev/null 2>&1 3<&- 4<&- &
	else
		(
			trap '' HUP INT QUIT
			post
		) <&4 >/dev/null 2>&1 3<&- 4<&- &
	fi
	exec 4<&- 0<&3 3<&-
else
	# No copy (no temporary folder, disk full): no reading this time; the user's line still runs.
	[ -z "$tmp" ] || rm -f "$tmp"
fi
[ $# -gt 0 ] || exit 0
exec /bin/sh -c "$1"
