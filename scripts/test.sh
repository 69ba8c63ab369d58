#!/bin/sh
# Installs what is missing, then configures, builds and runs every test for each given
# workflow preset (CMakePresets.json): default `dev` (GCC, -Werror). `.ci/run` adds
# `ci` (Clang, every header compiled on its own) and `asan` (Clang with AddressSanitizer
# and UndefinedBehaviorSanitizer).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
[ $# -gt 0 ] || set -- dev
packages=$CTPIPE_TEST_PACKAGES
for preset in "$@"; do
  [ "$preset" = dev ] || packages="$packages $CTPIPE_CLANG_PACKAGES"
done
ctpipe_install_missing $packages
for preset in "$@"; do
  echo "== ctpipe: workflow preset $preset"
  cmake --workflow --preset "$preset"
done
