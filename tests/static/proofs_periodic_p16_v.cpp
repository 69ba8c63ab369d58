// Compile-time proofs for every m of ZB-V at P = 9 .. 16 (docs/proofs.md, "Proofs for
// every m"), at the article's costs (t_f = t_i = t_w = 1, t_b = 2): the makespan,
// bubble fraction and peak closed forms of analysis/formulas.hpp hold for every m >= 1
// for ZB-V, P = 9 .. 16 (m0 = 4P - 2). Each point is every_m_in_parts()
// (proofs_periodic.hpp): the certificate, then the m below m0 directly, cut so that
// each part needs at most 80% of Clang 14's steps and GCC 12's operations (checked with
// both limits lowered to 80%; cut by a cost model for about half). The m below m0 cost
// the most here: a simulation per m, six ops per micro-batch and rank. ZB-V P <= 8 is
// in proofs_periodic.cpp and proofs_periodic_p16_zb.cpp, DualPipeV P = 10 .. 16 in
// proofs_periodic_p16_dpv.cpp (beside these parts GCC 12 took over 6 GiB for one file).
// The run-time twin, tests/runtime/periodic_test.cpp, runs the same functions for every
// P <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using namespace ctpipe::tests;  // every_m_spec(), dual_spec(), every_m_in_parts(): proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2, t_i = t_w = 1

// ZB-V, m0 = 4P - 2.
static_assert(every_m_in_parts<every_m_spec(zbv, 9), article, 34, 25>());
static_assert(every_m_in_parts<every_m_spec(zbv, 10), article, 38, 22>());
static_assert(every_m_in_parts<every_m_spec(zbv, 11), article, 42, 20, 32>());
static_assert(every_m_in_parts<every_m_spec(zbv, 12), article, 46, 18, 29, 38>());
static_assert(every_m_in_parts<every_m_spec(zbv, 13), article, 50, 16, 26, 34, 41, 46>());
static_assert(every_m_in_parts<every_m_spec(zbv, 14), article, 54, 14, 24, 32, 39, 45, 51>());
static_assert(every_m_in_parts<every_m_spec(zbv, 15), article, 58, 13, 22, 29, 36, 42, 47, 52>());
static_assert(every_m_in_parts<every_m_spec(zbv, 16), article, 62, 12, 20, 27, 33, 39, 44, 49, 53, 57>());

}  // namespace
