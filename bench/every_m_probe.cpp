// Probe for the cost of a proof for every m (docs/proofs.md, "Proofs for every m"): the
// makespan, bubble fraction and peak closed forms of CTPIPE_FAMILY at P = CTPIPE_P hold
// for every m >= 1, from one periodic certificate and the direct simulations below its
// m0, as tests/static/proofs_periodic.cpp proves them. Compile with
// -DCTPIPE_FAMILY=one_f_one_b|zb_h1|zb_h2|zbv -DCTPIPE_P=..; with -DCTPIPE_GRID=M it
// proves the same closed forms the way the grids did before, directly at every m in
// [1, M], in evaluations of 16 m each. bench/every_m_cost.sh times both beside
// bench/largest_proof.cpp at one m.
#include <ctpipe/ctpipe.hpp>

#include <utility>  // std::integer_sequence

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::CTPIPE_FAMILY, {CTPIPE_P, 1}};

#ifdef CTPIPE_GRID
template <int Lo>
constexpr bool grid_part = bool(closed_forms_hold_directly(spec, costs{}, Lo, Lo + 16));
template <int... Lo>
constexpr bool grid(std::integer_sequence<int, Lo...>) {
  return (grid_part<1 + 16 * Lo> && ...);
}
static_assert(grid(std::make_integer_sequence<int, CTPIPE_GRID / 16>{}));
#else
constexpr bool every_m() {
  const periodic_certificate cert = periodic_certificate_of(spec, costs{});
  return cert.proved && bool(closed_forms_hold_from_m0(cert, spec, costs{})) &&
         bool(closed_forms_hold_directly(spec, costs{}, 1, cert.m0));
}
static_assert(every_m());
#endif

int main() { return 0; }
