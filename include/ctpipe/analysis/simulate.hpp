// ctpipe/analysis/simulate.hpp: exact timeline of a schedule under docs/spec.md §2.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t
#include <span>

#include "ctpipe/analysis/walk.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

/// The exact timeline of a schedule: each op's start and end, and per-rank totals.
///
/// Times are kept as integer ticks of length tick() (the least common multiple of the
/// cost denominators, in time units of `t_f`), so the simulation does no rational
/// arithmetic per op; every accessor returns the exact rational. Shapes: start/end are
/// indexed like the schedule's flat op array; per-rank values by rank 0..P-1.
class simulation {
 public:
  constexpr simulation() = default;

  /// Length of one tick, in time units.
  constexpr rational tick() const { return tick_; }
  /// Makespan T: the end of the last op.
  constexpr rational makespan() const { return time(makespan_); }
  /// Start and end of the op at flat position k.
  constexpr rational start(std::size_t k) const { return time(start_[k]); }
  constexpr rational end(std::size_t k) const { return time(end_[k]); }
  /// Busy time of rank r: the sum of its ops' costs.
  constexpr rational busy(int r) const { return time(busy_[idx(r)]); }
  /// Idle time (bubble) of rank r: T - busy(r).
  constexpr rational idle(int r) const { return time(makespan_ - busy_[idx(r)]); }
  /// Span of rank r: end of its last op - start of its first (0 for an empty rank).
  constexpr rational span(int r) const { return time(last_end_[idx(r)] - first_start_[idx(r)]); }
  /// The largest span over the ranks (the Zero Bubble authors' objective, search()).
  constexpr rational largest_span() const {
    std::int64_t worst = 0;
    for (int r = 0; r < ranks_; ++r)
      worst = last_end_[idx(r)] - first_start_[idx(r)] > worst ? last_end_[idx(r)] - first_start_[idx(r)] : worst;
    return time(worst);
  }
  /// Bubble fraction: total idle / (P * T) (docs/spec.md §3); 0 for a schedule without ops.
  constexpr rational bubble_fraction() const {
    if (makespan_ == 0) return rational{0};
    std::int64_t idle_total = 0;
    for (int r = 0; r < ranks_; ++r) idle_total = rational::add(idle_total, makespan_ - busy_[idx(r)]);
    return {idle_total, rational::mul(makespan_, ranks_)};
  }
  /// Span bubble: max over ranks of span - busy (the Zero Bubble papers' measure).
  constexpr rational span_bubble() const {
    std::int64_t worst = 0;
    for (int r = 0; r < ranks_; ++r) {
      const std::int64_t gap = last_end_[idx(r)] - first_start_[idx(r)] - busy_[idx(r)];
      if (gap > worst) worst = gap;
    }
    return time(worst);
  }
  /// Raw ticks (multiply by tick() for time units), for drawing code.
  constexpr std::int64_t start_ticks(std::size_t k) const { return start_[k]; }
  constexpr std::int64_t end_ticks(std::size_t k) const { return end_[k]; }
  /// Every op's end_ticks() (size() entries), for a loop that reads many (a call per
  /// read costs constant evaluations steps: analysis/periodic.hpp's certificate).
  constexpr const std::int64_t* end_ticks_data() const { return end_.data(); }
  constexpr std::int64_t makespan_ticks() const { return makespan_; }
  /// Number of ranks.
  constexpr int ranks() const { return ranks_; }
  /// Number of ops: the simulated view's.
  constexpr std::size_t size() const { return start_.size(); }

