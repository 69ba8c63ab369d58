#!/bin/sh
# Time and peak memory of the `ctpipe` tool at its size limits (2^24 ops in text, 2^21
# in JSON and SVG, 2^19 in trace), built by the `tool` preset. Prints a Markdown table.
set -eu
cd "$(dirname "$0")/.."
cmake --preset tool >/dev/null
cmake --build --preset tool >/dev/null
echo "| command | ops | time (s) | peak memory (MiB) |"
echo "|---|---|---|---|"
run() {  # ops, arguments...
  ops=$1
  shift
  /usr/bin/time -f "%e %M" -o /tmp/ctpipe-tool.time build/tool/ctpipe "$@" >/dev/null
  set -- "$@" $(cat /tmp/ctpipe-tool.time)
  eval "seconds=\${$(($# - 1))}; kib=\${$#}"
  echo "| \`ctpipe $(echo "$@" | awk '{ for (i = 1; i <= NF - 2; ++i) printf "%s%s", $i, (i < NF - 2 ? " " : "") }')\` | $ops | $seconds | $((kib / 1024)) |"
}
run 16777216 -P 4096 -m 2048
run 2097152 -P 1024 -m 1024 --format json
run 2097152 -P 1024 -m 1024 --format svg
run 524288 -P 512 -m 512 --format trace
run 524288 -s interleaved-1f1b -P 64 -m 1024 -V 4
