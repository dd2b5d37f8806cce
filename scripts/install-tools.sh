#!/usr/bin/env bash
# Installs the released agent CLIs that test/clients/ runs against the gateway into .tools/
# (gitignored), at the versions pinned here, from the npm registry. Both ship native binaries in a
# platform package (@anthropic-ai/claude-code-linux-x64, @openai/codex-linux-x64), so no newer Node
# is needed and install scripts are skipped: the tests run the binaries directly. Re-running with the
# same versions does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
TOOLS=.tools
STAMP="$TOOLS/versions"
WANTED="claude-code=$CLAUDE_CODE_VERSION codex=$CODEX_VERSION"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-tools: the client suite runs the linux-x64 builds only; nothing installed" >&2
  exit 0
fi
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANTED" ]; then
  echo "install-tools: $WANTED already in $TOOLS"
  exit 0
fi
rm -rf "$TOOLS"
mkdir -p "$TOOLS"
echo '{"private":true}' >"$TOOLS/package.json"
npm install --prefix "$TOOLS" --ignore-scripts --no-audit --no-fund --no-save --loglevel=error \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION"
echo "$WANTED" >"$STAMP"
echo "install-tools: installed $WANTED in $TOOLS"
