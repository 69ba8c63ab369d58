// Compile-time proofs for every m at more P than proofs_periodic.cpp (docs/proofs.md,
// "Proofs for every m"), at the article's costs (1F1B t_f = 1, t_b = 2; ZB t_f = t_i =
// t_w = 1): the makespan, bubble fraction and peak closed forms of
// analysis/formulas.hpp hold for every m >= 1, as in proofs_periodic.cpp (the helpers
// of proofs_periodic.hpp), for
// - 1F1B, P = 9 .. 16, and ZB-H1, P = 9 .. 16;
// - interleaved 1F1B (megatron variant, group P, every m = 0 mod P) at V = 2 for P = 2,
//   3, 5, V = 3 for P = 2 .. 5 and V = 4 for P = 2 .. 4 (proofs_periodic.cpp has V = 2
//   at P = 4 and 6).
// ZB-H2, ZB-V, DualPipeV and DualPipe at more P are in proofs_periodic_p16_zb.cpp.
// Each point is its periodic certificate (with the closed forms from its m0 on) and the
// direct simulations of the m below m0; where both do not fit in one constant evaluation,
// the certificate (which bounds m0) and the m below it are separate static_asserts, each
// within the default limits of GCC 12 and Clang 14 (no -fconstexpr-* flag), the m below
// m0 split so that each part, and each point proved in one static_assert, needs at most
// 80% of both limits (measured with the limits lowered by hand). Interleaved 1F1B's
// certificate alone passes Clang 14's step limit ("constexpr evaluation hit maximum step
// limit") at V = 2 from P = 7, V = 3 from P = 6 and V = 4 from P = 5 (and GCC 12's
// operation limit at V = 4 from P = 7): those points are not proved here. The
// certificates alone of ZB-H1 at P = 16 and of interleaved 1F1B at P = 5, V = 3 need 90%
// to 95% of Clang's steps. The run-time twin, tests/runtime/periodic_test.cpp, runs the
// same functions for every P <= 16.
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

}  // namespace
