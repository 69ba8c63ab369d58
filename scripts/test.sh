#!/bin/sh
# Installs what is missing, then configures, builds and runs every test for each given
# workflow preset (CMakePresets.json): default `dev` (GCC, -Werror), `web` (the
# WebAssembly page built by emscripten and tested in headless Chromium, docs/web.md) and
# `python` (not a preset: the Python package in a virtual environment with PyTorch, its
# pytest suite, PyTorch's runtime training with ctpipe's schedules; scripts/python.sh).
# `.ci/run` adds `ci` (Clang with AddressSanitizer and UndefinedBehaviorSanitizer at -O1,
# the compile-time proofs, every header compiled on its own).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
. scripts/python.sh
[ $# -gt 0 ] || set -- dev web python
packages=""
for preset in "$@"; do
  case $preset in
    web) packages="$packages $CTPIPE_WEB_TEST_PACKAGES" ;;
    python) packages="$packages $CTPIPE_TOOL_PACKAGES" ;;
    dev) packages="$packages $CTPIPE_TEST_PACKAGES" ;;
    *) packages="$packages $CTPIPE_TEST_PACKAGES $CTPIPE_CLANG_PACKAGES" ;;
  esac
done
ctpipe_install_missing $packages
for preset in "$@"; do
  case $preset in dev|web|python) ;; *) ctpipe_install_clang_runtime; break ;; esac
done
case " $* " in *" web "*) ctpipe_install_node ;; esac
for preset in "$@"; do
  if [ "$preset" = python ]; then
    # The tool the package is compared with: the dev preset's when it was built, else the
    # tool preset's (as ./scripts/ctpipe.sh builds it).
    tool=build/dev/ctpipe
    if [ ! -x "$tool" ]; then
      cmake --preset tool >/dev/null && cmake --build --preset tool >/dev/null
      tool=build/tool/ctpipe
    fi
    ctpipe_python_tests "$PWD/$tool"
    continue
  fi
  echo "== ctpipe: workflow preset $preset"
  cmake --workflow --preset "$preset"
done
