// Compile-fail case: a bubble-fill job must take time (check_jobs()).
// Built with -DCTPIPE_TWIN it lasts 1/2 and must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::rational duration{1, 2};
#else
constexpr ctpipe::rational duration{0};
#endif

constexpr bool fills() {
  const ctpipe::schedule s = ctpipe::generate({ctpipe::schedule_family::one_f_one_b, {4, 8}});
  const ctpipe::fill_job jobs[] = {{"side task", -1, duration}};
  return ctpipe::fill_bubbles(s.view(), ctpipe::costs{}, jobs).total == duration;
}
static_assert(fills());
