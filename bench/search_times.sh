#!/bin/sh
# The whole `ctpipe search` command at the authors' largest anchor setting (P = 32,
# m = 256, 24576 ops, k = 2), best of 5 wall-clock runs, beside a baseline measured in the
# same run: the same tool showing ZB-H1 at the same shape and costs (generate, simulate,
# the same JSON); then the same on the V-shape (--placement v, k = 1) beside ZB-V.
# Usage: bench/search_times.sh TOOL (a Release build of the tool).
set -eu
tool=$1
costs="f=18894,i=19288,w=14386,c=887"
best() {  # best of 5 wall-clock seconds of the command "$@"
  b=""
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N)
    "$@" >/dev/null
    e=$(date +%s%N)
    t=$(( (e - s) / 1000 ))
    if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
  done
  awk "BEGIN { printf \"%.3f\", $b / 1000000 }"
}
search=$(best "$tool" search -P 32 -m 256 --costs "$costs" --gamma 16/37 --memory-limit 64 --format json)
base=$(best "$tool" -s zb-h1 -P 32 -m 256 --costs "$costs" --gamma 16/37 --format json)
inner=$("$tool" search -P 32 -m 256 --costs "$costs" --gamma 16/37 --memory-limit 64 --format json |
        sed -n 's/.*"seconds": \([0-9.e-]*\).*/\1/p')
search_v=$(best "$tool" search -P 32 -m 256 --costs "$costs" --gamma 16/37 --memory-limit 32 --placement v --format json)
base_v=$(best "$tool" -s zbv -P 32 -m 256 --costs "$costs" --gamma 16/37 --format json)
inner_v=$("$tool" search -P 32 -m 256 --costs "$costs" --gamma 16/37 --memory-limit 32 --placement v --format json |
          sed -n 's/.*"seconds": \([0-9.e-]*\).*/\1/p')
echo "| command | seconds (best of 5) |"
echo "|---|---|"
echo "| \`ctpipe search -P 32 -m 256 ... --memory-limit 64 --format json\` | $search (of which the search: $inner) |"
echo "| baseline: \`ctpipe -s zb-h1 -P 32 -m 256 ... --format json\` | $base |"
echo "| \`ctpipe search -P 32 -m 256 ... --memory-limit 32 --placement v --format json\` | $search_v (of which the search: $inner_v) |"
echo "| baseline: \`ctpipe -s zbv -P 32 -m 256 ... --format json\` | $base_v |"
