// Run-time throughput of the same functions the proofs evaluate at compile time:
// generate + simulate for P = 64, m = 1024 (interleaved 1F1B with V = 4: 524,288 ops;
// 1F1B and ZB-V for comparison), on one core (Google Benchmark). Reports ops per second.
#include <benchmark/benchmark.h>

#include <ctpipe/ctpipe.hpp>

namespace {

void generate_and_simulate(benchmark::State& s, ctpipe::schedule_spec spec) {
  std::size_t ops = 0;
  for (auto _ : s) {
    const ctpipe::schedule sched = ctpipe::generate(spec);
    const ctpipe::simulation sim = ctpipe::simulate(sched.view(), ctpipe::costs{});
    benchmark::DoNotOptimize(sim.makespan_ticks());
    ops = sched.size();
  }
  s.counters["ops"] = static_cast<double>(ops);
  s.counters["ops_per_second"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_interleaved_P64_m1024_V4(benchmark::State& s) {
  generate_and_simulate(s, {ctpipe::schedule_family::interleaved_1f1b, {64, 1024, 4}});
}
void BM_1f1b_P64_m1024(benchmark::State& s) { generate_and_simulate(s, {ctpipe::schedule_family::one_f_one_b, {64, 1024}}); }
void BM_zbv_P64_m1024(benchmark::State& s) {
  generate_and_simulate(s, {ctpipe::schedule_family::zbv, {64, 1024, 2, ctpipe::placement::v_shape}});
}
BENCHMARK(BM_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_1f1b_P64_m1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zbv_P64_m1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
