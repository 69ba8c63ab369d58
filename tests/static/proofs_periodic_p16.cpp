// Compile-time proofs for every m at more P than proofs_periodic.cpp (docs/proofs.md,
// "Proofs for every m"), at the article's costs (1F1B t_f = 1, t_b = 2; ZB t_f = t_i =
// t_w = 1): the makespan, bubble fraction and peak closed forms of
// analysis/formulas.hpp hold for every m >= 1, as in proofs_periodic.cpp (the helpers
// of proofs_periodic.hpp), for
// - 1F1B, P = 9 .. 16, and ZB-H1, P = 9 .. 16;
// - interleaved 1F1B (megatron variant, group P, every m = 0 mod P) at V = 2 for P = 2,
//   3, 5, 7 .. 16, V = 3 for P = 2 .. 14 and V = 4 for P = 2 .. 12 (proofs_periodic.cpp
//   has V = 2 at P = 4 and 6).
// ZB-H2 and DualPipe at more P are in proofs_periodic_p16_zb.cpp, ZB-V in
// proofs_periodic_p16_v.cpp.
// Each point is its periodic certificate (with the closed forms from its m0 on) and the
// direct simulations of the m below m0; where both do not fit in one constant evaluation,
// the certificate (which bounds m0) and the m below it are separate static_asserts
// (the macros, or every_m_in_parts()), each within the default limits of GCC 12 and
// Clang 14 (no -fconstexpr-* flag), the m below m0 split so that each part, and each
// point proved in one static_assert, needs at most 80% of both limits (checked with the
// limits lowered by hand). Interleaved 1F1B's certificate alone passes 80% of Clang 14's
// steps at V = 3 from P = 15 and V = 4 from P = 13, and of GCC 12's operations at V = 3
// at P = 16 and V = 4 from P = 14: those points are not proved here. The run-time twin,
// tests/runtime/periodic_test.cpp, runs the same functions for every P <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using namespace ctpipe::tests;  // every_m_spec(), certified(), below(), ...: proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2 (ZB: t_i = t_w = 1)

// 1F1B, m0 = 2P - 1.
static_assert(certified(every_m_spec(one_f_one_b, 9), article, 17), "1F1B, every m, P = 9");
static_assert(certified(every_m_spec(one_f_one_b, 10), article, 19), "1F1B, every m, P = 10");
static_assert(certified(every_m_spec(one_f_one_b, 11), article, 21), "1F1B, every m, P = 11");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(one_f_one_b, 12), article, 23, "1F1B, P = 12");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(one_f_one_b, 13), article, 25, "1F1B, P = 13");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(one_f_one_b, 14), article, 27, "1F1B, P = 14");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(one_f_one_b, 15), article, 29, "1F1B, P = 15");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(one_f_one_b, 16), article, 31, "1F1B, P = 16");

// ZB-H1, m0 = 2P - 1.
static_assert(certified(every_m_spec(zb_h1, 9), article, 17), "ZB-H1, every m, P = 9");
static_assert(certified(every_m_spec(zb_h1, 10), article, 19), "ZB-H1, every m, P = 10");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h1, 11), article, 21, "ZB-H1, P = 11");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h1, 12), article, 23, "ZB-H1, P = 12");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h1, 13), article, 25, "ZB-H1, P = 13");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h1, 14), article, 27, "ZB-H1, P = 14");
CTPIPE_EVERY_M_IN_THREE(every_m_spec(zb_h1, 15), article, 29, 20, "ZB-H1, P = 15");
CTPIPE_EVERY_M_IN_THREE(every_m_spec(zb_h1, 16), article, 31, 22, "ZB-H1, P = 16");

