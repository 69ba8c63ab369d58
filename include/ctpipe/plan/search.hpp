// ctpipe/plan/search.hpp: the best split-backward schedule under a memory limit
// (docs/search.md): the problem of the Zero Bubble paper's automatic scheduler (Qi et
// al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3 and appendix), searched at run
// time and judged by the exact simulator.
//
// Given P, m, the costs t_f, t_i, t_w, t_c, gamma = M_W / M_B and a memory limit per rank
// (full activations, gamma-weighted: an F adds 1, an I frees 1 - gamma, a W frees gamma),
// find per-rank F/I/W lists (loop placement, one stage per rank; or the V-shape, two
// chunks per rank, each chunk's op costing t/2 and holding half an activation) that stay
// within the limit and minimise the largest per-rank span (last end - first start).
#pragma once

#include <algorithm>  // std::max, std::min
#include <chrono>     // search_report::seconds
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int64_t
#include <span>
#include <utility>  // std::index_sequence
#include <vector>

#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/search_v.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe {

/// What search() is asked. `shape`: P >= 1, m >= 1, and V = 1 with loop placement (stage
/// r on rank r) or V = 2 with the V-shape (rank r holds stages r and 2P-1-r; a chunk's op
/// costs t/2). `cost`: t_f, t_i, t_w, t_c in time units (t_b, t_fb and t_move unused).
/// `gamma` = M_W / M_B in [0, 1]. `memory_limit`: full activations per rank, gamma-weighted
/// (1F1B's rank 0 holds P; a chunk's activation is half of one), one entry for every rank
/// or P entries (rank 0 first); each at least 1, the least any schedule needs (loop: a
/// rank's first F; V-shape: both chunks of one micro-batch before its first I).
struct search_problem {
  pipeline_shape shape{};
  costs cost{};
  rational gamma{1};
  std::vector<rational> memory_limit = std::vector<rational>(1, rational{1});

  /// Rank r's limit.
  rational limit(int r) const { return memory_limit[memory_limit.size() == 1 ? 0 : static_cast<std::size_t>(r)]; }
};

/// The rule set of one greedy construction: the three switches of the Zero Bubble authors'
/// heuristic (`manual_order` in sail-sg/zero-bubble-pipeline-parallelism, `zb.py`) and
/// ctpipe's two additions. Defaults are the authors' first set with no additions.
struct greedy_rules {
  /// Warmup: a rank's extra forwards may end after its first I could start (the authors'
  /// `allow_bubble_before_first_b`), else they stop once that time is reached.
  bool warmup_past_first_i = true;
  /// Steady phase: a rank far ahead of the next may wait instead of running a forward,
  /// when the wait costs no more than the worst bubble so far (`prioritize_b`).
  bool prioritize_i = true;
  /// A gap shorter than a W, within the worst bubble so far, is still filled with a W
  /// (`no_bubble_greedy`).
  bool fill_short_gaps = true;
  /// ctpipe: extra warmup forwards per rank beyond the estimate (may be negative; each
  /// rank still keeps at least its first forward and stays within memory and m).
  int warmup_offset = 0;
  /// ctpipe: Ws each rank keeps back from the gap filling while memory allows, for the
  /// cooldown (0: the authors' rule).
  int w_reserve = 0;
};

/// How a schedule was found: search() returns the best of its greedy constructions;
/// search_exact() (ctpipe/exact/search_cbc.hpp, needs CBC) also runs the exact method.
enum class search_method : std::uint8_t {
  greedy,  ///< the best of the greedy rule sets (detail::rule_set())
  local,   ///< then local repair (adjacent swaps on a rank kept when the span drops)
  exact,   ///< then CBC on the mixed-integer program, started from the greedy's schedule
};

/// What search() reports. Times in time units of `t_f`; memory in full activations.
struct search_report {
  search_method method = search_method::greedy;
  bool optimal = false;     ///< span == lower_bound (proved optimal)
  rational span{0};         ///< largest per-rank span of the schedule
  rational lower_bound{0};  ///< no valid schedule has a smaller largest span (search_lower_bound())
  rational bubble{0};       ///< the authors' bubble rate (span - m(t_f + t_i + t_w)) / span
  rational makespan{0};     ///< end of the last op
  rational peak{0};         ///< the largest per-rank peak of in-flight activations (full ones: chunks / V)
  int rule_sets = 0;  ///< greedy constructions tried (rule sets, on the V-shape each with its rounds, and fixed orders)
  int rule_sets_fitting = 0;  ///< of them, those that stayed within the limit
  int repairs = 0;            ///< local repair: swaps kept (each lowered the span)
  double seconds = 0;         ///< wall time of the search (steady clock)
};

/// A searched schedule (CSR, as generate()'s) and its report.
struct search_result {
  schedule ops;
  search_report report;
};

namespace detail {

/// One greedy construction (greedy_rules), in integer ticks and memory units. The method
/// is the Zero Bubble authors' (zb.py, manual_order): it places ops micro-batch by
/// micro-batch, each rank's next F and next I when their inputs can have arrived, and
/// fills the gaps before them with pending Ws; a W also goes first whenever an F would
/// pass the memory limit. Each op ends at max(the rank's last end, its input's end + t_c)
/// + its cost: the exact simulation of the order it writes.
class zb_greedy {
 public:
  /// Rank r's limit is cap[r] memory units; an F adds mf units, an I mi and a W mw (mi,
  /// mw <= 0). Times in ticks.
  constexpr zb_greedy(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc, std::int64_t mf,
                      std::int64_t mi, std::int64_t mw, const std::int64_t* cap, const greedy_rules& rules)
      : P_(P),
        m_(m),
        cost_{tf, ti, tw},
        tc_(tc),
        mem_{mf, mi, mw},
        cap_(cap),
        rules_(rules),
        ints_(static_cast<std::size_t>(5 * P)),
        times_(static_cast<std::size_t>(3 * P + 2 * P * m)),
        ops_(static_cast<std::size_t>(3 * P * m)) {
    // one block of ints and one of times, cut into the per-rank tables (indexing by raw
    // pointers keeps the constant evaluation's steps per op low)
    f_ = ints_.data(), i_ = f_ + P, w_ = i_ + P, written_ = w_ + P, scratch_ = written_ + P;
    end_ = times_.data(), level_ = end_ + P, bubble_ = level_ + P, tf_end_ = bubble_ + P, ti_end_ = tf_end_ + P * m;
  }
  zb_greedy(const zb_greedy&) = delete;  // the tables point into its own storage
  zb_greedy& operator=(const zb_greedy&) = delete;

  /// Runs the construction; false when it cannot stay within the limit. O(P m): each op
  /// placed in O(1), each step O(P).
  constexpr bool run() {
    for (int j = 0; j < P_; ++j) put(j, 0);
    warmup();
    for (int j = P_ - 1; j >= 0; --j) put(j, 1);
    for (int mb = 1; mb < m_ && ok_; ++mb) step(mb);
    for (int j = 0; j < P_ && ok_; ++j) {
      while (w_[j] < m_) put(j, 2);
    }
    return ok_;
  }