  /// The same ops of `v` (the view this simulation was made of), each keeping its
  /// length, started at `start` (one entry per op, flat order, in ticks of `tick`): a
  /// delayed timeline, as least_delay() (rebalance.hpp) makes. `tick` must divide
  /// tick() (tick() / tick a whole number). The caller keeps the starts valid (no op
  /// before its inputs or before the end of the op ahead of it on its rank); busy times
  /// are unchanged. Errors: `ctpipe: a delayed timeline's tick must divide the
  /// simulation's tick`, `ctpipe: a delayed timeline needs one start per op`. Linear.
  constexpr simulation delayed(schedule_view v, rational tick, std::span<const std::int64_t> start) const {
    const rational ratio = tick_ / tick;
    detail::require(ratio.den == 1, "ctpipe: a delayed timeline's tick must divide the simulation's tick");
    detail::require(start.size() == start_.size() && v.size() == start_.size(),
                    "ctpipe: a delayed timeline needs one start per op");
    simulation out(v);
    out.tick_ = tick;
    for (int r = 0; r < ranks_; ++r) {
      const std::size_t ri = idx(r);
      out.busy_[ri] = rational::mul(busy_[ri], ratio.num);
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
        out.start_[k] = start[k];
        out.end_[k] = rational::add(start[k], rational::mul(end_[k] - start_[k], ratio.num));
        out.last_end_[ri] = out.end_[k] > out.last_end_[ri] ? out.end_[k] : out.last_end_[ri];
      }
    }
    out.finish(v);
    return out;
  }

 private:
  friend constexpr simulation simulate(schedule_view v, const costs& c);
  friend constexpr simulation simulate(schedule_view v, const costs& c, const cost_scale& scale);
  static constexpr std::size_t idx(int r) { return static_cast<std::size_t>(r); }
  /// simulate()'s frame: P ranks, per-op and per-rank arrays of `v`'s sizes.
  constexpr explicit simulation(schedule_view v)
      : ranks_(v.shape.P),
        start_(v.size()),
        end_(v.size()),
        busy_(static_cast<std::size_t>(v.shape.P)),
        first_start_(static_cast<std::size_t>(v.shape.P)),
        last_end_(static_cast<std::size_t>(v.shape.P)) {}
  /// After the walk: each rank's first start and the makespan (last_end_ holds each
  /// rank's end).
  constexpr void finish(schedule_view v) {
    const std::uint32_t* off = v.offsets.data();
    for (int r = 0; r < ranks_; ++r) {
      const std::size_t ri = static_cast<std::size_t>(r);
      first_start_[ri] = off[r] == off[r + 1] ? 0 : start_[off[r]];
      makespan_ = last_end_[ri] > makespan_ ? last_end_[ri] : makespan_;
    }
  }
  constexpr rational time(std::int64_t ticks) const { return tick_ * rational{ticks}; }

  rational tick_{1};
  std::int64_t makespan_ = 0;
  int ranks_ = 0;
  detail::buffer<std::int64_t> start_, end_;
  detail::buffer<std::int64_t> busy_, first_start_, last_end_;
};

namespace detail {
constexpr std::int64_t lcm(std::int64_t a, std::int64_t b) { return rational::mul(a / rational::gcd(a, b), b); }

/// Durations of the compute kinds and the latency in ticks of one common length, and
/// that length: shared by simulate() and execute().
struct ticked_costs {
  rational tick{1};          ///< the tick: 1 / lcm of the denominators of every op cost and t_c
  std::int64_t dur[4] = {};  ///< ticks of a chunk's F, B, I, W (t/V)
  std::int64_t pair = 0;     ///< ticks of a chunk's overlapped F&B pair (costs::pair() / V)
  std::int64_t latency = 0;  ///< ticks of t_c
};

/// `c` on `V` chunks in ticks. Raises rational overflow when the lcm of the denominators,
/// or `ops` times (the longest op + t_c), does not fit 64 bits: every time of a run of
/// `ops` ops then does.
constexpr ticked_costs to_ticks(const costs& c, int V, std::size_t ops) {
  ticked_costs t;
  std::int64_t den = c.c.den;
  for (op_kind k : {op_kind::F, op_kind::B, op_kind::I, op_kind::W}) den = lcm(den, c.of(k, V).den);
  // t_fb: its default, t_f + t_b, is a sum of two durations already in ticks (no
  // rational arithmetic: Clang's largest rendezvous lowered_v ran within about 3.6K
  // steps of its limit, bench/RESULTS.md).
  const bool pair_given = c.fb != rational{-1};
  if (pair_given) den = lcm(den, c.of(op_kind::overlap_f_b, V).den);
  t.tick = rational{1, den};
  std::int64_t longest = 0;
  for (int k = 0; k < 4; ++k) {
    t.dur[k] = (c.of(static_cast<op_kind>(k), V) * rational{den}).num;
    longest = longest < t.dur[k] ? t.dur[k] : longest;
  }
  t.pair = pair_given ? (c.of(op_kind::overlap_f_b, V) * rational{den}).num : rational::add(t.dur[0], t.dur[1]);
  longest = longest < t.pair ? t.pair : longest;
  t.latency = (c.c * rational{den}).num;
  // Every time is at most (ops) * (longest op + latency): check once, not per op.
  rational::mul(rational::add(longest, t.latency), static_cast<std::int64_t>(ops) + 1);
  return t;
}

/// Per stage s: `latency` when an op of kind `code` on stage s takes its input from
/// another rank (stage_table::channel: an F from the stage below, a B or I from the
/// stage above), else 0.
constexpr buffer<std::int64_t> stage_latency(const stage_table& stages, std::int64_t latency, std::uint32_t code) {
  buffer<std::int64_t> out(stages.S);
  for (std::uint32_t s = 0; s < stages.S; ++s)
    out[s] = stages.channel[code * stages.S + s] != stages.none ? latency : 0;
  return out;
}

/// simulate()'s step for an overlapped pair (dependency_walk::run's `visit_pair`), fused:
/// it starts when its rank and the inputs of both halves are there (each plus its
/// latency across ranks), both words span [start, start + `pair`) and the rank is busy
/// `pair` ticks once; returns the stamp, end + 1. The pointers are simulate()'s arrays.
struct fused_pair {
  std::int64_t *start, *end, *free_at, *busy;
  const std::int64_t *lat_prev, *lat_next;
  std::int64_t pair;
  /// Per op (its pair word's entry), under a cost_scale; nullptr: every pair lasts `pair`.
  const std::int64_t* pair_of = nullptr;

