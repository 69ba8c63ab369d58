// The grid proofs shared by tests/static (inside static_assert) and tests/runtime
// (inside Catch2 test cases): one function each, so a fact proved at compile time is
// checked at run time through the same code.
#pragma once

#include <ctpipe/ctpipe.hpp>

#include <span>  // cost sets

// The P = 1 .. 8 x m in [1, 32] grid as static_asserts, P = 5 .. 8 split in halves of
// the m range where one evaluation would exceed Clang's step budget:
// CTPIPE_EACH_P(proof, args...) asserts proof(args..., P_lo, P_hi, m_lo, m_hi).
#define CTPIPE_EACH_P(PROOF, ...)                                   \
  static_assert(PROOF(__VA_ARGS__, 1, 1, 1, 32), #PROOF " P = 1");  \
  static_assert(PROOF(__VA_ARGS__, 2, 2, 1, 32), #PROOF " P = 2");  \
  static_assert(PROOF(__VA_ARGS__, 3, 3, 1, 32), #PROOF " P = 3");  \
  static_assert(PROOF(__VA_ARGS__, 4, 4, 1, 32), #PROOF " P = 4");  \
  static_assert(PROOF(__VA_ARGS__, 5, 5, 1, 16), #PROOF " P = 5");  \
  static_assert(PROOF(__VA_ARGS__, 5, 5, 17, 32), #PROOF " P = 5"); \
  static_assert(PROOF(__VA_ARGS__, 6, 6, 1, 16), #PROOF " P = 6");  \
  static_assert(PROOF(__VA_ARGS__, 6, 6, 17, 32), #PROOF " P = 6"); \
  static_assert(PROOF(__VA_ARGS__, 7, 7, 1, 16), #PROOF " P = 7");  \
  static_assert(PROOF(__VA_ARGS__, 7, 7, 17, 32), #PROOF " P = 7"); \
  static_assert(PROOF(__VA_ARGS__, 8, 8, 1, 16), #PROOF " P = 8");  \
  static_assert(PROOF(__VA_ARGS__, 8, 8, 17, 32), #PROOF " P = 8")

namespace ctpipe::tests {

/// Timing proof: for every P in [P_lo, P_hi] and m in [m_lo, m_hi], schedule `fam` with
/// costs `c` has the simulated makespan, bubble fraction and idle per rank of its closed
/// forms. A formula that does not apply to the parameters fails the proof.
constexpr bool prove_timing(schedule_family fam, costs c, int P_lo, int P_hi, int m_lo, int m_hi) {
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int m = m_lo; m <= m_hi; ++m) {
      const schedule_spec spec{fam, {P, m}};
      const schedule s = generate(spec);
      const simulation sim = simulate(s.view(), c);
      const closed_form T = makespan_formula(spec, c);
      const closed_form bubble = bubble_fraction_formula(spec, c);
      if (!T.holds || !bubble.holds) return false;
      if (sim.makespan() != T.value || sim.bubble_fraction() != bubble.value) return false;
      // Uniform stages: every rank idles T - m(t_f + t_b).
      const rational idle = T.value - rational{m} * (c.f + c.b);
      for (int r = 0; r < P; ++r) {
        if (sim.idle(r) != idle) return false;
      }
    }
  }
  return true;
}

/// Whether certificate `cert` has every rank busy m(t_f + t_b) for every m >= m0
/// (uniform stages, costs `c`).
constexpr bool busy_m_fb(const periodic_certificate& cert, const costs& c) {
  for (int r = 0; r < cert.P; ++r) {
    if (cert.busy_base[static_cast<std::size_t>(r)] != rational{0} ||
        cert.busy_per_m[static_cast<std::size_t>(r)] != c.f + c.b)
      return false;
  }
  return true;
}

/// Timing proof for every m (phased programs, docs/proofs.md "Phased programs"): for
/// every P in [P_lo, P_hi] and V in [V_lo, V_hi], GPipe (V = 1) or looped BFS under costs
/// `c` has a periodic certificate by which its makespan, bubble fraction and peak closed
/// forms hold for every m >= 1 (closed_forms_hold_for_every_m(): directly below m0), and
/// every rank busy m(t_f + t_b) for every m >= m0 (each rank idles T - m(t_f + t_b)).
constexpr bool prove_every_m_phased(schedule_family fam, costs c, int P_lo, int P_hi, int V_lo = 1, int V_hi = 1) {
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int V = V_lo; V <= V_hi; ++V) {
      const schedule_spec s{fam, {P, 1, V, placement::loop}};
      const periodic_certificate cert = periodic_certificate_of(s, c);
      if (!cert.proved) return false;
      const every_m_result holds = closed_forms_hold_for_every_m(cert, s, c);
      if (!holds) return false;
      // GPipe's forms hold from m = 1; looped BFS's from m = P when V > 1 (formulas.hpp).
      const int from = fam == schedule_family::looped_bfs && V > 1 ? P : 1;
      if (holds.makespan.from != from || holds.bubble_fraction.from != from || holds.peaks.from != 1) return false;
      if (!busy_m_fb(cert, c)) return false;
    }
  }
  return true;
}

/// prove_every_m_phased() at one P and V in two parts, each its own constant evaluation
/// where the certificate and the m below its m0 pass a compiler's limit together: the
/// certificate's part, its m0 at most `m0_most`, its forms from m0 on and every rank busy
/// m(t_f + t_b) (prove_phased_from_m0()); and the m in [1, m0_most) directly
/// (prove_phased_below()), each form correct wherever it holds and holding from where
/// the whole proof says (m = P for looped BFS at V > 1, else 1; peaks from 1).
constexpr bool prove_phased_from_m0(schedule_family fam, costs c, int P, int V, int m0_most) {
  const schedule_spec s{fam, {P, 1, V, placement::loop}};
  const periodic_certificate cert = periodic_certificate_of(s, c);
  return cert.proved && cert.m0 <= m0_most && closed_forms_hold_from_m0(cert, s, c) && busy_m_fb(cert, c);
}
constexpr bool prove_phased_below(schedule_family fam, costs c, int P, int V, int m0_most) {
  const schedule_spec s{fam, {P, 1, V, placement::loop}};
  const every_m_result below = closed_forms_hold_directly(s, c, 1, m0_most);
  const bool from_P = fam == schedule_family::looped_bfs && V > 1;
  const int from = !from_P ? 1 : P < m0_most ? P : m0_most;  // m0_most: held nowhere below
  return below.makespan.correct && below.bubble_fraction.correct && below.peaks.correct &&
         below.makespan.from == from && below.bubble_fraction.from == from && below.peaks.from == 1;
}

/// Structure proof (cost-free facts): for every P in [P_lo, P_hi] and m in [m_lo, m_hi],
/// schedule `fam` is valid, each rank's peak in-flight count equals its closed form for
/// gamma = 1 and gamma = 3/7, and the message count equals its closed form.
constexpr bool prove_structure(schedule_family fam, int P_lo, int P_hi, int m_lo, int m_hi) {
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int m = m_lo; m <= m_hi; ++m) {
      const schedule_spec spec{fam, {P, m}};
      const schedule s = generate(spec);
      if (!validate(s.view()).ok()) return false;
      const in_flight_profile plain = in_flight(s.view());
      const in_flight_profile finer = in_flight(s.view(), rational{3, 7});
      for (int r = 0; r < P; ++r) {
        const closed_form peak = peak_in_flight_formula(spec, rational{1}, r);
        const closed_form peak_finer = peak_in_flight_formula(spec, rational{3, 7}, r);
        if (!peak.holds || plain.peak(r) != peak.value) return false;
        if (!peak_finer.holds || finer.peak(r) != peak_finer.value) return false;
      }
      const closed_form msgs = messages_formula(spec);
      if (!msgs.holds || rational{static_cast<std::int64_t>(messages(s.view()))} != msgs.value) return false;
    }
  }
  return true;
}

}  // namespace ctpipe::tests

namespace ctpipe::tests {

/// Proof at one point of the interleaved grids. A configuration the variant rejects is
/// not a point of the grid (true). Otherwise: the schedule runs to completion (simulate
/// raises on a deadlock) and, `with_validation`, is valid; with the article's
/// costs the simulated bubble fraction and makespan equal their closed forms wherever
/// those apply (and they apply everywhere but PyTorch's rule with m < P, where the proof
/// checks that the simulated bubble is larger than the formula's); every rank's peak
/// in-flight count equals its closed form; the message count equals `2m(PV-1)`.
constexpr bool prove_interleaved_point(const schedule_spec& spec, bool with_validation) {
  if (spec_error(spec) != nullptr) return true;
  const costs c{};
  const schedule s = generate(spec);
  if (with_validation && !validate(s.view()).ok()) return false;
  const simulation sim = simulate(s.view(), c);
  const closed_form bubble = bubble_fraction_formula(spec, c);
  const closed_form T = makespan_formula(spec, c);
  const rational article_bubble = rational{spec.shape.P - 1} / rational{spec.shape.m * spec.shape.V + spec.shape.P - 1};
  if (bubble.holds != T.holds) return false;
  if (bubble.holds) {
    if (sim.bubble_fraction() != bubble.value || sim.makespan() != T.value) return false;
  } else if (!(spec.variant == interleaved_variant::torch && spec.shape.m < spec.shape.P) ||
             !(sim.bubble_fraction() > article_bubble)) {
    return false;
  }
  const in_flight_profile mem = in_flight(s.view());
  for (int r = 0; r < spec.shape.P; ++r) {
    const closed_form peak = peak_in_flight_formula(spec, rational{1}, r);
    if (!peak.holds || mem.peak(r) != peak.value) return false;
  }
  const closed_form msgs = messages_formula(spec);
  return msgs.holds && rational{static_cast<std::int64_t>(messages(s.view()))} == msgs.value;
}

/// Interleaved 1F1B with V = 1 is 1F1B, op for op, for every variant.
constexpr bool interleaved_v1_is_1f1b(int P, int m) {
  const schedule plain = generate({schedule_family::one_f_one_b, {P, m}});
  const op* expected = plain.view().ops.data();
  for (interleaved_variant variant : {interleaved_variant::megatron, interleaved_variant::megatron_legacy}) {
    const schedule chunked = generate({schedule_family::interleaved_1f1b, {P, m, 1}, variant});
    const op* got = chunked.view().ops.data();
    for (std::size_t k = 0; k < plain.size(); ++k) {
      if (got[k] != expected[k]) return false;
    }
  }
  return true;
}

/// The torch rule at V = 1 is PyTorch's ScheduleInterleaved1F1B with one stage per rank:
/// accepted exactly when the rounds, max(1, m / P), divide m; then rank r runs
/// w = min(2(P-1-r), m) forwards, pairs F(w+k) B(k), then the remaining backwards
/// (PyTorch 2.13's order at P = 2, m = 3 and P = 4, m = 6 is in tests/runtime/interleaved_test.cpp).
constexpr bool interleaved_torch_v1_is_pytorchs(int P, int m) {
  const schedule_spec spec{schedule_family::interleaved_1f1b, {P, m, 1}, interleaved_variant::torch};
  const int rounds = m / P > 1 ? m / P : 1;
  if ((spec_error(spec) == nullptr) != (m % rounds == 0)) return false;
  if (m % rounds != 0) return true;
  const schedule s = generate(spec);
  for (int r = 0; r < P; ++r) {
    const int w = 2 * (P - 1 - r) < m ? 2 * (P - 1 - r) : m;
    const auto ops = s.view().rank(r);
    std::size_t k = 0;
    auto next = [&](op_kind kind, int j) { return k < ops.size() && ops[k++] == op{kind, r, j}; };
    for (int j = 0; j < w; ++j) {
      if (!next(op_kind::F, j)) return false;
    }
    for (int j = 0; w + j < m; ++j) {
      if (!next(op_kind::F, w + j) || !next(op_kind::B, j)) return false;
    }
    for (int j = m - w; j < m; ++j) {
      if (!next(op_kind::B, j)) return false;
    }
    if (k != ops.size()) return false;
  }
  return true;
}

}  // namespace ctpipe::tests

namespace ctpipe::tests {

/// The Zero Bubble cost sets of issue 6, as (t_f, t_i, t_w); t_b = t_i + t_w. (The
/// run-time twin adds sets outside the formulas' ranges: zero_bubble_test.cpp.)
inline constexpr costs zero_bubble_cost_sets[] = {
    {rational{1}, rational{2}, rational{1}, rational{1}},
    {rational{2}, rational{3}, rational{2}, rational{1}},
    {rational{1}, rational{3}, rational{2}, rational{1}},
};

/// Proof at one point of the Zero Bubble grids (family zb_h1, zb_h2, zbv or
/// interleaved_zb; V and placement its own). The schedule is complete and runs (and,
/// `with_validation`, is valid). For each cost set of `cost_sets` the makespan, bubble
/// fraction and span bubble closed forms apply exactly where formulas.hpp says they do
/// (ZB-H1: m >= P, t_w <= min(t_i, t_f); ZB-H2 span bubble: m >= 2P-1, min(t_i, t_w) <=
/// t_f; ZB-H2 makespan and ZB-V: m >= 2P-1 with equal costs; interleaved ZB: nowhere) and
/// there equal the simulation, with ZB-H1's idle `(P-1)(t_f+t_i-t_w)` on every rank. The peaks equal their closed forms
/// for gamma = 1 and 3/7 where those apply, and the messages theirs.
constexpr bool prove_zero_bubble_point(schedule_family family, int P, int m, bool with_validation,
                                       std::span<const costs> cost_sets = zero_bubble_cost_sets) {
  const int V = family == schedule_family::zbv || family == schedule_family::interleaved_zb ? 2 : 1;
  const schedule_spec spec{family, {P, m, V, natural_placement(family)}};
  if (spec_error(spec) != nullptr) return true;  // interleaved-zb's m % rounds rule
  const schedule s = generate(spec);
  if (with_validation && !validate(s.view()).ok()) return false;
  const bool h1 = family == schedule_family::zb_h1;
  const bool filled = m >= 2 * P - 1;
  for (const costs& c : cost_sets) {
    const simulation sim = simulate(s.view(), c);
    const closed_form T = makespan_formula(spec, c);
    const closed_form bubble = bubble_fraction_formula(spec, c);
    const closed_form span = span_bubble_formula(spec, c);
    const bool equal = c.f == c.i && c.i == c.w;
    const bool h1_costs = c.w <= c.i && c.w <= c.f;
    const bool h2_span_costs = !(c.i > c.f && c.w > c.f);
    const bool timing_expected = h1 ? m >= P && h1_costs : family != schedule_family::interleaved_zb && filled && equal;
    const bool span_expected = family == schedule_family::zb_h2 ? filled && h2_span_costs : timing_expected;
    if (T.holds != timing_expected || bubble.holds != timing_expected || span.holds != span_expected) return false;
    if (T.holds && (sim.makespan() != T.value || sim.bubble_fraction() != bubble.value)) return false;
    if (span.holds && sim.span_bubble() != span.value) return false;
    for (int r = 0; h1 && T.holds && r < P; ++r) {
      if (sim.idle(r) != rational{P - 1} * (c.f + c.i - c.w)) return false;
    }
  }
  for (const rational gamma : {rational{1}, rational{3, 7}}) {
    const in_flight_profile mem = in_flight(s.view(), gamma);
    for (int r = 0; r < P; ++r) {
      const closed_form peak = peak_in_flight_formula(spec, gamma, r);
      const bool expected = h1 ? m >= P : family != schedule_family::interleaved_zb && filled && gamma == rational{1};
      if (peak.holds != expected || (peak.holds && mem.peak(r) != peak.value)) return false;
    }
  }
  const closed_form msgs = messages_formula(spec);
  return msgs.holds && rational{static_cast<std::int64_t>(messages(s.view()))} == msgs.value;
}

/// DualPipeV's and DualPipe's proof at (P, m) (`fam`: dualpipev or dualpipe), by
/// DeepSeek's rule or at the structural minimum (`minimum`):
/// - the rule: DualPipeV refuses m < 2P (2P-1 at the minimum); DualPipe refuses an odd
///   P, an odd m and m < 2P (2P-2 at the minimum);
/// - elsewhere (validity too when `with_validation`): rank r runs 4m + 2P - 1 - r ops
///   (DualPipeV) or 2m + P - 1 - min(r, P-1-r) (DualPipe); every rank's peak in-flight
///   is DeepSeek's PP+1 chunks at gamma = 1 (2P + 1, or P + 1 for DualPipe) but one less
///   at the structural minimum on rank 0 (DualPipeV) or ranks 0 and P-1 (DualPipe), and
///   no closed form is claimed at gamma = 3/7; the messages are 2m(2P-2) or 2m(P-1);
/// - DeepSeek's idle: at each of the first `cost_sets` (1 to 3) cost sets of its range
///   (article costs; t_f = t_i = 2, t_w = 1; t_w = 0) the makespan and bubble fraction are the closed forms and every
///   rank idles (P-1)(F&B + B - 3W) (DualPipeV) or (P/2-1)(F&B + B - 3W) (DualPipe); at
///   t_i = 2 t_f, outside it, no closed form is claimed.
constexpr bool prove_dual_point(schedule_family fam, int P, int m, bool with_validation, bool minimum = false,
                                int cost_sets = 3) {
  const bool v = fam == schedule_family::dualpipev;
  schedule_spec spec{fam, {P, m, 2, v ? placement::v_shape : placement::bidirectional}};
  spec.structural_minimum = minimum;
  const bool refused = v ? m < 2 * P - (minimum ? 1 : 0) : P % 2 != 0 || m % 2 != 0 || m < 2 * P - (minimum ? 2 : 0);
  if (refused) return spec_error(spec) != nullptr;
  if (spec_error(spec) != nullptr) return false;
  const schedule s = generate(spec);
  if (with_validation && !validate(s.view()).ok()) return false;
  for (int r = 0; r < P; ++r) {
    const int half = r < P - 1 - r ? r : P - 1 - r;
    if (s.view().rank(r).size() != static_cast<std::size_t>(v ? 4 * m + 2 * P - 1 - r : 2 * m + P - 1 - half))
      return false;
  }
  const costs in_range[] = {costs{}, costs{rational{2}, rational{3}, rational{2}, rational{1}, rational{0}},
                            costs{rational{1}, rational{1}, rational{1}, rational{0}, rational{0}}};
  for (int k = 0; k < cost_sets; ++k) {
    const costs& c = in_range[k];
    const simulation sim = simulate(s.view(), c);
    const closed_form T = makespan_formula(spec, c), bubble = bubble_fraction_formula(spec, c);
    if (!T.holds || !bubble.holds || sim.makespan() != T.value || sim.bubble_fraction() != bubble.value) return false;
    const rational idle = rational{v ? P - 1 : P / 2 - 1} * ((c.pair() + c.b - rational{3} * c.w) / (v ? 2 : 1));
    for (int r = 0; r < P; ++r) {
      if (sim.idle(r) != idle) return false;
    }
  }
  if (makespan_formula(spec, costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{0}}).holds)
    return false;
  const in_flight_profile mem = in_flight(s.view());
  const bool short_m = m < 2 * P;
  for (int r = 0; r < P; ++r) {
    const closed_form peak = peak_in_flight_formula(spec, rational{1}, r);
    const int full = v ? 2 * P + 1 : P + 1;
    const bool less = short_m && (v ? r == 0 : r == 0 || r == P - 1);
    if (!peak.holds || peak.value != rational{less ? full - 1 : full} || mem.peak(r) != peak.value) return false;
    if (peak_in_flight_formula(spec, rational{3, 7}, r).holds) return false;
  }
  const closed_form msgs = messages_formula(spec);
  return msgs.holds && msgs.value == rational{static_cast<std::int64_t>(v ? 2 * m * (2 * P - 2) : 2 * m * (P - 1))} &&
         rational{static_cast<std::int64_t>(messages(s.view()))} == msgs.value;
}

/// V-Half or V-Min (`fam`) at (P, m), the Zero Bubble authors' greedy:
/// - every rank runs 6m ops (an F, an I and a W per micro-batch and chunk);
/// - with gamma = 1, every rank's peak in-flight is at most v_memory_peak_bound() and
///   one rank's is exactly it: the paper's floor((P+2)/2) or floor((P+4)/3) full
///   activations (two chunks each), or 2m chunks below that;
/// - at t_f = t_i = t_w (the article's costs and t_x = 2) with t_c = 0 and m >= P+2, the
///   makespan and bubble fraction are the closed forms and every rank idles k t_f/2
///   (k = v_memory_idle_slots()); with m < P+2, or with t_w != t_f, none is claimed.
constexpr bool prove_v_memory_point(schedule_family fam, int P, int m, bool with_validation) {
  const schedule_spec spec{fam, {P, m, 2, placement::v_shape}};
  if (spec_error(spec) != nullptr) return false;
  const schedule s = generate(spec);
  if (with_validation && !validate(s.view()).ok()) return false;
  const in_flight_profile mem = in_flight(s.view());
  const closed_form bound = schedules::v_memory_peak_bound(spec, rational{1});
  rational top{0};
  for (int r = 0; r < P; ++r) {
    if (s.view().rank(r).size() != static_cast<std::size_t>(6 * m) || mem.peak(r) > bound.value) return false;
    top = mem.peak(r) > top ? mem.peak(r) : top;
  }
  if (!bound.holds || top != bound.value) return false;
  const costs unit[] = {costs{}, costs{rational{2}, rational{4}, rational{2}, rational{2}, rational{0}}};
  for (const costs& c : unit) {
    const simulation sim = simulate(s.view(), c);
    const closed_form T = makespan_formula(spec, c), bubble = bubble_fraction_formula(spec, c);
    if (m < P + 2) {
      if (T.holds || bubble.holds) return false;
      continue;
    }
    if (!T.holds || !bubble.holds || sim.makespan() != T.value || sim.bubble_fraction() != bubble.value) return false;
    for (int r = 0; r < P; ++r) {
      if (sim.idle(r) != rational{detail::v_memory_idle_slots(spec)} * c.f / rational{2}) return false;
    }
  }
  return !makespan_formula(spec, costs{rational{1}, rational{3}, rational{1}, rational{2}, rational{0}}).holds;
}

}  // namespace ctpipe::tests
