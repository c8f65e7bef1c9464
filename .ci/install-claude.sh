#!/bin/sh
# Install a pinned Claude Code CLI for the e2e test tier into a cache folder, once.
# Prints the path of the claude binary on stdout (the only thing it prints there).
#
#   PURPLEMUX_E2E_CACHE   cache root (default: $HOME/.cache/purplemux-e2e)
#   CLAUDE_CODE_VERSION   version to install (default: the oldest in .ci/claude-versions)
#
# The e2e tier runs against every version listed in .ci/claude-versions;
# scripts/install-test-deps.sh calls this script once per line.
set -eu

versions_file="$(dirname "$0")/claude-versions"
version="${CLAUDE_CODE_VERSION:-$(grep -v '^#' "$versions_file" | grep . | head -n 1)}"
cache="${PURPLEMUX_E2E_CACHE:-$HOME/.cache/purplemux-e2e}"
dest="$cache/claude-$version"
pkg="$dest/node_modules/@anthropic-ai/claude-code"

find_bin() {
    # The package ships a native binary for linux-x64 at bin/claude.exe; fall back to the
    # package's declared bin / cli.js for other layouts.
    for candidate in "$pkg/bin/claude.exe" "$pkg/bin/claude" "$dest/node_modules/.bin/claude" "$pkg/cli.js"; do
        if [ -f "$candidate" ] && [ -x "$candidate" ]; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    return 1
}

if bin="$(find_bin)" && "$bin" --version 2>/dev/null | grep -q "^$version"; then
    printf '%s\n' "$bin"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install-claude.sh: npm is not on PATH; install Node.js + npm to run the e2e tier" >&2
    exit 127
fi

mkdir -p "$dest"
# A private package.json keeps npm from walking up into some other project.
if [ ! -f "$dest/package.json" ]; then
    printf '{"name":"purplemux-e2e-claude","private":true}\n' >"$dest/package.json"
fi
echo "install-claude.sh: installing @anthropic-ai/claude-code@$version into $dest" >&2
(cd "$dest" && npm install --no-audit --no-fund --loglevel=error --save-exact \
    "@anthropic-ai/claude-code@$version" >&2)

if ! bin="$(find_bin)"; then
    echo "install-claude.sh: installed, but found no claude binary under $pkg" >&2
    ls -la "$pkg" "$pkg/bin" >&2 || true
    exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -q "^$version"; then
    echo "install-claude.sh: $bin --version does not report $version:" >&2
    "$bin" --version >&2 || true
    exit 1
fi
printf '%s\n' "$bin"
