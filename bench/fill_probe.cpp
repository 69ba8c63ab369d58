// Probe for the largest bubble fill ctpipe proves at compile time under the compilers'
// default constexpr limits: 1F1B with P = CTPIPE_P, m = CTPIPE_M, the article's encoder
// (forward 1/4, backward 1/2 per micro-batch, whole jobs), fill_bubbles() (the greedy
// sweep, its checks and the re-simulation proof inside) reaching its bound, which is all
// the encoder work but the first forward and the last backward (docs/bubbles.md).
// -DCTPIPE_BASELINE compiles only the include, for the baseline time.
// bench/fill_limits.sh searches the largest m for GCC and Clang.
#include <ctpipe/ctpipe.hpp>

#ifndef CTPIPE_BASELINE
using namespace ctpipe;

constexpr bool fills_all_but_two() {
  const schedule s = generate({schedule_family::one_f_one_b, {CTPIPE_P, CTPIPE_M}});
  const detail::buffer<fill_job> jobs = encoder_jobs(s.view(), rational{1, 4}, rational{1, 2});
  const fill_result r = fill_bubbles(s.view(), costs{}, jobs.span());
  return r.optimal && r.total == r.work - rational{3, 4};
}
static_assert(fills_all_but_two());
#endif

int main() { return 0; }
