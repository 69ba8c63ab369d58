// Compile-time proofs for every m at more P than proofs_periodic.cpp, the families
// whose m0 is about 4P (docs/proofs.md, "Proofs for every m"), at the article's costs
// (t_f = t_i = t_w = 1, t_b = 2): the makespan, bubble fraction and peak closed forms
// of analysis/formulas.hpp hold for every m >= 1, as in proofs_periodic.cpp (the
// helpers of proofs_periodic.hpp), for ZB-H2, P = 9 .. 16; ZB-V, P = 7, 8; DualPipeV, P
// = 9; DualPipe, P = 10, 12, 14 and 16 (from the structural minimum on). ZB-V at P up
// to 16 is in proofs_periodic_p16_v.cpp, DualPipeV in proofs_periodic_p16_dpv.cpp;
// 1F1B, ZB-H1 and interleaved 1F1B in proofs_periodic_p16.cpp, which says how the
// proofs are split. From P = 13 on each point is every_m_in_parts(): the certificate,
// then the m below m0 directly, cut so that each part needs at most 80% of Clang 14's
// steps and GCC 12's operations (checked with both limits lowered to 80%; cut by a cost
// model for about half). The run-time twin, tests/runtime/periodic_test.cpp, runs the
// same functions for every P <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using namespace ctpipe::tests;  // every_m_spec(), certified(), below(), ...: proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2 (ZB: t_i = t_w = 1)

// ZB-H2, m0 = 4P - 4.
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h2, 9), article, 32, "ZB-H2, P = 9");
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zb_h2, 10), article, 36, "ZB-H2, P = 10");
CTPIPE_EVERY_M_IN_THREE(every_m_spec(zb_h2, 11), article, 40, 28, "ZB-H2, P = 11");
CTPIPE_EVERY_M_IN_THREE(every_m_spec(zb_h2, 12), article, 44, 31, "ZB-H2, P = 12");
static_assert(every_m_in_parts<every_m_spec(zb_h2, 13), article, 48, 18, 31, 42>());
static_assert(every_m_in_parts<every_m_spec(zb_h2, 14), article, 52, 16, 28, 38, 47>());
static_assert(every_m_in_parts<every_m_spec(zb_h2, 15), article, 56, 14, 25, 34, 43, 51>());
static_assert(every_m_in_parts<every_m_spec(zb_h2, 16), article, 60, 13, 23, 32, 40, 47, 54>());

// ZB-V, m0 = 4P - 2.
CTPIPE_EVERY_M_IN_TWO(every_m_spec(zbv, 7), article, 26, "ZB-V, P = 7");
CTPIPE_EVERY_M_IN_THREE(every_m_spec(zbv, 8), article, 30, 21, "ZB-V, P = 8");

// DualPipeV (m0 = 4P - 1) and DualPipe (m even, m0 = 4P - 2), from the structural minimum on.
CTPIPE_EVERY_M_IN_THREE(dual_spec(dualpipev, 9), article, 35, 27, "DualPipeV, P = 9");
CTPIPE_EVERY_M_IN_TWO(dual_spec(dualpipe, 10), article, 38, "DualPipe, P = 10");
CTPIPE_EVERY_M_IN_THREE(dual_spec(dualpipe, 12), article, 46, 32, "DualPipe, P = 12");
static_assert(every_m_in_parts<dual_spec(dualpipe, 14), article, 54, 40, 50>());
static_assert(every_m_in_parts<dual_spec(dualpipe, 16), article, 62, 40, 48, 56>());

}  // namespace