  constexpr std::int64_t operator()(std::uint32_t r, std::uint32_t k, std::uint32_t s_f, std::int64_t stamp_f,
                                    std::uint32_t s_b, std::int64_t stamp_b_a, std::int64_t stamp_b_b) const {
    // One statement per step, no range-for (core/engine.hpp): DualPipe's steady ops are pairs.
    const std::int64_t f = stamp_f - 1 + lat_prev[s_f], b = stamp_b_a - 1, c = stamp_b_b - 1 + lat_next[s_b],
                       ready = f > b ? (f > c ? f : c) : (b > c ? b : c), at = free_at[r] > ready ? free_at[r] : ready,
                       length = pair_of != nullptr ? pair_of[k] : pair;
    start[k] = start[k + 1] = at, free_at[r] = end[k] = end[k + 1] = at + length, busy[r] += length;
    return free_at[r] + 1;
  }
};

/// Every op's cost under a cost_scale, in ticks of one common length, and the latency
/// in the same ticks: simulate(v, c, scale)'s and execute(v, c, model, scale)'s.
struct scaled_ticks {
  rational tick{1};          ///< 1 / lcm of the denominators of every op's cost and t_c
  buffer<std::int64_t> dur;  ///< per op of the view (flat order); a pair word: the whole pair; others 0
  std::int64_t latency = 0;  ///< ticks of t_c
};

/// Op k's cost under `scale` (cost_scale): F, B, I, W scaled by their stage's and
/// micro-batch's factors; an overlapped pair word (with its B word after it) the pair's,
/// t_fb / (t_f + t_b) times the sum of its halves; a pair's B word, a transfer or an op
/// outside the shape 0 (simulate() and execute() report those).
constexpr rational scaled_cost(schedule_view v, const costs& c, const cost_scale& scale, std::size_t k) {
  const int V = v.shape.cost_chunks();
  const auto one = [&](op_kind kind, op o) {
    return c.of(kind, V) * scale.of_stage(o.stage()) * scale.of_microbatch(o.microbatch());
  };
  const op o = v.ops[k];
  const bool inside = o.stage() < v.shape.stages() && o.microbatch() < v.shape.m;
  if (o.kind() == op_kind::overlap_f_b) {
    const bool paired = k + 1 < v.size() && v.ops[k + 1].kind() == op_kind::B &&
                        v.ops[k + 1].stage() < v.shape.stages() && v.ops[k + 1].microbatch() < v.shape.m;
    return inside && paired ? c.pair() / (c.f + c.b) * (one(op_kind::F, o) + one(op_kind::B, v.ops[k + 1]))
                            : rational{0};
  }
  if (k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b) return rational{0};  // a pair's B word
  return inside && static_cast<int>(o.kind()) <= 3 ? one(o.kind(), o) : rational{0};
}

/// Every op's scaled cost (scaled_cost()) in ticks. Raises rational overflow when the
/// lcm of the denominators, or `ops` times (the longest op + t_c), does not fit 64 bits.
/// Linear in the number of ops (one exact product and one lcm per op).
constexpr scaled_ticks to_ticks(schedule_view v, const costs& c, const cost_scale& scale) {
  scaled_ticks t;
  buffer<rational> exact(v.size());
  std::int64_t den = c.c.den;
  for (std::size_t k = 0; k < v.size(); ++k) {
    exact[k] = scaled_cost(v, c, scale, k);
    den = lcm(den, exact[k].den);
  }
  t.tick = rational{1, den};
  t.dur = buffer<std::int64_t>(v.size());
  std::int64_t longest = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    t.dur[k] = (exact[k] * rational{den}).num;
    longest = longest < t.dur[k] ? t.dur[k] : longest;
  }
  t.latency = (c.c * rational{den}).num;
  rational::mul(rational::add(longest, t.latency), static_cast<std::int64_t>(v.size()) + 1);
  return t;
}

}  // namespace detail

