// ctpipe/plan/fill.hpp: bubble filling (docs/spec.md §8.1). Work that does not
// depend on the pipeline order (a vision encoder's passes, K-FAC updates, side jobs) goes
// into the idle intervals of the simulated timeline; no pipeline op moves, and the
// function proves it by re-simulating the schedule with the pieces inserted as ops.
//
// Two methods:
// - fill_bubbles(): the greedy sweep, usable in constant expressions (a bounded number
//   of passes over the idle intervals, each O(n log n)); the run-time default.
// - fill_bubbles_optimal() (fill_optimal.hpp): a maximum flow for divisible jobs and a
//   branch-and-bound for small sets of indivisible jobs, at run time only.
// When the pipeline may grow, stretch_fill() (fill_stretch.hpp) inserts what a fill left
// out as ops and re-simulates: the stretched makespan.
#pragma once

#include <algorithm>  // std::sort, std::push_heap, std::pop_heap, std::upper_bound (constexpr in C++20)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/analysis/graph.hpp"

namespace ctpipe {

/// fill_job::rank for a job that may run on any pipeline rank.
inline constexpr int any_rank = -1;

/// One piece of independent work to put into the bubbles (docs/spec.md §8.1).
/// - `duration`: absolute time units of `t_f` (not divided by V), > 0.
/// - `rank`: the pipeline rank it must run on, or any_rank.
/// - `after`: optional release, "after op `after` ends" (a compute op of the schedule);
///   `before`: optional deadline, "before op `before` starts". On a rank other than the
///   op's own, t_c is added (the input or the result crosses ranks).
/// - `divisible`: whether it may be cut into pieces, each at least `min_piece` long
///   (except a last remainder shorter than that). The pieces of one job run one after
///   another, never at the same time on two ranks. An indivisible job is one piece.
/// - `name`, `microbatch`: carried to reports only (microbatch -1: none).
struct fill_job {
  std::string_view name{};
  int microbatch = -1;
  rational duration{0};
  int rank = any_rank;
  std::optional<op> after{};
  std::optional<op> before{};
  bool divisible = false;
  rational min_piece{0};
};

/// Why (part of) a job was not placed.
/// - `placed`: all of it was;
/// - `no_window`: its window (release to deadline, on every rank it may use) is empty,
///   e.g. an encoder forward before the pipeline's first op;
/// - `no_idle_time`: every rank it may use is busy throughout its window;
/// - `no_room`: idle time exists in its window but other jobs took it, or it is too short
///   for an indivisible job or a minimum piece.
enum class fill_reason : std::uint8_t { placed, no_window, no_idle_time, no_room };

/// The words reports use: `placed`, `no window (nothing lies between its release and its
/// deadline)`, `no idle time on its ranks within its window`, `no room left (idle time
/// taken or too short)`.
constexpr const char* reason_text(fill_reason r) {
  constexpr const char* names[] = {"placed", "no window (nothing lies between its release and its deadline)",
                                   "no idle time on its ranks within its window",
                                   "no room left (idle time taken or too short)"};
  return names[static_cast<int>(r)];
}

/// A placed piece: job index (into the jobs span), rank, start and end in time units.
struct fill_piece {
  std::uint32_t job = 0;
  int rank = 0;
  rational start{0};
  rational end{0};
};

/// Options of the fill.
/// - `steady_state`: back-to-back iterations of period T (the makespan): a job with only
///   a deadline may use the whole period before it (the previous iteration's cool-down),
///   one with only a release the whole period after it (the next iteration's warm-up);
///   placement is on the circle [0, T).
struct fill_options {
  bool steady_state = false;
};

/// What a fill did. Shapes: per job (index of the jobs span) its placed time and reason;
/// per rank its filled and remaining idle time; the pieces sorted by (rank, start).
/// All times exact, in time units of `t_f`.
struct fill_result {
  detail::buffer<fill_piece> pieces;        ///< sorted by rank, then start
  detail::buffer<rational> placed;          ///< per job: time placed
  detail::buffer<fill_reason> reason;       ///< per job: placed, or why not all of it
  detail::buffer<rational> filled;          ///< per rank: time of its pieces
  detail::buffer<rational> remaining_idle;  ///< per rank: idle time left
  rational makespan{0};                     ///< T, unchanged (proved)
  rational work{0};                         ///< sum of the jobs' durations
  rational total{0};                        ///< sum of placed
  rational bound{0};                        ///< an upper bound on what any placement fills
  bool optimal = false;                     ///< total == bound, or proved by an exact method
  bool exact_method = false;                ///< an exact method decided (fill_bubbles_optimal)
  const char* method = "greedy";            ///< "greedy", "max-flow", "branch-and-bound", ...
};

namespace detail {

/// Times of a fill in integer ticks (1/den time units): the schedule's op times, the
/// latency, the makespan, and per rank its idle intervals (gaps) in time order.
struct fill_frame {
  rational tick{1};
  std::int64_t scale = 1;  ///< ticks of this frame per tick of the simulation
  std::int64_t T = 0, c = 0;
  int P = 1;
  bool steady = false;
  buffer<std::int64_t> start, end;                  ///< per op, flat order
  buffer<std::uint32_t> gap_off;                    ///< per rank r: its gaps are [gap_off[r], gap_off[r+1])
  buffer<std::int64_t> gap_lo, gap_hi, gap_prefix;  ///< per gap; prefix: idle before it on its rank
  /// The idle time of all ranks together as a function of time: at each of `bends`
  /// times (sorted) the idle time before it (`idle_before`) and how many ranks are idle
  /// from it on (`idle_ranks`). all_idle_within() reads it.
  buffer<std::int64_t> bend_at, idle_before, idle_ranks;
  buffer<std::int64_t> dur, min_piece;           ///< per job, ticks
  buffer<std::int64_t> after_end, before_start;  ///< per job: end(X) / start(Y) ticks, or -1
  buffer<int> after_rank, before_rank, rank;     ///< per job
  std::size_t gaps = 0;
  op_index index;     ///< the schedule's ops by identity
  buffer<int> ranks;  ///< per op, flat order: its rank

