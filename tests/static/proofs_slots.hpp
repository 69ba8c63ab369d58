// The slot proofs shared by tests/static/proofs_slots.cpp (inside static_assert) and
// tests/runtime/slots_test.cpp (inside Catch2 test cases): one function, so a fact proved
// at compile time is checked at run time through the same code.
#pragma once

#include <ctpipe/ctpipe.hpp>

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t

namespace ctpipe::tests {

/// The plan of rank r's lifetimes of kind k is sound and minimal: each lifetime has
/// first op <= last op, start <= end and a slot below count(r, k); the lifetimes of one
/// slot, in list order, are disjoint (each starts at an op after the one where the
/// previous ends: inclusive endpoints on the list); and count(r, k) lifetimes hold one
/// op, the first op of the first lifetime given the highest slot (a clique: no colouring
/// uses fewer slots), found by counting, not by the colouring's own heap;
/// largest_overlap(r, k) equals the count. Linear.
constexpr bool slots_minimal(const slot_plan& p, int r, slot_kind k) {
  const auto lives = p.of(r, k);
  const int count = p.count(r, k);
  if (p.largest_overlap(r, k) != count) return false;
  if (lives.size() == 0) return count == 0;
  detail::buffer<std::int64_t> last_end(static_cast<std::size_t>(count), -1);
  std::int64_t witness = -1;
  for (const slot_lifetime& l : lives) {
    if (l.first_op > l.last_op || l.start_ticks > l.end_ticks || l.slot < 0 || l.slot >= count || l.rank != r ||
        l.kind != k)
      return false;
    std::int64_t& last = last_end[static_cast<std::size_t>(l.slot)];
    if (last >= static_cast<std::int64_t>(l.first_op)) return false;
    last = static_cast<std::int64_t>(l.last_op);
    if (l.slot == count - 1 && witness < 0) witness = static_cast<std::int64_t>(l.first_op);
  }
  int at_witness = 0;
  for (const slot_lifetime& l : lives) {
    at_witness += static_cast<std::int64_t>(l.first_op) <= witness && witness <= static_cast<std::int64_t>(l.last_op);
  }
  return at_witness == count;
}

/// slots_minimal() for every rank and kind of `p`.
constexpr bool plan_minimal(const slot_plan& p) {
  for (int r = 0; r < p.ranks(); ++r) {
    if (!slots_minimal(p, r, slot_kind::activation) || !slots_minimal(p, r, slot_kind::receive)) return false;
  }
  return true;
}

/// The simulated timeline of compute schedule `v` under `c`: its plan is minimal, holds
/// activations only, one per forward (F or overlapped pair word), and each rank's
/// activation slots are in_flight()'s peak (docs/memory.md, "Slots": both count an
/// activation from its F to its B or W in list order).
constexpr bool prove_simulated_slots(schedule_view v, const costs& c) {
  const slot_plan p = plan_slots(v, simulate(v, c));
  const in_flight_profile flight = in_flight(v);
  std::size_t forwards = 0;  // F and overlapped pair words: one lifetime each
  for (const op o : v.ops) forwards += o.kind() == op_kind::F || o.kind() == op_kind::overlap_f_b ? 1 : 0;
  if (!plan_minimal(p) || p.lifetimes().size() != forwards) return false;
  for (int r = 0; r < v.shape.P; ++r) {
    const rational slots{p.count(r, slot_kind::activation)};
    if (p.count(r, slot_kind::receive) != 0 || slots != flight.peak(r)) return false;
  }
  return true;
}

/// The executed timeline of `v` lowered by lower(v, c, model), run under `model`: its
/// plan is minimal, with one receive buffer per RECV of the lists.
constexpr bool prove_executed_slots(schedule_view v, const costs& c, runtime_model model) {
  const schedule lowered = lower(v, c, model);
  const slot_plan p = plan_slots(lowered.view(), execute(lowered.view(), c, model));
  std::size_t recvs = 0;
  for (const op o : lowered.view().ops) recvs += o.kind() == op_kind::recv_f || o.kind() == op_kind::recv_b ? 1 : 0;
  std::size_t receives = 0;
  for (const slot_lifetime& l : p.lifetimes()) receives += l.kind == slot_kind::receive ? 1 : 0;
  return plan_minimal(p) && receives == recvs;
}

/// prove_simulated_slots() and, for each of `models`, prove_executed_slots() over P in
/// [P_lo, P_hi], m in [1, m_hi], V in [1, 2] for family `fam`; rejected points are
/// skipped, and the proof fails if every point was skipped.
template <std::size_t N>
constexpr bool prove_slots_grid(schedule_family fam, int P_lo, int P_hi, int m_hi, const costs& c,
                                const runtime_model (&models)[N]) {
  int proved = 0;
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int m = 1; m <= m_hi; ++m) {
      for (int V = 1; V <= 2; ++V) {
        const schedule_spec spec{fam, {P, m, V, natural_placement(fam)}};
        if (spec_error(spec) != nullptr) continue;
        const schedule g = generate(spec);
        if (!prove_simulated_slots(g.view(), c)) return false;
        for (const runtime_model model : models) {
          if (!prove_executed_slots(g.view(), c, model)) return false;
        }
        ++proved;
      }
    }
  }
  return proved > 0;
}

}  // namespace ctpipe::tests