  /// Rank r's ops in the order written (3m of them after a run that fitted).
  constexpr std::span<const op> rank(int r) const {
    return ops_.span().subspan(static_cast<std::size_t>(3 * r * m_), static_cast<std::size_t>(written_[r]));
  }
  /// The largest per-rank span (ticks).
  constexpr std::int64_t span() const {
    std::int64_t s = 0;
    for (int j = 0; j < P_; ++j) s = std::max(s, end_[j] - (tf_end_[j * m_] - cost_[0]));
    return s;
  }

 private:
  /// Places rank j's next op of kind k (0 F, 1 I, 2 W).
  constexpr void put(int j, int k) {
    const int mb = k == 0 ? f_[j] : k == 1 ? i_[j] : w_[j];
    const std::int64_t packed = end_[j] + cost_[k];
    std::int64_t t = packed;
    if (k == 0 && j > 0) t = std::max(t, tf_end_[(j - 1) * m_ + mb] + tc_ + cost_[0]);
    if (k == 1 && j + 1 < P_) t = std::max(t, ti_end_[(j + 1) * m_ + mb] + tc_ + cost_[1]);
    if (f_[j] > 0) bubble_[j] += t - packed, worst_ = std::max(worst_, bubble_[j]);  // bubbles only grow
    end_[j] = t;
    level_[j] += mem_[k];
    if (k == 0) tf_end_[j * m_ + mb] = t, ++f_[j];
    if (k == 1) ti_end_[j * m_ + mb] = t, ++i_[j];
    if (k == 2) ++w_[j];
    ops_[static_cast<std::size_t>(3 * j * m_ + written_[j]++)] = make_op(k == 0   ? op_kind::F
                                                                         : k == 1 ? op_kind::I
                                                                                  : op_kind::W,
                                                                         j, mb);
  }
  /// Ws before rank j's next F (k = 0) or I (k = 1): first as many as memory needs, then
  /// those that end by the time its input arrives (`ready`), then one more for a gap
  /// shorter than a W when the rules take it.
  constexpr void fill(int j, int k, std::int64_t ready) {
    while (level_[j] + mem_[k] > cap_[j]) {
      if (w_[j] >= i_[j]) return static_cast<void>(ok_ = false);
      put(j, 2);
    }
    if (ready < 0) return;
    // keeps w_reserve pending
    while (w_[j] < i_[j] && end_[j] + cost_[2] <= ready && i_[j] - w_[j] > rules_.w_reserve) put(j, 2);
    if (w_[j] < i_[j] && end_[j] < ready && i_[j] - w_[j] > rules_.w_reserve) {
      if (ready - end_[j] > worst_ - bubble_[j] || rules_.fill_short_gaps) put(j, 2);
    }
  }
  /// The warmup: every rank's extra forwards before its first I (from the last rank
  /// back, each stops when its first I's input can have arrived), made to decrease
  /// towards the last rank, then micro-batch 0's Is from the last rank back.
  constexpr void warmup() {
    int* extra = scratch_;
    std::int64_t last = tf_end_[(P_ - 1) * m_] + cost_[1];
    for (int j = P_ - 2; j >= 0; --j) {
      std::int64_t level = level_[j], t = end_[j];
      while (f_[j] + extra[j] < m_ && level + mem_[0] <= cap_[j]) {
        if (rules_.warmup_past_first_i ? t + cost_[0] > last + tc_ : t >= last + tc_) break;
        level += mem_[0], t += cost_[0], ++extra[j];
      }
      last = std::max(t, last + tc_) + cost_[1];
    }
    for (int j = 1; j < P_; ++j) {
      while (extra[j] > 0 && extra[j] >= extra[j - 1] && f_[j] + extra[j] < m_) --extra[j];
    }
    for (int j = 0; j < P_; ++j) {
      int n = extra[j] + (j + 1 < P_ ? rules_.warmup_offset : 0);
      n = std::max(0, std::min(n, m_ - f_[j]));
      for (int x = 0; x < n && level_[j] + mem_[0] <= cap_[j]; ++x) put(j, 0);
    }
  }
  /// Micro-batch mb's step after the warmup: the forwards that run (each rank's next F,
  /// unless the rules hold it back; a rank runs one only if the next rank does), then
  /// micro-batch mb's Is from the last rank back.
  constexpr void step(int mb) {
    int* run = scratch_;
    for (int j = 0; j < P_; ++j) {
      run[j] = 0;
      if (f_[j] >= m_) continue;
      run[j] = 1;
      if (!rules_.prioritize_i || j + 1 >= P_ || f_[j] < f_[j + 1] + 2) continue;
      const std::int64_t next = end_[j + 1] + cost_[0] + cost_[1] + tc_;
      if (end_[j] >= next) {
        run[j] = 0;
        continue;
      }
      std::int64_t w_cost = 0, level = level_[j] + mem_[0];
      for (int n = 0; level > cap_[j] && w_[j] + n < i_[j]; ++n) w_cost += cost_[2], level += mem_[2];
      if (end_[j] + cost_[0] + w_cost <= next) continue;
      if (next - end_[j] <= worst_ - bubble_[j]) run[j] = 0;
    }
    for (int j = P_ - 2; j >= 0; --j) run[j] = std::min(run[j], run[j + 1]);
    for (int j = 0; j < P_ && ok_; ++j) {
      if (!run[j]) continue;
      fill(j, 0, j > 0 ? tf_end_[(j - 1) * m_ + f_[j]] + tc_ : -1);
      if (ok_) put(j, 0);
    }
    for (int j = P_ - 1; j >= 0 && ok_; --j) {
      fill(j, 1, j + 1 < P_ ? ti_end_[(j + 1) * m_ + mb] + tc_ : -1);
      if (j == 0 && f_[j] == m_) {
        while (w_[j] < i_[j]) put(j, 2);
      }
      if (ok_) put(j, 1);
    }
  }

  int P_, m_;
  std::int64_t cost_[3];
  std::int64_t tc_;
  std::int64_t mem_[3];
  const std::int64_t* cap_;  // per rank
  greedy_rules rules_;
  buffer<int> ints_;
  buffer<std::int64_t> times_;
  buffer<op> ops_;  // rank r's at r * 3m
  // per rank: Fs, Is, Ws and ops written, a scratch value
  int *f_ = nullptr, *i_ = nullptr, *w_ = nullptr, *written_ = nullptr, *scratch_ = nullptr;
  // per rank: its last end, level and bubble; per rank row of m: each F's and I's end
  std::int64_t *end_ = nullptr, *level_ = nullptr, *bubble_ = nullptr, *tf_end_ = nullptr, *ti_end_ = nullptr;
  std::int64_t worst_ = 0;  // the largest bubble_ so far
  bool ok_ = true;
};

}  // namespace detail

