// Compile-fail case: an overlapped pair cost t_fb below 0 (other than -1, its default
// "t_f + t_b") is rejected by check_costs(). Built with -DCTPIPE_TWIN it uses t_fb = 5/2
// and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::rational fb{5, 2};
#else
constexpr ctpipe::rational fb{-1, 2};
#endif

constexpr ctpipe::costs pair_costs{ctpipe::rational{1}, ctpipe::rational{2}, ctpipe::rational{1},
                                   ctpipe::rational{1}, ctpipe::rational{0}, fb};
constexpr auto& dualpipev = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::dualpipev,
                                                                     {2, 4, 2, ctpipe::placement::v_shape}}>;
static_assert(ctpipe::simulate(dualpipev.view(), pair_costs).makespan() > ctpipe::rational{0});
