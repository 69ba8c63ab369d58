#!/bin/sh
# The largest searched_v each compiler freezes at its default limits (docs/search.md): P
# = 4 and 8, the article's costs, gamma 16/37, limit P; on the loop placement the 74
# constructions and the authors' 8 (search_spec::authors_only), on the V-shape the 28
# rule sets and 8 fixed orders and the authors' 4; m grows until the compile fails.
# Prints Markdown.
set -eu
cd "$(dirname "$0")/.."
tu=$(mktemp -d)
trap 'rm -rf "$tu"' EXIT
cat >"$tu/probe.cpp" <<'CPP'
#include <ctpipe/plan/search.hpp>
constexpr ctpipe::search_spec spec{ctpipe::pipeline_shape{PP, MM, VV, ctpipe::placement::LAYOUT}, ctpipe::costs{},
                                   ctpipe::rational{16, 37}, ctpipe::rational{PP}, AO};
static_assert(ctpipe::searched_v<spec>.size() == 3 * VV * PP * MM);
CPP
largest() {  # compiler placement P authors_only m...: the largest m of the list that compiles
  cxx=$1 layout=$2 P=$3 ao=$4
  shift 4
  V=1
  [ "$layout" = v_shape ] && V=2
  best="-"
  for m in "$@"; do
    if $cxx -std=c++20 -fsyntax-only -Iinclude -DPP="$P" -DMM="$m" -DVV="$V" -DLAYOUT="$layout" -DAO="$ao" "$tu/probe.cpp" 2>/dev/null; then
      best=$m
    else
      break
    fi
  done
  echo "$best"
}
echo "| compiler | placement | P | constructions | largest m (of those tried) |"
echo "|---|---|---|---|---|"
for cxx in g++ clang++; do
  echo "| $cxx | loop | 4 | 74 | $(largest $cxx loop 4 false 16 32 64 128) |"
  echo "| $cxx | loop | 8 | 74 | $(largest $cxx loop 8 false 16 32 64 128) |"
  echo "| $cxx | loop | 8 | 8 (authors_only) | $(largest $cxx loop 8 true 64 128 256) |"
  echo "| $cxx | v | 4 | 28 rule sets, 8 fixed | $(largest $cxx v_shape 4 false 8 16 32 64) |"
  echo "| $cxx | v | 8 | 28 rule sets, 8 fixed | $(largest $cxx v_shape 8 false 8 16 32 64) |"
  echo "| $cxx | v | 8 | 4 (authors_only) | $(largest $cxx v_shape 8 true 32 64 128) |"
done
