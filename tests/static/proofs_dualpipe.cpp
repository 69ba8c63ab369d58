// Compile-time proofs for DualPipeV over P in [1, 8] x m in [1, 4P]
// (tests/static/proofs.hpp, prove_dualpipev_point), with DeepSeek's rule and at the
// structural minimum: m < 2P (2P-1) is rejected; elsewhere rank r runs 4m + 2P - 1 - r
// ops, every rank's peak in-flight is DeepSeek's 2P + 1 chunks (gamma = 1) but rank 0's
// 2P at m = 2P-1, and the messages are 2m(2P-2). Each (P, m) is
// one constant evaluation; validity of every point runs at run time
// (tests/runtime/zero_bubble_test.cpp, P <= 12, m <= 6P, through the same function).
#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace {

template <int P, int M>
inline constexpr bool dualpipev_point =
    ctpipe::tests::prove_dualpipev_point(P, M, false) && ctpipe::tests::prove_dualpipev_point(P, M, false, true);

template <int P, int... M>
constexpr bool every_m(std::integer_sequence<int, M...>) {
  return (dualpipev_point<P, M + 1> && ...);
}

static_assert(every_m<1>(std::make_integer_sequence<int, 4>{}), "DualPipeV, P = 1");
static_assert(every_m<2>(std::make_integer_sequence<int, 8>{}), "DualPipeV, P = 2");
static_assert(every_m<3>(std::make_integer_sequence<int, 12>{}), "DualPipeV, P = 3");
static_assert(every_m<4>(std::make_integer_sequence<int, 16>{}), "DualPipeV, P = 4");
static_assert(every_m<5>(std::make_integer_sequence<int, 20>{}), "DualPipeV, P = 5");
static_assert(every_m<6>(std::make_integer_sequence<int, 24>{}), "DualPipeV, P = 6");
static_assert(every_m<7>(std::make_integer_sequence<int, 28>{}), "DualPipeV, P = 7");
static_assert(every_m<8>(std::make_integer_sequence<int, 32>{}), "DualPipeV, P = 8");

}  // namespace
