// The lowering proofs shared by tests/static/proofs_lower.cpp (inside static_assert) and
// tests/runtime/lower_test.cpp (inside Catch2 test cases): one function, so a fact
// proved at compile time is checked at run time through the same code.
#pragma once

#include <ctpipe/ctpipe.hpp>
#include <ctpipe/lower/lower.hpp>
#include <ctpipe/lower/validate.hpp>

#include <cstddef>  // std::size_t

namespace ctpipe::tests {

/// Lowering proof at one point: lower(generate(spec)) runs to completion under
/// rendezvous and under buffered sends (validate_lowered finds nothing), has one SEND and
/// one RECV per message of messages() (and of messages_formula() where it holds), keeps
/// every compute op in its order (compute_part gives back the compute schedule), and
/// orders the messages between any two ranks the same way on both.
constexpr bool prove_lowering(const schedule_spec& spec) {
  const schedule compute = generate(spec);
  const schedule lowered = lower(compute.view());
  const schedule_view l = lowered.view();
  if (!validate_lowered(l, send_semantics::rendezvous).ok()) return false;
  if (!validate_lowered(l, send_semantics::buffered).ok()) return false;
  std::size_t sends = 0, receives = 0;
  for (const op o : l.ops) {
    sends += is_send(o.kind()) ? 1 : 0;
    receives += is_transfer(o.kind()) && !is_send(o.kind()) ? 1 : 0;
  }
  const std::size_t count = messages(compute.view());
  if (sends != count || receives != count || l.size() != compute.size() + 2 * count) return false;
  const closed_form formula = messages_formula(spec);
  if (formula.holds && formula.value != rational{static_cast<std::int64_t>(count)}) return false;
  const schedule back = compute_part(l);
  for (std::size_t k = 0; k < compute.size(); ++k) {
    if (back.view().ops[k] != compute.view().ops[k]) return false;
  }
  for (int r = 0; r <= spec.shape.P; ++r) {
    if (back.view().offsets[static_cast<std::size_t>(r)] != compute.view().offsets[static_cast<std::size_t>(r)]) return false;
  }
  return peer_order_consistent(l);
}

/// prove_lowering over P in [P_lo, P_hi], m in [m_lo, m_hi], V in [1, V_hi], for family
/// `fam` (and interleaved variant `variant`): points the family's rule rejects are
/// skipped (spec_error), and the proof fails if every point was skipped.
constexpr bool prove_lowering_grid(schedule_family fam, interleaved_variant variant, int P_lo, int P_hi, int m_lo,
                                   int m_hi, int V_hi) {
  int proved = 0;
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int m = m_lo; m <= m_hi; ++m) {
      for (int V = 1; V <= V_hi; ++V) {
        const schedule_spec spec{fam, {P, m, V, natural_placement(fam)}, variant};
        if (spec_error(spec) != nullptr) continue;
        if (!prove_lowering(spec)) return false;
        ++proved;
      }
    }
  }
  return proved > 0;
}

}  // namespace ctpipe::tests
