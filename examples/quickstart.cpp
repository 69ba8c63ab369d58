// The README's example: a schedule as constexpr data, a static_assert on its bubble, and
// a loop over rank 0's ops.
#include <ctpipe/ctpipe.hpp>

#include <cstdio>

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::one_f_one_b, {.P = 4, .m = 8}};
constexpr auto& one_f_one_b = schedule_v<spec>;  // per-rank op lists in static storage
static_assert(simulate(one_f_one_b.view(), costs{}).bubble_fraction() == rational{3, 11});
static_assert(in_flight(one_f_one_b.view()).peak(0) == rational{4});  // P activations

int main() {
  for (const op o : one_f_one_b.rank(0))  // std::span<const op>
    std::printf("%d%s%d ", o.stage(), kind_name(o.kind()), o.microbatch());
  std::printf("\n");
}
