#!/bin/sh
# Installs what the tests drive for real, when it is missing: tmux, Chromium, dash, curl,
# systemd-analyze, redis-server (Debian packages), the pinned Claude Code CLIs of
# .ci/claude-versions and the Codex CLI of .ci/codex-version (npm, into a cache folder).
# Idempotent and quiet.
set -eu
missing=
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v dash >/dev/null 2>&1 || missing="$missing dash"
command -v curl >/dev/null 2>&1 || missing="$missing curl"
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing="$missing redis-server"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; then
		echo "install-test-deps: need$missing; install them with your package manager" >&2
		exit 1
	fi
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "install-test-deps: installing$missing" >&2
	$sudo apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi
here=$(cd "$(dirname "$0")/.." && pwd)
for version in $(grep -v '^#' "$here/.ci/claude-versions"); do
	CLAUDE_CODE_VERSION=$version sh "$here/.ci/install-claude.sh" >/dev/null
done
sh "$here/.ci/install-codex.sh" >/dev/null
