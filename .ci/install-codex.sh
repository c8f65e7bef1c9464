#!/bin/sh
# Install the pinned OpenAI Codex CLI for the e2e test tier into a cache folder, once.
# Prints the path of node_modules/.bin/codex on stdout (the only thing it prints there).
#
#   PURPLEMUX_E2E_CACHE   cache root (default: $HOME/.cache/purplemux-e2e)
#   CODEX_VERSION         version to install (default: the one in .ci/codex-version)
#
# node_modules/.bin/codex is the package's Node wrapper (bin/codex.js); it starts the native
# binary of @openai/codex-linux-<arch> (vendor/<triple>/bin/codex), which npm pulls in as an
# optional dependency. scripts/install-test-deps.sh calls this script.
set -eu

version_file="$(dirname "$0")/codex-version"
version="${CODEX_VERSION:-$(grep -v '^#' "$version_file" | grep . | head -n 1)}"
cache="${PURPLEMUX_E2E_CACHE:-$HOME/.cache/purplemux-e2e}"
dest="$cache/codex-$version"
bin="$dest/node_modules/.bin/codex"

reports_version() {
    # `codex --version` prints "codex-cli <version>".
    [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qx "codex-cli $version"
}

if reports_version; then
    printf '%s\n' "$bin"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install-codex.sh: npm is not on PATH; install Node.js + npm to run the e2e tier" >&2
    exit 127
fi

mkdir -p "$dest"
# A private package.json keeps npm from walking up into some other project.
if [ ! -f "$dest/package.json" ]; then
    printf '{"name":"purplemux-e2e-codex","private":true}\n' >"$dest/package.json"
fi
echo "install-codex.sh: installing @openai/codex@$version into $dest" >&2
(cd "$dest" && npm install --no-audit --no-fund --loglevel=error --save-exact \
    "@openai/codex@$version" >&2)

if ! reports_version; then
    echo "install-codex.sh: $bin --version does not report codex-cli $version:" >&2
    "$bin" --version >&2 || true
    ls -la "$dest/node_modules/@openai" >&2 || true
    exit 1
fi
printf '%s\n' "$bin"
