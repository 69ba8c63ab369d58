// Compile-time proofs of bubble filling and of the rebalancing bound (docs/spec.md §8):
// the values (the encoder fits 31/32 into 1F1B's bubbles at P = 8, m = 32, all
// of it in the steady state; 36 activations live at once, so no rank gets below 5) and
// prove_fill() on every family. The run-time twin is tests/runtime/fill_test.cpp.
#include "proofs_fill.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::encoder_share;
using ctpipe::tests::family_spec;
using ctpipe::tests::live_brute_force;
using ctpipe::tests::live_of;
using ctpipe::tests::prove_fill;

constexpr schedule_spec one_f_one_b_8_32 = family_spec(schedule_family::one_f_one_b, 8, 32);

// The article's example: an encoder forward of 1/4 before F(0, j), a backward of 1/2
// after B(0, j). The first forward and the last backward have no window at all; the rest
// fits, and the greedy sweep reaches the bound, so nothing does better.
static_assert(encoder_share(one_f_one_b_8_32, rational{1, 4}, rational{1, 2}).share == rational{31, 32});
static_assert(encoder_share(one_f_one_b_8_32, rational{1, 4}, rational{1, 2}).optimal);
static_assert(encoder_share(one_f_one_b_8_32, rational{1, 4}, rational{1, 2}, true).share == rational{1},
              "steady state: all of it");

// The rebalancing bound: 36 live at once over 8 ranks, 36/8 rounded up.
static_assert(live_of(one_f_one_b_8_32, costs{}).live == rational{36});
static_assert(live_of(one_f_one_b_8_32, costs{}).bound == rational{5});
static_assert(live_brute_force(family_spec(schedule_family::one_f_one_b, 4, 8), costs{}) ==
              live_of(family_spec(schedule_family::one_f_one_b, 4, 8), costs{}).live);
static_assert(live_brute_force(family_spec(schedule_family::zb_h1, 4, 8), costs{}) ==
              live_of(family_spec(schedule_family::zb_h1, 4, 8), costs{}).live);
static_assert(live_brute_force(family_spec(schedule_family::dualpipev, 4, 8), costs{}) ==
              live_of(family_spec(schedule_family::dualpipev, 4, 8), costs{}).live);

// Every family: the fill restated from the spec (fill_is_sound()), with and without t_c,
// the encoder jobs whole or divisible, one iteration or the steady state (one variant
// per family here, within Clang's step limit; the run-time twin runs them all).
constexpr costs with_latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
static_assert(prove_fill(family_spec(schedule_family::gpipe, 4, 8), costs{}, false, false));
static_assert(prove_fill(family_spec(schedule_family::one_f_one_b, 4, 8), costs{}, true, false));
static_assert(prove_fill(family_spec(schedule_family::one_f_one_b, 3, 5), with_latency, false, true));
static_assert(prove_fill(family_spec(schedule_family::interleaved_1f1b, 4, 8), costs{}, true, true));
static_assert(prove_fill(family_spec(schedule_family::looped_bfs, 4, 8), with_latency, false, false));
static_assert(prove_fill(family_spec(schedule_family::zb_h1, 4, 8), costs{}, true, false));
static_assert(prove_fill(family_spec(schedule_family::zb_h2, 4, 8), with_latency, false, true));
static_assert(prove_fill(family_spec(schedule_family::zbv, 4, 8), costs{}, true, true));
static_assert(prove_fill(family_spec(schedule_family::interleaved_zb, 4, 8), costs{}, false, false));
static_assert(prove_fill(family_spec(schedule_family::dualpipev, 4, 8), costs{}, true, false));
static_assert(prove_fill(family_spec(schedule_family::dualpipe, 4, 8), with_latency, false, true));
static_assert(prove_fill(family_spec(schedule_family::v_half, 4, 8), costs{}, true, true));
static_assert(prove_fill(family_spec(schedule_family::v_min, 4, 8), with_latency, false, false));
static_assert(prove_fill(family_spec(schedule_family::one_f_one_b, 1, 3), costs{}, true, false), "P = 1");

}  // namespace
