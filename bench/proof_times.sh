#!/bin/sh
# Compile time and peak compiler memory of each compile-time proof translation unit in
# tests/static, with GCC and Clang at their default constexpr limits (-fsyntax-only: the
# proofs are all in constant evaluation). Prints a Markdown table.
set -eu
cd "$(dirname "$0")/.."
echo "| translation unit | what it proves | g++ (s) | g++ (MiB) | clang++ (s) | clang++ (MiB) |"
echo "|---|---|---|---|---|---|"
for tu in tests/static/*.cpp; do
  what=$(sed -n '1s|^// ||p' "$tu" | cut -c1-70)
  row="| \`$(basename "$tu")\` | $what"
  for cxx in g++ clang++; do
    /usr/bin/time -f "%e %M" -o /tmp/ctpipe-proof.time "$cxx" -std=c++20 -fsyntax-only -Iinclude "$tu"
    set -- $(cat /tmp/ctpipe-proof.time)
    row="$row | $1 | $(( $2 / 1024 ))"
  done
  echo "$row |"
done
