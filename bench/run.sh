#!/bin/sh
# Every benchmark in one command; writes bench/RESULTS.md (machine, compilers, date):
# dispatch overhead (callgrind instruction counts and Google Benchmark timings), run-time
# generation + simulation throughput, bytes per op, compile time and memory of one proof
# as the schedule grows, the largest proof each compiler accepts, the largest lowered
# schedule, the largest bubble fill proved and the run-time cost of filling and
# rebalancing, the search under a memory limit against the Zero Bubble authors' table,
# the test proofs' cost, the page's redraw time.
# Takes about 20 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
. scripts/python.sh
ctpipe_install_missing $CTPIPE_TOOL_PACKAGES $CTPIPE_CLANG_PACKAGES libbenchmark-dev valgrind
ctpipe_install_clang_runtime
ctpipe_install_missing $CTPIPE_WEB_TEST_PACKAGES
ctpipe_install_node
ctpipe_python_venv >&2  # build/venv with the package, for bench/python_speed.py and bench/torch_predicted.py
cmake --preset bench >/dev/null
cmake --build --preset bench >/dev/null
cmake --preset web >/dev/null  # the page and puppeteer-core, for bench/web_redraw.mjs
cmake --build --preset web >/dev/null
bin=build/bench/bench
out=bench/RESULTS.md.new
count() {  # instructions callgrind counts for `dispatch_bench --count MODE 100000`
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/dispatch_bench" --count "$1" 100000 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
{
  echo "# Benchmark results"
  echo
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -m); $(g++ --version | head -n 1);"
  echo "$(clang++ --version | head -n 1); measured $(date -u +%Y-%m-%d) by \`bench/run.sh\`."
  echo
  echo "## Dispatch overhead (\`bench/dispatch_bench.cpp\`)"
  echo
  echo "Rank 0 of 1F1B P = 4, m = 8 (16 ops), each op one call of an opaque \`launch(kind, stage,"
  echo "micro-batch)\`. Instructions per run of the program, counted by"
  echo "\`valgrind --tool=callgrind\` over 100,000 runs, minus an empty run's count:"
  echo
  none=$(count none)
  hand=$(count hand)
  echo "| way | instructions per run | vs hand-written | extra instructions per op |"
  echo "|---|---|---|---|"
  for way in hand visitor table loop periodic; do
    n=$(count "$way")
    awk "BEGIN { per = ($n - $none) / 100000; base = ($hand - $none) / 100000;
                 printf \"| %s | %.1f | %+.2f%% | %.1f |\\n\", \"$way\", per, (per / base - 1) * 100, (per - base) / 16 }"
  done
  echo
  echo "Timings (Google Benchmark, one core, noisy machine: the instruction counts above are"
  echo "the stable measure):"
  echo
  echo '```'
  "$bin/dispatch_bench" --benchmark_min_time=0.2 2>/dev/null | grep -E '^(BM_|Benchmark)'
  echo '```'
  echo
  echo "## Run-time generation + simulation (\`bench/runtime_bench.cpp\`)"
  echo
  echo '```'
  "$bin/runtime_bench" --benchmark_min_time=0.5 2>/dev/null | grep -E '^(BM_|Benchmark)'
  echo '```'
  echo
  echo "## The same from Python (\`bench/python_speed.py\`)"
  echo
  echo "\`ctpipe.Schedule(\"interleaved-1f1b\", P=64, m=1024, V=4)\` plus \`.simulate()\` (the package built"
  echo "by \`pip install .\`, Release, nanobind's module without -Os) beside the C++ benchmark above, both"
  echo "timed in one run of the script; the Python issue asks for a ratio of at most 1.5:"
  echo
  echo '```'
  build/venv/bin/python bench/python_speed.py "$bin/runtime_bench"
  echo '```'
  echo
  echo "## Bytes per op of a frozen schedule (\`bench/bytes_per_op.cpp\`)"
  echo
  echo "Each op is 4 bytes; the P+1 per-rank offsets (4 bytes each) and the shape come on top."
  echo
  g++ -std=c++20 -O2 -Iinclude bench/bytes_per_op.cpp -o build/bench/bytes_per_op && build/bench/bytes_per_op
  echo
  echo "## Compile time of one proof as the schedule grows (\`bench/compile_scaling.sh\`)"
  echo
  echo "\`bench/compile_probe.cpp\`: schedule_v, validate, simulate against the bubble formula,"
  echo "peaks against theirs; P = 8; \`-fsyntax-only\`; \"limit\" = the compiler's default"
  echo "constexpr limit stopped it."
  echo
  bench/compile_scaling.sh
  echo
  echo "The 32K-op target schedule, 1F1B P = 32, m = 512, with and without the validation:"
  echo
  echo "| compiler | validated | time (s) | memory (MiB) |"
  echo "|---|---|---|---|"
  for cxx in g++ clang++; do
    for validate in 1 0; do
      /usr/bin/time -f "%e %M" -o /tmp/ctpipe-target.time "$cxx" -std=c++20 -fsyntax-only -Iinclude \
        -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P=32 -DCTPIPE_M=512 -DCTPIPE_V=1 -DCTPIPE_LAYOUT=loop \
        -DCTPIPE_VALIDATE=$validate bench/compile_probe.cpp
      set -- $(cat /tmp/ctpipe-target.time)
      echo "| $cxx | $validate | $1 | $(($2 / 1024)) |"
    done
  done
  echo
  echo "What a proof adds to a translation unit: the rows above minus a translation unit that"
  echo "only includes \`ctpipe/ctpipe.hpp\` (best of three runs):"
  echo
  echo "| compiler | includes alone (s) |"
  echo "|---|---|"
  printf '#include <ctpipe/ctpipe.hpp>\n' >/tmp/ctpipe-base.cpp
  for cxx in g++ clang++; do
    best=$(for i in 1 2 3; do
      /usr/bin/time -f "%e" "$cxx" -std=c++20 -fsyntax-only -Iinclude /tmp/ctpipe-base.cpp 2>&1
    done | sort -n | head -n 1)
    echo "| $cxx | $best |"
  done
  echo
  cat <<'CHANGES'
## What these benchmarks made us change (in the algorithms, never with compiler flags)

Measured with `bench/compile_probe.cpp` on 1F1B P = 32, m = 512 (32,768 ops: generated,
validated, simulated, bubble and peaks proved), Clang 14, default limits, best of three
runs at each commit:

| change | time (s) | memory (MiB) |
|---|---|---|
| before (`156494a`) | 7.1 | 252 |
| the probe's proofs take the view as a parameter: Clang 14 evaluates a local variable's initializer a second time on its own when that initializer is a constant expression by itself (`const simulation sim = simulate(frozen.view(), ...)` inside a lambda doubled the simulation's cost); `lowered_v` freezes through functions taking the spec as a parameter for the same reason (`00769d5`) | 5.0 | 252 |
| the per-op loops of the walk, the validator, the simulator and the lowering assign per-op values to variables declared outside the loops, in one expression: Clang 14 keeps every local declared in a loop body in a node of its map of temporaries, allocated and freed once per op (seen with `perf record -e cpu-clock` on clang: `std::_Rb_tree::_M_erase` and malloc among the top frames) (`eb2710d`) | 3.8 | 155 |

Earlier, the same probe drove: plain C arrays instead of `std::array` in the hot loops,
one declaration statement per op (Clang charges a step per statement), the walk's single
branch per op on its common path, and the simulator's visit in one statement
(`e6c280d`, `011fa0e`). The lowering (`ctpipe/lower/`) got the same treatment from the
start: with per-stage tables, hand-decoded ops and the two changes above, Clang's largest
`lowered_v` of 1F1B P = 8 went from m = 128 to m = 624 and `validate_lowered` from m = 64
to m = 304 (the table below).

CHANGES
  echo
  echo "## Largest schedule proved (\`bench/largest_proof.sh\`, P = 8)"
  echo
  bench/largest_proof.sh
  echo
  echo "## Largest lowered schedule (\`bench/lowered_limits.sh\`, P = 8)"
  echo
  echo "\`lowered_v\` alone, and with \`validate_lowered\` (rendezvous) as a second constant"
  echo "evaluation in the same translation unit; the largest m (a multiple of 16) each compiler"
  echo "accepts at its default limits:"
  echo
  bench/lowered_limits.sh
  echo
  echo "## Bubble filling and rebalancing (\`bench/fill_limits.sh\`, \`bench/fill_bench.cpp\`)"
  echo
  echo "The largest m (a multiple of 16) for which each compiler proves the article's encoder"
  echo "fill of 1F1B, P = 8, at its default limits (\`fill_bubbles\`: the greedy sweep, its checks"
  echo "and the re-simulation proof), beside the same translation unit with only the include:"
  echo
  bench/fill_limits.sh
  echo
  echo "At run time, one core (the encoder's 2m jobs; divisible: the max-flow placement;"
  echo "rebalance at the bound with t_move = 1/8):"
  echo
  echo '```'
  "$bin/fill_bench" --benchmark_min_time=0.2 2>/dev/null | grep -E '^(BM_|Benchmark)'
  echo '```'
  echo
  echo "## Compile time of the test proofs (\`bench/proof_times.sh\`)"
  echo
  bench/proof_times.sh
  echo
  echo "## Searching under a memory limit (\`bench/search_table.cpp\`, \`bench/search_times.sh\`)"
  echo
  echo "The Zero Bubble authors' anchor settings (gamma = 16/37, limit k P; docs/search.md):"
  echo
  "$bin/search_table" 60
  echo
  echo "The largest \`searched_v\` each compiler freezes at its default limits (\`bench/searched_limits.sh\`):"
  echo
  bench/searched_limits.sh
  echo
  echo "The whole command, a Release build of the tool:"
  echo
  cmake --preset tool >/dev/null
  cmake --build --preset tool >/dev/null
  bench/search_times.sh build/tool/ctpipe
  echo
  echo "## The \`ctpipe\` tool at its size limits (\`bench/tool_limits.sh\`)"
  echo
  bench/tool_limits.sh
  echo
  echo "## The page: redraw after a slider moves (\`bench/web_redraw.mjs\`)"
  echo
  echo "The page of \`web/\` (docs/web.md) in headless Chromium $(chromium --version 2>/dev/null | awk '{print $2}')"
  echo "(software rendering, 1280 x 800): from the slider's input event to the end of the redraw"
  echo "(the worker's run of the library, the transfer, the canvas and the readouts), in ms,"
  echo "over 25 moves per shape after 10 not kept; the library's share alone in the last column."
  echo "One frame is 16 ms."
  echo
  node bench/web_redraw.mjs build/web 60
} >"$out"
mv "$out" bench/RESULTS.md
echo "wrote bench/RESULTS.md"
