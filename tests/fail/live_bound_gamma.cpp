// Compile-fail case: the rebalancing bound takes gamma in [0, 1] (check_gamma()).
// Built with -DCTPIPE_TWIN gamma is 1/2 and it must compile.
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr ctpipe::rational gamma{1, 2};
#else
constexpr ctpipe::rational gamma{3, 2};
#endif

constexpr ctpipe::rational live() {
  const ctpipe::schedule s = ctpipe::generate({ctpipe::schedule_family::zb_h1, {4, 8}});
  return ctpipe::live_bound(s.view(), ctpipe::costs{}, gamma).live;
}
static_assert(live() > ctpipe::rational{0});
