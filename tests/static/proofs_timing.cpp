// Compile-time proofs, timing: the simulated makespan, bubble fraction and idle per rank
// of GPipe equal the closed forms of analysis/formulas.hpp, over P in [1, 8] x m in
// [1, 32] with the article's costs (t_f = 1, t_b = 2), and over P in [1, 8] x m in
// [1, 16] with four other cost sets (t_b = t_f, fractional costs, t_b < t_f, and a
// latency t_c, which its formulas include). 1F1B's were here on the same grids; they
// are proved for every m in proofs_periodic.cpp (periodic certificates), which makes
// those grids redundant.
// Each static_assert is one constant evaluation (one P, half the m range) within the
// default limits of GCC 12 and Clang 14, with no -fconstexpr-* flag. The run-time twin
// of every grid is tests/runtime/analysis_test.cpp, through the same functions.
#include "proofs.hpp"

namespace {

using ctpipe::costs;
using ctpipe::rational;
using ctpipe::tests::prove_timing;

constexpr auto gpipe = ctpipe::schedule_family::gpipe;

constexpr costs article{};                                    // t_f = 1, t_b = 2
constexpr costs equal{rational{1}, rational{1}};              // t_f = t_b = 1
constexpr costs uneven{rational{1, 2}, rational{5, 3}};       // t_f = 1/2, t_b = 5/3
constexpr costs light_backward{rational{3}, rational{1, 2}};  // t_b < t_f
constexpr costs with_latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};

// P = 1 .. 8 with m in [1, 16].
#define CTPIPE_EACH_P_HALF(PROOF, ...)                              \
  static_assert(PROOF(__VA_ARGS__, 1, 4, 1, 16), #PROOF " P <= 4"); \
  static_assert(PROOF(__VA_ARGS__, 5, 6, 1, 16), #PROOF " P <= 6"); \
  static_assert(PROOF(__VA_ARGS__, 7, 7, 1, 16), #PROOF " P = 7");  \
  static_assert(PROOF(__VA_ARGS__, 8, 8, 1, 16), #PROOF " P = 8")

CTPIPE_EACH_P(prove_timing, gpipe, article);
CTPIPE_EACH_P_HALF(prove_timing, gpipe, equal);
CTPIPE_EACH_P_HALF(prove_timing, gpipe, uneven);
CTPIPE_EACH_P_HALF(prove_timing, gpipe, light_backward);
CTPIPE_EACH_P_HALF(prove_timing, gpipe, with_latency);

}  // namespace
