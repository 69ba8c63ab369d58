// Compile-time proofs for every m of interleaved 1F1B (megatron variant, group P, every
// m = 0 mod P) at V = 3 for P = 15, 16 and V = 4 for P = 13, 14 (docs/proofs.md, "Proofs
// for every m"), at the article's costs (t_f = 1, t_b = 2): the makespan, bubble fraction
// and peak closed forms of analysis/formulas.hpp hold for every m of the class (m0 = 5P).
// Each point is every_m_in_parts() (proofs_periodic.hpp): the certificate, then the m
// below m0 directly in two parts cut at 3P, each within 80% of Clang 14's steps and GCC
// 12's operations (checked with both limits lowered to 80%). The certificate is one
// evaluation: V = 4 at P = 15 and 16 still pass 80% of GCC 12's operations (27.4 and 31.3
// million of 33.5). A file of its own for GCC 12's memory beside proofs_periodic_p16.cpp,
// which has the smaller P; the run-time twin, tests/runtime/periodic_test.cpp, runs the
// same functions for every P <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using namespace ctpipe::tests;  // interleaved_spec(), every_m_in_parts(): proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2

static_assert(every_m_in_parts<interleaved_spec(15, 3), article, 75, 45>());
static_assert(every_m_in_parts<interleaved_spec(16, 3), article, 80, 48>());
static_assert(every_m_in_parts<interleaved_spec(13, 4), article, 65, 39>());
static_assert(every_m_in_parts<interleaved_spec(14, 4), article, 70, 42>());

}  // namespace
