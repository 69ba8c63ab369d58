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
constexpr closed_form makespan_formula(const schedule_spec& s, const costs& c) {
  return family_of(s.family).makespan(s, c);
}

/// Bubble fraction, total idle / (P*T). With t_c = 0 both GPipe and 1F1B give the
/// article's `(P-1)/(m+P-1)` (rank 0 waits `(P-1)(t_f+t_b)` for its first backward);
/// GPipe with latency: `(P-1)(t_f+t_b+2t_c) / ((m+P-1)(t_f+t_b) + 2(P-1)t_c)`.
/// Interleaved 1F1B and looped BFS (t_c = 0): `(P-1)/(mV+P-1)`, the article's: the
/// fill and drain shrink by V (same exceptions as makespan_formula).
constexpr closed_form bubble_fraction_formula(const schedule_spec& s, const costs& c) {
  return family_of(s.family).bubble_fraction(s, c);
}

/// Span bubble: the largest (span - busy) over ranks (the Zero Bubble papers' measure).
/// - GPipe, 1F1B, interleaved 1F1B, looped BFS: rank 0 runs from 0 to T, so its idle:
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
/// activations, the article's example); looped BFS `mV`; ZB-H1 (m >= P) `(P-r) + r*gamma`
/// (the split backward frees `1-gamma` at I: the W that waits keeps `gamma`); ZB-H2
/// (m >= 2P-1, gamma = 1) `2P-1`; ZB-V (m >= 2P-1, gamma = 1) `2P` chunks. Both hold for every gamma (they run full backwards B, which
/// free a whole activation at once); gamma is a parameter for the split-backward families.
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

}  // namespace ctpipe
