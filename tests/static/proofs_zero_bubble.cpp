// Compile-time proofs for ZB-H1, ZB-H2 and ZB-V over P in [1, 8] x m in [1, 4P] with the
// cost sets (t_f, t_i, t_w) = (1,1,1), (2,2,1), (1,2,1) (tests/static/proofs.hpp,
// prove_zero_bubble_point): ZB-H1's idle `(P-1)(t_f+t_i-t_w)` per rank and its makespan,
// bubble and span bubble for m >= P, its peaks `(P-r) + r*gamma`; ZB-H2's span bubble
// `(P-1) max(0, t_f+t_i-2t_w)` and peak 2P-1 for m >= 2P-1; ZB-V's zero span bubble at
// equal costs and peak 2P for m >= 2P-1; below those ranges every formula reports that it
// does not apply. Each (schedule, P, m) is one constant evaluation; validity of every
// point and interleaved ZB run at run time (tests/runtime/zero_bubble_test.cpp).
// P = 1 .. 6 here, P = 7 and 8 in proofs_zero_bubble_p78.cpp (two translation units
// build in parallel).
#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace {

using ctpipe::schedule_family;

template <schedule_family F, int P, int M>
inline constexpr bool zb_point = ctpipe::tests::prove_zero_bubble_point(F, P, M, false);

template <schedule_family F, int P, int... M>
constexpr bool every_m(std::integer_sequence<int, M...>) {
  return (zb_point<F, P, M + 1> && ...);
}

template <int P>
constexpr bool zero_bubble_grid() {
  return every_m<schedule_family::zb_h1, P>(std::make_integer_sequence<int, 4 * P>{}) &&
         every_m<schedule_family::zb_h2, P>(std::make_integer_sequence<int, 4 * P>{}) &&
         every_m<schedule_family::zbv, P>(std::make_integer_sequence<int, 4 * P>{});
}

#ifndef CTPIPE_PROVE_P78
static_assert(zero_bubble_grid<1>(), "Zero Bubble, P = 1");
static_assert(zero_bubble_grid<2>(), "Zero Bubble, P = 2");
static_assert(zero_bubble_grid<3>(), "Zero Bubble, P = 3");
static_assert(zero_bubble_grid<4>(), "Zero Bubble, P = 4");
static_assert(zero_bubble_grid<5>(), "Zero Bubble, P = 5");
static_assert(zero_bubble_grid<6>(), "Zero Bubble, P = 6");
#else
static_assert(zero_bubble_grid<7>(), "Zero Bubble, P = 7");
static_assert(zero_bubble_grid<8>(), "Zero Bubble, P = 8");
#endif

}  // namespace
