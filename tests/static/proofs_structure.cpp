// Compile-time proofs, structure: GPipe and 1F1B over P in [1, 8] x m in [1, 32] are
// valid, and their peak in-flight per rank (gamma 1 and 3/7) and message counts equal
// the closed forms of analysis/formulas.hpp.
// Each static_assert is one constant evaluation (one P, half the m range) within the
// default limits of GCC 12 and Clang 14, with no -fconstexpr-* flag. The run-time twin
// of every grid is tests/runtime/analysis_test.cpp, through the same functions.
#include "proofs.hpp"

namespace {

using ctpipe::tests::prove_structure;

constexpr auto gpipe = ctpipe::schedule_family::gpipe;
constexpr auto one_f_one_b = ctpipe::schedule_family::one_f_one_b;

CTPIPE_EACH_P(prove_structure, gpipe);
CTPIPE_EACH_P(prove_structure, one_f_one_b);

}  // namespace
