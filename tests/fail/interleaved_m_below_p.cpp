// Compile-fail case: interleaved 1F1B (Megatron's rule) with P = 6, m = 3, V = 2 has no
// valid group size. Built with -DCTPIPE_TWIN it uses m = 6 and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr int m = 6;
#else
constexpr int m = 3;
#endif

constexpr auto& frozen =
    ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::interleaved_1f1b, {6, m, 2}}>;
static_assert(ctpipe::validate(frozen.view()).ok());
