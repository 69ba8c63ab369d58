// ctpipe/plan/rule_sets.hpp: the rule sets search() tries (docs/search.md): the Zero
// Bubble authors' (their three switches on the loop placement, two on the V-shape) and
// ctpipe's variants of them (warmup offsets, W reserves), in the order tried, and how
// many constructions greedy_best() runs with them.
#pragma once

#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/greedy.hpp"
#include "ctpipe/plan/search_v.hpp"

namespace ctpipe::detail {

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

/// The number of constructions greedy_best() runs with `rule_sets` rule sets: those, then
/// (unless only the authors' are asked for) the fixed orders: 2 on the loop placement
/// (groups, capped 1F1B), 8 on the V-shape (groups, 4 list schedules, ZB-V, V-Half, V-Min).
constexpr int unit_count(const pipeline_shape& s, int rule_sets) {
  if (s.layout == placement::v_shape) return rule_sets + (rule_sets > v_authors_rule_set_count ? 8 : 0);
  return rule_sets + (rule_sets > authors_rule_set_count ? 2 : 0);
}

/// The rule sets greedy_best() runs for shape s: every one, or the authors' alone.
constexpr int rule_sets_of(const pipeline_shape& s, bool authors_only) {
  if (s.layout == placement::v_shape) return authors_only ? v_authors_rule_set_count : v_rule_set_count;
  return authors_only ? authors_rule_set_count : rule_set_count;
}

}  // namespace ctpipe::detail
