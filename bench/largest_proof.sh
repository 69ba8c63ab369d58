#!/bin/sh
# Finds, for each compiler and schedule family, the largest m (a multiple of 128) for
# which bench/largest_proof.cpp compiles with P = 8 under the default constexpr limits,
# and prints the compile time and peak compiler memory there. Usage: bench/largest_proof.sh
set -eu
cd "$(dirname "$0")"
P=${P:-8}
probe() {  # compiler family m -> prints "seconds KB" on success, fails otherwise
  /usr/bin/time -f "%e %M" -o /tmp/ctpipe-probe.time "$1" -std=c++20 -fsyntax-only -I../include \
    -DCTPIPE_FAMILY="$2" -DCTPIPE_P="$P" -DCTPIPE_M="$3" largest_proof.cpp >/dev/null 2>&1 &&
    cat /tmp/ctpipe-probe.time
}
echo "| compiler | schedule | P | largest m | ops | compile time (s) | compiler memory (MiB) |"
echo "|---|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  version=$("$cxx" --version | head -n 1)
  for family in gpipe one_f_one_b; do
    lo=128; hi=8192  # lo proves, hi does not
    probe "$cxx" "$family" "$lo" >/dev/null || { echo "| $version | $family | $P | < $lo | | | |"; continue; }
    while [ $((hi - lo)) -gt 128 ]; do
      mid=$(( (lo + hi) / 256 * 128 ))
      if probe "$cxx" "$family" "$mid" >/dev/null; then lo=$mid; else hi=$mid; fi
    done
    set -- $(probe "$cxx" "$family" "$lo")
    echo "| $version | $family | $P | $lo | $((2 * P * lo)) | $1 | $(( $2 / 1024 )) |"
  done
done
