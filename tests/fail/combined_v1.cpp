// Compile-fail case: combined 1F1B with P = 4 and one model chunk per rank; Megatron-LM
// needs virtual pipelining for the overlap when P > 1. Built with -DCTPIPE_TWIN it uses
// V = 2 and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr int V = 2;
#else
constexpr int V = 1;
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::combined_1f1b, {4, 8, V}}>;
static_assert(ctpipe::validate(frozen.view()).ok());
