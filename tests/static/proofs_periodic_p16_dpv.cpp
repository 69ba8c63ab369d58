// Compile-time proofs for every m of DualPipeV at P = 10 .. 16 (docs/proofs.md, "Proofs
// for every m"), at the article's costs (t_f = t_i = t_w = 1, t_b = 2), from the
// structural minimum m = 2P - 1 on: the makespan, bubble fraction and peak closed forms
// of analysis/formulas.hpp hold for every m >= 2P - 1 (m0 = 4P - 1). Each point is
// every_m_in_parts() (proofs_periodic.hpp): the certificate, then the m below m0
// directly, cut so that each part needs at most 80% of Clang 14's steps and GCC 12's
// operations (checked with both limits lowered to 80%; cut by a cost model for about
// half). The m below m0 cost the most here: DualPipeV's steady ops are overlapped
// pairs, which simulate at about one and a half times the steps per op of the others. A
// file of its own: beside ZB-V's parts (proofs_periodic_p16_v.cpp) GCC 12 took over 6
// GiB. DualPipeV P <= 9 is in proofs_periodic.cpp and proofs_periodic_p16_zb.cpp; the
// run-time twin, tests/runtime/periodic_test.cpp, runs the same functions for every P
// <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using namespace ctpipe::tests;  // dual_spec(), every_m_in_parts(): proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2, t_i = t_w = 1

static_assert(every_m_in_parts<dual_spec(dualpipev, 10), article, 39, 29>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 11), article, 43, 29, 36>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 12), article, 47, 30, 36, 41>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 13), article, 51, 31, 36, 41, 45, 49>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 14), article, 55, 32, 37, 41, 45, 49, 52>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 15), article, 59, 33, 37, 41, 45, 48, 51, 54, 57>());
static_assert(every_m_in_parts<dual_spec(dualpipev, 16), article, 63, 35, 39, 42, 45, 48, 51, 54, 57, 60, 62>());

}  // namespace
