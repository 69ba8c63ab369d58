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

// ZB-V with m far below 2P-1 freezes in work linear in its ops: P = 512, m = 1 is 3,072
// ops (its generator once walked 2P-1 micro-batches per rank and dropped the ops of
// those >= m: about 1M iterations, past both compilers' limits).
constexpr auto& thin_zbv =
    ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::zbv, {512, 1, 2, ctpipe::placement::v_shape}}>;
static_assert(thin_zbv.rank(0).size() == 6 && thin_zbv.rank(511).size() == 6);
static_assert(ctpipe::validate(thin_zbv.view()).ok());

}  // namespace
