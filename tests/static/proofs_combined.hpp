// Combined 1F1B's proof at one point, shared by tests/static/proofs_combined.cpp (inside
// static_assert) and tests/runtime/combined_test.cpp (inside Catch2 test cases), and its
// grid as variable templates: one constant evaluation per point.
#pragma once

#include <cstdint>  // std::int64_t
#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace ctpipe::tests {

/// Whether Megatron-LM accepts combined 1F1B at (P, V, m, g): one chunk without
/// pipelining (P = 1 runs `forward_backward_no_pipelining`, the group plays no part); else
/// virtual pipelining (V >= 2), `P <= g <= m` and `m % g == 0` or `m % g >= P`. Written
/// apart from the family's rule, to check it.
constexpr bool megatron_accepts_combined(int P, int V, int m, int g) {
  if (P == 1) return V == 1;
  return V >= 2 && P <= g && g <= m && (m % g == 0 || m % g >= P);
}

/// The first op of rank r's list that is not a plain F: the rank's warmup forwards.
constexpr int leading_forwards(schedule_view v, int r) {
  int n = 0;
  for (op o : v.rank(r)) {
    if (o.kind() != op_kind::F) break;
    ++n;
  }
  return n;
}

/// Combined 1F1B's timing at cost set `c` under `spec`'s pair reading: the makespan,
/// bubble fraction and span bubble equal their closed forms, and every rank idles
/// `(P-1)(t_f+t_b)/V`.
constexpr bool combined_timing(const schedule_spec& spec, schedule_view v, const costs& c) {
  const simulation sim = simulate(v, c);
  const closed_form T = makespan_formula(spec, c), bubble = bubble_fraction_formula(spec, c);
  const closed_form span = span_bubble_formula(spec, c);
  if (!T.holds || !bubble.holds || !span.holds) return false;
  if (sim.makespan() != T.value || sim.bubble_fraction() != bubble.value || sim.span_bubble() != span.value) {
    return false;
  }
  const rational idle = rational{spec.shape.P - 1} * (c.f + c.b) / rational{spec.shape.V};
  for (int r = 0; r < spec.shape.P; ++r) {
    if (sim.idle(r) != idle) return false;
  }
  return true;
}

/// Proof at one point (P, V, m, g) of combined 1F1B:
/// - ctpipe's rule accepts it exactly when Megatron does (megatron_accepts_combined);
/// - every rank runs 2mV op words; rank r's warmup is `min(mV, 2(P-1-r) + (V-1)g + 1)`
///   leading forwards (warmup_forwards()), then `mV - warmup` overlapped pairs, each an
///   overlap_f_b word and its B, then plain Bs;
/// - `with_validation`: the order is valid (every dependency of docs/spec.md §2 met);
/// - both pair readings (fused, split) run to completion with the makespan
///   `(m+(P-1)/V)(t_f+t_b)`, bubble `(P-1)/(mV+P-1)` and span bubble `(P-1)(t_f+t_b)/V`
///   at three cost sets (the article's; t_f = 2, t_b = 3; t_f = t_b = 1), fused at
///   t_fb = t_f + t_b; with an overlap gain (t_fb = t_f + t_b - 1/2) no closed form
///   is claimed for the fused pairs, nor with t_c = 1/2;
/// - every rank's peak in-flight chunks equal `min(mV, 2(P-1-r) + (V-1)g + 2)` under both
///   readings;
/// - the message count equals `2m(PV-1)`.
constexpr bool prove_combined_point(int P, int V, int m, int g, bool with_validation) {
  schedule_spec spec{schedule_family::combined_1f1b, {P, m, V}};
  spec.group = g;
  if ((spec_error(spec) == nullptr) != megatron_accepts_combined(P, V, m, g)) return false;
  if (spec_error(spec) != nullptr) return true;
  const schedule fused = generate(spec);
  schedule_spec split_spec = spec;
  split_spec.pairs = pair_model::split;
  const schedule split = generate(split_spec);
  if (with_validation && (!validate(fused.view()).ok() || !validate(split.view()).ok())) return false;
  for (int r = 0; r < P; ++r) {
    const auto ops = fused.view().rank(r);
    const int w = warmup_forwards(spec, r);
    const int expected = 2 * (P - 1 - r) + (V - 1) * (P == 1 ? 0 : g) + 1;
    if (w != (expected < m * V ? expected : m * V) || leading_forwards(fused.view(), r) != w) return false;
    if (ops.size() != static_cast<std::size_t>(2 * m * V) || split.view().rank(r).size() != ops.size()) return false;
    for (int k = w; k < m * V; ++k) {
      const std::size_t word = static_cast<std::size_t>(w + 2 * (k - w));
      if (ops[word].kind() != op_kind::overlap_f_b || ops[word + 1].kind() != op_kind::B) return false;
    }
  }
  const costs cost_sets[] = {costs{}, costs{rational{2}, rational{3}, rational{1}, rational{2}, rational{0}},
                             costs{rational{1}, rational{1}, rational{1, 2}, rational{1, 2}, rational{0}}};
  for (const costs& c : cost_sets) {
    if (!combined_timing(spec, fused.view(), c) || !combined_timing(split_spec, split.view(), c)) return false;
  }
  costs gain{};
  gain.fb = rational{5, 2};
  costs latency{};
  latency.c = rational{1, 2};
  if (makespan_formula(spec, gain).holds || !makespan_formula(split_spec, gain).holds) return false;
  if (P > 1 && makespan_formula(spec, latency).holds) return false;
  const in_flight_profile mem = in_flight(fused.view());
  const in_flight_profile split_mem = in_flight(split.view());
  for (int r = 0; r < P; ++r) {
    const closed_form peak = peak_in_flight_formula(spec, rational{1}, r);
    const int expected = 2 * (P - 1 - r) + (V - 1) * (P == 1 ? 0 : g) + 2;
    if (!peak.holds || peak.value != rational{expected < m * V ? expected : m * V}) return false;
    if (mem.peak(r) != peak.value || split_mem.peak(r) != peak.value) return false;
  }
  const closed_form msgs = messages_formula(spec);
  return msgs.holds && rational{static_cast<std::int64_t>(messages(fused.view()))} == msgs.value;
}

/// One compile-time point (a rejected point is checked to be rejected).
template <int P, int V, int M, int G>
inline constexpr bool combined_point = prove_combined_point(P, V, M, G, false);

template <int P, int V, int M, int... G>
constexpr bool combined_every_group(std::integer_sequence<int, G...>) {
  return (combined_point<P, V, M, G + 1> && ...);
}

template <int P, int V, int... M>
constexpr bool combined_every_m(std::integer_sequence<int, M...>) {
  return (combined_every_group<P, V, M + 1>(std::make_integer_sequence<int, M + 1>{}) && ...);
}

template <int P, int... V>
constexpr bool combined_every_v(std::integer_sequence<int, V...>) {
  return (combined_every_m<P, V + 1>(std::make_integer_sequence<int, 3 * P>{}) && ...);
}

/// Every V in [1, 3], m in [1, 3P] and g in [1, m] for one P.
template <int P>
constexpr bool combined_grid() {
  return combined_every_v<P>(std::make_integer_sequence<int, 3>{});
}

}  // namespace ctpipe::tests
