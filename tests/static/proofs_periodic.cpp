// Compile-time proofs for every m (docs/proofs.md, "Proofs for every m"): for 1F1B,
// ZB-H1, ZB-H2, ZB-V, interleaved 1F1B (for a class of m modulo its group), combined
// 1F1B, DualPipeV and DualPipe the
// makespan, bubble fraction and peak closed forms of analysis/formulas.hpp hold for
// every m >= 1, each proof one periodic certificate
// (analysis/periodic.hpp: a simulation of the family's periodic program at
// first_search_periods() steady repetitions past m_min, or more until its state repeats)
// and the direct simulations of the m below its m0, whose cost depends on P and not on m:
// - every P <= 8 at the article's costs (1F1B t_f = 1, t_b = 2; ZB t_f = t_i = t_w = 1),
//   P <= 6 for ZB-V; interleaved 1F1B at P = 4 and 6 with V = 2 (m = 0 mod P; at P = 8
//   the certificate passes Clang 14's step limit), and P = 4, V = 2, group 6 for m = 5
//   (mod 6); the megatron-legacy and PyTorch rules at P = 4, V = 2 and P = 5 or 6, V = 3,
//   and warm-up factor 1 at P = 4, V = 2 (m = 0 mod P);
// - P <= 8 at the other cost sets of the grids where the closed forms are claimed (1F1B:
//   t_b = t_f, fractional costs, t_b < t_f; ZB-H1: the Zero Bubble cost sets);
// - combined 1F1B at P = 4, V = 2 (m = 0 mod 4, pairs fused), its peaks 12 10 8 6;
// - DualPipeV for P <= 8 and DualPipe for P = 2, 4, 6, 8 at the article's costs, and at
//   P = 4 two more cost sets of DeepSeek's range, from the structural minimum on (the
//   grid of tests/static/proofs_dualpipe.cpp keeps the rule's edges, m <= 2P + 2);
// - where no closed form exists (1F1B with latency, P = 4, t_c = 1/2; interleaved ZB, P =
//   4, V = 2), the certificate's own formula: cycle 4 micro-batches, makespans 101, 105,
//   108 at m = 24, 25, 26; interleaved ZB's against direct simulations over two cycles.
// Each static_assert is one constant evaluation within the default limits of GCC 12 and
// Clang 14. The run-time twin is tests/runtime/periodic_test.cpp, through the same
// functions, with every P <= 16 and the comparison with direct simulations.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using ctpipe::rational;
using ctpipe::schedule_family;
using namespace ctpipe::tests;  // every_m(), every_m_interleaved(), dual_certified(), ...: proofs_periodic.hpp

constexpr costs article{};                                                      // t_f = 1, t_b = 2 (ZB: t_i = t_w = 1)
constexpr costs equal{rational{1}, rational{1}};                                // t_f = t_b = 1
constexpr costs uneven{rational{1, 2}, rational{5, 3}};                         // t_f = 1/2, t_b = 5/3
constexpr costs light_backward{rational{3}, rational{1, 2}};                    // t_b < t_f
constexpr costs zb_wide{rational{2}, rational{3}, rational{2}, rational{1}};    // t_f = 2, t_i = 2, t_w = 1
constexpr costs zb_long_i{rational{1}, rational{3}, rational{2}, rational{1}};  // t_f = 1, t_i = 2, t_w = 1

