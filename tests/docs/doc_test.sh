#!/bin/sh
# Checks that every fenced code block of README.md and docs/*.md still does what the page
# shows. Each block carries a marker, an HTML comment on the last non-blank line before
# its opening fence (invisible on a rendered page):
#
#   <!-- doc-test: run -->               ```cpp: a complete program (has `int main`),
#                                        compiled with -Werror and run: exit status 0.
#                                        ```sh: lines `ctpipe ARGS`, run with the built tool
#                                        in the page's scratch folder (stdout and stderr).
#   <!-- doc-test: output -->            what the run block before it prints, exactly (a
#                                        run ```sh block must be followed by one).
#   <!-- doc-test: output of ctpipe ARGS -->
#                                        exactly what `ctpipe ARGS` prints.
#   <!-- doc-test: file NAME -->         saved as NAME in the page's scratch folder, for
#                                        the tool runs after it on the same page.
#   <!-- doc-test: skip REASON -->       not run, for the reason given (a fragment, a
#                                        command that installs or needs MPI, ...).
#
# A block without a marker, an unknown marker, a run block that is no complete program,
# a failed compile or run, and an output that differs from its block fail the test.
#
# Usage: doc_test.sh MODE SOURCE_DIR WORK_DIR CTPIPE_TOOL [CXX FLAGS... -- LIBS...]
#   MODE tool:     checks the markers, runs the tool blocks (fast; CTest docs.tool)
#   MODE programs: checks the markers, compiles and runs the C++ programs with
#                  CXX FLAGS, linking LIBS (CTest docs.programs)
set -eu
mode=$1
src=$2
work=$3
tool=$4
shift 4
case $tool in /*) ;; *) tool=$PWD/$tool ;; esac  # the runs happen in other folders
cxx_command=""  # the compiler and its flags, quoted for eval
libs=""
if [ "$mode" = programs ]; then
  seen_separator=0
  for arg in "$@"; do
    if [ "$arg" = "--" ]; then
      seen_separator=1
      continue
    fi
    quoted="'$(printf '%s' "$arg" | sed "s/'/'\\\\''/g")'"
    if [ $seen_separator -eq 0 ]; then cxx_command="$cxx_command $quoted"; else libs="$libs $quoted"; fi
  done
fi

failures=0
checked=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
# compare WHERE EXPECTED ACTUAL
compare() {
  if cmp -s "$2" "$3"; then
    checked=$((checked + 1))
  else
    fail "$1: the output differs from the block (- the block, + the output):"
    diff -u "$2" "$3" | sed -n '3,60p'
  fi
}

rm -rf "$work"
mkdir -p "$work"
for page in "$src/README.md" "$src"/docs/*.md; do
  [ -e "$page" ] || continue
  rel=${page#"$src"/}
  dir=$work/$(printf '%s' "$rel" | tr '/.' '__')
  mkdir -p "$dir/blocks" "$dir/scratch"
  # Each block's body to blocks/N, and "N TAB page:line TAB language TAB marker" to
  # blocks/index ("-" for an empty field).
  if ! awk -v dir="$dir/blocks" -v name="$rel" '
    BEGIN { n = 0; inside = 0; last = "" }
    {
      if (!inside) {
        if ($0 ~ /^```/) {
          inside = 1
          n++
          lang = substr($0, 4)
          gsub(/[ \t]/, "", lang)
          marker = ""
          if (last ~ /^<!-- doc-test: .* -->$/) marker = substr(last, 16, length(last) - 19)
          body = dir "/" n
          printf "" > body
          printf "%d\t%s:%d\t%s\t%s\n", n, name, FNR, (lang == "" ? "-" : lang), (marker == "" ? "-" : marker) > (dir "/index")
          next
        }
        if ($0 !~ /^[ \t]*$/) last = $0
      } else if ($0 ~ /^```[ \t]*$/) {
        inside = 0
        close(body)
        last = ""
      } else {
        print > body
      }
    }
    END {
      printf "" >> (dir "/index")
      if (inside) { print name ": a code block is not closed"; exit 1 }
    }' "$page"; then
    fail "$rel: cannot be read into blocks"
    continue
  fi
  pending=""       # the output file of the last run block, waiting for its output block
  pending_where=""
  pending_needs_output=0
  tab=$(printf '\t')
  while IFS=$tab read -r n where lang marker; do
    body=$dir/blocks/$n
    if [ "$marker" != output ] && [ $pending_needs_output -eq 1 ]; then
      fail "$pending_where: a run \`\`\`sh block must be followed by an output block"
    fi
    if [ "$marker" != output ]; then
      pending=""
      pending_needs_output=0
    fi
    case $marker in
      -)
        fail "$where: a \`\`\`${lang#-} block without a doc-test marker (tests/docs/doc_test.sh lists them)" ;;
      "skip "?*) ;;
      "file "?*)
        cp "$body" "$dir/scratch/${marker#file }" ;;
      output)
        if [ -z "$pending_where" ]; then
          fail "$where: an output block with no run block before it"
        elif [ -n "$pending" ]; then
          compare "$where" "$body" "$pending"
        fi
        pending=""
        pending_where=""
        pending_needs_output=0 ;;
      "output of ctpipe" | "output of ctpipe "*)
        if [ "$mode" = tool ]; then
          args=${marker#output of ctpipe}
          (cd "$dir/scratch" && eval "\"\$tool\" $args") </dev/null >"$dir/$n.out" 2>&1 || true
          compare "$where" "$body" "$dir/$n.out"
        fi ;;
      run)
        pending_where=$where
        case $lang in
          cpp)
            if ! grep -q 'int main' "$body"; then
              fail "$where: a run \`\`\`cpp block must be a complete program (int main)"
            elif [ "$mode" = programs ]; then
              cp "$body" "$dir/$n.cpp"
              if ! eval "$cxx_command -o \"\$dir/\$n.program\" \"\$dir/\$n.cpp\" $libs" </dev/null >"$dir/$n.log" 2>&1; then
                fail "$where: does not compile:"
                sed -n '1,40p' "$dir/$n.log"
              elif ! (cd "$dir/scratch" && "$dir/$n.program") </dev/null >"$dir/$n.out" 2>"$dir/$n.err"; then
                fail "$where: the program exits with a failure:"
                cat "$dir/$n.err"
              else
                checked=$((checked + 1))
                pending=$dir/$n.out
              fi
            fi ;;
          sh)
            pending_needs_output=1
            if [ "$mode" = tool ]; then
              : >"$dir/$n.out"
              while IFS= read -r line; do
                case $line in
                  "") ;;
                  "ctpipe" | "ctpipe "*)
                    (cd "$dir/scratch" && eval "\"\$tool\" ${line#ctpipe}") </dev/null >>"$dir/$n.out" 2>&1 || true ;;
                  *) fail "$where: a run \`\`\`sh block holds ctpipe commands only, not: $line" ;;
                esac
              done <"$body"
              pending=$dir/$n.out
            fi ;;
          *)
            fail "$where: run applies to \`\`\`cpp and \`\`\`sh blocks, not \`\`\`${lang#-}" ;;
        esac ;;
      *)
        fail "$where: unknown doc-test marker '$marker'" ;;
    esac
  done <"$dir/blocks/index"
  if [ $pending_needs_output -eq 1 ]; then
    fail "$pending_where: a run \`\`\`sh block must be followed by an output block"
  fi
done
echo "doc_test.sh $mode: $checked blocks checked, $failures failures"
[ $failures -eq 0 ]