namespace detail {
/// Whether `s` is a shape search() takes: V = 1 with loop placement, or V = 2 on the
/// V-shape.
constexpr bool searchable(const pipeline_shape& s) {
  return (s.V == 1 && s.layout == placement::loop) || (s.V == 2 && s.layout == placement::v_shape);
}
}  // namespace detail

/// The problem's gate: `ctpipe: search takes V = 1 with loop placement (one stage per
/// rank) or V = 2 with the V-shape placement (two chunks per rank)`, `ctpipe: search takes
/// one memory limit for every rank or P of them`,
/// `ctpipe: search's memory limit must be >= 1 full activation per rank (the least any
/// schedule needs: one micro-batch in flight)`, check_shape(), check_costs() and check_gamma()
/// messages.
inline void check_search_problem(const search_problem& p) {
  check_shape(p.shape);
  check_costs(p.cost);
  check_gamma(p.gamma);
  detail::require(detail::searchable(p.shape),
                  "ctpipe: search takes V = 1 with loop placement (one stage per rank) or V = 2 with the V-shape "
                  "placement (two chunks per rank)");
  detail::require(p.memory_limit.size() == 1 || p.memory_limit.size() == static_cast<std::size_t>(p.shape.P),
                  "ctpipe: search takes one memory limit for every rank or P of them");
  for (const rational x : p.memory_limit) {
    detail::require(x >= rational{1},
                    "ctpipe: search's memory limit must be >= 1 full activation per rank (the least any schedule "
                    "needs: one micro-batch in flight)");
  }
}

/// A lower bound on the largest per-rank span of every valid schedule of `p`, in time
/// units (docs/search.md). Per rank r, with C_r = (P-1-r)(t_f + t_i + 2 t_c) (the round
/// trip from an F's end to its I through the ranks after r) and n = min(floor(limit), m):
/// - work: m(t_f + t_i + t_w);
/// - front: until its first I starts the rank runs only Fs, at most n of them (each holds
///   an activation), in a window of at least t_f + C_r: idle >= t_f + C_r - n t_f;
/// - tail: after its last F ends its I waits at least C_r, and the work it can run
///   meanwhile is a Is with their Ws and p pending Ws with a + 1 + p gamma <= limit and
///   a + p <= m - 1 (the level after that F): idle >= C_r - max(a(t_i + t_w) + p t_w);
/// - front + tail when m > n (some F then follows the first I, so the windows are
///   disjoint), else the larger;
/// - memory over time: an activation is held whole from its F's start to its I's end (at
///   least t_f + C_r + t_i) and gamma of it until its W ends (at least t_w), and the level
///   stays within the limit over the span: span >= m (t_f + C_r + t_i + gamma t_w) / limit.
/// The bound is the largest over ranks. O(P m).
///
/// On the V-shape (a chunk's op costs t/2 and holds half an activation), per rank r:
/// - work: m(t_f + t_i + t_w), as above;
/// - front: its first op is a chunk-0 F and its first I a chunk-1 I; from the start of
///   that micro-batch's chunk-0 F to the start of that I runs the chain of 2P - r chunk
///   Fs (stages r .. 2P-1) and r chunk Is (stages 2P-1 .. 2P-r) with 2P - 2 transfers,
///   D_r = (2P - r) t_f / 2 + r t_i / 2 + (2P - 2) t_c, and the rank runs only Fs in it,
///   at most n = min(floor(2 limit), 2m) of them: idle >= D_r - n t_f / 2;
/// - memory over time: chunk 0's half activation is held from its F's start to its I's
///   end, at least H_0 = (2P - r)(t_f + t_i) / 2 + 2(2P - 2 - r) t_c, chunk 1's at least
///   H_1 = (r + 1)(t_f + t_i) / 2 + 2 r t_c, and gamma of each half until its W ends (t_w
///   / 2 after the I at least): span >= m ((H_0 + H_1) / 2 + gamma t_w / 2) / limit.
inline rational search_lower_bound(const search_problem& p) {
  check_search_problem(p);
  const pipeline_shape& s = p.shape;
  const costs& c = p.cost;
  const rational work = rational{s.m} * (c.f + c.i + c.w);
  rational best = work;
  if (s.layout == placement::v_shape) {
    const rational half{1, 2};
    for (int r = 0; r < s.P; ++r) {
      const rational limit = p.limit(r);
      const rational chunks = limit * rational{2};
      const std::int64_t n = std::min<std::int64_t>(chunks.num / chunks.den, 2 * static_cast<std::int64_t>(s.m));
      const rational chain =
          rational{2 * s.P - r} * c.f * half + rational{r} * c.i * half + rational{2 * s.P - 2} * c.c;
      best = max(best, work + max(rational{0}, chain - rational{n} * c.f * half));
      const rational h0 = rational{2 * s.P - r} * (c.f + c.i) * half + rational{2 * (2 * s.P - 2 - r)} * c.c;
      const rational h1 = rational{r + 1} * (c.f + c.i) * half + rational{2 * r} * c.c;
      best = max(best, rational{s.m} * ((h0 + h1) * half + p.gamma * c.w * half) / limit);
    }
    return best;
  }
  for (int r = 0; r < s.P; ++r) {
    const rational limit = p.limit(r);
    const rational floor_limit{limit.num / limit.den};
    const int n = floor_limit < rational{s.m} ? static_cast<int>(floor_limit.num) : s.m;
    const rational round_trip = rational{s.P - 1 - r} * (c.f + c.i + rational{2} * c.c);
    const rational front = max(rational{0}, c.f + round_trip - rational{n} * c.f);
    rational fill{0};
    for (int a = 0; a < s.m && rational{a + 1} <= limit; ++a) {
      // the most pending Ws beside a Is: p gamma <= limit - a - 1, p <= m - 1 - a
      std::int64_t w = s.m - 1 - a;
      if (p.gamma > rational{0}) {
        const rational room = (limit - rational{a + 1}) / p.gamma;
        w = std::min<std::int64_t>(w, room.num / room.den);
      }
      fill = max(fill, rational{a} * (c.i + c.w) + rational{w} * c.w);
    }
    const rational tail = max(rational{0}, round_trip - fill);
    const rational idle = s.m > n ? front + tail : max(front, tail);
    best = max(best, work + idle);
    // memory over time: each activation is held whole from its F's start to its I's end
    // (at least t_f + C_r + t_i) and gamma of it until its W ends (at least t_w); the
    // level never passes the limit over the span
    best = max(best, rational{s.m} * (c.f + round_trip + c.i + p.gamma * c.w) / limit);
  }
  return best;
}