#define CTPIPE_EVERY_M_UP_TO_8(family, c)                                      \
  static_assert(every_m_each_P(family, c, 1, 5), #family ", every m, P <= 5"); \
  static_assert(every_m_each_P(family, c, 6, 7), #family ", every m, P 6..7"); \
  static_assert(every_m(family, c, 8), #family ", every m, P = 8")

CTPIPE_EVERY_M_UP_TO_8(one_f_one_b, article);
CTPIPE_EVERY_M_UP_TO_8(one_f_one_b, equal);
CTPIPE_EVERY_M_UP_TO_8(one_f_one_b, uneven);
CTPIPE_EVERY_M_UP_TO_8(one_f_one_b, light_backward);
CTPIPE_EVERY_M_UP_TO_8(zb_h1, article);
CTPIPE_EVERY_M_UP_TO_8(zb_h1, zb_wide);
CTPIPE_EVERY_M_UP_TO_8(zb_h1, zb_long_i);
// ZB-H2's m0 is 4P - 4 and ZB-V's 4P - 2 (their warm-ups are longer): the m below it in
// two parts at P = 8; ZB-V (six ops per micro-batch and rank) to P = 6 here, to 16 in
// the run-time twin.
static_assert(every_m_each_P(zb_h2, article, 1, 5), "zb_h2, every m, P <= 5");
static_assert(every_m(zb_h2, article, 6), "zb_h2, every m, P = 6");
static_assert(every_m(zb_h2, article, 7), "zb_h2, every m, P = 7");
static_assert(every_m(zb_h2, article, 8, 1, 20), "zb_h2, every m, P = 8, m < 20");
static_assert(every_m(zb_h2, article, 8, 20), "zb_h2, every m, P = 8, m >= 20");
static_assert(every_m_each_P(zbv, article, 1, 3), "zbv, every m, P <= 3");
static_assert(every_m(zbv, article, 4), "zbv, every m, P = 4");
static_assert(every_m(zbv, article, 5), "zbv, every m, P = 5");
static_assert(every_m(zbv, article, 6), "zbv, every m, P = 6");

// Interleaved 1F1B at three points (each costs GCC about as much as the whole ZB-V line
// above); the run-time twin covers P <= 6, V <= 4, the variants, groups and classes.
static_assert(every_m_interleaved(article, 4, 2), "interleaved 1F1B, every m = 0 (mod 4), P = 4, V = 2");
static_assert(every_m_interleaved(article, 6, 2), "interleaved 1F1B, every m = 0 (mod 6), P = 6, V = 2");
static_assert(every_m_interleaved(article, 4, 2, 6, 5), "interleaved 1F1B, every m = 5 (mod 6), P = 4, V = 2, g = 6");

/// Interleaved 1F1B under rule `v` and warm-up factor `k` at P, V (group P), for every m
/// = 0 (mod P): its makespan, bubble and peak forms (megatron-legacy's peak mV at m = P
/// among them), as every_m_interleaved() for Megatron's rule.
constexpr bool every_m_rule(ctpipe::interleaved_variant v, int k, int P, int V) {
  ctpipe::schedule_spec s = interleaved_spec(P, V);
  s.variant = v;
  s.warmup_factor = k;
  const ctpipe::periodic_certificate cert = ctpipe::periodic_certificate_of(s, article);
  return cert.proved && cert.m_step == P && bool(ctpipe::closed_forms_hold_for_every_m(cert, s, article));
}
constexpr auto legacy = ctpipe::interleaved_variant::megatron_legacy;
constexpr auto torch = ctpipe::interleaved_variant::torch;
static_assert(every_m_rule(legacy, 2, 4, 2), "interleaved 1F1B, megatron-legacy, every m = 0 (mod 4), P = 4, V = 2");
static_assert(every_m_rule(torch, 2, 4, 2), "interleaved 1F1B, PyTorch's rule, every m = 0 (mod 4), P = 4, V = 2");
static_assert(every_m_rule(ctpipe::interleaved_variant::megatron, 1, 4, 2),
              "interleaved 1F1B, warm-up factor 1, every m = 0 (mod 4), P = 4, V = 2");
static_assert(every_m_rule(torch, 2, 6, 3), "interleaved 1F1B, PyTorch's rule, every m = 0 (mod 6), P = 6, V = 3");
static_assert(every_m_rule(legacy, 2, 5, 3), "interleaved 1F1B, megatron-legacy, every m = 0 (mod 5), P = 5, V = 3");

/// Combined 1F1B (Megatron's expert-parallel overlap, pairs fused at t_fb = t_f + t_b)
/// at P = 4, V = 2, for every m = 0 (mod 4): its makespan, bubble and peak forms
/// (12 10 8 6 chunks).
constexpr bool every_m_combined() {
  ctpipe::schedule_spec s{schedule_family::combined_1f1b, {4, 8, 2, ctpipe::placement::loop}};
  const ctpipe::periodic_certificate cert = ctpipe::periodic_certificate_of(s, article);
  return cert.proved && cert.peak[0] == rational{12} && cert.peak[3] == rational{6} &&
         bool(ctpipe::closed_forms_hold_for_every_m(cert, s, article));
}
static_assert(every_m_combined(), "combined 1F1B, every m = 0 (mod 4), P = 4, V = 2");

constexpr costs dual_wide{rational{2}, rational{3}, rational{2}, rational{1}};  // t_w < t_f
constexpr costs dual_no_w{rational{1}, rational{1}, rational{1}, rational{0}};  // t_w = 0
static_assert(dual_certified(dualpipev, article, 1, 64) && dual_certified(dualpipev, article, 2, 64) &&
                  dual_certified(dualpipev, article, 3, 64),
              "DualPipeV, every m, P <= 3");
static_assert(dual_certified(dualpipev, article, 4, 64), "DualPipeV, every m, P = 4");
static_assert(dual_certified(dualpipev, article, 5, 64), "DualPipeV, every m, P = 5");
static_assert(dual_certified(dualpipev, article, 6, 23, false) && dual_below(dualpipev, article, 6, 1, 23),
              "DualPipeV, every m, P = 6");
static_assert(dual_certified(dualpipev, article, 7, 27, false), "DualPipeV, every m >= m0 (<= 27), P = 7");
static_assert(dual_below(dualpipev, article, 7, 1, 27), "DualPipeV, every m < 27, P = 7");
static_assert(dual_certified(dualpipev, article, 8, 31, false), "DualPipeV, every m >= m0 (<= 31), P = 8");
static_assert(dual_below(dualpipev, article, 8, 1, 24), "DualPipeV, every m < 24, P = 8");
static_assert(dual_below(dualpipev, article, 8, 24, 31), "DualPipeV, every m in [24, 31), P = 8");
static_assert(dual_certified(dualpipe, article, 2, 64) && dual_certified(dualpipe, article, 4, 64),
              "DualPipe, every m, P = 2, 4");
static_assert(dual_certified(dualpipe, article, 6, 64), "DualPipe, every m, P = 6");
static_assert(dual_certified(dualpipe, article, 8, 30, false), "DualPipe, every m >= m0 (<= 30), P = 8");
static_assert(dual_below(dualpipe, article, 8, 1, 30), "DualPipe, every m < 30, P = 8");
static_assert(dual_certified(dualpipev, dual_wide, 4, 64) && dual_certified(dualpipev, dual_no_w, 4, 64),
              "DualPipeV, every m, P = 4, two more cost sets");
static_assert(dual_certified(dualpipe, dual_wide, 4, 64) && dual_certified(dualpipe, dual_no_w, 4, 64),
              "DualPipe, every m, P = 4, two more cost sets");

/// 1F1B, P = 4, t_f = 1, t_b = 2, t_c = 1/2: no closed form (formulas.hpp: with latency
/// the steady state stalls); the certificate's cycle and makespans.
constexpr bool latency_example() {
  ctpipe::schedule_spec s{};
  s.family = one_f_one_b;
  s.shape = {4, 1, 1, ctpipe::placement::loop};
  const costs c{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  const ctpipe::periodic_certificate cert = ctpipe::periodic_certificate_of(s, c);
  return cert.proved && cert.cycle == 4 && cert.increment == rational{15} && cert.makespan(24) == rational{101} &&
         cert.makespan(25) == rational{105} && cert.makespan(26) == rational{108} &&
         !ctpipe::makespan_formula(s, c).holds;
}
static_assert(latency_example(), "1F1B with latency: cycle 4, makespans 101, 105, 108");

/// Interleaved ZB (PyTorch's ScheduleInterleavedZeroBubble), P = 4, V = 2, every m = 0
/// (mod 4) at the Zero Bubble costs t_f = t_i = t_w = 1: no closed form is claimed, so
/// its certificate is its formula for every m >= m0 of the class; the certificate's
/// makespan and peaks at m0 and two cycles on equal direct simulations.
constexpr bool interleaved_zb_example() {
  const ctpipe::schedule_spec s{schedule_family::interleaved_zb, {4, 8, 2, ctpipe::placement::loop}};
  const ctpipe::periodic_certificate cert = ctpipe::periodic_certificate_of(s, article);
  if (!cert.proved || cert.m_step != 4 || ctpipe::makespan_formula(s, article).holds) return false;
  for (int m = cert.m0; m <= cert.m0 + 2 * cert.cycle; m += cert.cycle) {
    ctpipe::schedule_spec at = s;
    at.shape.m = m;
    const ctpipe::schedule sched = ctpipe::generate(at);
    const ctpipe::in_flight_profile memory = ctpipe::in_flight(sched.view());
    if (ctpipe::simulate(sched.view(), article).makespan() != cert.makespan(m)) return false;
    for (int r = 0; r < 4; ++r) {
      if (memory.peak(r) != cert.peak_at(r, m)) return false;
    }
  }
  return true;
}
static_assert(interleaved_zb_example(), "interleaved ZB, its certificate's formula, every m = 0 (mod 4), P = 4, V = 2");

}  // namespace
