#!/bin/sh
# Sets up purplemux on this machine and runs the daemon:
#   a virtualenv with the package, the `purplemux` command in ~/.local/bin, the agents' hooks
#   (Claude's settings.json; Codex's hooks.json and trust, where $CODEX_HOME exists; merged, backed
#   up), the background service where systemd or launchd is there to run it, then the daemon in
#   the foreground (unless --no-serve).
# Options: --no-serve (set up only), --no-hooks (leave the agents' settings alone), --service.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
serve=1 hooks=1 service=0
for arg in "$@"; do
	case $arg in
	--no-serve) serve=0 ;;
	--no-hooks) hooks=0 ;;
	--service) service=1 serve=0 ;;
	-h | --help) sed -n '2,7p' "$0"; exit 0 ;;
	*) echo "install.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
	esac
done

data=${XDG_DATA_HOME:-$HOME/.local/share}/purplemux
venv=${PURPLEMUX_VENV:-$data/venv}
bindir=$HOME/.local/bin

command -v python3 >/dev/null 2>&1 || { echo "install.sh: python3 (3.11 or newer) is needed" >&2; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
	{ echo "install.sh: python3 is older than 3.11" >&2; exit 1; }
command -v curl >/dev/null 2>&1 ||
	echo "install.sh: note: without curl the hook script spools every event to a folder the daemon watches (works, a few ms slower)" >&2

if [ ! -x "$venv/bin/python" ]; then
	echo "creating $venv" >&2
	python3 -m venv "$venv" || { echo "install.sh: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
"$venv/bin/pip" install -q --disable-pip-version-check --upgrade pip
"$venv/bin/pip" install -q --disable-pip-version-check "$here"
mkdir -p "$bindir"
ln -sf "$venv/bin/purplemux" "$bindir/purplemux"
echo "installed $bindir/purplemux" >&2
case ":$PATH:" in *":$bindir:"*) ;; *) echo "note: add $bindir to your PATH" >&2 ;; esac

pm="$venv/bin/purplemux"
[ "$hooks" = 1 ] && "$pm" install-hooks
if [ "$service" = 1 ]; then
	"$pm" service install
fi
if [ "$serve" = 1 ]; then
	exec "$pm" serve
fi
