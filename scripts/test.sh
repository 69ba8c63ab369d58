#!/bin/sh
# Installs what is missing, then configures, builds and runs every test for each given
# workflow preset (CMakePresets.json): default `dev` (GCC, -Werror) and `web` (the
# WebAssembly page built by emscripten and tested in headless Chromium, docs/web.md).
# `.ci/run` adds `ci` (Clang, every header compiled on its own) and `asan` (Clang with
# AddressSanitizer and UndefinedBehaviorSanitizer).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
[ $# -gt 0 ] || set -- dev web
packages=""
for preset in "$@"; do
  case $preset in
    web) packages="$packages $CTPIPE_WEB_TEST_PACKAGES" ;;
    dev) packages="$packages $CTPIPE_TEST_PACKAGES" ;;
    *) packages="$packages $CTPIPE_TEST_PACKAGES $CTPIPE_CLANG_PACKAGES" ;;
  esac
done
ctpipe_install_missing $packages
case " $* " in *" web "*) ctpipe_install_node ;; esac
for preset in "$@"; do
  echo "== ctpipe: workflow preset $preset"
  cmake --workflow --preset "$preset"
done