namespace detail {

/// The number of greedy rule sets search() tries, and of them the authors' (the first);
/// search() also tries two fixed orders after them (greedy_best()).
inline constexpr int rule_set_count = 72;
inline constexpr int authors_rule_set_count = 8;

/// Rule set k (0 <= k < rule_set_count), in the order search() tries them: the authors'
/// eight (every combination of their three switches), then each of those with a warmup
/// offset of -2, -1, +1, +2, then each with a W reserve of 1, 2, 4, 8.
constexpr greedy_rules rule_set(int k) {
  const int x = k % 8, variant = k / 8;
  constexpr int offsets[] = {0, -2, -1, 1, 2, 0, 0, 0, 0};
  constexpr int reserves[] = {0, 0, 0, 0, 0, 1, 2, 4, 8};
  return {(x & 4) == 0, (x & 2) == 0, (x & 1) == 0, offsets[variant], reserves[variant]};
}

/// A problem's numbers as integers (docs/search.md): times in ticks of 1/den time units
/// (den: the least common multiple of the cost denominators), memory in units of 1/unit
/// activation (unit: gamma's denominator q, as every level is a whole number of q-ths);
/// an F adds `unit`, an I frees `fi` = unit - fw, a W frees `fw` = gamma unit; `cap`
/// holds each rank's limit (P entries) rounded down to whole units, which no level tells
/// apart from the limit itself (so a limit with a large denominator, from bytes, costs
/// nothing). Raises rational's overflow message when one leaves 64 bits.
struct integer_units {
  std::int64_t den = 1, unit = 1, fi = 0, fw = 0;
  buffer<std::int64_t> cap;
  constexpr std::int64_t ticks(rational x) const { return rational::mul(x.num, den / x.den); }
};

/// integer_units of costs c, gamma and `limits` (one or P entries) over P ranks.
constexpr integer_units integer_units_of(const costs& c, rational gamma, std::span<const rational> limits, int P) {
  integer_units u;
  u.den = lcm(lcm(c.f.den, c.i.den), lcm(c.w.den, c.c.den));
  u.unit = gamma.den;
  u.fw = gamma.num;
  u.fi = u.unit - u.fw;
  u.cap = buffer<std::int64_t>(static_cast<std::size_t>(P));
  for (std::size_t r = 0; r < static_cast<std::size_t>(P); ++r) {
    const rational x = limits[limits.size() == 1 ? 0 : r] * rational{u.unit};
    u.cap[r] = x.num / x.den;  // limits are >= 1: the floor
  }
  return u;
}

/// What greedy_best() found: the best span in ticks of 1/den time units (-1 when no rule
/// set fitted), and the rule sets tried and fitting.
struct greedy_outcome {
  std::int64_t span = -1, den = 1;
  int tried = 0, fitting = 0;
};

/// Copies construction g's ranks (P of them, `per` ops each, as its rank(r) gives them)
/// into `ops` at r * per.
template <class Construction>
constexpr void take_ranks(const Construction& g, std::size_t P, std::size_t per, op* ops) {
  for (std::size_t r = 0; r < P; ++r) {
    const std::span<const op> list = g.rank(static_cast<int>(r));
    for (std::size_t x = 0; x < per; ++x) ops[r * per + x] = list[x];
  }
}

/// The number of V-shape rule sets search() tries, of them the authors' (the first), and
/// the most rounds of the authors' refinement per rule set (each round re-runs the
/// construction with the last round's per-rank bubbles as `approved`, kept while the span
/// drops; the authors' own sweeps stop after 2 or 3).
inline constexpr int v_rule_set_count = 28;
inline constexpr int v_authors_rule_set_count = 4;
inline constexpr int v_rounds = 8;

/// V-shape rule set k (0 <= k < v_rule_set_count), in the order search() tries them: the
/// authors' four (fill before a chunk-1 I on and off, then fill before an F on and off,
/// as their `create_schedule` loops), then each with a warmup offset of -6, -4, -2, -1
/// chunks, then each with a W reserve of 1, 2 (the variants that changed a result of the
/// authors' anchor sweep; +1, +2 and a reserve of 4 never did, and cost a fifth of the
/// time at P = 32, m = 256).
constexpr v_greedy_rules v_rule_set(int k) {
  const int x = k % 4, variant = k / 4;
  constexpr int offsets[] = {0, -6, -4, -2, -1, 0, 0};
  constexpr int reserves[] = {0, 0, 0, 0, 0, 1, 2};
  return {(x & 2) == 0, (x & 1) == 0, offsets[variant], reserves[variant]};
}

/// What one construction of greedy_best() gave: its span in ticks (-1 when it does not
/// fit or is not a schedule) and whether it counts as tried (V-Half and V-Min are skipped
/// for P > 2m, as is a library family whose spec fails).
struct unit_outcome {
  std::int64_t span = -1;
  bool tried = true;
};

/// The number of constructions greedy_best() runs with `rule_sets` rule sets: those, then
/// (unless only the authors' are asked for) the fixed orders: 2 on the loop placement
/// (groups, capped 1F1B), 8 on the V-shape (groups, 4 list schedules, ZB-V, V-Half, V-Min).
constexpr int unit_count(const pipeline_shape& s, int rule_sets) {
  if (s.layout == placement::v_shape) return rule_sets + (rule_sets > v_authors_rule_set_count ? 8 : 0);
  return rule_sets + (rule_sets > authors_rule_set_count ? 2 : 0);
}

/// The integer units of the constructions: on the V-shape in chunks (each op costs t/2,
/// t_c whole, each limit twice its full activations). Raises rational's overflow message
/// when a time or level of `ops` ops could leave 64 bits (every time lies within ops x (the
/// largest cost + t_c), every level within ops x unit).
constexpr integer_units construction_units(const pipeline_shape& s, const costs& c, rational gamma,
                                           std::span<const rational> limits) {
  costs unit_costs = c;
  buffer<rational> unit_limits(limits.size());
  const rational scale{s.layout == placement::v_shape ? 2 : 1};
  unit_costs.f = c.f / scale, unit_costs.i = c.i / scale, unit_costs.w = c.w / scale;
  for (std::size_t r = 0; r < limits.size(); ++r) unit_limits[r] = limits[r] * scale;
  integer_units u = integer_units_of(unit_costs, gamma, unit_limits.span(), s.P);
  const std::int64_t n = 3 * static_cast<std::int64_t>(s.V) * s.P * s.m;
  rational::mul(
      n + 1,
      rational::add(rational::add(u.ticks(unit_costs.f) + u.ticks(unit_costs.i), u.ticks(unit_costs.w)), u.ticks(c.c)) +
          1);
  rational::mul(n + 1, u.unit);
  return u;
}

/// Whether every rank has the same limit (the rule sets' constructions are checked only
/// when they differ: with one limit they are valid and within it by construction).
constexpr bool uniform_limits(std::span<const rational> limits) {
  for (const rational x : limits) {
    if (x != limits[0]) return false;
  }
  return true;
}

/// The span in ticks of 1/den of the schedule (ops, offsets) when it is valid and every
/// rank's peak is within its limit, else -1.
constexpr std::int64_t checked_ticks(const pipeline_shape& s, const costs& c, rational gamma,
                                     std::span<const rational> limits, std::int64_t den, const op* ops,
                                     const std::uint32_t* offsets) {
  const std::size_t P = static_cast<std::size_t>(s.P);
  const schedule_view v{s, std::span<const op>(ops, offsets[P]), std::span<const std::uint32_t>(offsets, P + 1)};
  if (!validate(v).ok()) return -1;
  const in_flight_profile memory = in_flight(v, gamma);
  for (std::size_t r = 0; r < P; ++r) {
    if (memory.peak_activations(static_cast<int>(r)) > limits[limits.size() == 1 ? 0 : r]) return -1;
  }
  return (simulate(v, c).largest_span() * rational{den}).num;
}

/// Construction k (0 <= k < unit_count(s, rule_sets)) of greedy_best() on the V-shape,
/// written into `ops` (6m a rank, CSR) with `offsets` (r 6m). Rule set k < rule_sets: up to
/// v_rounds constructions of O(P m), re-run with the last round's per-rank bubbles as
/// "approved" while the span drops (its schedule: the last round kept). Then the fixed
/// orders: every rank in groups of g = floor(the least limit) micro-batches (their chunk-0
/// Fs, chunk-1 Fs, then I and W of chunk 1, then of chunk 0: a level that peaks at g; it
/// always fits, as a limit is at least 1), four memory-aware list schedules
/// (v_list_scheduler, O(ops log P) each), and the library's ZB-V, V-Half and V-Min
/// (fill_schedule(); V-Half and V-Min only for P <= 2m, where their generator's grid stays
/// within a few slots an op: docs/compile-time.md), each validated, memory-checked and
/// simulated; a rule set's schedule too when the per-rank limits differ.
constexpr unit_outcome greedy_unit_v(const pipeline_shape& s, const costs& c, rational gamma,
                                     std::span<const rational> limits, int rule_sets, int k, op* ops,
                                     std::uint32_t* offsets) {
  const integer_units u = construction_units(s, c, gamma, limits);
  costs chunk = c;
  chunk.f = c.f / rational{2}, chunk.i = c.i / rational{2}, chunk.w = c.w / rational{2};
  const std::size_t P = static_cast<std::size_t>(s.P), per = 6 * static_cast<std::size_t>(s.m);
  for (std::size_t r = 0; r <= P; ++r) offsets[r] = static_cast<std::uint32_t>(r * per);
  unit_outcome out;
  if (k < rule_sets) {
    buffer<std::int64_t> approved(P);
    for (int round = 0; round < v_rounds; ++round) {
      zbv_greedy g(s.P, s.m, u.ticks(chunk.f), u.ticks(chunk.i), u.ticks(chunk.w), u.ticks(c.c), u.unit, -u.fi, -u.fw,
                   u.cap.data(), v_rule_set(k), round == 0 ? nullptr : approved.data());
      if (!g.run() || (out.span >= 0 && g.span() >= out.span)) break;
      out.span = g.span();
      for (std::size_t r = 0; r < P; ++r) approved[r] = g.bubbles()[r];
      take_ranks(g, P, per, ops);
    }
    // per-rank limits that differ can leave the authors' rules an invalid list: checked
    if (out.span >= 0 && !uniform_limits(limits)) out.span = checked_ticks(s, c, gamma, limits, u.den, ops, offsets);
    return out;
  }
  const auto consider = [&] { out.span = checked_ticks(s, c, gamma, limits, u.den, ops, offsets); };
  const int fixed = k - rule_sets;
  if (fixed == 0) {
    int g = s.m;  // one group size for every rank (groups that differ between ranks deadlock)
    for (const rational x : limits) g = x.num / x.den < g ? static_cast<int>(x.num / x.den) : g;
    for (std::size_t r = 0; r < P; ++r) {
      const int c0 = static_cast<int>(r), c1 = 2 * s.P - 1 - static_cast<int>(r);
      std::size_t x = r * per;
      for (int first = 0; first < s.m; first += g) {
        const int last = first + g < s.m ? first + g : s.m;
        for (int j = first; j < last; ++j) ops[x++] = make_op(op_kind::F, c0, j);
        for (int j = first; j < last; ++j) ops[x++] = make_op(op_kind::F, c1, j);
        for (int j = first; j < last; ++j) ops[x++] = make_op(op_kind::I, c1, j), ops[x++] = make_op(op_kind::W, c1, j);
        for (int j = first; j < last; ++j) ops[x++] = make_op(op_kind::I, c0, j), ops[x++] = make_op(op_kind::W, c0, j);
      }
    }
    consider();
  } else if (fixed <= 4) {
    // ctpipe's list scheduling: (priority, wait for the input before a W) as
    // v_list_scheduler numbers them; the four of eight tried (four priority orders, each
    // with and without the wait) that changed a result on a sweep of limits (P = 4 to 24,
    // k = 1/4 to 3)
    constexpr int lists[4][2] = {{0, 1}, {1, 0}, {1, 1}, {2, 1}};
    v_list_scheduler list(s.P, s.m, u.ticks(chunk.f), u.ticks(chunk.i), u.ticks(chunk.w), u.ticks(c.c), u.unit, -u.fi,
                          -u.fw, u.cap.data(), lists[fixed - 1][0], lists[fixed - 1][1] == 1);
    if (!list.run()) return out;
    take_ranks(list, P, per, ops);
    consider();
  } else {
    const schedule_family families[] = {schedule_family::zbv, schedule_family::v_half, schedule_family::v_min};
    const schedule_family f = families[fixed - 5];
    const schedule_spec spec{f, s};
    // V-Half and V-Min come from their generator's grid of P (8m + 6P + 2) slots
    // (docs/compile-time.md): taken where it stays within a few slots an op, P <= 2m
    if ((f != schedule_family::zbv && s.P > 2 * s.m) || spec_error(spec) != nullptr || total_ops(spec) != P * per)
      return {-1, false};
    fill_schedule(spec, ops, offsets);  // 6m ops a rank: the offsets stay r * 6m
    consider();
  }
  return out;
}

/// Construction k (0 <= k < unit_count(s, rule_sets)) of greedy_best(), written into `ops`
/// (3 V P m, CSR, rank r's ops at r 3 V m) with `offsets` (P + 1). Loop placement: rule set
/// k < rule_sets (detail::rule_set(), one O(P m) construction), then two fixed orders for
/// low limits, where the rules run far from the optimum: each rank in groups of g =
/// floor(the least limit) micro-batches (their Fs, then I, W per micro-batch: a level that
/// peaks at g, so a limit of 1 always fits), and 1F1B with min(g_r - 1, P - 1 - r) warmup
/// forwards (g_r = floor(rank r's limit)) and each W right after its I (peak: the warmup +
/// 1), each validated and simulated. With per-rank limits that differ, a rule set's lists
/// are checked too (validate(), the peaks, the simulation): the rules can leave an
/// invalid list there. V-shape: greedy_unit_v(). The
/// same code at run time and in a constant expression (searched_v runs each construction
/// in its own). Raises rational's overflow message when a time or level leaves 64 bits.
constexpr unit_outcome greedy_unit(const pipeline_shape& s, const costs& c, rational gamma,
                                   std::span<const rational> limits, int rule_sets, int k, op* ops,
                                   std::uint32_t* offsets) {
  if (s.layout == placement::v_shape) return greedy_unit_v(s, c, gamma, limits, rule_sets, k, ops, offsets);
  const integer_units u = construction_units(s, c, gamma, limits);
  const std::size_t P = static_cast<std::size_t>(s.P), per = 3 * static_cast<std::size_t>(s.m);
  for (std::size_t r = 0; r <= P; ++r) offsets[r] = static_cast<std::uint32_t>(r * per);
  unit_outcome out;
  if (k < rule_sets) {
    zb_greedy g(s.P, s.m, u.ticks(c.f), u.ticks(c.i), u.ticks(c.w), u.ticks(c.c), u.unit, -u.fi, -u.fw, u.cap.data(),
                rule_set(k));
    if (!g.run()) return out;
    take_ranks(g, P, per, ops);
    // per-rank limits that differ can leave the authors' rules an invalid list: checked
    out.span = uniform_limits(limits) ? g.span() : checked_ticks(s, c, gamma, limits, u.den, ops, offsets);
    return out;
  }
  const int family = k - rule_sets;
  int least = s.m;  // the groups: one size for every rank (sizes that differ between ranks deadlock)
  for (const rational x : limits) least = x.num / x.den < least ? static_cast<int>(x.num / x.den) : least;
  for (std::size_t r = 0; r < P; ++r) {
    const rational x = limits[limits.size() == 1 ? 0 : r];
    const int own = x.num / x.den < s.m ? static_cast<int>(x.num / x.den) : s.m;
    const int g = family == 0 ? least : own;
    const int stage = static_cast<int>(r);
    std::size_t at = r * per;
    if (family == 0) {
      for (int first = 0; first < s.m; first += g) {
        const int last = first + g < s.m ? first + g : s.m;
        for (int j = first; j < last; ++j) ops[at++] = make_op(op_kind::F, stage, j);
        for (int j = first; j < last; ++j)
          ops[at++] = make_op(op_kind::I, stage, j), ops[at++] = make_op(op_kind::W, stage, j);
      }
    } else {
      int warmup = g - 1 < s.P - 1 - stage ? g - 1 : s.P - 1 - stage;
      warmup = warmup < s.m - 1 ? warmup : s.m - 1;
      int f = 0;
      for (; f < warmup; ++f) ops[at++] = make_op(op_kind::F, stage, f);
      for (int j = 0; j < s.m; ++j) {
        if (f < s.m) ops[at++] = make_op(op_kind::F, stage, f++);
        ops[at++] = make_op(op_kind::I, stage, j), ops[at++] = make_op(op_kind::W, stage, j);
      }
    }
  }
  const schedule_view v{s, std::span<const op>(ops, P * per), std::span<const std::uint32_t>(offsets, P + 1)};
  if (validate(v).ok()) out.span = (simulate(v, c).largest_span() * rational{u.den}).num;
  return out;
}

/// The greedy part of search() and searched(): every construction of greedy_unit() for
/// (shape, c, gamma, limits: one or P entries) with the first `rule_sets` rule sets, the
/// one with the least span (ties: the first) written into `ops` (3 V P m, CSR, rank r's
/// ops at 3 V m r) and `offsets` (P + 1); with `rules_best`, the best of the rule sets
/// alone too (3 V P m; not a schedule when none fitted). The same code at run time and in
/// a constant expression, so searched() and searched_v equal search() without local
/// repair. Raises rational's overflow message when a time or level leaves 64 bits.
constexpr greedy_outcome greedy_best(const pipeline_shape& s, const costs& c, rational gamma,
                                     std::span<const rational> limits, int rule_sets, op* ops, std::uint32_t* offsets,
                                     op* rules_best = nullptr) {
  greedy_outcome out;
  out.den = construction_units(s, c, gamma, limits).den;
  const std::size_t n =
      3 * static_cast<std::size_t>(s.V) * static_cast<std::size_t>(s.P) * static_cast<std::size_t>(s.m);
  buffer<op> trial(n);
  const int units = unit_count(s, rule_sets);
  for (int k = 0; k < units; ++k) {
    if (k == rule_sets && rules_best != nullptr) {
      for (std::size_t x = 0; x < n; ++x) rules_best[x] = ops[x];
    }
    const unit_outcome g = greedy_unit(s, c, gamma, limits, rule_sets, k, trial.data(), offsets);
    out.tried += g.tried ? 1 : 0;
    if (g.span < 0) continue;
    ++out.fitting;
    if (out.span >= 0 && g.span >= out.span) continue;
    out.span = g.span;
    for (std::size_t x = 0; x < n; ++x) ops[x] = trial[x];
  }
  if (units == rule_sets && rules_best != nullptr) {
    for (std::size_t x = 0; x < n; ++x) rules_best[x] = ops[x];
  }
  for (std::size_t r = 0; r <= static_cast<std::size_t>(s.P); ++r)
    offsets[r] = static_cast<std::uint32_t>(r * (n / static_cast<std::size_t>(s.P)));
  return out;
}

/// The rule sets greedy_best() runs for shape s: every one, or the authors' alone.
constexpr int rule_sets_of(const pipeline_shape& s, bool authors_only) {
  if (s.layout == placement::v_shape) return authors_only ? v_authors_rule_set_count : v_rule_set_count;
  return authors_only ? authors_rule_set_count : rule_set_count;
}

/// The schedule of a greedy order (CSR, rank 0 first).
inline schedule schedule_of(const pipeline_shape& shape, const std::vector<std::vector<op>>& order) {
  std::size_t total = 0;
  for (const auto& o : order) total += o.size();
  schedule out{shape, total};
  std::size_t k = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    out.offsets()[r] = static_cast<std::uint32_t>(k);
    for (const op o : order[r]) out.ops()[k++] = o;
  }
  out.offsets()[order.size()] = static_cast<std::uint32_t>(k);
  return out;
}

