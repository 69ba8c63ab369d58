// Compile-time proofs, structure: GPipe and 1F1B over P in [1, 8] x m in [1, 32] are
// valid, and their peak in-flight per rank (gamma 1 and 3/7) and message counts equal
// the closed forms of analysis/formulas.hpp.
// Each static_assert is one constant evaluation (one P, half the m range) within the
// default limits of GCC 12 and Clang 14, with no -fconstexpr-* flag. The run-time twin
// of every grid is tests/runtime/proofs_test.cpp, through the same functions.
#include "proofs.hpp"

namespace {

using ctpipe::tests::prove_structure;

constexpr auto gpipe = ctpipe::schedule_family::gpipe;
constexpr auto one_f_one_b = ctpipe::schedule_family::one_f_one_b;

// P = 1 .. 8, each with m in [1, 16] and [17, 32].
#define CTPIPE_EACH_P(PROOF, ...)                                                  \
  static_assert(PROOF(__VA_ARGS__, 1, 1, 1, 32), #PROOF " P = 1");                 \
  static_assert(PROOF(__VA_ARGS__, 2, 2, 1, 32), #PROOF " P = 2");                 \
  static_assert(PROOF(__VA_ARGS__, 3, 3, 1, 32), #PROOF " P = 3");                 \
  static_assert(PROOF(__VA_ARGS__, 4, 4, 1, 32), #PROOF " P = 4");                 \
  static_assert(PROOF(__VA_ARGS__, 5, 5, 1, 16), #PROOF " P = 5");                 \
  static_assert(PROOF(__VA_ARGS__, 5, 5, 17, 32), #PROOF " P = 5");                \
  static_assert(PROOF(__VA_ARGS__, 6, 6, 1, 16), #PROOF " P = 6");                 \
  static_assert(PROOF(__VA_ARGS__, 6, 6, 17, 32), #PROOF " P = 6");                \
  static_assert(PROOF(__VA_ARGS__, 7, 7, 1, 16), #PROOF " P = 7");                 \
  static_assert(PROOF(__VA_ARGS__, 7, 7, 17, 32), #PROOF " P = 7");                \
  static_assert(PROOF(__VA_ARGS__, 8, 8, 1, 16), #PROOF " P = 8");                 \
  static_assert(PROOF(__VA_ARGS__, 8, 8, 17, 32), #PROOF " P = 8")

CTPIPE_EACH_P(prove_structure, gpipe);
CTPIPE_EACH_P(prove_structure, one_f_one_b);

}  // namespace