/// Simulates schedule `v` with costs `c` (docs/spec.md §2): each rank runs its ops one at a
/// time in list order; an op starts at the latest of its rank becoming free and each
/// dependency's end, plus `c.c` when that dependency ran on another rank. A chunk's op
/// costs `t/V`. An overlapped pair (op_kind::overlap_f_b and its B word) runs fused: it
/// starts at the latest of its rank becoming free and the inputs of both halves, and
/// both words span t_fb/V (docs/spec.md §2.1); schedule split_pairs() for the split
/// reading. Linear in the number of ops.
///
/// Errors: check_view() and check_costs() messages; `ctpipe: simulate takes compute ops
/// F, B, I, W (and OVERLAP_F_B words, each followed by its B) with stage < P*V and
/// micro-batch < m` for a transfer op, an op outside the shape, or a pair word not
/// followed by its B;
/// `ctpipe: schedule deadlocks (validate() names the stuck ops)`; rational overflow when
/// the times might not fit 64 bits: checked once, before the walk, against the bound
/// (ops + 1) * (longest op + t_c) in ticks, so costs whose bound passes 2^63 - 1 are
/// refused even where the actual times would fit (the bound keeps the per-op loop free
/// of checks). simulate does not check that the schedule is complete:
/// run validate() for that.
constexpr simulation simulate(schedule_view v, const costs& c) {
  check_view(v);
  check_costs(c);
  const int V = v.shape.cost_chunks();  // an op costs t/V (t on the bidirectional placement)
  simulation out(v);
  // One tick divides every duration and the latency.
  const detail::ticked_costs ticked = detail::to_ticks(c, V, v.size());
  out.tick_ = ticked.tick;
  // A local, non-const array, as before to_ticks() was shared: GCC counts more
  // operations per op through a pointer into the struct or from a const array (its
  // largest proofs fell from m = 2816 to 2688 for 1F1B and below 3584 for GPipe).
  std::int64_t dur[4] = {ticked.dur[0], ticked.dur[1], ticked.dur[2], ticked.dur[3]};
  const std::int64_t latency = ticked.latency;

  // Latency charged on a dependency: F waits for the previous stage's F, B/I for the
  // next stage's B/I; both cost t_c only when that stage lives on another rank.
  const detail::stage_table stages(v.shape);
  const detail::buffer<std::int64_t> latency_prev = detail::stage_latency(stages, latency, detail::code_f);
  const detail::buffer<std::int64_t> latency_next = detail::stage_latency(stages, latency, detail::code_b);
  std::int64_t* start = out.start_.data();
  std::int64_t* end = out.end_.data();
  std::int64_t* free_at = out.last_end_.data();  // a rank is free when its last op ends
  std::int64_t* busy = out.busy_.data();
  const std::int64_t* lat_prev = latency_prev.data();
  const std::int64_t* lat_next = latency_next.data();

  // Stamps are end time + 1 (the walk reserves 0 for "not run"; 1 means "time 0").
  detail::dependency_walk walk(v);
  // The visitor keeps its temporaries in variables of this frame and computes in one
  // statement (core/engine.hpp).
  std::int64_t ready_a = 0, ready_b = 0, t = 0;
  const bool finished = walk.run(
      [&](std::uint32_t r, std::uint32_t k, std::uint32_t kind, std::uint32_t s, std::int64_t stamp_a,
          std::int64_t stamp_b) {
        // Ready when both dependencies (plus latency across ranks) and the rank are; record
        // start, end, busy time; the stamp is end + 1.
        return ready_a = stamp_a - 1 + (kind == 0 ? lat_prev[s] : 0),
               ready_b = stamp_b - 1 + (kind == 1 || kind == 2 ? lat_next[s] : 0),
               t = ready_a > ready_b ? ready_a : ready_b, t = free_at[r] > t ? free_at[r] : t,
               (free_at[r] = end[k] = (start[k] = t) + (busy[r] += dur[kind], dur[kind])) + 1;
      },
      detail::fused_pair{start, end, free_at, busy, lat_prev, lat_next, ticked.pair});
  detail::require(!walk.out_of_shape(),
                  "ctpipe: simulate takes compute ops F, B, I, W (and OVERLAP_F_B words, each followed by its B) with "
                  "stage < P*V and micro-batch < m");
  detail::require(finished, "ctpipe: schedule deadlocks (validate() names the stuck ops)");
  out.finish(v);
  return out;
}

