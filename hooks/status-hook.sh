#!/bin/sh
# purplemux status hook: hands each agent's hook payload (stdin) to the purplemux daemon.
#
# Claude Code waits for this script, so the foreground only takes the time, saves stdin to a file
# and forks; delivery runs detached in the background. When the daemon cannot take the event
# (down, slow, failing, no curl) it is spooled atomically to $PURPLEMUX_HOME/spool, and the daemon
# drains that folder in source-time order. The script never prints (hook stdout can reach the
# model, or be read as a decision) and always exits 0 (exit 2 would block Claude's action). The
# token stays in a file that curl reads the header from, so it never shows on a command line.
# POSIX sh: runs under dash. Nothing here interprets or rebuilds the payload.

case ${1-} in
--purplemux-deliver) ;; # re-run detached by the foreground below: the time is in $3
*) ts=$(date +%s%N 2>/dev/null) ;;
esac
exec >/dev/null 2>&1
trap 'exit 0' HUP INT TERM
umask 077

home=${PURPLEMUX_HOME:-$HOME/.purplemux}
spool=$home/spool

# deliver ID TS BODY: POST the body (a file, or "-" for stdin) to the daemon; spool it on failure.
deliver() {
	id=$1 ts=$2 body=$3
	pane=${TMUX_PANE-} tm=${TMUX-}
	# A background session (claude --bg) may inherit another pane's variables: not its pane.
	[ -z "${CLAUDE_JOB_DIR-}" ] || pane= tm=
	# Codex runs hooks in its shared app-server daemon: $TMUX_PANE is the daemon's, not the
	# session's. The installer names the agent in the command (PURPLEMUX_AGENT=codex).
	agent=claude
	case ${PURPLEMUX_AGENT-} in codex) agent=codex pane= tm= ;; esac
	# A header value must be one line: drop CR/LF (tr only runs in the rare case it is needed).
	case $pane in *[[:cntrl:]]*) pane=$(printf '%s' "$pane" | tr -d '\r\n') ;; esac
	case $tm in *[[:cntrl:]]*) tm=$(printf '%s' "$tm" | tr -d '\r\n') ;; esac

	code=
	port=
	read -r port <"$home/port"
	case $port in *[!0-9]*) port= ;; esac
	if [ -n "$port" ] && command -v curl >/dev/null 2>&1; then
		set -- -H "X-Purplemux-Event-Id: $id" -H "X-Purplemux-Ts: $ts" -H "X-Purplemux-Agent: $agent"
		# curl drops a header given as "Name:" with no value; "Name;" sends it empty.
		if [ -n "$pane" ]; then set -- "$@" -H "X-Purplemux-Pane: $pane"; else set -- "$@" -H "X-Purplemux-Pane;"; fi
		if [ -n "$tm" ]; then set -- "$@" -H "X-Purplemux-Tmux: $tm"; else set -- "$@" -H "X-Purplemux-Tmux;"; fi
		# -q: ignore ~/.curlrc; --noproxy: an http_proxy in Claude's environment must not see this.
		code=$(curl -q -s -o /dev/null -w '%{http_code}' --noproxy '*' \
			--connect-timeout 1 --max-time 3 \
			-H @"$home/auth-header" -H 'Content-Type: application/json' "$@" \
			--data-binary @"$body" "http://127.0.0.1:$port/api/hooks")
	fi
	case $code in
	2?? | 413)
		# 413: too large even with its long strings cut; final, so not spooled either.
		[ "$body" = - ] || rm -f "$body"
		return 0
		;;
	esac
	# Any other answer spools: the daemon dedupes by event id, so a late success costs nothing.
	[ "$body" = - ] && return 0 # no spool folder to write to: the body went to curl or nowhere
	part=$spool/.tmp/$id.spool
	if {
		printf '%s: %s\n' X-Purplemux-Event-Id "$id" X-Purplemux-Ts "$ts" \
			X-Purplemux-Pane "$pane" X-Purplemux-Tmux "$tm" X-Purplemux-Agent "$agent" &&
			printf '\n' &&
			cat "$body"
	} >"$part" && mv -f "$part" "$spool/$id.spool"; then
		rm -f "$body"
	else
		# Keep the body: the daemon picks up bodies left in .tmp once they are a few seconds old.
		rm -f "$part"
	fi
	return 0
}

if [ "${1-}" = --purplemux-deliver ]; then
	trap '' HUP INT QUIT # a closing pane or a Ctrl-C must not cut a delivery short
	deliver "$2" "$3" "$4"
	exit 0
fi

case $ts in '' | *[!0-9]*) ts=$(date +%s)000000000 ;; esac # macOS date has no %N
case $ts in *[!0-9]*) ts=0 ;; esac
id=$ts-$$
tmp=$spool/.tmp/$id.json

if [ -h "$spool" ] || [ -h "$spool/.tmp" ]; then
	body=- # a spool folder that is a symbolic link is never written through (nor read)
elif { [ -d "$spool/.tmp" ] || mkdir -p "$spool/.tmp"; } && cat >"$tmp"; then
	body=$tmp
elif [ -e "$tmp" ]; then
	# The copy failed half-way (disk full): the rest of stdin is gone, so is the event.
	rm -f "$tmp"
	exit 0
else
	# No spool (read-only or missing home): curl reads the payload from stdin instead.
	body=-
fi

# launch: start the delivery in the background with stdin from fd 4 (a non-interactive shell
# gives background jobs /dev/null as stdin), out of Claude's session when setsid exists.
launch() {
	if command -v setsid >/dev/null 2>&1 && [ -f "$0" ]; then
		setsid /bin/sh "$0" --purplemux-deliver "$id" "$ts" "$body" <&4 4<&- &
	else
		(
			trap '' HUP INT QUIT
			deliver "$id" "$ts" "$body"
		) <&4 4<&- &
	fi
}
if [ "$body" = - ]; then launch 4<&0; else launch 4</dev/null; fi
exit 0
