// Dispatch overhead: rank 0's program of 1F1B (P = 4, m = 8) consumed four ways, each
// calling the same opaque `launch(kind, stage, micro-batch)` (about 140 instructions of
// work) once per op:
//   hand    - a hand-written sequence of the 16 calls;
//   visitor - for_each_op (MP11 fold, straight-line code);
//   table   - dispatch_table (one indirect call per op);
//   loop    - a plain loop over the std::span<const op> (decoding each op);
//   periodic - periodic_schedule_v's for_each_op at m = 8: the periodic program, whose
//             storage does not grow with m (schedules/program.hpp), expanded as it runs.
// `dispatch_bench` runs Google Benchmark timings; `dispatch_bench --count MODE N` runs one
// way N times and nothing else, for `valgrind --tool=callgrind` instruction counts
// (bench/run.sh subtracts the `none` mode's count).
#include <benchmark/benchmark.h>

#include <ctpipe/ctpipe.hpp>
#include <ctpipe/dispatch/op_types.hpp>
#include <ctpipe/dispatch/table.hpp>

#include <cstdlib>
#include <cstring>

namespace {

constexpr auto& schedule = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::one_f_one_b, {4, 8}}>;

unsigned long long state = 0;

/// Stands for a runtime's per-op work (a real kernel launch costs thousands of
/// instructions; this one about 140): opaque to the optimizer.
[[gnu::noinline]] void launch(int kind, int stage, int microbatch) {
  unsigned long long x = state + static_cast<unsigned long long>(kind * 65536 + stage * 256 + microbatch);
  for (int round = 0; round < 32; ++round) x = (x ^ (x >> 29)) * 1099511628211ULL;
  state = x;
  benchmark::DoNotOptimize(state);
}

void hand() {
  // Rank 0 of 1F1B P = 4, m = 8 (Megatron-LM's order): F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7.
  launch(0, 0, 0);
  launch(0, 0, 1);
  launch(0, 0, 2);
  launch(0, 0, 3);
  launch(1, 0, 0);
  launch(0, 0, 4);
  launch(1, 0, 1);
  launch(0, 0, 5);
  launch(1, 0, 2);
  launch(0, 0, 6);
  launch(1, 0, 3);
  launch(0, 0, 7);
  launch(1, 0, 4);
  launch(1, 0, 5);
  launch(1, 0, 6);
  launch(1, 0, 7);
}

void visitor() {
  ctpipe::for_each_op<schedule, 0>([](auto o) {
    using O = decltype(o);
    launch(static_cast<int>(O::kind), O::stage, O::microbatch);
  });
}

struct launcher {
  template <class O>
  static void run(int&) {
    launch(static_cast<int>(O::kind), O::stage, O::microbatch);
  }
};

void table() {
  int context = 0;
  ctpipe::dispatch_table<schedule, 0, launcher, int>::run(context);
}

void loop() {
  for (const ctpipe::op o : schedule.rank(0)) launch(static_cast<int>(o.kind()), o.stage(), o.microbatch());
}

constexpr auto& program = ctpipe::periodic_schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::one_f_one_b, {4, 8}}>;

void periodic() {
  program.for_each_op(0, 8, [](ctpipe::program_op o) { launch(static_cast<int>(o.kind), o.stage, o.microbatch); });
}

void none() {}

void BM_hand(benchmark::State& s) {
  for (auto _ : s) hand();
}
void BM_visitor(benchmark::State& s) {
  for (auto _ : s) visitor();
}
void BM_table(benchmark::State& s) {
  for (auto _ : s) table();
}
void BM_loop(benchmark::State& s) {
  for (auto _ : s) loop();
}
void BM_periodic(benchmark::State& s) {
  for (auto _ : s) periodic();
}
BENCHMARK(BM_hand);
BENCHMARK(BM_visitor);
BENCHMARK(BM_table);
BENCHMARK(BM_loop);
BENCHMARK(BM_periodic);

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--count") == 0) {
    void (*way)() = std::strcmp(argv[2], "hand") == 0      ? hand
                    : std::strcmp(argv[2], "visitor") == 0 ? visitor
                    : std::strcmp(argv[2], "table") == 0   ? table
                    : std::strcmp(argv[2], "loop") == 0     ? loop
                    : std::strcmp(argv[2], "periodic") == 0 ? periodic
                                                            : none;
    const long n = std::atol(argv[3]);
    for (long i = 0; i < n; ++i) way();
    return static_cast<int>(state & 1U);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
