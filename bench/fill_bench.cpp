// Run-time cost of bubble filling and rebalancing (docs/bubbles.md), on one core (Google
// Benchmark): the article's encoder (forward 1/4, backward 1/2 per micro-batch) filled
// into 1F1B's bubbles by the greedy sweep (fill_bubbles, the compile-time passes) and by
// fill_bubbles_optimal (the greedy with the max-flow's bound, as the jobs are whole),
// the same jobs divisible (the max-flow placement), and rebalance() at the bound with
// t_move = 1/8, for P = 8, m = 32 and P = 16, m = 128; stretch_fill() of the greedy's
// fill (the first encoder forward and the last backward inserted) at the same shapes;
// least_delay() where moves of 4 are too slow for capacity 5 (P = 8, m = 32) and 9
// (P = 16, m = 64).
#include <benchmark/benchmark.h>

#include <optional>

#include <ctpipe/ctpipe.hpp>

namespace {

using namespace ctpipe;

enum class way { greedy, best, divisible };

void fill(benchmark::State& s, int P, int m, way w) {
  const schedule sched = generate({schedule_family::one_f_one_b, {P, m}});
  const std::optional<rational> piece = w == way::divisible ? std::optional<rational>{rational{0}} : std::nullopt;
  const detail::buffer<fill_job> jobs = encoder_jobs(sched.view(), rational{1, 4}, rational{1, 2}, piece);
  for (auto _ : s) {
    const fill_result r = w == way::greedy ? fill_bubbles(sched.view(), costs{}, jobs.span())
                                           : fill_bubbles_optimal(sched.view(), costs{}, jobs.span());
    benchmark::DoNotOptimize(r.total.num);
  }
  s.counters["ops"] = static_cast<double>(sched.size());
  s.counters["jobs"] = static_cast<double>(jobs.size());
}

void rebalanced(benchmark::State& s, int P, int m) {
  const schedule sched = generate({schedule_family::one_f_one_b, {P, m}});
  costs c{};
  c.move = rational{1, 8};
  const rational capacity = live_bound(sched.view(), c).bound;
  for (auto _ : s) {
    const rebalance_plan plan = rebalance(sched.view(), c, std::span<const rational>(&capacity, 1));
    benchmark::DoNotOptimize(plan.moves.size());
    s.counters["moves"] = static_cast<double>(plan.moves.size());
    s.counters["feasible"] = plan.feasible ? 1 : 0;
  }
  s.counters["ops"] = static_cast<double>(sched.size());
}

void stretched(benchmark::State& s, int P, int m) {
  const schedule sched = generate({schedule_family::one_f_one_b, {P, m}});
  const detail::buffer<fill_job> jobs = encoder_jobs(sched.view(), rational{1, 4}, rational{1, 2});
  const fill_result f = fill_bubbles(sched.view(), costs{}, jobs.span());
  for (auto _ : s) {
    const stretch_result r = stretch_fill(sched.view(), costs{}, jobs.span(), f);
    benchmark::DoNotOptimize(r.makespan.num);
    s.counters["least"] = r.least ? 1 : 0;
  }
  s.counters["ops"] = static_cast<double>(sched.size());
}

void delayed(benchmark::State& s, int P, int m, int capacity) {
  const schedule sched = generate({schedule_family::one_f_one_b, {P, m}});
  costs c{};
  c.move = rational{4};
  const rational cap{capacity};
  for (auto _ : s) {
    const rebalance_delay d = least_delay(sched.view(), c, std::span<const rational>(&cap, 1));
    benchmark::DoNotOptimize(d.delay.num);
    s.counters["found"] = d.found ? 1 : 0;
    s.counters["rounds"] = d.rounds;
  }
  s.counters["ops"] = static_cast<double>(sched.size());
}

void BM_fill_greedy_P8_m32(benchmark::State& s) { fill(s, 8, 32, way::greedy); }
void BM_fill_best_P8_m32(benchmark::State& s) { fill(s, 8, 32, way::best); }
void BM_fill_maxflow_P8_m32(benchmark::State& s) { fill(s, 8, 32, way::divisible); }
void BM_fill_greedy_P16_m128(benchmark::State& s) { fill(s, 16, 128, way::greedy); }
void BM_fill_best_P16_m128(benchmark::State& s) { fill(s, 16, 128, way::best); }
void BM_fill_maxflow_P16_m128(benchmark::State& s) { fill(s, 16, 128, way::divisible); }
void BM_rebalance_P8_m32(benchmark::State& s) { rebalanced(s, 8, 32); }
void BM_rebalance_P16_m128(benchmark::State& s) { rebalanced(s, 16, 128); }
void BM_stretch_P8_m32(benchmark::State& s) { stretched(s, 8, 32); }
void BM_stretch_P16_m128(benchmark::State& s) { stretched(s, 16, 128); }
void BM_least_delay_P8_m32(benchmark::State& s) { delayed(s, 8, 32, 5); }
void BM_least_delay_P16_m64(benchmark::State& s) { delayed(s, 16, 64, 9); }

}  // namespace

BENCHMARK(BM_fill_greedy_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fill_best_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fill_maxflow_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fill_greedy_P16_m128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fill_best_P16_m128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fill_maxflow_P16_m128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rebalance_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rebalance_P16_m128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_stretch_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_stretch_P16_m128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_least_delay_P8_m32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_least_delay_P16_m64)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
