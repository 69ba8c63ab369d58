// Compile-time proofs for DualPipeV over P in [1, 8] x m in [1, 2P + 2] and DualPipe over
// P in {2, 4, 6, 8} x m in [1, 2P + 2] (tests/static/proofs.hpp, prove_dual_point), with
// DeepSeek's rule and at the structural minimum: the rule; op counts; every rank's peak
// in-flight, DeepSeek's PP+1 (2P + 1 chunks, P + 1 for DualPipe) but one less on the
// outer ranks at the structural minimum; the messages; and DeepSeek's idle per rank,
// (P-1)(F&B + B - 3W) or (P/2-1)(F&B + B - 3W), with the makespan and bubble fraction,
// at the article's costs and, for P <= 4, two more cost sets of its range (t_i = t_f,
// t_w <= t_f, t_b = t_i + t_w, fused pairs without overlap gain, t_c = 0). The grid holds
// the rule's edges (m < 2P refused, the structural minimum, 2P and 2P + 2); the forms for
// every m are proved by the periodic certificates of tests/static/proofs_periodic.cpp
// (which replaced this grid's m up to 4P). Each (P, m) is one constant evaluation;
// validity of every point runs at run time (tests/runtime/zero_bubble_test.cpp, P <= 12, m <= 6P, through the same
// function).
#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace {

using ctpipe::schedule_family;
using ctpipe::tests::prove_dual_point;

// The idle at the article's costs on the whole grid, at all three cost sets for P <= 4
// (the run-time twin takes all three everywhere).
template <schedule_family F, int P, int M>
inline constexpr bool dual_point = prove_dual_point(F, P, M, false, false, P <= 4 ? 3 : 1) &&
                                   prove_dual_point(F, P, M, false, true, P <= 4 ? 3 : 1);

template <int P, int... M>
constexpr bool every_m(std::integer_sequence<int, M...>) {
  return (dual_point<schedule_family::dualpipev, P, M + 1> && ...);
}

template <int P, int... M>
constexpr bool every_m_dualpipe(std::integer_sequence<int, M...>) {
  return (dual_point<schedule_family::dualpipe, P, M + 1> && ...);
}

static_assert(every_m<1>(std::make_integer_sequence<int, 4>{}), "DualPipeV, P = 1");
static_assert(every_m<2>(std::make_integer_sequence<int, 6>{}), "DualPipeV, P = 2");
static_assert(every_m<3>(std::make_integer_sequence<int, 8>{}), "DualPipeV, P = 3");
static_assert(every_m<4>(std::make_integer_sequence<int, 10>{}), "DualPipeV, P = 4");
static_assert(every_m<5>(std::make_integer_sequence<int, 12>{}), "DualPipeV, P = 5");
static_assert(every_m<6>(std::make_integer_sequence<int, 14>{}), "DualPipeV, P = 6");
static_assert(every_m<7>(std::make_integer_sequence<int, 16>{}), "DualPipeV, P = 7");
static_assert(every_m<8>(std::make_integer_sequence<int, 18>{}), "DualPipeV, P = 8");
static_assert(every_m_dualpipe<2>(std::make_integer_sequence<int, 6>{}), "DualPipe, P = 2");
static_assert(every_m_dualpipe<4>(std::make_integer_sequence<int, 10>{}), "DualPipe, P = 4");
static_assert(every_m_dualpipe<6>(std::make_integer_sequence<int, 14>{}), "DualPipe, P = 6");
static_assert(every_m_dualpipe<8>(std::make_integer_sequence<int, 18>{}), "DualPipe, P = 8");
static_assert(every_m_dualpipe<3>(std::make_integer_sequence<int, 4>{}), "DualPipe refuses an odd P");

}  // namespace
