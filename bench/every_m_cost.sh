#!/bin/sh
# Times the proof for every m (bench/every_m_probe.cpp: 1F1B at P = 8, the article's
# costs) against one proof at a single m (bench/largest_proof.cpp: 1F1B, P = 8, at m = 64
# and m = 2048), with GCC and Clang, -fsyntax-only, the default constexpr limits; the
# baseline is a translation unit that only includes ctpipe/ctpipe.hpp. Each time is the
# median of 3 runs. Usage: bench/every_m_cost.sh
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
echo "| compiler | baseline (s) | every m, 1F1B P = $P (s) | m = 64 (s) | m = 2048 (s) |"
echo "|---|---|---|---|---|"
for cxx in g++ clang++; do
  flags="-std=c++20 -fsyntax-only -I../include"
  base=$(median "$cxx" $flags /tmp/ctpipe-baseline.cpp)
  every=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" every_m_probe.cpp)
  m64=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" -DCTPIPE_M=64 largest_proof.cpp)
  m2048=$(median "$cxx" $flags -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P="$P" -DCTPIPE_M=2048 largest_proof.cpp)
  echo "| $("$cxx" --version | head -n 1) | $base | $every | $m64 | $m2048 |"
done
