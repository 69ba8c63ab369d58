// ctpipe/plan/greedy_best.hpp: the greedy part of search() and searched() (docs/search.md):
// the problem in integer units, each construction greedy_best() runs (a rule set's
// greedy, on the V-shape with its rounds, or a fixed order: groups, capped 1F1B, list
// schedules, the library's ZB-V, V-Half, V-Min), each checked where it must be, and the
// one with the least span. The same code at run time and in a constant expression.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint32_t
#include <span>

#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/greedy.hpp"
#include "ctpipe/plan/rule_sets.hpp"
#include "ctpipe/plan/search_v.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe::detail {

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

/// What one construction of greedy_best() gave: its span in ticks (-1 when it does not
/// fit or is not a schedule) and whether it counts as tried (V-Half and V-Min are skipped
/// for P > 2m, as is a library family whose spec fails).
struct unit_outcome {
  std::int64_t span = -1;
  bool tried = true;
};

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

/// Rule set k's construction on the V-shape for greedy_unit_v(): up to v_rounds
/// constructions of O(P m), re-run with the last round's per-rank bubbles as "approved"
/// while the span drops, the last round kept written into `ops` (6m a rank); checked when
/// the per-rank limits differ. `u`: construction_units(); `chunk`: the costs of a chunk's
/// op (t/2).
constexpr unit_outcome greedy_rounds_v(const pipeline_shape& s, const costs& c, rational gamma,
                                       std::span<const rational> limits, const integer_units& u, const costs& chunk,
                                       int k, op* ops, const std::uint32_t* offsets) {
  const std::size_t P = static_cast<std::size_t>(s.P), per = 6 * static_cast<std::size_t>(s.m);
  unit_outcome out;
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

/// The V-shape's fixed order in groups, written into `ops` (6m a rank): every rank in
/// groups of g = floor(the least limit) micro-batches, their chunk-0 Fs, chunk-1 Fs, then
/// I and W of chunk 1, then of chunk 0 (a level that peaks at g).
constexpr void write_groups_v(const pipeline_shape& s, std::span<const rational> limits, op* ops) {
  const std::size_t P = static_cast<std::size_t>(s.P), per = 6 * static_cast<std::size_t>(s.m);
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
  if (k < rule_sets) return greedy_rounds_v(s, c, gamma, limits, u, chunk, k, ops, offsets);
  unit_outcome out;
  const auto consider = [&] { out.span = checked_ticks(s, c, gamma, limits, u.den, ops, offsets); };
  const int fixed = k - rule_sets;
  if (fixed == 0) {
    write_groups_v(s, limits, ops);
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

}  // namespace ctpipe::detail