  constexpr std::int64_t ticks(rational x) const { return (x / tick).num; }
};

/// A window interval [lo, hi) in ticks.
struct window_part {
  std::int64_t lo = 0, hi = 0;
};

/// Job j's window on rank r: up to two intervals within [0, T), in time order (two when
/// a steady-state window wraps round the period). Returns how many.
constexpr int job_window(const fill_frame& f, std::size_t j, int r, window_part out[2]) {
  const bool has_after = f.after_end[j] >= 0, has_before = f.before_start[j] >= 0;
  std::int64_t lo = has_after ? f.after_end[j] + (r != f.after_rank[j] ? f.c : 0) : 0;
  std::int64_t hi = has_before ? f.before_start[j] - (r != f.before_rank[j] ? f.c : 0) : f.T;
  if (f.steady) {
    if (has_after && !has_before) hi = lo + f.T;
    if (has_before && !has_after) lo = hi - f.T;
    if (hi - lo > f.T) hi = lo + f.T;
  } else {
    lo = lo < 0 ? 0 : lo;
    hi = hi > f.T ? f.T : hi;
  }
  if (hi <= lo) return 0;
  if (lo >= 0 && hi <= f.T) return out[0] = {lo, hi}, 1;
  if (lo < 0) {  // wraps below 0: [lo + T, T) and [0, hi)
    if (hi <= 0) return out[0] = {lo + f.T, hi + f.T}, 1;
    out[0] = {0, hi}, out[1] = {lo + f.T, f.T};
    return out[1].lo < out[1].hi ? 2 : 1;
  }
  if (lo >= f.T) return out[0] = {lo - f.T, hi - f.T}, 1;
  out[0] = {0, hi - f.T}, out[1] = {lo, f.T};  // wraps above T
  return out[0].lo < out[0].hi ? 2 : 1;
}

/// Whether job j may run on rank r.
constexpr bool job_allowed(const fill_frame& f, std::size_t j, int r) {
  return f.rank[j] == any_rank || f.rank[j] == r;
}

/// Idle time of rank r within [lo, hi): prefix sums over its gaps and two binary
/// searches, O(log gaps).
constexpr std::int64_t idle_within(const fill_frame& f, int r, std::int64_t lo, std::int64_t hi) {
  const auto at = [&](std::int64_t t) {  // idle time of rank r in [0, t)
    const std::int64_t* first = f.gap_lo.data() + f.gap_off[r];
    const std::int64_t* last = f.gap_lo.data() + f.gap_off[r + 1];
    const std::int64_t* it = std::upper_bound(first, last, t);  // first gap starting after t
    if (it == first) return std::int64_t{0};
    const std::size_t g = static_cast<std::size_t>(it - f.gap_lo.data()) - 1;
    const std::int64_t inside = (t < f.gap_hi[g] ? t : f.gap_hi[g]) - f.gap_lo[g];
    return f.gap_prefix[g] + inside;
  };
  return hi <= lo ? 0 : at(hi) - at(lo);
}

/// Idle time of all ranks together within [lo, hi): fill_frame's profile and two binary
/// searches, O(log gaps).
constexpr std::int64_t all_idle_within(const fill_frame& f, std::int64_t lo, std::int64_t hi) {
  const auto at = [&](std::int64_t t) {
    std::size_t a = 0, b = f.bend_at.size();  // the last bend at or before t: index a - 1 after the search
    while (a < b) {
      const std::size_t mid = (a + b) / 2;
      (f.bend_at[mid] <= t ? a : b) = f.bend_at[mid] <= t ? mid + 1 : mid;
    }
    return a == 0 ? std::int64_t{0} : f.idle_before[a - 1] + f.idle_ranks[a - 1] * (t - f.bend_at[a - 1]);
  };
  return hi <= lo ? 0 : at(hi) - at(lo);
}

/// The ranks whose windows stand for every rank job j may use (job_window() differs
/// only by whether a rank is its release op's or its deadline op's): its own rank when
/// pinned; else the release op's rank, the deadline op's, and one other (-1 where absent).
/// `others` counts the ranks the third one stands for.
constexpr int window_classes(const fill_frame& f, std::size_t j, int out[3], int& others) {
  others = 0;
  if (f.rank[j] != any_rank) return out[0] = f.rank[j], 1;
  const int a = f.after_end[j] >= 0 ? f.after_rank[j] : -1, b = f.before_start[j] >= 0 ? f.before_rank[j] : -1;
  int n = 0;
  if (a >= 0) out[n++] = a;
  if (b >= 0 && b != a) out[n++] = b;
  others = f.P - n;
  int r = 0;
  while (r == a || r == b) ++r;  // the first rank that is neither
  if (others > 0) out[n++] = r;
  return n;
}

/// The gate on the jobs of a fill of `v`. Raises:
/// - `ctpipe: a fill job needs a duration > 0`
/// - `ctpipe: a fill job's minimum piece must be >= 0`
/// - `ctpipe: a fill job's rank must be any_rank or a pipeline rank in [0, P)`
/// - `ctpipe: a fill job's release or deadline must be a compute op of the schedule`
constexpr void check_jobs(schedule_view v, std::span<const fill_job> jobs, const op_index& index) {
  for (const fill_job& job : jobs) {
    require(job.duration > rational{0}, "ctpipe: a fill job needs a duration > 0");
    require(job.min_piece >= rational{0}, "ctpipe: a fill job's minimum piece must be >= 0");
    require(job.rank == any_rank || (job.rank >= 0 && job.rank < v.shape.P),
            "ctpipe: a fill job's rank must be any_rank or a pipeline rank in [0, P)");
    require((!job.after || index.find(*job.after) != 0) && (!job.before || index.find(*job.before) != 0),
            "ctpipe: a fill job's release or deadline must be a compute op of the schedule");
  }
}

/// Each rank's idle intervals (gaps) of `f`'s op times, in time order, with prefix sums.
constexpr void find_gaps(schedule_view v, fill_frame& f) {
  buffer<std::int64_t> lo(v.size() + static_cast<std::size_t>(v.shape.P)), hi(lo.size());
  f.gap_off = buffer<std::uint32_t>(static_cast<std::size_t>(v.shape.P) + 1);
  std::size_t n = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    f.gap_off[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(n);
    std::int64_t prev = 0;
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      if (f.start[k] > prev) lo[n] = prev, hi[n++] = f.start[k];
      prev = f.end[k] > prev ? f.end[k] : prev;
    }
    if (f.T > prev) lo[n] = prev, hi[n++] = f.T;
  }
  f.gap_off[static_cast<std::size_t>(v.shape.P)] = static_cast<std::uint32_t>(n);
  f.gaps = n;
  f.gap_lo = buffer<std::int64_t>(n), f.gap_hi = buffer<std::int64_t>(n), f.gap_prefix = buffer<std::int64_t>(n);
  for (int r = 0; r < v.shape.P; ++r) {
    std::int64_t before = 0;
    for (std::uint32_t g = f.gap_off[r]; g < f.gap_off[r + 1]; ++g) {
      f.gap_lo[g] = lo[g], f.gap_hi[g] = hi[g], f.gap_prefix[g] = before;
      before += hi[g] - lo[g];
    }
  }
  // The all-rank profile: +1 idle rank at each gap's start, -1 at its end, in time order.
  buffer<std::int64_t> bends(2 * n);
  for (std::size_t g = 0; g < n; ++g)
    bends[2 * g] = 2 * f.gap_lo[g] + 1, bends[2 * g + 1] = 2 * f.gap_hi[g];  // ends first
  std::sort(bends.data(), bends.data() + 2 * n);
  f.bend_at = buffer<std::int64_t>(2 * n), f.idle_before = buffer<std::int64_t>(2 * n),
  f.idle_ranks = buffer<std::int64_t>(2 * n);
  std::int64_t idle = 0, ranks = 0, last = 0;
  for (std::size_t e = 0; e < 2 * n; ++e) {
    const std::int64_t t = bends[e] / 2;
    idle += ranks * (t - last), last = t;
    ranks += bends[e] % 2 == 1 ? 1 : -1;
    f.bend_at[e] = t, f.idle_before[e] = idle, f.idle_ranks[e] = ranks;
  }
}

/// The frame of a fill of `v` under `c` and `scale` with `jobs`: one tick for the op
/// times, t_c and every job's duration and minimum piece. Raises simulate()'s messages,
/// check_jobs()' and rational overflow. Linear in ops + jobs.
constexpr fill_frame make_fill_frame(schedule_view v, const costs& c, const cost_scale& scale,
                                     std::span<const fill_job> jobs, bool steady) {
  const simulation sim = simulate(v, c, scale);
  fill_frame f;
  f.index = op_index(v);
  f.ranks = op_ranks(v);
  const op_index& index = f.index;
  const buffer<int>& ranks = f.ranks;
  check_jobs(v, jobs, index);
  std::int64_t den = sim.tick().den;
  for (const fill_job& job : jobs) den = lcm(lcm(den, job.duration.den), job.min_piece.den);
  f.tick = rational{1, den};
  f.scale = den / sim.tick().den;
  f.P = v.shape.P;
  f.steady = steady;
  f.T = rational::mul(sim.makespan_ticks(), f.scale);
  f.c = f.ticks(c.c);
  f.start = buffer<std::int64_t>(v.size()), f.end = buffer<std::int64_t>(v.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    f.start[k] = sim.start_ticks(k) * f.scale, f.end[k] = sim.end_ticks(k) * f.scale;
  find_gaps(v, f);
  const std::size_t J = jobs.size();
  f.dur = buffer<std::int64_t>(J), f.min_piece = buffer<std::int64_t>(J), f.after_end = buffer<std::int64_t>(J, -1);
  f.before_start = buffer<std::int64_t>(J, -1), f.after_rank = buffer<int>(J), f.before_rank = buffer<int>(J),
  f.rank = buffer<int>(J);
  rational::mul(f.T + f.c + 1, 4);  // every window bound lies within +-2(T + c)
  for (std::size_t j = 0; j < J; ++j) {
    const fill_job& job = jobs[j];
    f.dur[j] = f.ticks(job.duration), f.min_piece[j] = f.ticks(job.min_piece), f.rank[j] = job.rank;
    rational::add(f.dur[j], f.T);
    if (job.after) {
      const std::uint32_t k = index.find(*job.after) - 1;
      f.after_end[j] = f.end[k], f.after_rank[j] = ranks[k];
    }
    if (job.before) {
      const std::uint32_t k = index.find(*job.before) - 1;
      f.before_start[j] = f.start[k], f.before_rank[j] = ranks[k];
    }
  }
  return f;
}

/// The greedy sweep's state: per job what is left, when its last piece ends, its
/// earliest start and latest end over the ranks it may use; the pieces so far (ticks).
struct greedy_fill {
  struct piece {
    std::uint32_t job;
    int rank;
    std::int64_t lo, hi;
  };
  /// At most this many jobs are set aside in one gap between two placements, and the
  /// cursor jumps at most this often in one gap: what bounds the sweep (file comment).
  static constexpr int set_aside_limit = 8;

  const fill_frame& f;
  buffer<std::int64_t> left, free_at, earliest, latest;
  buffer<piece> pieces;
  std::size_t count = 0;
  buffer<std::uint32_t> heap;  // job indices, a min-heap on (latest, index)
  std::size_t heap_size = 0;

  constexpr explicit greedy_fill(const fill_frame& frame)
      : f(frame),
        left(frame.dur.size()),
        free_at(frame.dur.size()),
        earliest(frame.dur.size()),
        latest(frame.dur.size()),
        pieces(9 * frame.dur.size() + frame.gaps + 1),
        heap(frame.dur.size()) {
    for (std::size_t j = 0; j < left.size(); ++j) {
      left[j] = f.dur[j];
      earliest[j] = f.T, latest[j] = -1;
      int classes[3] = {}, others = 0;
      const int n_classes = window_classes(f, j, classes, others);
      for (int c = 0; c < n_classes; ++c) {
        window_part w[2] = {};
        const int n = job_window(f, j, classes[c], w);
        for (int q = 0; q < n; ++q) {
          earliest[j] = w[q].lo < earliest[j] ? w[q].lo : earliest[j];
          latest[j] = w[q].hi > latest[j] ? w[q].hi : latest[j];
        }
      }
    }
  }

  constexpr bool before(std::uint32_t a, std::uint32_t b) const {  // heap order: a after b
    return latest[a] != latest[b] ? latest[a] > latest[b] : a > b;
  }
  constexpr void push(std::uint32_t j) {
    heap[heap_size++] = j;
    std::push_heap(heap.data(), heap.data() + heap_size,
                   [this](std::uint32_t a, std::uint32_t b) { return before(a, b); });
  }
  constexpr std::uint32_t pop() {
    std::pop_heap(heap.data(), heap.data() + heap_size,
                  [this](std::uint32_t a, std::uint32_t b) { return before(a, b); });
    return heap[--heap_size];
  }

  /// The earliest piece of job j on rank r at or after `t` and before `gap_end`: its
  /// start (or -1 when there is none) and, in `piece_end`, its end. An indivisible job
  /// needs room for all that is left, a divisible one for its minimum piece (or all that
  /// is left, when less).
  constexpr std::int64_t try_place(std::size_t j, int r, std::int64_t t, std::int64_t gap_end,
                                   std::int64_t& piece_end) const {
    window_part w[2] = {};
    const int n = job_allowed(f, j, r) ? job_window(f, j, r, w) : 0;
    const std::int64_t need = !is_divisible(j) ? left[j] : (f.min_piece[j] < left[j] ? f.min_piece[j] : left[j]);
    for (int q = 0; q < n; ++q) {
      const std::int64_t lo =
          t > free_at[j] ? (t > w[q].lo ? t : w[q].lo) : (free_at[j] > w[q].lo ? free_at[j] : w[q].lo);
      const std::int64_t hi = gap_end < w[q].hi ? gap_end : w[q].hi;
      if (hi - lo < need || hi <= lo) continue;
      piece_end = lo + (hi - lo < left[j] ? hi - lo : left[j]);
      return lo;
    }
    return -1;
  }
  constexpr bool is_divisible(std::size_t j) const { return divisible_[j] != 0; }

  buffer<std::uint8_t> divisible_;

  /// Fills gap [lo, hi) of rank r from its start: the job due first among those released
  /// that can start at the cursor goes next (earliest deadline first); `next` walks
  /// `by_release` (jobs by earliest start).
  constexpr void fill_gap(int r, std::int64_t lo, std::int64_t hi, const buffer<std::uint32_t>& by_release,
                          std::size_t& next) {
    std::int64_t t = lo;
    std::uint32_t aside[set_aside_limit] = {};
    std::int64_t aside_at[set_aside_limit] = {};
    int set = 0, jumps = 0;
    while (t < hi) {
      while (next < by_release.size() && earliest[by_release[next]] <= t) push(by_release[next++]);
      if (heap_size == 0 || set == set_aside_limit) {
        std::int64_t to = next < by_release.size() ? earliest[by_release[next]] : hi;
        for (int q = 0; q < set; ++q) to = aside_at[q] < to ? aside_at[q] : to;
        for (int q = 0; q < set; ++q) push(aside[q]);
        set = 0;
        if (to >= hi || ++jumps > set_aside_limit) return;
        t = to;
        continue;
      }
      const std::uint32_t j = pop();
      if (left[j] == 0 || latest[j] <= lo) continue;  // done, or due before every later gap
      std::int64_t end = 0;
      const std::int64_t at = try_place(j, r, t, hi, end);
      if (at != t) {
        aside[set] = j, aside_at[set++] = at < 0 ? hi : at;
        continue;
      }
      pieces[count++] = {j, r, at, end};
      left[j] -= end - at, free_at[j] = t = end;
      if (left[j] > 0) push(j);
      for (int q = 0; q < set; ++q) push(aside[q]);  // their starts were for the old cursor
      set = 0;
    }
    for (int q = 0; q < set; ++q) push(aside[q]);
  }

  /// The sweep: gaps by start (then rank), each filled by fill_gap().
  constexpr void run(std::span<const fill_job> jobs) {
    divisible_ = buffer<std::uint8_t>(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) divisible_[j] = jobs[j].divisible ? 1 : 0;
    buffer<std::uint32_t> gaps(f.gaps), by_release(jobs.size());
    buffer<int> gap_rank(f.gaps);
    for (int r = 0; r < f.P; ++r) {
      for (std::uint32_t g = f.gap_off[r]; g < f.gap_off[r + 1]; ++g) gap_rank[g] = r;
    }
    for (std::size_t g = 0; g < f.gaps; ++g) gaps[g] = static_cast<std::uint32_t>(g);
    for (std::size_t j = 0; j < jobs.size(); ++j) by_release[j] = static_cast<std::uint32_t>(j);
    std::sort(gaps.data(), gaps.data() + f.gaps, [&](std::uint32_t a, std::uint32_t b) {
      return f.gap_lo[a] != f.gap_lo[b] ? f.gap_lo[a] < f.gap_lo[b] : a < b;
    });
    std::sort(by_release.data(), by_release.data() + jobs.size(), [&](std::uint32_t a, std::uint32_t b) {
      return earliest[a] != earliest[b] ? earliest[a] < earliest[b] : a < b;
    });
    std::size_t next = 0;
    for (std::size_t q = 0; q < f.gaps; ++q)
      fill_gap(gap_rank[gaps[q]], f.gap_lo[gaps[q]], f.gap_hi[gaps[q]], by_release, next);
  }
};

/// A piece in ticks (greedy_fill::piece), the type every method hands to finish_fill().
using tick_piece = greedy_fill::piece;

/// The checks every fill passes before it returns (docs/spec.md §8.1), independent of the
/// method: each piece has positive length, lies inside one idle interval of its rank and
/// inside its job's window on that rank, is at least the job's minimum piece (or is its
/// last), on a rank the job may use; pieces on one rank, and pieces of one job, never
/// overlap; no job gets more than its duration; an indivisible job is one piece.
/// `p` sorted by (rank, start). Raises `ctpipe: fill placed a piece outside the idle time
/// or the job's window (a bug)`. O(pieces log gaps).
constexpr void check_pieces(const fill_frame& f, std::span<const fill_job> jobs, std::span<const tick_piece> p) {
  constexpr const char* message = "ctpipe: fill placed a piece outside the idle time or the job's window (a bug)";
  buffer<std::int64_t> got(jobs.size()), last_end(jobs.size(), -1);
  buffer<std::uint32_t> order(p.size()), pieces_of(jobs.size());
  for (std::size_t q = 0; q < p.size(); ++q) {
    const tick_piece& x = p[q];
    require(x.lo < x.hi && x.job < jobs.size() && job_allowed(f, x.job, x.rank), message);
    require(q == 0 || p[q - 1].rank != x.rank || p[q - 1].hi <= x.lo, message);
    require(idle_within(f, x.rank, x.lo, x.hi) == x.hi - x.lo, message);
    window_part w[2] = {};
    const int n = job_window(f, x.job, x.rank, w);
    bool inside = false;
    for (int k = 0; k < n; ++k) inside = inside || (w[k].lo <= x.lo && x.hi <= w[k].hi);
    require(inside, message);
    got[x.job] += x.hi - x.lo;
    ++pieces_of[x.job];
    order[q] = static_cast<std::uint32_t>(q);
  }
  std::sort(order.data(), order.data() + p.size(), [&](std::uint32_t a, std::uint32_t b) {
    return p[a].job != p[b].job ? p[a].job < p[b].job : p[a].lo < p[b].lo;
  });
  for (std::size_t q = 0; q < p.size(); ++q) {
    const tick_piece& x = p[order[q]];
    require(last_end[x.job] <= x.lo, message);  // one job's pieces one after another
    last_end[x.job] = x.hi;
    const bool last = q + 1 == p.size() || p[order[q + 1]].job != x.job;
    require(last || x.hi - x.lo >= f.min_piece[x.job], message);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j)
    require(got[j] <= f.dur[j] && (jobs[j].divisible || pieces_of[j] <= 1), message);
}

/// Each rank's list of `v` with pieces `p` (sorted by rank, then start) inserted at their
/// places: per rank, its ops (a pair's B word folded into its word) and its pieces merged
/// by time (an op first at a tie), each handed to `visit(r, node, first)` in list order
/// (node: the op's flat index, n_ops + q for piece q; `first`: the first node of rank r).
/// fill's re-simulation and stretch_fill() build their ranks' orders from it. Linear.
template <class Visit>
constexpr void merge_rank_lists(schedule_view v, const buffer<std::int64_t>& start, std::span<const tick_piece> p,
                                Visit visit) {
  const std::size_t n_ops = v.size();
  std::size_t q = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    bool first = true;
    std::size_t k = v.offsets[r];
    while (k < v.offsets[r + 1] || (q < p.size() && p[q].rank == r)) {
      const bool take_op = k < v.offsets[r + 1] && (q == p.size() || p[q].rank != r || start[k] <= p[q].lo);
      const std::uint32_t node = take_op ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(n_ops + q);
      if (take_op)
        k += v.ops[k].kind() == op_kind::overlap_f_b ? 2 : 1;
      else
        ++q;
      visit(r, node, first);
      first = false;
    }
  }
}

/// The edges of pieces `p` (node n_ops + q for piece q) in the op graph of a schedule of
/// `n_ops` ops, handed to `link(from, to, cross)` (`cross`: t_c applies when the two nodes
/// lie on different ranks): each piece waits for its job's release op and for the job's
/// previous piece by time (no t_c), and the job's deadline op waits for each of its
/// pieces. `index`, `pair_b`: the schedule's (graph.hpp). O(pieces log pieces).
template <class Link>
constexpr void add_piece_edges(std::size_t n_ops, const op_index& index, const buffer<std::uint8_t>& pair_b,
                               std::span<const fill_job> jobs, std::span<const tick_piece> p, Link link) {
  buffer<std::uint32_t> last_piece(jobs.size(), 0);  // piece node + 1 of the job's latest piece by time
  buffer<std::uint32_t> by_time(p.size());
  for (std::size_t q = 0; q < p.size(); ++q) by_time[q] = static_cast<std::uint32_t>(q);
  std::sort(by_time.data(), by_time.data() + p.size(),
            [&](std::uint32_t a, std::uint32_t b) { return p[a].lo < p[b].lo; });
  for (std::size_t q0 = 0; q0 < p.size(); ++q0) {
    const std::uint32_t q = by_time[q0], node = static_cast<std::uint32_t>(n_ops + q);
    const fill_job& job = jobs[p[q].job];
    if (job.after) link(op_node(pair_b, index.find(*job.after) - 1), node, true);
    if (job.before) link(node, op_node(pair_b, index.find(*job.before) - 1), true);
    if (last_piece[p[q].job] != 0) link(last_piece[p[q].job] - 1, node, false);
    last_piece[p[q].job] = node + 1;
  }
}

/// Re-simulates `v` with pieces `p` (sorted by rank, then start) inserted as ops into
/// their ranks' lists at their places (docs/spec.md §8.1): the op graph of `v` (graph.hpp:
/// the dependency edges, t_c across ranks), the pieces' edges (add_piece_edges(): t_c
/// across ranks) and each rank's list in order (merge_rank_lists()); every node starts as
/// soon as its rank and its inputs allow (§2's rule, earliest_starts()). Returns true
/// when every op starts exactly when simulate() said, nothing ends after T and every node
/// ran. Linear in ops + pieces (and a sort of the pieces).
constexpr bool resimulate_unchanged(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs,
                                    std::span<const tick_piece> p) {
  const std::size_t n_ops = v.size(), N = n_ops + p.size();
  const buffer<std::uint8_t> pair_b = pair_b_words(v);
  op_edges g(4 * n_ops + 3 * p.size() + N);
  add_dependency_edges(v, f.index, f.ranks, pair_b, f.c, g);
  const auto rank_of = [&](std::uint32_t u) { return u < n_ops ? f.ranks[u] : p[u - n_ops].rank; };
  add_piece_edges(n_ops, f.index, pair_b, jobs, p, [&](std::uint32_t a, std::uint32_t b, bool cross) {
    g.add(a, b, cross && rank_of(a) != rank_of(b) ? f.c : 0);
  });
  std::uint32_t prev = 0;
  merge_rank_lists(v, f.start, p, [&](int, std::uint32_t node, bool first) {
    if (!first) g.add(prev, node, 0);
    prev = node;
  });
  buffer<std::int64_t> length(N), start(N), ready(N);
  for (std::size_t k = 0; k < n_ops; ++k) length[k] = f.end[k] - f.start[k];
  for (std::size_t q = 0; q < p.size(); ++q) length[n_ops + q] = p[q].hi - p[q].lo;
  const timed_graph run(g, N, length.data(), nullptr, pair_b);
  std::size_t nodes = N;
  for (std::size_t k = 0; k < n_ops; ++k) nodes -= pair_b[k];
  bool same = earliest_starts(run, start, ready) == nodes;
  for (std::size_t u = 0; u < N && same; ++u) {
    if (run.runs(u)) same = start[u] + length[u] <= f.T && (u >= n_ops || start[u] == f.start[u]);
  }
  return same;
}

/// Per job: how much idle time of the ranks it may use lies in its window (summed over
/// ranks, so an upper bound on what it can get), and whether it has a window at all.
/// O(log gaps) per job: the ranks other than its release op's and deadline op's share
/// one window, read from the all-rank profile (all_idle_within()).
constexpr std::int64_t window_idle(const fill_frame& f, std::size_t j, bool& has_window) {
  std::int64_t idle = 0;
  has_window = false;
  int classes[3] = {}, others = 0;
  const int n_classes = window_classes(f, j, classes, others);
  for (int c = 0; c < n_classes; ++c) {
    const int r = classes[c];
    window_part w[2] = {};
    const int n = job_window(f, j, r, w);
    has_window = has_window || n > 0;
    const bool stands_for_others = others > 0 && c == n_classes - 1;  // the third class: every other rank
    for (int q = 0; q < n; ++q) {
      if (!stands_for_others) {
        idle += idle_within(f, r, w[q].lo, w[q].hi);
        continue;
      }
      idle += all_idle_within(f, w[q].lo, w[q].hi);  // every rank, less the ranks of the other classes
      for (int d = 0; d + 1 < n_classes; ++d) idle -= idle_within(f, classes[d], w[q].lo, w[q].hi);
    }
  }
  return idle;
}

/// The result of a fill from its pieces in ticks (any method): sorts and checks them
/// (check_pieces(); for one iteration also resimulate_unchanged()), then reports per job,
/// per rank, the total, and the bound: the least of the total idle time and the sum over
/// jobs of min(duration, window_idle()). Raises `ctpipe: fill's re-simulation moved a
/// pipeline op (a bug)` when the proof fails.
constexpr fill_result finish_fill(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs,
                                  buffer<tick_piece>& p, std::size_t count) {
  std::sort(p.data(), p.data() + count,
            [](const tick_piece& a, const tick_piece& b) { return a.rank != b.rank ? a.rank < b.rank : a.lo < b.lo; });
  const std::span<const tick_piece> pieces{p.data(), count};
  check_pieces(f, jobs, pieces);
  if (!f.steady)
    require(resimulate_unchanged(v, f, jobs, pieces), "ctpipe: fill's re-simulation moved a pipeline op (a bug)");
  fill_result out;
  const std::size_t J = jobs.size(), P = static_cast<std::size_t>(f.P);
  out.pieces = buffer<fill_piece>(count), out.placed = buffer<rational>(J), out.reason = buffer<fill_reason>(J);
  out.filled = buffer<rational>(P), out.remaining_idle = buffer<rational>(P);
  buffer<std::int64_t> placed(J), filled(P);
  for (std::size_t q = 0; q < count; ++q) {
    out.pieces[q] = {pieces[q].job, pieces[q].rank, f.tick * rational{pieces[q].lo}, f.tick * rational{pieces[q].hi}};
    placed[pieces[q].job] += pieces[q].hi - pieces[q].lo;
    filled[static_cast<std::size_t>(pieces[q].rank)] += pieces[q].hi - pieces[q].lo;
  }
  std::int64_t bound = 0, idle = 0, total = 0, work = 0;
  for (std::size_t j = 0; j < J; ++j) {
    bool has_window = false;
    const std::int64_t room = window_idle(f, j, has_window);
    bound = rational::add(bound, room < f.dur[j] ? room : f.dur[j]);  // overflow-checked: durations may be huge
    out.reason[j] = placed[j] == f.dur[j] ? fill_reason::placed
                    : !has_window         ? fill_reason::no_window
                    : room == 0           ? fill_reason::no_idle_time
                                          : fill_reason::no_room;
    out.placed[j] = f.tick * rational{placed[j]};
    total = rational::add(total, placed[j]), work = rational::add(work, f.dur[j]);
  }
  for (std::size_t r = 0; r < P; ++r) {
    const std::int64_t rank_idle = idle_within(f, static_cast<int>(r), 0, f.T);
    idle += rank_idle;
    out.filled[r] = f.tick * rational{filled[r]};
    out.remaining_idle[r] = f.tick * rational{rank_idle - filled[r]};
  }
  out.makespan = f.tick * rational{f.T}, out.work = f.tick * rational{work}, out.total = f.tick * rational{total};
  out.bound = f.tick * rational{bound < idle ? bound : idle};
  out.optimal = total == (bound < idle ? bound : idle);
  return out;
}

}  // namespace detail

}  // namespace ctpipe

