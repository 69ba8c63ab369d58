// Compile-fail case: combined 1F1B with P = 4, m = 6, V = 2 and the default group g = P
// leaves a last group of 2 < P micro-batches, which Megatron-LM refuses. Built with
// -DCTPIPE_TWIN it uses m = 8 and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr int m = 8;
#else
constexpr int m = 6;
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::combined_1f1b, {4, m, 2}}>;
static_assert(ctpipe::validate(frozen.view()).ok());
