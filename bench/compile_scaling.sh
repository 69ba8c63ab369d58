#!/bin/sh
# Compile time and peak compiler memory of bench/compile_probe.cpp (generate, validate,
# simulate and prove one schedule) for each schedule family at about 1K, 8K, 32K and
# 128K ops, with GCC and Clang at their default constexpr limits. Prints a Markdown
# table; a size the compiler rejects (its constexpr limit) is marked "limit".
set -eu
cd "$(dirname "$0")"
# family layout V, then m for ~1K, 8K, 32K, 128K ops with P = 8 (ops = P*m*V*(2 or 3)).
cases="gpipe loop 1 64 512 2048 8192
one_f_one_b loop 1 64 512 2048 8192
interleaved_1f1b loop 4 16 128 512 2048
looped_bfs loop 4 16 128 512 2048
zb_h1 loop 1 42 341 1365 5461
zb_h2 loop 1 42 341 1365 5461
zbv v_shape 2 21 170 682 2730
interleaved_zb loop 4 11 88 344 1368
v_half v_shape 2 21 170 682 2730
v_min v_shape 2 21 170 682 2730"
echo "| compiler | schedule | V | m | ops | result | time (s) | memory (MiB) | s per 1K ops |"
echo "|---|---|---|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  echo "$cases" | while read -r family layout V m1 m2 m3 m4; do
    for m in $m1 $m2 $m3 $m4; do
      [ "$family" = interleaved_zb ] && [ $((m % (m / 8 > 1 ? m / 8 : 1))) -ne 0 ] && continue
      per=2
      case $family in zb_h1 | zb_h2 | zbv | interleaved_zb | v_half | v_min) per=3 ;; esac
      ops=$((8 * m * V * per))
      if /usr/bin/time -f "%e %M" -o /tmp/ctpipe-scaling.time "$cxx" -std=c++20 -fsyntax-only -I../include \
        -DCTPIPE_FAMILY="$family" -DCTPIPE_P=8 -DCTPIPE_M="$m" -DCTPIPE_V="$V" -DCTPIPE_LAYOUT="$layout" \
        compile_probe.cpp >/dev/null 2>&1; then
        result=proved
      else
        result=limit
      fi
      set -- $(tail -n 1 /tmp/ctpipe-scaling.time)
      per_k=$(awk "BEGIN { printf \"%.3f\", $1 * 1000 / $ops }")
      echo "| $cxx | $family | $V | $m | $ops | $result | $1 | $(($2 / 1024)) | $per_k |"
    done
  done
done
