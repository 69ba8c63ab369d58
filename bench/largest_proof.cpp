// Probe for the largest schedule ctpipe proves at compile time under the compilers'
// default constexpr limits: generate (schedule_v), validate, simulate (bubble fraction
// and makespan against the closed form) and in-flight peaks against the closed form, each
// a separate constant evaluation. Compile with -DCTPIPE_FAMILY=gpipe|one_f_one_b -DCTPIPE_P=.. -DCTPIPE_M=..;
// bench/largest_proof.sh searches the largest m per P for GCC and Clang.
#include <ctpipe/ctpipe.hpp>

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::CTPIPE_FAMILY, {CTPIPE_P, CTPIPE_M}};
constexpr auto& frozen = schedule_v<spec>;
static_assert(validate(frozen.view()).ok());
static_assert(simulate(frozen.view(), costs{}).bubble_fraction() == bubble_fraction_formula(spec, costs{}).value);
static_assert(simulate(frozen.view(), costs{}).makespan() == makespan_formula(spec, costs{}).value);
// The view arrives as a parameter: Clang 14 evaluates a local variable's initializer
// once more on its own when it is a constant expression by itself.
constexpr bool peak_proof(schedule_view v) {
  const in_flight_profile mem = in_flight(v);
  for (int r = 0; r < CTPIPE_P; ++r) {
    if (mem.peak(r) != peak_in_flight_formula(spec, rational{1}, r).value) return false;
  }
  return true;
}
static_assert(peak_proof(frozen.view()));

int main() { return frozen.rank(0).size() == 2 * CTPIPE_M ? 0 : 1; }
