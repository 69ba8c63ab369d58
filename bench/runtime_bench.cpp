// Run-time throughput of the same functions the proofs evaluate at compile time:
// generate + simulate for P = 64, m = 1024 (interleaved 1F1B with V = 4: 524,288 ops;
// 1F1B and ZB-V for comparison), and simulate against execute under each runtime model,
// on one core (Google Benchmark). Reports ops per second and nanoseconds per op.
//
// Each call allocates its tables and its result afresh, and glibc gives large blocks
// back to the kernel when they are freed, so by default every call also pays the page
// faults of first touching its memory, as a program that calls it once does. With
// CTPIPE_BENCH_KEEP_PAGES=1 the allocator keeps freed memory mapped (mallopt), which
// measures the algorithms alone on warm pages.
#include <benchmark/benchmark.h>
#include <malloc.h>  // mallopt (glibc)

#include <cstdlib>  // std::getenv

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
  s.counters["ops_per_second"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_interleaved_P64_m1024_V4(benchmark::State& s) {
  generate_and_simulate(s, {ctpipe::schedule_family::interleaved_1f1b, {64, 1024, 4}});
}
void BM_1f1b_P64_m1024(benchmark::State& s) {
  generate_and_simulate(s, {ctpipe::schedule_family::one_f_one_b, {64, 1024}});
}
void BM_zbv_P64_m1024(benchmark::State& s) {
  generate_and_simulate(s, {ctpipe::schedule_family::zbv, {64, 1024, 2, ctpipe::placement::v_shape}});
}
// execute() against simulate(), per op: the same schedule (interleaved 1F1B, P = 64,
// m = 1024, V = 4), simulate() on its 524,288 compute ops, execute() on the lists lower()
// makes for each model (the compute ops plus a SEND and a RECV per message). The counter
// ns_per_compute_op compares the two per compute op.
const ctpipe::schedule& big_compute() {
  static const ctpipe::schedule s = ctpipe::generate({ctpipe::schedule_family::interleaved_1f1b, {64, 1024, 4}});
  return s;
}

void BM_simulate_interleaved_P64_m1024_V4(benchmark::State& s) {
  const ctpipe::schedule& g = big_compute();
  for (auto _ : s) benchmark::DoNotOptimize(ctpipe::simulate(g.view(), ctpipe::costs{}).makespan_ticks());
  s.counters["compute_ops"] = static_cast<double>(g.size());
  s.counters["ns_per_compute_op"] =
      benchmark::Counter(static_cast<double>(g.size()) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void execute_model(benchmark::State& s, ctpipe::runtime_model model) {
  const ctpipe::schedule& g = big_compute();
  const ctpipe::schedule lowered = ctpipe::lower(g.view(), ctpipe::costs{}, model);
  for (auto _ : s) benchmark::DoNotOptimize(ctpipe::execute(lowered.view(), ctpipe::costs{}, model).makespan_ticks());
  s.counters["lowered_ops"] = static_cast<double>(lowered.size());
  s.counters["ns_per_compute_op"] =
      benchmark::Counter(static_cast<double>(g.size()) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_execute_blocking_interleaved_P64_m1024_V4(benchmark::State& s) {
  execute_model(s, ctpipe::runtime_model::blocking);
}
void BM_execute_rendezvous_interleaved_P64_m1024_V4(benchmark::State& s) {
  execute_model(s, ctpipe::runtime_model::rendezvous);
}
void BM_execute_posted_interleaved_P64_m1024_V4(benchmark::State& s) {
  execute_model(s, ctpipe::runtime_model::posted);
}
void BM_execute_batched_interleaved_P64_m1024_V4(benchmark::State& s) {
  execute_model(s, ctpipe::runtime_model::batched);
}

BENCHMARK(BM_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_simulate_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_execute_blocking_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_execute_rendezvous_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_execute_posted_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_execute_batched_interleaved_P64_m1024_V4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_1f1b_P64_m1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zbv_P64_m1024)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (const char* keep = std::getenv("CTPIPE_BENCH_KEEP_PAGES"); keep != nullptr && keep[0] == '1') {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);  // no block gets its own mapping
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  // the heap is not trimmed on free
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
