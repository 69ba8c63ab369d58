// Compile-fail case: schedule_v with {4, 8, 0} (P, m, V) is rejected by the gate.
// Built with -DCTPIPE_TWIN it uses {4, 8, 1} and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::pipeline_shape shape{4, 8, 1};
#else
constexpr ctpipe::pipeline_shape shape{4, 8, 0};
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::one_f_one_b, shape}>;
static_assert(frozen.size() > 0);
