#!/bin/sh
# The largest searched_v each compiler freezes at its default limits (docs/search.md): P
# = 4 and 8, the article's costs, gamma 16/37, limit P; the 74 constructions and the
# authors' 8 (search_spec::authors_only); m grows until the compile fails. Prints Markdown.
set -eu
cd "$(dirname "$0")/.."
tu=$(mktemp -d)
trap 'rm -rf "$tu"' EXIT
cat >"$tu/probe.cpp" <<'CPP'
#include <ctpipe/analysis/search.hpp>
constexpr ctpipe::search_spec spec{ctpipe::pipeline_shape{PP, MM, 1, ctpipe::placement::loop}, ctpipe::costs{},
                                   ctpipe::rational{16, 37}, ctpipe::rational{PP}, AO};
static_assert(ctpipe::searched_v<spec>.size() == 3 * PP * MM);
CPP
largest() {  # compiler P authors_only m...: the largest m of the list that compiles
  cxx=$1 P=$2 ao=$3
  shift 3
  best="-"
  for m in "$@"; do
    if $cxx -std=c++20 -fsyntax-only -Iinclude -DPP="$P" -DMM="$m" -DAO="$ao" "$tu/probe.cpp" 2>/dev/null; then best=$m; else break; fi
  done
  echo "$best"
}
echo "| compiler | P | constructions | largest m (of those tried) |"
echo "|---|---|---|---|"
for cxx in g++ clang++; do
  echo "| $cxx | 4 | 74 | $(largest $cxx 4 false 8 12 16 24 32 48 64) |"
  echo "| $cxx | 8 | 74 | $(largest $cxx 8 false 4 6 8 12 16 24 32) |"
  echo "| $cxx | 8 | 8 (authors_only) | $(largest $cxx 8 true 16 32 48 64 96 128) |"
done
