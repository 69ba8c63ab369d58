// Compile-fail case: searched_v needs a memory limit of at least 1 full activation per
// rank (detail::check_search_spec()). Built with -DCTPIPE_TWIN the limit is 1 and it
// must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::rational limit{1};
#else
constexpr ctpipe::rational limit{1, 2};
#endif

constexpr ctpipe::search_spec spec{ctpipe::pipeline_shape{3, 4, 1, ctpipe::placement::loop}, ctpipe::costs{},
                                   ctpipe::rational{1}, limit};
static_assert(ctpipe::searched_v<spec>.size() == 36);