namespace ctpipe {

/// Puts `jobs` into the idle intervals of schedule `v` simulated under `c` (scaled by
/// `scale`), by the greedy sweep (docs/spec.md §8.1): the idle intervals in order of
/// their start (then rank); in each, from its start, the job due first (latest window
/// end) among those released that can start at the cursor, for as long as the gap, its
/// window and what is left allow; a job that cannot start at the cursor is set aside
/// (at most 8 per gap between placements, and the cursor jumps at most 8 times per gap
/// to the earliest start set aside). No pipeline op moves: the jobs take idle time only,
/// checked inside (check_pieces()) and, for one iteration, proved by re-simulating the
/// schedule with the pieces inserted as ops (resimulate_unchanged()).
///
/// Cost: the simulation, a sort of the gaps and of the jobs, and heap operations per
/// placement and set-aside: O((ops + jobs) log(ops + jobs)) with P ranks' windows per job
/// (O(jobs log ops) for the bound). Usable in constant expressions; the same passes
/// as at run time, so a frozen fill equals the run-time one.
///
/// Returns a fill_result: pieces, per job placed time and reason, per rank filled and
/// remaining idle, the total, and a bound (fill_result::bound) on what any placement
/// fills; `optimal` when the total reaches it. For a better placement at run time see
/// fill_bubbles_optimal() (ctpipe/plan/fill_optimal.hpp).
///
/// Errors: simulate()'s messages, check_jobs()' (detail), rational overflow.
constexpr fill_result fill_bubbles(schedule_view v, const costs& c, std::span<const fill_job> jobs,
                                   fill_options options = {}, const cost_scale& scale = {}) {
  const detail::fill_frame f = detail::make_fill_frame(v, c, scale, jobs, options.steady_state);
  detail::greedy_fill greedy(f);
  greedy.run(jobs);
  return detail::finish_fill(v, f, jobs, greedy.pieces, greedy.count);
}

/// The article's vision-encoder preset (docs/spec.md §8.1): per micro-batch j, an
/// encoder forward of `forward` time units that must end before F(first stage, j)
/// starts, and an encoder backward of `backward` that may start once the backward of
/// j's first stage (B or I) has ended; both on any rank, indivisible unless
/// `min_piece` is given (then divisible, pieces at least that long). Shapes: 2m jobs,
/// the forwards first (job j), then the backwards (job m + j). Names "encoder F" and
/// "encoder B". `v` must hold F(first, j) and B or I(first, j) for every j.
constexpr detail::buffer<fill_job> encoder_jobs(schedule_view v, rational forward, rational backward,
                                                std::optional<rational> min_piece = std::nullopt) {
  const detail::op_index index(v);
  const int m = v.shape.m;
  detail::buffer<fill_job> jobs(2 * static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) {
    const int s = v.shape.first_stage(j);
    const op b{op_kind::B, s, j}, i{op_kind::I, s, j};
    const bool divisible = min_piece.has_value();
    const rational piece = divisible ? *min_piece : rational{0};
    jobs[static_cast<std::size_t>(j)] = {"encoder F",          j,         forward, any_rank, std::nullopt,
                                         op{op_kind::F, s, j}, divisible, piece};
    jobs[static_cast<std::size_t>(m + j)] = {"encoder B",  j,         backward, any_rank, index.find(b) != 0 ? b : i,
                                             std::nullopt, divisible, piece};
  }
  return jobs;
}

}  // namespace ctpipe
