// ctpipe/analysis/formulas.hpp: the closed forms the simulator is proved against.
//
// Each function returns a closed_form: whether a closed form is known for these
// parameters, its exact value, the formula as text and where it comes from. Outside the
// range where a formula is proved, `holds` is false and `condition` says why, so that
// callers (the `ctpipe` tool) show the simulated value instead of a false formula.
#pragma once

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe {

/// A closed form for one quantity. With P = 1 nothing crosses ranks, so the latency
/// t_c never matters there. The functions below expect a valid spec
/// (`spec_error(s) == nullptr`) and, for peaks, 0 <= r < P.
struct closed_form {
  bool holds = false;           ///< a formula applies to these parameters
  rational value{};             ///< its exact value (when holds)
  const char* formula = "";     ///< the formula, in the article's letters
  const char* source = "";      ///< paper or framework it comes from
  const char* condition = "";   ///< when it applies (or, when !holds, why not)
};

namespace detail {
constexpr closed_form no_formula(const char* why) { return {false, rational{0}, "", "", why}; }
constexpr const char* gpipe_source = "Huang et al., GPipe (NeurIPS 2019); docs/spec.md §4";
constexpr const char* one_f_one_b_source =
    "Narayanan et al., PipeDream-Flush / Megatron-LM (SC 2021); docs/spec.md §4";
constexpr const char* no_latency = "needs t_c = 0 (with latency the 1F1B steady state stalls)";
constexpr const char* interleaved_source =
    "Narayanan et al. (SC 2021); Megatron-LM get_pp_rank_microbatches; docs/spec.md §4";
constexpr const char* looped_source = "Lamy-Poirier, Breadth-First Pipeline Parallelism (2023); PyTorch ScheduleLoopedBFS";
constexpr const char* chunked_no_latency = "needs t_c = 0 (with latency the chunks' round trips stall)";
constexpr const char* torch_few = "needs m >= P (with m < P PyTorch's rounds never reach a steady state)";
constexpr const char* looped_few = "needs m >= P (with m < P each chunk waits for micro-batch 0 to come round)";

constexpr const char* zb_source = "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024); docs/spec.md §4";
constexpr const char* torch_zb_source = "PyTorch ScheduleInterleavedZeroBubble";

/// Why the Zero Bubble family has no timing closed form for `s` and `c`, or nullptr.
/// ZB-H1: m >= P and t_w <= t_i. ZB-H2 makespan and ZB-V: m >= 2P-1 and t_f = t_i = t_w.
constexpr const char* zb_timing_exception(const schedule_spec& s, const costs& c) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  if (c.c != rational{0} && P > 1) return "needs t_c = 0";
  switch (s.family) {
    case schedule_family::zb_h1:
      if (m < P) return "needs m >= P (below it the steady state never forms)";
      // A W longer than the I or the F it shares a steady step with stretches the step.
      if (c.w > c.i || c.w > c.f) return "needs t_w <= t_i and t_w <= t_f (a longer W stretches every steady step)";
      return nullptr;
    case schedule_family::zb_h2:
    case schedule_family::zbv:
      if (m < 2 * P - 1) return "needs m >= 2P-1 (below it the pipe never fills)";
      if (c.f != c.i || c.i != c.w) return "needs t_f = t_i = t_w (the handcrafted order assumes equal costs)";
      return nullptr;
    default:
      return "none is claimed for interleaved-zb";
  }
}

/// Why the chunked families (interleaved, looped BFS) have no timing closed form for
/// `s` and `c`, or nullptr when `(P-1)/(mV+P-1)` applies.
constexpr const char* chunked_timing_exception(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return chunked_no_latency;
  if (s.shape.V > 1 && s.shape.m < s.shape.P) {
    if (s.family == schedule_family::looped_bfs) return looped_few;
    if (s.variant == interleaved_variant::torch) return torch_few;
  }
  return nullptr;
}
}  // namespace detail

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
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  switch (s.family) {
    case schedule_family::gpipe:
      if (c.c == rational{0}) {
        return {true, (m + P - 1) * (c.f + c.b), "(m+P-1)(t_f+t_b)", detail::gpipe_source, "t_c = 0"};
      }
      return {true, (m + P - 1) * (c.f + c.b) + rational{2} * (P - 1) * c.c,
              "(m+P-1)(t_f+t_b) + 2(P-1)t_c", detail::gpipe_source, "any costs"};
    case schedule_family::one_f_one_b:
      if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula(detail::no_latency);
      return {true, (m + P - 1) * (c.f + c.b), "(m+P-1)(t_f+t_b)", detail::one_f_one_b_source,
              "t_c = 0"};
    case schedule_family::interleaved_1f1b:
    case schedule_family::looped_bfs: {
      if (const char* why = detail::chunked_timing_exception(s, c)) return detail::no_formula(why);
      return {true, (m + (P - 1) / rational{s.shape.V}) * (c.f + c.b), "(m+(P-1)/V)(t_f+t_b)",
              s.family == schedule_family::looped_bfs ? detail::looped_source : detail::interleaved_source,
              "t_c = 0"};
    }
    case schedule_family::zb_h1:
    case schedule_family::zb_h2:
    case schedule_family::zbv:
    case schedule_family::interleaved_zb: {
      if (const char* why = detail::zb_timing_exception(s, c)) return detail::no_formula(why);
      const rational busy = m * (c.f + c.i + c.w);
      if (s.family == schedule_family::zb_h1) {
        return {true, busy + (P - 1) * (c.f + c.i - c.w), "m(t_f+t_i+t_w) + (P-1)(t_f+t_i-t_w)", detail::zb_source,
                "m >= P, t_w <= t_i, t_c = 0"};
      }
      if (s.family == schedule_family::zb_h2) {
        return {true, busy + (P - 1) * c.f, "m(t_f+t_i+t_w) + (P-1)t_f", detail::zb_source,
                "m >= 2P-1, t_f = t_i = t_w, t_c = 0"};
      }
      return {true, busy + (P - 1) * c.f / rational{2}, "m(t_f+t_i+t_w) + (P-1)t_f/2", detail::zb_source,
              "m >= 2P-1, t_f = t_i = t_w, t_c = 0"};
    }
  }
  return detail::no_formula("unknown schedule");
}

