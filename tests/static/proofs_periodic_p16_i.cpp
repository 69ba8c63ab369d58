// Compile-time proofs for every m of interleaved 1F1B (megatron variant, group P, every
// m = 0 mod P) at P = 1 for V = 2 .. 4, at V = 3 for P = 15, 16 and at V = 4 for P =
// 13 .. 16 (docs/proofs.md, "Proofs for every m"), at the article's costs (t_f = 1, t_b
// = 2): the makespan, bubble fraction and peak closed forms of analysis/formulas.hpp
// hold for every m of the class (m0 = 5P; 2 at P = 1). From P = 13 each point is
// every_m_in_parts() (proofs_periodic.hpp): the certificate, then the m below m0
// directly in two parts cut at 3P, each within 80% of Clang 14's steps and GCC 12's
// operations (checked with both limits lowered to 80%); at V = 4 for P = 15, 16 the
// certificate itself in two (every_m_apart(), below). A file of its own for GCC 12's
// memory beside proofs_periodic_p16.cpp, which has the smaller P; the run-time twin,
// tests/runtime/periodic_test.cpp, runs the same functions for every P <= 16.
#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using ctpipe::periodic_structure;
using namespace ctpipe::tests;  // interleaved_spec(), certified(), every_m_in_parts(), every_m_apart():
                                // proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2

// P = 1 (its V chunks on one rank, m0 = 2), one evaluation each.
static_assert(certified(interleaved_spec(1, 2), article, 2), "interleaved 1F1B, every m, P = 1, V = 2");
static_assert(certified(interleaved_spec(1, 3), article, 2), "interleaved 1F1B, every m, P = 1, V = 3");
static_assert(certified(interleaved_spec(1, 4), article, 2), "interleaved 1F1B, every m, P = 1, V = 4");
static_assert(every_m_in_parts<interleaved_spec(15, 3), article, 75, 45>());
static_assert(every_m_in_parts<interleaved_spec(16, 3), article, 80, 48>());
static_assert(every_m_in_parts<interleaved_spec(13, 4), article, 65, 39>());
static_assert(every_m_in_parts<interleaved_spec(14, 4), article, 70, 42>());

// V = 4 at P = 15 and 16: the certificate alone passes 80% of GCC 12's operations (27.4
// and 31.3 million of 33.5 million), so it is taken in two evaluations (every_m_apart()):
// its window [2, 4) and width 2 at 4 repetitions past m_min (periodic_structure_of(), the
// op graph without a simulation), then its repeat and forms given them (the simulation
// without the graph).
static_assert(every_m_apart<interleaved_spec(15, 4), article, 75, periodic_structure{4, 2, 4, 2}, 45>());
static_assert(every_m_apart<interleaved_spec(16, 4), article, 80, periodic_structure{4, 2, 4, 2}, 48>());

}  // namespace
