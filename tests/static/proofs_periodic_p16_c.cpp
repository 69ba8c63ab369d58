// Compile-time proofs for every m of combined 1F1B (Megatron's expert-parallel overlap,
// pairs fused at t_fb = t_f + t_b, group P, every m = 0 mod P) for P in [2, 16] and V in
// [2, 4], and at P = 1 (V = 1, its only V there) (docs/proofs.md, "Proofs for every m"),
// at the article's costs (t_f = 1, t_b = 2): its makespan, bubble fraction and peak
// closed forms (schedules/combined.hpp) hold for every m of the class (m0 = 4P). From P
// = 2 each point is every_m_apart() (proofs_periodic.hpp):
// the certificate's window and width, periodic_structure{4, 2, 4, 2} at every point (4
// repetitions past m_min, the window [2, 4), width 2: the op graph, no simulation), then
// its repeat and forms given them (the simulation, no graph), then the m = P, 2P, 3P
// below m0 directly, one each: at P = 16, V = 4 the certificate alone passes Clang 14's
// step limit (about 1.09 million steps) and the three m below m0 together 72% of it.
// Each part is within 80% of Clang 14's steps and GCC 12's operations (checked with both
// limits lowered to 80%). proofs_periodic.cpp has combined 1F1B at P = 4, V = 2 with its
// peaks; the run-time twin, tests/runtime/combined_test.cpp and periodic_test.cpp, runs
// the same functions.
#include <utility>  // std::integer_sequence

#include "proofs_periodic.hpp"

namespace {

using ctpipe::costs;
using ctpipe::periodic_structure;
using namespace ctpipe::tests;  // combined_spec(), certified(), every_m_apart(): proofs_periodic.hpp

constexpr costs article{};  // t_f = 1, t_b = 2, t_fb = t_f + t_b

/// Every point P = 2 + k, k in K..., at V: its certificate's structure, repeat and forms
/// and the m below m0 = 4P, each part its own constant evaluation.
template <int V, int... K>
constexpr bool every_m_combined(std::integer_sequence<int, K...>) {
  return (every_m_apart<combined_spec(K + 2, V), article, 4 * (K + 2), periodic_structure{4, 2, 4, 2}, 2 * (K + 2),
                        3 * (K + 2)>() &&
          ...);
}

// P = 1 runs one chunk (V = 1, Megatron's no-pipelining schedule): one evaluation.
static_assert(certified(combined_spec(1, 1), article, 2), "combined 1F1B, every m, P = 1");
static_assert(every_m_combined<2>(std::make_integer_sequence<int, 15>{}), "combined 1F1B, V = 2, P = 2 .. 16");
static_assert(every_m_combined<3>(std::make_integer_sequence<int, 15>{}), "combined 1F1B, V = 3, P = 2 .. 16");
static_assert(every_m_combined<4>(std::make_integer_sequence<int, 15>{}), "combined 1F1B, V = 4, P = 2 .. 16");

}  // namespace
