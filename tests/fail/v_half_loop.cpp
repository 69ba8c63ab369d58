// Compile-fail case: schedule_v of V-Half on the loop placement is rejected (V-Half and
// V-Min run on the V-shape). Built with -DCTPIPE_TWIN it uses the V-shape and must
// compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::pipeline_shape shape{4, 8, 2, ctpipe::placement::v_shape};
#else
constexpr ctpipe::pipeline_shape shape{4, 8, 2, ctpipe::placement::loop};
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::v_half, shape}>;
static_assert(frozen.size() == 4 * 6 * 8);
