// The grid proofs shared by tests/static (inside static_assert) and tests/runtime
// (inside Catch2 test cases): one function each, so a fact proved at compile time is
// checked at run time through the same code.
#pragma once

#include <ctpipe/ctpipe.hpp>

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
