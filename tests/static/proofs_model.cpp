// Compile-time proofs of memory in bytes (ctpipe/analysis/model.hpp, docs/memory.md): a
// small model counted by hand, Korthikanti et al. 2022's five per-layer formulas for
// their GPT layer, the bytes per parameter, and the schedule's own peaks against
// Megatron-LM's estimator on the two interleaved cases of docs/memory.md. The run-time
// twin, tests/runtime/model_test.cpp, evaluates the same functions.
#include "proofs_model.hpp"

namespace {

using namespace ctpipe;
using namespace ctpipe::tests;

static_assert(tiny_by_hand());
static_assert(korthikanti_formulas(2048, 1, 12288, 96, 8));
static_assert(korthikanti_formulas(4096, 2, 4096, 32, 4));
static_assert(korthikanti_formulas(4, 1, 8, 2, 2));
static_assert(bytes_per_parameter(transformer_model{}) == rational{18});
static_assert(bytes_per_parameter(transformer_model{.dp = 8, .distributed_optimizer = true}) == rational{15, 2});
static_assert(megatron_against_schedule(8, 8) == rational{15, 2});
static_assert(megatron_against_schedule(4, 0) == rational{4});
static_assert(megatron_stage_equivalents(4, 2, 8) == rational{11, 2});
static_assert(megatron_stage_equivalents(4, 2, 4) == rational{11, 2});

}  // namespace
