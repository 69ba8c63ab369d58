// Compile-fail case: schedule_v of DualPipe with P = 5 is rejected by DeepSeek's rule
// (DualPipe.step asserts num_ranks % 2 == 0). Built with -DCTPIPE_TWIN it uses P = 4
// and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::pipeline_shape shape{4, 8, 2, ctpipe::placement::bidirectional};
#else
constexpr ctpipe::pipeline_shape shape{5, 10, 2, ctpipe::placement::bidirectional};
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::dualpipe, shape}>;
static_assert(frozen.size() > 0);
