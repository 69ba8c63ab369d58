#!/bin/sh
# The cost of a proof for every m (bench/every_m_probe.cpp: 1F1B at the article's costs,
# the certificate and the closed forms below its m0 in one constant evaluation), with GCC
# and Clang, -fsyntax-only, the default constexpr limits:
# 1. the largest P whose proof for every m compiles (deterministic);
# 2. at P = 8 (P=.. to change it), seconds beside the same closed forms proved on the
#    grid m = 1 .. 64 (every_m_probe.cpp -DCTPIPE_GRID=64), a single schedule proved at
#    one m (bench/largest_proof.cpp: 1F1B at m = 64 and at m = 2048), and a baseline that
#    only includes ctpipe/ctpipe.hpp, each the median of 3 runs in the same run.
# 3. DualPipeV at P (bench/every_m_dual_probe.cpp): its proof for every m beside the
#    grid m = 1 .. 4P and one m = 64.
# Usage: bench/every_m_cost.sh
set -eu
cd "$(dirname "$0")"
P=${P:-8}
printf '#include <ctpipe/ctpipe.hpp>\nint main() { return 0; }\n' >/tmp/ctpipe-baseline.cpp
median() {  # command... -> the median of 3 wall times, in seconds
  for _ in 1 2 3; do
    /usr/bin/time -f "%e" -o /tmp/ctpipe-every-m.time "$@" >/dev/null 2>&1 || { echo "failed"; return; }
    cat /tmp/ctpipe-every-m.time
  done | sort -n | sed -n 2p
}
proves() {  # compiler P -> success when the proof for every m at P compiles
  "$1" -std=c++20 -fsyntax-only -I../include -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$2" every_m_probe.cpp \
    >/dev/null 2>&1
}
echo "| compiler | largest P proved for every m (1F1B) |"
echo "|---|---|"
for cxx in g++ clang++; do
  lo=1; hi=128  # lo proves, hi does not
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(( (lo + hi) / 2 ))
    if proves "$cxx" "$mid"; then lo=$mid; else hi=$mid; fi
  done
  echo "| $("$cxx" --version | head -n 1) | $lo |"
done
echo
echo "| compiler | baseline (s) | every m, 1F1B P = $P (s) | grid m = 1 .. 64 (s) | one m = 64 (s) | one m = 2048 (s) |"
echo "|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  flags="-std=c++20 -fsyntax-only -I../include"
  base=$(median "$cxx" $flags /tmp/ctpipe-baseline.cpp)
  every=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" every_m_probe.cpp)
  grid=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" -DCTPIPE_GRID=64 every_m_probe.cpp)
  m64=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" -DCTPIPE_M=64 largest_proof.cpp)
  m2048=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" -DCTPIPE_M=2048 largest_proof.cpp)
  echo "| $("$cxx" --version | head -n 1) | $base | $every | $grid | $m64 | $m2048 |"
done
echo
echo "| compiler | baseline (s) | every m, DualPipeV P = $P (s) | grid m = 1 .. 4P (s) | one m = 64 (s) |"
echo "|---|---|---|---|---|"
for cxx in g++ clang++; do
  flags="-std=c++20 -fsyntax-only -I../include -DCTPIPE_P=$P"
  base=$(median "$cxx" -std=c++20 -fsyntax-only -I../include /tmp/ctpipe-baseline.cpp)
  every=$(median "$cxx" $flags every_m_dual_probe.cpp)
  grid=$(median "$cxx" $flags -DCTPIPE_GRID=$((4 * P)) every_m_dual_probe.cpp)
  m64=$(median "$cxx" $flags -DCTPIPE_M=64 every_m_dual_probe.cpp)
  echo "| $("$cxx" --version | head -n 1) | $base | $every | $grid | $m64 |"
done
