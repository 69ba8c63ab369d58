// Probe for the cost of DualPipeV's proof for every m at P = CTPIPE_P (docs/proofs.md,
// "Proofs for every m"), as tests/static/proofs_periodic.cpp proves it: DeepSeek's
// makespan, bubble fraction and peak forms from the structural minimum on, the periodic
// certificate in one constant evaluation and the m below its m0 (at most 4P - 1) in two
// more (Clang 14's step limit). With -DCTPIPE_GRID=M the same forms at every m in
// [1, M] directly, in evaluations of 8 m (the way the grid of proofs_dualpipe.cpp
// proved them before); with -DCTPIPE_M=M the forms at that one m (a single schedule).
// bench/every_m_cost.sh times the three beside a baseline.
#include <ctpipe/ctpipe.hpp>

#include <utility>  // std::integer_sequence

using namespace ctpipe;

constexpr schedule_spec at(int m) {
  schedule_spec s{schedule_family::dualpipev, {CTPIPE_P, m, 2, placement::v_shape}};
  s.structural_minimum = true;
  return s;
}

#if defined(CTPIPE_GRID)
template <int Lo>
constexpr bool grid_part = bool(closed_forms_hold_directly(at(2 * CTPIPE_P), costs{}, Lo, Lo + 8));
template <int... Lo>
constexpr bool grid(std::integer_sequence<int, Lo...>) {
  return (grid_part<1 + 8 * Lo> && ...);
}
static_assert(grid(std::make_integer_sequence<int, CTPIPE_GRID / 8>{}));
#elif defined(CTPIPE_M)
static_assert(bool(closed_forms_hold_directly(at(CTPIPE_M), costs{}, CTPIPE_M, CTPIPE_M + 1)));
#else
constexpr int m0_most = 4 * CTPIPE_P - 1;
constexpr bool certified() {
  const periodic_certificate cert = periodic_certificate_of(at(2 * CTPIPE_P), costs{});
  return cert.proved && cert.m0 <= m0_most && bool(closed_forms_hold_from_m0(cert, at(2 * CTPIPE_P), costs{}));
}
static_assert(certified());
static_assert(bool(closed_forms_hold_directly(at(2 * CTPIPE_P), costs{}, 1, 3 * CTPIPE_P)));
static_assert(bool(closed_forms_hold_directly(at(2 * CTPIPE_P), costs{}, 3 * CTPIPE_P, m0_most)));
#endif

int main() { return 0; }
