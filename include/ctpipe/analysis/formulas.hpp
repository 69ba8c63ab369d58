// ctpipe/analysis/formulas.hpp: the closed forms the simulator is proved against.
//
// Each function returns a closed_form: whether a closed form is known for these
// parameters, its exact value, the formula as text and where it comes from. Outside the
// range where a formula is proved, `holds` is false and `condition` says why, so that
// callers (the `ctpipe` tool) show the simulated value instead of a false formula. Each
// family's formulas sit beside its generator (schedules/<family>.hpp) and are reached
// through its entry in the family table (schedules/family.hpp); this page lists them all.
#pragma once

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/family.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe {

/// Makespan T in time units.
/// - GPipe: `(m+P-1)(t_f+t_b) + 2(P-1)t_c` (forwards fill the pipe in m+P-1 steps, the
///   backwards drain it in m+P-1 steps, each of the P-1 boundaries is crossed once each
///   way on the critical path).
/// - 1F1B with t_c = 0: `(m+P-1)(t_f+t_b)`, the same as GPipe (docs/spec.md §4).
/// - interleaved 1F1B and looped BFS with t_c = 0: `(m+(P-1)/V)(t_f+t_b)`: the fill and
///   drain are made of chunk ops, 1/V as long. Not for V > 1 with m < P under PyTorch's
///   rules (torch variant) or looped BFS: there the pipe never fills.
/// - ZB-H1 with m >= P and t_w <= min(t_i, t_f): `m(t_f+t_i+t_w) + (P-1)(t_f+t_i-t_w)`
///   (each rank idles `(P-1)(t_f+t_i-t_w)`: the W it moves into each bubble shortens it).
///   The range t_w <= t_i alone is not enough: with t_f < t_w <= t_i the formula is false (P = 2,
///   m = 2, (t_f, t_i, t_w) = (1, 2, 2): makespan 12, not 11), so ctpipe also needs t_w <= t_f.
/// - ZB-H2 with m >= 2P-1 and t_f = t_i = t_w: `m(t_f+t_i+t_w) + (P-1)t_f` (no rank idles
///   inside its span; the last rank starts `(P-1)t_f` late).
/// - ZB-V with m >= 2P-1 and t_f = t_i = t_w: `m(t_f+t_i+t_w) + (P-1)t_f/2` (the same with
///   chunk forwards of half the length).
/// - interleaved ZB: none claimed.
/// - combined 1F1B with t_c = 0, its pairs fused at t_fb = t_f + t_b or split:
///   interleaved 1F1B's `(m+(P-1)/V)(t_f+t_b)` (ctpipe's proof; with an overlap gain none
///   is claimed).
constexpr closed_form makespan_formula(const schedule_spec& s, const costs& c) {
  return family_of(s.family).makespan(s, c);
}

/// Bubble fraction, total idle / (P*T). With t_c = 0 both GPipe and 1F1B give the
/// article's `(P-1)/(m+P-1)` (rank 0 waits `(P-1)(t_f+t_b)` for its first backward);
/// GPipe with latency: `(P-1)(t_f+t_b+2t_c) / ((m+P-1)(t_f+t_b) + 2(P-1)t_c)`.
/// Interleaved 1F1B and looped BFS (t_c = 0): `(P-1)/(mV+P-1)`, the article's: the
/// fill and drain shrink by V (same exceptions as makespan_formula); combined 1F1B the
/// same, where its makespan_formula holds.
constexpr closed_form bubble_fraction_formula(const schedule_spec& s, const costs& c) {
  return family_of(s.family).bubble_fraction(s, c);
}

/// Span bubble: the largest (span - busy) over ranks (the Zero Bubble papers' measure).
/// - GPipe, 1F1B, interleaved 1F1B, looped BFS, combined 1F1B: rank 0 runs from 0 to T, so its idle:
///   `(P-1)(t_f+t_b)` (1/V of it with V chunks; GPipe with latency `(P-1)(t_f+t_b+2t_c)`),
///   under the same conditions as makespan_formula.
/// - ZB-H1, m >= P, t_w <= min(t_i, t_f): `(P-1)(t_f+t_i-t_w)`.
/// - ZB-H2, m >= 2P-1, min(t_i, t_w) <= t_f: `(P-1) max(0, t_f+t_i-2t_w)` (t_c = 0). It
///   does not hold for every cost set: with t_i and t_w both longer than t_f it is false (P = 2,
///   m = 3, (1, 2, 2): span bubble 1, not 0).
/// - ZB-V, m >= 2P-1, t_f = t_i = t_w: 0.
constexpr closed_form span_bubble_formula(const schedule_spec& s, const costs& c) {
  return family_of(s.family).span_bubble(s, c);
}

/// Peak in-flight activations of rank r, in chunks (docs/spec.md §3-§4): GPipe `m` on every
/// rank; 1F1B `min(m, P-r)` (rank r does P-1-r warmup forwards, then one more forward
/// before each backward); interleaved 1F1B `min(mV, 2(P-1-r) + (V-1)g + 1)` (its warmup
/// plus one; `(P-1-r)` instead of `2(P-1-r)` with warmup factor 1; `mV` for
/// megatron-legacy with m = P; P = 8, V = 2, g = 8: rank 0 holds 23 chunks = 23/2 full
/// activations, the article's example); combined 1F1B `min(mV, 2(P-1-r) + (V-1)g + 2)`,
/// one more (Megatron's extra warmup forward); looped BFS `mV`; ZB-H1 (m >= P) `(P-r) + r*gamma`
/// (the split backward frees `1-gamma` at I: the W that waits keeps `gamma`); ZB-H2
/// (m >= 2P-1, gamma = 1) `2P-1`; ZB-V (m >= 2P-1, gamma = 1) `2P` chunks. Both hold for every gamma (they run full
/// backwards B, which free a whole activation at once); gamma is a parameter for the split-backward families.
constexpr closed_form peak_in_flight_formula(const schedule_spec& s, rational gamma, int r) {
  return family_of(s.family).peak_in_flight(s, gamma, r);
}

/// Point-to-point messages of the whole step: 2 per micro-batch per rank boundary
/// crossed (an activation forward, a gradient back; the article's table), so
/// `2m(S-1)` on the loop placement with S = P*V stages and P > 1, `2m(2P-2)` on the
/// V-shape (its turn stays on one rank), `2m(P-1)` on the bidirectional placement (each
/// micro-batch runs one copy's P stages), 0 for P = 1.
constexpr closed_form messages_formula(const schedule_spec& s) {
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  if (s.shape.P == 1) return {true, rational{0}, "0 (one rank)", "docs/spec.md §3", "P = 1"};
  if (s.shape.layout == placement::v_shape) {
    return {true, rational{2} * m * (rational{2} * P - 2), "2m(2P-2)", "docs/spec.md §3", "V-shape, P > 1"};
  }
  if (s.shape.layout == placement::bidirectional) {  // each micro-batch crosses its pipeline's P-1 boundaries
    return {true, rational{2} * m * (P - 1), "2m(P-1)", "docs/spec.md §3", "bidirectional (DualPipe), P > 1"};
  }
  return {true, rational{2} * m * (P * rational{s.shape.V} - 1), "2m(PV-1)",
          "docs/spec.md §4 table (2V per micro-batch per boundary)", "loop placement, P > 1"};
}

namespace detail {
inline constexpr const char* scaled_source =
    "docs/spec.md §4.2 (flow shop of identical jobs; proved in tests/static/proofs_scaled.cpp)";
inline constexpr const char* scaled_none =
    "unequal stage or micro-batch costs: none derived for this schedule (simulate() gives it)";

/// Why GPipe's or 1F1B's makespan under `scale` has no closed form, or nullptr when it
/// has one: it needs equal micro-batches, t_c = 0 (or P = 1), and for 1F1B the last
/// stage's factor the largest; the other families have none.
constexpr const char* scaled_form_missing(const schedule_spec& s, const costs& c, const cost_scale& scale) {
  if (s.family != schedule_family::gpipe && s.family != schedule_family::one_f_one_b) return scaled_none;
  for (const rational x : scale.microbatch) {
    if (x != rational{1})
      return "unequal micro-batches: none derived (GPipe's and 1F1B's need equal ones; simulate() gives it)";
  }
  if (c.c != rational{0} && s.shape.P > 1) return "unequal stages with t_c > 0: none derived (simulate() gives it)";
  if (s.family == schedule_family::gpipe) return nullptr;
  const rational last = scale.of_stage(s.shape.P - 1);
  for (int st = 0; st < s.shape.P; ++st) {
    if (scale.of_stage(st) > last)
      return "1F1B under unequal stages: only with the last stage's factor the largest (simulate() gives it)";
  }
  return nullptr;
}

/// Σa and Σa + (m-1) max a over the stage factors a_s of `scale` on `s`'s P stages.
struct scaled_sums {
  rational sum, steps;
};
constexpr scaled_sums scaled_steps(const schedule_spec& s, const cost_scale& scale) {
  rational sum{0}, most{0};
  for (int st = 0; st < s.shape.P; ++st) {
    sum = sum + scale.of_stage(st);
    most = max(most, scale.of_stage(st));
  }
  return {sum, sum + rational{s.shape.m - 1} * most};
}
}  // namespace detail

/// Makespan under unequal stages (cost_scale, docs/spec.md §4.2); the plain
/// makespan_formula() for a uniform scale. With stage factors a_s, equal micro-batches
/// and t_c = 0: GPipe `(Σa + (m-1) max a)(t_f+t_b)` (a flow shop of m identical jobs,
/// forwards then backwards), and 1F1B the same when the last stage's factor is the
/// largest (the last stage then never idles between its first forward and its last
/// backward, which is also the lower bound). Otherwise none: 1F1B with layers 8, 8, 7, 7
/// takes 252 layer-times, not GPipe's 258.
constexpr closed_form makespan_formula(const schedule_spec& s, const costs& c, const cost_scale& scale) {
  if (scale.uniform()) return makespan_formula(s, c);
  if (const char* why = detail::scaled_form_missing(s, c, scale)) return detail::no_formula(why);
  return {
      true, detail::scaled_steps(s, scale).steps * (c.f + c.b), "(Σa + (m-1) max a)(t_f+t_b)", detail::scaled_source,
      s.family == schedule_family::gpipe ? "stage factors a, micro-batches equal, t_c = 0"
                                         : "stage factors a with the last the largest, micro-batches equal, t_c = 0"};
}

/// Bubble fraction under unequal stages, where makespan_formula(s, c, scale) holds:
/// `1 - mΣa / (P(Σa + (m-1) max a))` (busy time m a_s (t_f+t_b) on stage s).
constexpr closed_form bubble_fraction_formula(const schedule_spec& s, const costs& c, const cost_scale& scale) {
  if (scale.uniform()) return bubble_fraction_formula(s, c);
  const closed_form T = makespan_formula(s, c, scale);
  if (!T.holds) return T;
  const detail::scaled_sums a = detail::scaled_steps(s, scale);
  return {true, rational{1} - rational{s.shape.m} * a.sum / (rational{s.shape.P} * a.steps),
          "1 - mΣa/(P(Σa + (m-1) max a))", T.source, T.condition};
}

/// Span bubble under unequal stages: none derived (the plain span_bubble_formula() for a
/// uniform scale).
constexpr closed_form span_bubble_formula(const schedule_spec& s, const costs& c, const cost_scale& scale) {
  if (scale.uniform()) return span_bubble_formula(s, c);
  return detail::no_formula(detail::scaled_none);
}

}  // namespace ctpipe
