#!/bin/sh
# Opens the tool's SVGs in headless Chromium (Debian's `chromium`), as a person would:
# takes a screenshot of each and checks that the picture is not blank (ImageMagick counts
# its colours), and counts the op boxes in the document Chromium parsed (--dump-dom).
# Usage: screenshot_test.sh CTPIPE_TOOL WORK_DIR
set -eu
tool=$1
work=$2
rm -rf "$work"
mkdir -p "$work/profile"
browser() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" "$@" 2>>"$work/chromium.log"
}
check() {  # name, expected op boxes, tool arguments...
  name=$1
  expected=$2
  shift 2
  "$tool" --format svg "$@" >"$work/$name.svg"
  browser --window-size=1400,1000 --screenshot="$work/$name.png" "file://$work/$name.svg" >/dev/null
  [ -s "$work/$name.png" ] || { echo "FAIL $name: no screenshot"; exit 1; }
  colours=$(identify -format %k "$work/$name.png")
  [ "$colours" -ge 16 ] || { echo "FAIL $name: the screenshot has $colours colours: blank"; exit 1; }
  boxes=$(browser --dump-dom "file://$work/$name.svg" | grep -o 'class="op"' | wc -l)
  [ "$boxes" -eq "$expected" ] || { echo "FAIL $name: $boxes op boxes, expected $expected"; exit 1; }
  echo "ok $name: $colours colours, $boxes op boxes ($work/$name.png)"
}
check default_1f1b 64
check interleaved_P4_m8_V2 128 --schedule interleaved-1f1b -P 4 -m 8 -V 2
check zb_h1_P4_m8 96 --schedule zb-h1
echo "3 passed, 0 failed"
