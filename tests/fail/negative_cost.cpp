// Compile-fail case: simulating with a negative cost is rejected by check_costs().
// Built with -DCTPIPE_TWIN it uses t_b = 2 and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::costs cost{ctpipe::rational{1}, ctpipe::rational{2}};
#else
constexpr ctpipe::costs cost{ctpipe::rational{1}, ctpipe::rational{-2}};
#endif

constexpr auto& frozen = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::gpipe, {4, 8}}>;
static_assert(ctpipe::simulate(frozen.view(), cost).makespan() > ctpipe::rational{0});