// Interleaved 1F1B (megatron variant, group P), every m = 0 (mod P); m0 = 3P at P = 2,
// 5P from P = 3 on.
static_assert(certified(interleaved_spec(2, 2), article, 6), "interleaved 1F1B, every m = 0 (mod 2), P = 2, V = 2");
static_assert(certified(interleaved_spec(3, 2), article, 15), "interleaved 1F1B, every m = 0 (mod 3), P = 3, V = 2");
static_assert(certified(interleaved_spec(5, 2), article, 25), "interleaved 1F1B, every m = 0 (mod 5), P = 5, V = 2");
static_assert(certified(interleaved_spec(2, 3), article, 6), "interleaved 1F1B, every m = 0 (mod 2), P = 2, V = 3");
static_assert(certified(interleaved_spec(3, 3), article, 15), "interleaved 1F1B, every m = 0 (mod 3), P = 3, V = 3");
static_assert(certified(interleaved_spec(4, 3), article, 20), "interleaved 1F1B, every m = 0 (mod 4), P = 4, V = 3");
CTPIPE_EVERY_M_IN_TWO(interleaved_spec(5, 3), article, 25, "interleaved 1F1B, P = 5, V = 3");
static_assert(certified(interleaved_spec(2, 4), article, 6), "interleaved 1F1B, every m = 0 (mod 2), P = 2, V = 4");
static_assert(certified(interleaved_spec(3, 4), article, 15), "interleaved 1F1B, every m = 0 (mod 3), P = 3, V = 4");
CTPIPE_EVERY_M_IN_TWO(interleaved_spec(4, 4), article, 20, "interleaved 1F1B, P = 4, V = 4");

// From P = 7 (V = 2), 6 (V = 3) and 5 (V = 4) on, each point in parts (every_m_in_parts():
// the certificate, then the m below m0 = 5P, m = 2P .. 4P).
static_assert(every_m_in_parts<interleaved_spec(7, 2), article, 35>());
static_assert(every_m_in_parts<interleaved_spec(8, 2), article, 40>());
static_assert(every_m_in_parts<interleaved_spec(9, 2), article, 45>());
static_assert(every_m_in_parts<interleaved_spec(10, 2), article, 50>());
static_assert(every_m_in_parts<interleaved_spec(11, 2), article, 55>());
static_assert(every_m_in_parts<interleaved_spec(12, 2), article, 60>());
static_assert(every_m_in_parts<interleaved_spec(13, 2), article, 65>());
static_assert(every_m_in_parts<interleaved_spec(14, 2), article, 70>());
static_assert(every_m_in_parts<interleaved_spec(15, 2), article, 75>());
static_assert(every_m_in_parts<interleaved_spec(16, 2), article, 80>());
static_assert(every_m_in_parts<interleaved_spec(6, 3), article, 30>());
static_assert(every_m_in_parts<interleaved_spec(7, 3), article, 35>());
static_assert(every_m_in_parts<interleaved_spec(8, 3), article, 40>());
static_assert(every_m_in_parts<interleaved_spec(9, 3), article, 45>());
static_assert(every_m_in_parts<interleaved_spec(10, 3), article, 50>());
static_assert(every_m_in_parts<interleaved_spec(11, 3), article, 55>());
static_assert(every_m_in_parts<interleaved_spec(12, 3), article, 60>());
static_assert(every_m_in_parts<interleaved_spec(13, 3), article, 65>());
static_assert(every_m_in_parts<interleaved_spec(14, 3), article, 70>());
static_assert(every_m_in_parts<interleaved_spec(5, 4), article, 25>());
static_assert(every_m_in_parts<interleaved_spec(6, 4), article, 30>());
static_assert(every_m_in_parts<interleaved_spec(7, 4), article, 35>());
static_assert(every_m_in_parts<interleaved_spec(8, 4), article, 40>());
static_assert(every_m_in_parts<interleaved_spec(9, 4), article, 45>());
static_assert(every_m_in_parts<interleaved_spec(10, 4), article, 50>());
static_assert(every_m_in_parts<interleaved_spec(11, 4), article, 55>());
static_assert(every_m_in_parts<interleaved_spec(12, 4), article, 60>());

}  // namespace