/// The largest per-rank span of `s` for `p`, or -1 when `s` is not valid (validate())
/// or passes a rank's limit. O(ops).
inline rational checked_span(const schedule& s, const search_problem& p) {
  const schedule_view v = s.view();
  if (!validate(v).ok()) return rational{-1};
  const in_flight_profile memory = in_flight(v, p.gamma);
  for (int r = 0; r < p.shape.P; ++r) {
    if (memory.peak_activations(r) > p.limit(r)) return rational{-1};
  }
  return simulate(v, p.cost).largest_span();
}

/// Whether adjacent ops a, b of one rank may trade places in local repair. Loop placement:
/// of two micro-batches a > b, a's F or I and b's I or W, or a's F and b's I. V-shape: any
/// two ops but those of one stage and micro-batch and those of one stage and kind (the
/// validity check rejects the rest that deadlock).
constexpr bool swappable(const pipeline_shape& s, op a, op b) {
  if (s.layout == placement::v_shape) {
    const bool same_stage = a.stage() == b.stage();
    return !(same_stage && (a.microbatch() == b.microbatch() || a.kind() == b.kind()));
  }
  const op later = a.microbatch() > b.microbatch() ? a : b, earlier = a.microbatch() > b.microbatch() ? b : a;
  return later.microbatch() != earlier.microbatch() &&
         (later.kind() == op_kind::F ? earlier.kind() != op_kind::F
                                     : later.kind() == op_kind::I && earlier.kind() == op_kind::W);
}

