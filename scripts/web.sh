#!/bin/sh
# The page (docs/web.md): installs what is missing (emscripten, python3), builds the page
# if needed (preset web, into build/web/site) and serves it on http://127.0.0.1:PORT/
# with python3's http.server until Ctrl-C. PORT is the first argument, default 8000.
# The build needs no browser: the page's test (./scripts/test.sh web) installs Chromium.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
ctpipe_install_missing $CTPIPE_WEB_PACKAGES
port=${1:-8000}
log=$(mktemp)
# A folder configured by ./scripts/test.sh keeps its test; a new one is made without it.
if [ -f build/web/CMakeCache.txt ]; then configure=true; else configure="cmake --preset web -DCTPIPE_WEB_TEST=OFF"; fi
if ! { $configure && cmake --build --preset web; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "ctpipe: the build of the page failed (output above)" >&2
  exit 1
fi
rm -f "$log"
echo "ctpipe: the page is at http://127.0.0.1:$port/ (Ctrl-C stops the server)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory build/web/site
