#!/bin/sh
# The main job: installs what is missing, builds the `ctpipe` tool (Release) and runs it
# with the given arguments; with none it shows the article's default, 1F1B P = 4, m = 8.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
ctpipe_install_missing $CTPIPE_TOOL_PACKAGES
log=$(mktemp)
if ! { cmake --preset tool && cmake --build --preset tool; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "ctpipe: the build failed (output above)" >&2
  exit 1
fi
rm -f "$log"
exec build/tool/ctpipe "$@"