/// Bubble fraction, total idle / (P*T). With t_c = 0 both GPipe and 1F1B give the
/// article's `(P-1)/(m+P-1)` (rank 0 waits `(P-1)(t_f+t_b)` for its first backward);
/// GPipe with latency: `(P-1)(t_f+t_b+2t_c) / ((m+P-1)(t_f+t_b) + 2(P-1)t_c)`.
/// Interleaved 1F1B and looped BFS (t_c = 0): `(P-1)/(mV+P-1)`, the article's: the
/// fill and drain shrink by V (same exceptions as makespan_formula).
constexpr closed_form bubble_fraction_formula(const schedule_spec& s, const costs& c) {
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  const rational busy = c.f + c.b;
  const bool has_latency = c.c != rational{0} && s.shape.P > 1;  // one rank sends nothing
  switch (s.family) {
    case schedule_family::gpipe:
      if (has_latency) {
        return {true, (P - 1) * (busy + rational{2} * c.c) / ((m + P - 1) * busy + rational{2} * (P - 1) * c.c),
                "(P-1)(t_f+t_b+2t_c)/((m+P-1)(t_f+t_b)+2(P-1)t_c)", detail::gpipe_source, "any costs"};
      }
      return {true, (P - 1) / (m + P - 1), "(P-1)/(m+P-1)", detail::gpipe_source, "t_c = 0"};
    case schedule_family::one_f_one_b:
      if (has_latency) return detail::no_formula(detail::no_latency);
      return {true, (P - 1) / (m + P - 1), "(P-1)/(m+P-1)", detail::one_f_one_b_source, "t_c = 0"};
    case schedule_family::interleaved_1f1b:
    case schedule_family::looped_bfs: {
      if (const char* why = detail::chunked_timing_exception(s, c)) return detail::no_formula(why);
      return {true, (P - 1) / (m * rational{s.shape.V} + P - 1), "(P-1)/(mV+P-1)",
              s.family == schedule_family::looped_bfs ? detail::looped_source : detail::interleaved_source,
              "t_c = 0"};
    }
    case schedule_family::zb_h1:
    case schedule_family::zb_h2:
    case schedule_family::zbv:
    case schedule_family::interleaved_zb: {
      // Every rank is busy m(t_f+t_i+t_w): bubble = 1 - busy / T.
      const closed_form T = makespan_formula(s, c);
      if (!T.holds) return T;
      const rational busy = m * (c.f + c.i + c.w);
      const char* text = s.family == schedule_family::zb_h1   ? "(P-1)(t_f+t_i-t_w) / T"
                         : s.family == schedule_family::zb_h2 ? "(P-1)/(3m+P-1)"
                                                              : "(P-1)/(6m+P-1)";
      return {true, (T.value - busy) / T.value, text, T.source, T.condition};
    }
  }
  return detail::no_formula("unknown schedule");
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
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  switch (s.family) {
    case schedule_family::zb_h2: {
      if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula("needs t_c = 0");
      if (s.shape.m < 2 * s.shape.P - 1) return detail::no_formula("needs m >= 2P-1 (below it the pipe never fills)");
      if (c.i > c.f && c.w > c.f) {
        return detail::no_formula("needs min(t_i, t_w) <= t_f (with both longer than t_f the warmup runs dry)");
      }
      const rational gap = c.f + c.i - rational{2} * c.w;
      return {true, (P - 1) * max(rational{0}, gap), "(P-1) max(0, t_f+t_i-2t_w)", detail::zb_source,
              "m >= 2P-1, min(t_i, t_w) <= t_f, t_c = 0"};
    }
    case schedule_family::zbv: {
      const closed_form T = makespan_formula(s, c);
      if (!T.holds) return T;
      return {true, rational{0}, "0", T.source, T.condition};
    }
    case schedule_family::zb_h1: {
      const closed_form T = makespan_formula(s, c);
      if (!T.holds) return T;
      return {true, (P - 1) * (c.f + c.i - c.w), "(P-1)(t_f+t_i-t_w)", T.source, T.condition};
    }
    case schedule_family::interleaved_zb:
      return detail::no_formula("none is claimed for interleaved-zb");
    default: {
      // Rank 0 starts at 0 and ends last: its span is T, its span bubble its idle.
      const closed_form T = makespan_formula(s, c);
      if (!T.holds) return T;
      const char* text = s.family == schedule_family::gpipe && c.c != rational{0} ? "(P-1)(t_f+t_b+2t_c)"
                         : s.shape.V > 1                                            ? "(P-1)(t_f+t_b)/V"
                                                                                    : "(P-1)(t_f+t_b)";
      return {true, T.value - m * (c.f + c.b), text, T.source, T.condition};
    }
  }
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
  const int P = s.shape.P;
  const int m = s.shape.m;
  switch (s.family) {
    case schedule_family::gpipe:
      return {true, rational{m}, "m", detail::gpipe_source, "any costs, any gamma"};
    case schedule_family::one_f_one_b:
      return {true, rational{P - r < m ? P - r : m}, "min(m, P-r)", detail::one_f_one_b_source,
              "any costs, any gamma"};
    case schedule_family::interleaved_1f1b: {
      const int V = s.shape.V;
      if (V == 1) {
        return {true, rational{P - r < m ? P - r : m}, "min(m, P-r)", detail::one_f_one_b_source,
                "V = 1 (plain 1F1B)"};
      }
      if (s.variant == interleaved_variant::megatron_legacy && m == P) {
        return {true, rational{m * V}, "mV", detail::interleaved_source, "megatron-legacy with m = P: all forwards first"};
      }
      // Rank r holds its warmup forwards plus the one forward before its first backward.
      const int k = s.warmup_factor;
      const int peak = k * (P - 1 - r) + (V - 1) * group_size(s) + 1;
      return {true, rational{peak < m * V ? peak : m * V},
              k == 2 ? "min(mV, 2(P-1-r) + (V-1)g + 1)" : "min(mV, (P-1-r) + (V-1)g + 1)",
              detail::interleaved_source, "any costs, any gamma"};
    }
    case schedule_family::looped_bfs:
      return {true, rational{m * s.shape.V}, "mV", detail::looped_source, "any costs, any gamma"};
    case schedule_family::zb_h1:
      if (m < P) return detail::no_formula("needs m >= P");
      // Rank r holds P-r whole activations and r whose I has run but whose W waits.
      return {true, rational{P - r} + rational{r} * gamma, "(P-r) + r*gamma", detail::zb_source, "m >= P, any costs"};
    case schedule_family::zb_h2:
      if (m < 2 * P - 1) return detail::no_formula("needs m >= 2P-1");
      if (gamma != rational{1}) return detail::no_formula("needs gamma = 1 (the claimed form)");
      return {true, rational{2 * P - 1}, "2P-1", detail::zb_source, "m >= 2P-1, gamma = 1, any costs"};
    case schedule_family::zbv:
      if (m < 2 * P - 1) return detail::no_formula("needs m >= 2P-1");
      if (gamma != rational{1}) return detail::no_formula("needs gamma = 1 (the claimed form)");
      return {true, rational{2 * P}, "2P", detail::zb_source, "m >= 2P-1, gamma = 1, any costs"};
    case schedule_family::interleaved_zb:
      return detail::no_formula("none is claimed for interleaved-zb");
  }
  return detail::no_formula("unknown schedule");
}

/// Point-to-point messages of the whole step: 2 per micro-batch per rank boundary
/// crossed (an activation forward, a gradient back; the article's table), so
/// `2m(S-1)` on the loop placement with S = P*V stages and P > 1, `2m(2P-2)` on the
/// V-shape (its turn stays on one rank), 0 for P = 1.
constexpr closed_form messages_formula(const schedule_spec& s) {
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  if (s.shape.P == 1) return {true, rational{0}, "0 (one rank)", "docs/spec.md §3", "P = 1"};
  if (s.shape.layout == placement::v_shape) {
    return {true, rational{2} * m * (rational{2} * P - 2), "2m(2P-2)", "docs/spec.md §3", "V-shape, P > 1"};
  }
  return {true, rational{2} * m * (P * rational{s.shape.V} - 1), "2m(PV-1)",
          "docs/spec.md §4 table (2V per micro-batch per boundary)", "loop placement, P > 1"};
}

}  // namespace ctpipe
