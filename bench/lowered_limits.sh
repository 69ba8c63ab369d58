#!/bin/sh
# Finds, for each compiler, the largest m (a multiple of 16) for which bench/lowered_probe.cpp
# compiles under the default constexpr limits: lowered_v alone, and lowered_v plus
# validate_lowered; for 1F1B with P = 8, interleaved 1F1B with P = 8 and V = 2, and ZB-V
# with P = 8. Prints a Markdown table with the op counts, compile time and memory there.
set -eu
cd "$(dirname "$0")"
model=${CTPIPE_MODEL:-blocking}  # the runtime model lowered_v orders for (blocking or rendezvous)
probe() {  # compiler family V layout validate m -> prints "seconds KB" on success
  /usr/bin/time -f "%e %M" -o /tmp/ctpipe-lowered.time "$1" -std=c++20 -fsyntax-only -I../include \
    -DCTPIPE_FAMILY="$2" -DCTPIPE_P=8 -DCTPIPE_V="$3" -DCTPIPE_LAYOUT="$4" -DCTPIPE_VALIDATE="$5" \
    -DCTPIPE_M="$6" -DCTPIPE_MODEL="$model" lowered_probe.cpp >/dev/null 2>&1 && cat /tmp/ctpipe-lowered.time
}
echo "Runtime model: $model"
echo
echo "| compiler | schedule | P | V | what | largest m | compute ops | lowered ops | compile time (s) | memory (MiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  version=$("$cxx" --version | head -n 1 | sed 's/ (Debian [^)]*)//')
  for row in "one_f_one_b 1 loop" "interleaved_1f1b 2 loop" "zbv 2 v_shape"; do
    set -- $row
    family=$1 V=$2 layout=$3
    for validate in 0 1; do
      what=$([ "$validate" = 1 ] && echo "lowered_v + validate_lowered" || echo "lowered_v")
      lo=16; hi=4096  # lo compiles, hi does not
      probe "$cxx" "$family" "$V" "$layout" "$validate" "$lo" >/dev/null || { echo "| $version | $family | 8 | $V | $what | < $lo | | | | |"; continue; }
      while [ $((hi - lo)) -gt 16 ]; do
        mid=$(( (lo + hi) / 32 * 16 ))
        if probe "$cxx" "$family" "$V" "$layout" "$validate" "$mid" >/dev/null; then lo=$mid; else hi=$mid; fi
      done
      set -- $(probe "$cxx" "$family" "$V" "$layout" "$validate" "$lo")
      # Compute ops per micro-batch: two per stage (F, B), three for ZB-V (F, I, W);
      # messages per micro-batch: two per stage edge across ranks (ZB-V's turn is none).
      case $family in
        one_f_one_b) compute=$((16 * lo)); messages=$((14 * lo)) ;;
        interleaved_1f1b) compute=$((32 * lo)); messages=$((30 * lo)) ;;
        zbv) compute=$((48 * lo)); messages=$((28 * lo)) ;;
      esac
      echo "| $version | $family | 8 | $V | $what | $lo | $compute | $((compute + 2 * messages)) | $1 | $(( $2 / 1024 )) |"
    done
  done
done
