// Compile-time proofs for V-Half and V-Min (the Zero Bubble authors' greedy) over
// P in [1, 3] x m in [1, 3P], P in [4, 6] x m in [1, 2P] and P in {7, 8} x m in
// [1, P+4] (tests/static/proofs.hpp, prove_v_memory_point): op counts; every rank's
// peak in-flight within the paper's bound, floor((P+2)/2) or floor((P+4)/3) full
// activations, and one rank at it; the idle per rank, makespan and bubble fraction of
// ctpipe's closed forms at t_f = t_i = t_w, t_c = 0, m >= P+2 (none claimed below).
// Each (P, m) is one constant evaluation; the run-time twin
// (tests/runtime/zero_bubble_test.cpp) takes P <= 16, m <= 6P with validation, through
// the same function. The grid is kept to about 12 s of compile time per compiler: the
// greedy costs Clang about 400 evaluation steps an op (docs/compile-time.md).
#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace {

using ctpipe::schedule_family;
using ctpipe::tests::prove_v_memory_point;

template <schedule_family F, int P, int M>
inline constexpr bool v_point = prove_v_memory_point(F, P, M, false);

template <int P, int... M>
constexpr bool every_m(std::integer_sequence<int, M...>) {
  return ((v_point<schedule_family::v_half, P, M + 1> && v_point<schedule_family::v_min, P, M + 1>)&&...);
}

static_assert(every_m<1>(std::make_integer_sequence<int, 3>{}), "V-Half and V-Min, P = 1");
static_assert(every_m<2>(std::make_integer_sequence<int, 6>{}), "V-Half and V-Min, P = 2");
static_assert(every_m<3>(std::make_integer_sequence<int, 9>{}), "V-Half and V-Min, P = 3");
static_assert(every_m<4>(std::make_integer_sequence<int, 8>{}), "V-Half and V-Min, P = 4");
static_assert(every_m<5>(std::make_integer_sequence<int, 10>{}), "V-Half and V-Min, P = 5");
static_assert(every_m<6>(std::make_integer_sequence<int, 12>{}), "V-Half and V-Min, P = 6");
static_assert(every_m<7>(std::make_integer_sequence<int, 11>{}), "V-Half and V-Min, P = 7");
static_assert(every_m<8>(std::make_integer_sequence<int, 12>{}), "V-Half and V-Min, P = 8");

}  // namespace
