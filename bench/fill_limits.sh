#!/bin/sh
# Finds, for GCC and Clang, the largest m (a multiple of 16) for which bench/fill_probe.cpp
# (the article's encoder filled into 1F1B's bubbles and proved, P = 8) compiles under the
# default constexpr limits, and prints its compile time and memory beside a baseline
# measured in the same run (the translation unit with only the include).
# Usage: bench/fill_limits.sh
set -eu
cd "$(dirname "$0")"
P=${P:-8}
probe() {  # compiler m [extra flag] -> prints "seconds KB" on success, fails otherwise
  /usr/bin/time -f "%e %M" -o /tmp/ctpipe-fill.time "$1" -std=c++20 -fsyntax-only -I../include \
    -DCTPIPE_P="$P" -DCTPIPE_M="$2" ${3:-} fill_probe.cpp >/dev/null 2>&1 && cat /tmp/ctpipe-fill.time
}
echo "| compiler | P | largest m | ops | jobs | compile time (s) | baseline (s) | compiler memory (MiB) |"
echo "|---|---|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  version=$("$cxx" --version | head -n 1)
  lo=16; hi=4096  # lo proves, hi does not
  probe "$cxx" "$lo" >/dev/null || { echo "| $version | $P | < $lo | | | | | |"; continue; }
  while [ $((hi - lo)) -gt 16 ]; do
    mid=$(( (lo + hi) / 32 * 16 ))
    if probe "$cxx" "$mid" >/dev/null; then lo=$mid; else hi=$mid; fi
  done
  set -- $(probe "$cxx" "$lo")
  base=$(probe "$cxx" "$lo" -DCTPIPE_BASELINE | cut -d' ' -f1)
  echo "| $version | $P | $lo | $((2 * P * lo)) | $((2 * lo)) | $1 | $base | $(( $2 / 1024 )) |"
done