/// Local repair: passes over every pair of neighbours on a rank that may trade places
/// (swappable()),
/// each swap kept when the schedule stays valid, within the limits, and its largest span
/// drops; until a pass keeps none or `budget` ops have been simulated. Returns the swaps
/// kept. Each trial is one exact check (checked_span()): O(ops).
inline int repair(schedule& s, const search_problem& p, std::int64_t budget) {
  rational best = checked_span(s, p);
  if (best < rational{0}) return 0;  // not a schedule of p: nothing to repair
  const std::int64_t n = static_cast<std::int64_t>(s.size());
  int kept = 0;
  for (bool improved = true; improved && budget >= n;) {
    improved = false;
    for (int r = 0; r < p.shape.P && budget >= n; ++r) {
      for (std::uint32_t k = s.offsets()[static_cast<std::size_t>(r)];
           k + 1 < s.offsets()[static_cast<std::size_t>(r) + 1] && budget >= n; ++k) {
        if (!swappable(p.shape, s.ops()[k], s.ops()[k + 1])) continue;
        std::swap(s.ops()[k], s.ops()[k + 1]);
        budget -= n;
        const rational span = checked_span(s, p);
        if (span >= rational{0} && span < best) {
          best = span, improved = true, ++kept;
        } else {
          std::swap(s.ops()[k], s.ops()[k + 1]);
        }
      }
    }
  }
  return kept;
}

}  // namespace detail

