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
// The proofs take the view as a parameter: Clang 14 evaluates a local variable's
// initializer once more on its own when it is a constant expression by itself (a local
// `const simulation sim = simulate(frozen.view(), ...)` in a lambda doubled the
// simulation's compile time), not when it depends on a parameter.
constexpr bool bubble_proof(schedule_view v) {
  const closed_form f = bubble_fraction_formula(spec, costs{});
  const simulation sim = simulate(v, costs{});
  return f.holds ? sim.bubble_fraction() == f.value : sim.makespan() > rational{0};
}
constexpr bool peak_proof(schedule_view v) {
  const in_flight_profile mem = in_flight(v);
  for (int r = 0; r < CTPIPE_P; ++r) {
    const closed_form f = peak_in_flight_formula(spec, rational{1}, r);
    if (f.holds && mem.peak(r) != f.value) return false;
  }
  return true;
}
static_assert(bubble_proof(frozen.view()));
static_assert(peak_proof(frozen.view()));

int main() { return static_cast<int>(frozen.size() % 2); }