/// Simulates schedule `v` with costs `c` scaled per stage and per micro-batch by `scale`
/// (cost_scale, docs/spec.md §2.2): the same rules as simulate(v, c), each op lasting its
/// scaled cost; a uniform scale (every factor 1, or none given) is simulate(v, c).
/// Linear in the number of ops.
///
/// Errors: simulate(v, c)'s, and the check_scale() messages for `v.shape`.
constexpr simulation simulate(schedule_view v, const costs& c, const cost_scale& scale) {
  check_view(v);
  check_costs(c);
  check_scale(scale, v.shape);
  if (scale.uniform()) return simulate(v, c);
  simulation out(v);
  const detail::scaled_ticks ticked = detail::to_ticks(v, c, scale);
  out.tick_ = ticked.tick;
  const detail::stage_table stages(v.shape);
  const detail::buffer<std::int64_t> latency_prev = detail::stage_latency(stages, ticked.latency, detail::code_f);
  const detail::buffer<std::int64_t> latency_next = detail::stage_latency(stages, ticked.latency, detail::code_b);
  std::int64_t *start = out.start_.data(), *end = out.end_.data(), *free_at = out.last_end_.data(),
               *busy = out.busy_.data();
  const std::int64_t *lat_prev = latency_prev.data(), *lat_next = latency_next.data(), *dur = ticked.dur.data();
  detail::dependency_walk walk(v);
  std::int64_t ready_a = 0, ready_b = 0, t = 0;
  // simulate(v, c)'s step with op k's own duration. A visitor of its own: shared with
  // simulate(v, c) through a template (`dur[PerOp ? k : kind]` through a pointer), GCC's
  // largest proofs fell below 1F1B m = 2816 and GPipe 3584 (measured; bench/RESULTS.md).
  const bool finished = walk.run(
      [&](std::uint32_t r, std::uint32_t k, std::uint32_t kind, std::uint32_t s, std::int64_t stamp_a,
          std::int64_t stamp_b) {
        return ready_a = stamp_a - 1 + (kind == 0 ? lat_prev[s] : 0),
               ready_b = stamp_b - 1 + (kind == 1 || kind == 2 ? lat_next[s] : 0),
               t = ready_a > ready_b ? ready_a : ready_b, t = free_at[r] > t ? free_at[r] : t,
               (free_at[r] = end[k] = (start[k] = t) + (busy[r] += dur[k], dur[k])) + 1;
      },
      detail::fused_pair{start, end, free_at, busy, lat_prev, lat_next, 0, dur});
  detail::require(!walk.out_of_shape(),
                  "ctpipe: simulate takes compute ops F, B, I, W (and OVERLAP_F_B words, each followed by its B) with "
                  "stage < P*V and micro-batch < m");
  detail::require(finished, "ctpipe: schedule deadlocks (validate() names the stuck ops)");
  out.finish(v);
  return out;
}

}  // namespace ctpipe