/// Options of search(): `authors_only` restricts the greedy to the authors' eight rule
/// sets (their `initial_solution`: the schedule their tool ships, for comparison);
/// `repair` runs local repair after the greedy, simulating at most `repair_ops` ops in all
/// (a budget in work, not seconds, so that the result does not depend on the machine).
struct search_options {
  bool authors_only = false;
  bool repair = true;
  std::int64_t repair_ops = 1'000'000;
};

/// Searches the schedule of `p` with the least largest per-rank span (docs/search.md):
/// every greedy rule set (detail::rule_set(): the Zero Bubble authors' eight and ctpipe's
/// variants), each an O(P m) construction (detail::greedy_best()), keeping the one with the
/// least span (ties: the first); then, with `options.repair` (the default), local repair
/// (detail::repair(), search_method::local) within its budget, unless the greedy already
/// meets the lower bound.
/// The result is checked before it is returned: validate() passes, the exact simulation
/// gives at most the span the construction computed, and every rank's in_flight() peak is within
/// the limit (else `ctpipe: search's schedule failed its own check (a bug)`).
/// `optimal` when the span equals search_lower_bound(). Errors: check_search_problem()'s;
/// with `authors_only`, `ctpipe: search: none of the Zero Bubble authors' rule sets stays
/// within this memory limit (their code stops on an assertion here); search without
/// authors_only finds a schedule` (it happens on the V-shape at low limits).
inline search_result search(const search_problem& p, const search_options& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  check_search_problem(p);
  const pipeline_shape& s = p.shape;
  const costs& c = p.cost;
  search_result out;
  search_report& rep = out.report;
  out.ops =
      schedule{s, 3 * static_cast<std::size_t>(s.V) * static_cast<std::size_t>(s.P) * static_cast<std::size_t>(s.m)};
  schedule rules{s, out.ops.size()};  // the best of the rule sets alone, for local repair
  const detail::greedy_outcome g =
      detail::greedy_best(s, c, p.gamma, p.memory_limit, detail::rule_sets_of(s, options.authors_only),
                          out.ops.ops().data(), out.ops.offsets().data(), rules.ops().data());
  for (std::size_t r = 0; r <= static_cast<std::size_t>(s.P); ++r) rules.offsets()[r] = out.ops.offsets()[r];
  rep.rule_sets = g.tried, rep.rule_sets_fitting = g.fitting;
  detail::require(g.span >= 0 || !options.authors_only,
                  "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their "
                  "code stops on an assertion here); search without authors_only finds a schedule");
  detail::require(g.span >= 0, "ctpipe: search's schedule failed its own check (a bug)");  // a limit >= 1 always fits
  const std::int64_t best = g.span, den = g.den;
  rep.method = search_method::greedy;
  rep.lower_bound = search_lower_bound(p);
  if (options.repair && !options.authors_only &&
      rational{best, den} > rep.lower_bound) {  // nothing to gain at the bound
    // repair the best schedule, and the best of the rule sets when a fixed order won
    // (and some rule set fitted): each with the whole budget, the shorter kept (ties:
    // the first)
    rep.method = search_method::local;
    const bool fixed_won = !std::equal(out.ops.ops().begin(), out.ops.ops().end(), rules.ops().begin());
    rep.repairs = detail::repair(out.ops, p, options.repair_ops);
    if (fixed_won && detail::checked_span(rules, p) >= rational{0}) {
      const int kept = detail::repair(rules, p, options.repair_ops);
      if (detail::checked_span(rules, p) < detail::checked_span(out.ops, p))
        out.ops = std::move(rules), rep.repairs = kept;
    }
  }
  const schedule_view v = out.ops.view();
  const simulation sim = simulate(v, c);
  const in_flight_profile memory = in_flight(v, p.gamma);
  const rational span = sim.largest_span();
  rational peak{0};
  bool within = true;
  for (int r = 0; r < s.P; ++r)
    within = within && memory.peak_activations(r) <= p.limit(r), peak = max(peak, memory.peak_activations(r));
  detail::require(validate(v).ok() && span <= rational{best, den} && within,
                  "ctpipe: search's schedule failed its own check (a bug)");
  rep.span = span;
  rep.makespan = sim.makespan();
  rep.peak = peak;
  rep.optimal = rep.span == rep.lower_bound;
  rep.bubble = (span - rational{s.m} * (c.f + c.i + c.w)) / span;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

/// A search problem as a structural type, for searched_v: one memory limit for every rank
/// (full activations, gamma-weighted), otherwise as search_problem. `authors_only`: the
/// authors' 8 rule sets alone (as search_options::authors_only; on the V-shape their 4),
/// about a ninth of the compile time.
struct search_spec {
  pipeline_shape shape{};
  costs cost{};
  rational gamma{1};
  rational memory_limit{1};
  bool authors_only = false;

  friend constexpr bool operator==(const search_spec&, const search_spec&) = default;
};

namespace detail {
/// The gate of a search_spec: check_search_problem()'s messages (constexpr, for
/// searched_v's compile errors).
constexpr void check_search_spec(const search_spec& p) {
  check_shape(p.shape);
  check_costs(p.cost);
  check_gamma(p.gamma);
  require(searchable(p.shape),
          "ctpipe: search takes V = 1 with loop placement (one stage per rank) or V = 2 with the V-shape placement "
          "(two chunks per rank)");
  require(p.memory_limit >= rational{1},
          "ctpipe: search's memory limit must be >= 1 full activation per rank (the least any schedule needs: one "
          "micro-batch in flight)");
}
}  // namespace detail

/// The compile-time form of search(): the best of the same greedy rule sets, without
/// local repair or the exact method, so `searched(p)` equals `search(problem of p,
/// {.authors_only = p.authors_only, .repair = false}).ops` op for op (a test holds this).
/// Loop placement: 74 constructions (8 with authors_only); V-shape: 28 rule sets of up to
/// v_rounds constructions and 8 fixed orders (4 rule sets with authors_only); each a
/// linear pass over the 3 V P m ops (O(P m)); usable in a constant expression (transient
/// storage; one evaluation holds every construction, so the compilers' limits bound their
/// sum: searched_v evaluates them one by one). Errors: check_search_problem()'s messages, search()'s authors_only
/// message, and `ctpipe: search's schedule failed its own check (a bug)`.
constexpr schedule searched(const search_spec& p) {
  detail::check_search_spec(p);
  schedule out{p.shape, 3 * static_cast<std::size_t>(p.shape.V) * static_cast<std::size_t>(p.shape.P) *
                            static_cast<std::size_t>(p.shape.m)};
  const detail::greedy_outcome g =
      detail::greedy_best(p.shape, p.cost, p.gamma, std::span<const rational>(&p.memory_limit, 1),
                          detail::rule_sets_of(p.shape, p.authors_only), out.ops().data(), out.offsets().data());
  detail::require(g.span >= 0 || !p.authors_only,
                  "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their "
                  "code stops on an assertion here); search without authors_only finds a schedule");
  detail::require(g.span >= 0, "ctpipe: search's schedule failed its own check (a bug)");
  return out;
}

namespace detail {
/// Construction k of searched(S)'s greedy_best(), evaluated in a constant expression of
/// its own (so each construction, not their sum, meets the compilers' per-evaluation
/// limits): its span in ticks, -1 when it does not fit.
template <search_spec S, int K>
inline constexpr std::int64_t searched_unit_span = [] {
  check_search_spec(S);
  const std::size_t n = 3 * static_cast<std::size_t>(S.shape.V) * static_cast<std::size_t>(S.shape.P) *
                        static_cast<std::size_t>(S.shape.m);
  buffer<op> ops(n);
  buffer<std::uint32_t> offsets(static_cast<std::size_t>(S.shape.P) + 1);
  return greedy_unit(S.shape, S.cost, S.gamma, std::span<const rational>(&S.memory_limit, 1),
                     rule_sets_of(S.shape, S.authors_only), K, ops.data(), offsets.data())
      .span;
}();

/// The construction greedy_best() keeps for S: the first of the least span, -1 when none
/// fits.
template <search_spec S, std::size_t... K>
constexpr int searched_best_unit(std::index_sequence<K...>) {
  const std::int64_t spans[] = {searched_unit_span<S, static_cast<int>(K)>...};
  int best = -1;
  for (std::size_t k = 0; k < sizeof...(K); ++k) {
    if (spans[k] >= 0 && (best < 0 || spans[k] < spans[static_cast<std::size_t>(best)])) best = static_cast<int>(k);
  }
  return best;
}

/// Whether check_search_spec(p) passes (without raising: searched_v evaluates the
/// constructions only then, so a bad spec gives its message once, not once for each).
constexpr bool search_spec_fine(const search_spec& p) {
  const costs& c = p.cost;
  return shape_error(p.shape) == nullptr && c.f > rational{0} && c.b >= rational{0} && c.i >= rational{0} &&
         c.w >= rational{0} && c.c >= rational{0} && c.move >= rational{0} &&
         (c.fb >= rational{0} || c.fb == rational{-1}) && p.gamma >= rational{0} && p.gamma <= rational{1} &&
         searchable(p.shape) && p.memory_limit >= rational{1};
}

/// searched_best_unit() over S's constructions when S is fine, else -1 (none evaluated).
template <search_spec S>
constexpr int searched_best() {
  if constexpr (search_spec_fine(S)) {
    return searched_best_unit<S>(std::make_index_sequence<static_cast<std::size_t>(
                                     unit_count(S.shape, rule_sets_of(S.shape, S.authors_only)))>{});
  } else {
    return -1;
  }
}

template <search_spec S>
constexpr auto freeze_searched() {
  check_search_spec(S);  // a bad spec stops here, with the library's message
  constexpr int best = searched_best<S>();
  frozen_schedule<3 * static_cast<std::size_t>(S.shape.V) * static_cast<std::size_t>(S.shape.P) *
                      static_cast<std::size_t>(S.shape.m),
                  static_cast<std::size_t>(S.shape.P)>
      f{};
  f.shape = S.shape;
  require(best >= 0 || !S.authors_only,
          "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their code stops "
          "on an assertion here); search without authors_only finds a schedule");
  require(best >= 0, "ctpipe: search's schedule failed its own check (a bug)");
  greedy_unit(S.shape, S.cost, S.gamma, std::span<const rational>(&S.memory_limit, 1),
              rule_sets_of(S.shape, S.authors_only), best, f.ops, f.offsets);
  return f;
}
}  // namespace detail

/// searched(S) frozen at compile time: a frozen_schedule of 3 V P m ops in static storage,
/// to be proved (static_assert on simulate(), in_flight(), validate() of its view()) and
/// dispatched like schedule_v. Each construction runs in a constant evaluation of its own
/// (detail::searched_unit_span), the first of the least span is run once more into the
/// frozen storage: the same schedule as searched(S), but the compilers' per-evaluation
/// limits (Clang's -fconstexpr-steps, GCC's -fconstexpr-ops-limit) bound one construction,
/// not the 74 (V-shape: 36) together. A bad S is a compile error with
/// check_search_problem()'s message. The largest shapes GCC and Clang take at their default
/// limits: bench/RESULTS.md (P = 8, m = 32 with every construction on both).
template <search_spec S>
inline constexpr auto searched_v = detail::freeze_searched<S>();

}  // namespace ctpipe
