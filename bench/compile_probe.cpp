// One compile-time proof of one schedule, for bench/compile_scaling.sh: freeze it with
// schedule_v, then in separate constant evaluations validate it, simulate it against its
// bubble-fraction closed form (or, where none applies, check the makespan is positive),
// and check its in-flight peaks against their closed forms where those apply.
// -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P=8 -DCTPIPE_M=64 -DCTPIPE_V=1 -DCTPIPE_LAYOUT=loop;
// -DCTPIPE_VALIDATE=0 leaves out the validation (issue 4's target "generated, simulated
// and proved").
#include <ctpipe/ctpipe.hpp>

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::CTPIPE_FAMILY, {CTPIPE_P, CTPIPE_M, CTPIPE_V, placement::CTPIPE_LAYOUT}};
constexpr auto& frozen = schedule_v<spec>;
#if !defined(CTPIPE_VALIDATE) || CTPIPE_VALIDATE
static_assert(validate(frozen.view()).ok());
#endif
static_assert([] {
  const closed_form f = bubble_fraction_formula(spec, costs{});
  const simulation sim = simulate(frozen.view(), costs{});
  return f.holds ? sim.bubble_fraction() == f.value : sim.makespan() > rational{0};
}());
static_assert([] {
  const in_flight_profile mem = in_flight(frozen.view());
  for (int r = 0; r < CTPIPE_P; ++r) {
    const closed_form f = peak_in_flight_formula(spec, rational{1}, r);
    if (f.holds && mem.peak(r) != f.value) return false;
  }
  return true;
}());

int main() { return static_cast<int>(frozen.size() % 2); }
