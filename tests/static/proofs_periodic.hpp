// The proofs for every m shared by tests/static/proofs_periodic.cpp and
// proofs_periodic_p16.cpp (docs/proofs.md, "Proofs for every m"): a family's makespan,
// bubble fraction and peak closed forms hold for every m >= 1 when its periodic
// certificate (analysis/periodic.hpp) proves them from m0 on and direct simulations prove
// them at every m below m0. A large P splits the m below m0 over several static_asserts
// (each its own constant evaluation): certified(..., direct = false) bounds m0 and proves
// the certificate's part, below() the direct ranges, which together cover [1, m0).
#pragma once

#include <cstddef>  // std::size_t
#include <utility>  // std::index_sequence

#include "ctpipe/analysis/periodic.hpp"

namespace ctpipe::tests {

inline constexpr auto one_f_one_b = schedule_family::one_f_one_b;
inline constexpr auto zb_h1 = schedule_family::zb_h1;
inline constexpr auto zb_h2 = schedule_family::zb_h2;
inline constexpr auto zbv = schedule_family::zbv;
inline constexpr auto dualpipev = schedule_family::dualpipev;
inline constexpr auto dualpipe = schedule_family::dualpipe;

/// The spec of 1F1B, ZB-H1, ZB-H2 (one chunk per rank) or ZB-V (two, V-shape) at P; its
/// m is not read.
constexpr schedule_spec every_m_spec(schedule_family family, int P) {
  schedule_spec s{};
  s.family = family;
  s.shape = {P, 1, family == zbv ? 2 : 1, family == zbv ? placement::v_shape : placement::loop};
  return s;
}

/// Whether `family`'s makespan, bubble and peak closed forms hold for every m at P under
/// costs `c`: from m0 on by the periodic certificate (closed_forms_hold_from_m0()), and
/// directly at m in [m_lo, min(m_hi, m0)) (closed_forms_hold_directly()); a P whose m0
/// is large splits its range below m0 over several static_asserts (GCC's operation limit
/// is per evaluation), the first of which (m_lo = 1) also checks the certificate.
constexpr bool every_m(schedule_family family, costs c, int P, int m_lo = 1, int m_hi = 1 << 30) {
  const schedule_spec s = every_m_spec(family, P);
  const periodic_certificate cert = periodic_certificate_of(s, c);
  if (!cert.proved || (m_lo == 1 && !closed_forms_hold_from_m0(cert, s, c))) return false;
  return bool(closed_forms_hold_directly(s, c, m_lo, m_hi < cert.m0 ? m_hi : cert.m0));
}

/// every_m() at each P in [P_lo, P_hi], m below m0 whole.
constexpr bool every_m_each_P(schedule_family family, costs c, int P_lo, int P_hi) {
  for (int P = P_lo; P <= P_hi; ++P) {
    if (!every_m(family, c, P)) return false;
  }
  return true;
}

/// Interleaved 1F1B (megatron variant, loop placement) at P, V and group g (0: P), for
/// the class of m = residue (mod g); its m is the class's least accepted.
constexpr schedule_spec interleaved_spec(int P, int V, int g = 0, int residue = 0) {
  schedule_spec s{};
  s.family = schedule_family::interleaved_1f1b;
  s.group = g;
  s.shape = {P, residue + 2 * (g != 0 ? g : P), V, placement::loop};
  return s;
}

/// Interleaved 1F1B at P, V and group g (0: P), for the class of m = residue (mod g): its
/// closed forms for every m of the class that Megatron accepts, as every_m() does for
/// the families above.
constexpr bool every_m_interleaved(costs c, int P, int V, int g = 0, int residue = 0) {
  const schedule_spec s = interleaved_spec(P, V, g, residue);
  const periodic_certificate cert = periodic_certificate_of(s, c);
  return cert.proved && cert.m_step == (g != 0 ? g : P) && bool(closed_forms_hold_for_every_m(cert, s, c));
}

/// DualPipeV (V-shape) or DualPipe (bidirectional, m even) at P, from the structural
/// minimum on.
constexpr schedule_spec dual_spec(schedule_family family, int P) {
  const bool dual = family == dualpipe;
  schedule_spec s{family, {P, 2 * P, 2, dual ? placement::bidirectional : placement::v_shape}};
  s.structural_minimum = true;
  return s;
}

/// Combined 1F1B (Megatron's expert-parallel overlap, pairs fused at t_fb = t_f + t_b)
/// at P, V and group P, for every m = 0 (mod P); its m, 2P, only names the class.
constexpr schedule_spec combined_spec(int P, int V) {
  schedule_spec s{};
  s.family = schedule_family::combined_1f1b;
  s.shape = {P, 2 * P, V, placement::loop};
  return s;
}

/// The step between the m a spec's family takes: DualPipe's 2, interleaved and combined
/// 1F1B's group, 1 elsewhere.
constexpr int m_step_of(const schedule_spec& s) {
  if (s.family == dualpipe) return 2;
  if (s.family == schedule_family::interleaved_1f1b || s.family == schedule_family::combined_1f1b)
    return s.group != 0 ? s.group : s.shape.P;
  return 1;
}

/// `s`'s makespan, bubble fraction and peak forms from m0 on by the certificate, whose m0
/// is at most `m0_most` (so that the m below it can be proved apart: below()) and whose
/// step is the family's, and directly below m0 when `direct` (a small P, within one
/// evaluation).
constexpr bool certified(const schedule_spec& s, costs c, int m0_most, bool direct = true) {
  const periodic_certificate cert = periodic_certificate_of(s, c);
  if (!cert.proved || cert.m0 > m0_most || cert.m_step != m_step_of(s) || !closed_forms_hold_from_m0(cert, s, c))
    return false;
  return !direct || bool(closed_forms_hold_directly(s, c, 1, cert.m0, rational{1}, {}, cert.m_step));
}

/// The same forms directly at the m in [m_lo, m_hi) the family takes (from m_hi less its
/// step down; m_hi in the class of interleaved 1F1B's m).
constexpr bool below(const schedule_spec& s, costs c, int m_lo, int m_hi) {
  return bool(closed_forms_hold_directly(s, c, m_lo, m_hi, rational{1}, {}, m_step_of(s)));
}

/// DeepSeek's makespan, bubble fraction and peak forms (2P+1 and P+1 chunks, one less on
/// the outer ranks at the minimum) from m0 on by the certificate, whose m0 is at most
/// `m0_most` (so that the m below it can be proved apart: dual_below()), and directly
/// below m0 when `direct` (a small P, within one evaluation).
constexpr bool dual_certified(schedule_family family, costs c, int P, int m0_most, bool direct = true) {
  return certified(dual_spec(family, P), c, m0_most, direct);
}

/// The same forms directly at the m in [m_lo, m_hi) the family takes (its step).
constexpr bool dual_below(schedule_family family, costs c, int P, int m_lo, int m_hi) {
  return below(dual_spec(family, P), c, m_lo, m_hi);
}

/// One part of a proof for every m: the forms directly at the m in [Lo, Hi) that the
/// family takes (below()), in a static_assert of its own (one constant evaluation per
/// instantiation, so each part has the compilers' whole budget).
template <schedule_spec S, costs C, int Lo, int Hi>
struct proved_below {
  static_assert(Lo < Hi && below(S, C, Lo, Hi), "the closed forms hold at every m of [Lo, Hi) (directly)");
  static constexpr bool value = true;
};

/// The certificate's part: the forms from m0 on, m0 at most M0 (certified(..., false)).
template <schedule_spec S, costs C, int M0>
struct proved_from_m0 {
  static_assert(certified(S, C, M0, false), "the closed forms hold for every m >= m0, m0 <= M0 (certificate)");
  static constexpr bool value = true;
};

/// The m of [1, M0) cut at Cuts (ascending, inside): the parts' bounds.
template <int M0, int... Cuts>
inline constexpr int part_bounds[sizeof...(Cuts) + 2] = {1, Cuts..., M0};

/// `S`'s closed forms for every m >= 1 in parts, each its own constant evaluation: the
/// certificate with m0 <= M0, then the m below M0 directly in the ranges [1, Cuts_0),
/// [Cuts_0, Cuts_1), .., [Cuts_last, M0), which cover [1, M0) by construction.
template <schedule_spec S, costs C, int M0, int... Cuts>
constexpr bool every_m_in_parts() {
  constexpr const int* at = part_bounds<M0, Cuts...>;
  return proved_from_m0<S, C, M0>::value&&[]<std::size_t... I>(std::index_sequence<I...>) {
    return (proved_below<S, C, at[I], at[I + 1]>::value && ...);
  }
  (std::make_index_sequence<sizeof...(Cuts) + 1>{});
}

/// certified(s, c, m0_most, false) with the certificate's steps 1 and 2 given (`known`,
/// proved apart: proved_structure), so that its graph is not built in this evaluation.
constexpr bool certified_given(const schedule_spec& s, costs c, int m0_most, periodic_structure known) {
  const periodic_program p = program_of(s);  // named: GCC 12 frees a temporary's buffers too early here
  const periodic_certificate cert = periodic_certificate_of(p, c, known);
  return cert.proved && cert.m0 <= m0_most && cert.m_step == m_step_of(s) &&
         bool(closed_forms_hold_from_m0(cert, s, c));
}

/// Whether periodic_structure_of() of `s`'s program at `known`.periods is `known`.
constexpr bool structure_is(const schedule_spec& s, periodic_structure known) {
  const periodic_program p = program_of(s);
  return periodic_structure_of(p, known.periods) == known;
}

/// The structure's part: periodic_structure_of() of S's program at W.periods is W.
template <schedule_spec S, periodic_structure W>
struct proved_structure {
  static_assert(structure_is(S, W), "the certificate's window and width (steps 1 and 2) are W's");
  static constexpr bool value = true;
};

/// The certificate's part given W: the forms from m0 on, m0 at most M0.
template <schedule_spec S, costs C, int M0, periodic_structure W>
struct proved_from_m0_given {
  static_assert(certified_given(S, C, M0, W),
                "the closed forms hold for every m >= m0, m0 <= M0 (certificate given W)");
  static constexpr bool value = true;
};

/// every_m_in_parts() with the certificate itself in two constant evaluations, where it
/// alone passes a limit: its structure W (proved_structure: the graph, no simulation),
/// then its repeat and forms given W (proved_from_m0_given: the simulation, no graph);
/// together they are the certificate, since W is proved to be the program's.
template <schedule_spec S, costs C, int M0, periodic_structure W, int... Cuts>
constexpr bool every_m_apart() {
  constexpr const int* at = part_bounds<M0, Cuts...>;
  return proved_structure<S, W>::value &&
         proved_from_m0_given<S, C, M0, W>::value&&[]<std::size_t... I>(std::index_sequence<I...>) {
    return (proved_below<S, C, at[I], at[I + 1]>::value && ...);
  }
  (std::make_index_sequence<sizeof...(Cuts) + 1>{});
}

}  // namespace ctpipe::tests

// A point proved in parts, each its own constant evaluation: the certificate with its m0
// at most M0 (certified(..., false)), then the m below it, whole (CTPIPE_EVERY_M_IN_TWO)
// or split at CUT (CTPIPE_EVERY_M_IN_THREE). WHAT names the point in the messages.
#define CTPIPE_EVERY_M_IN_TWO(SPEC, C, M0, WHAT)                                                      \
  static_assert(::ctpipe::tests::certified(SPEC, C, M0, false), WHAT ", every m >= m0 (<= " #M0 ")"); \
  static_assert(::ctpipe::tests::below(SPEC, C, 1, M0), WHAT ", every m < " #M0)
#define CTPIPE_EVERY_M_IN_THREE(SPEC, C, M0, CUT, WHAT)                                               \
  static_assert(::ctpipe::tests::certified(SPEC, C, M0, false), WHAT ", every m >= m0 (<= " #M0 ")"); \
  static_assert(::ctpipe::tests::below(SPEC, C, CUT, M0), WHAT ", every m in [" #CUT ", " #M0 ")");   \
  static_assert(::ctpipe::tests::below(SPEC, C, 1, CUT), WHAT ", every m < " #CUT)
