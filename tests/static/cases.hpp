// The values docs/spec.md §5 and the issues claim, as one table, and the function that
// checks one row. tests/static/spec_values.cpp static_asserts every row;
// tests/runtime/values_test.cpp checks every row at run time through the same function
// and through `ctpipe --format json`.
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// One claimed row. A value of -1 (or a rational of -1) means "not claimed".
struct claimed {
  const char* what;  ///< where the claim comes from
  schedule_spec spec;
  costs cost;
  rational makespan;
  rational bubble;
  int peaks[8];  ///< peak in-flight per rank (chunks), first P entries; {-1}: not claimed
  long long messages;
  rational span_bubble{-1};  ///< max over ranks of span - busy
};

inline constexpr rational unclaimed{-1};
inline constexpr costs article{};  // t_f = 1, t_b = 2, t_i = t_w = 1 (SPEC §5's Zero Bubble table too)
inline constexpr costs equal_costs{rational{1}, rational{1}};

constexpr schedule_spec gpipe(int P, int m) { return {schedule_family::gpipe, {P, m}}; }
constexpr schedule_spec one_f_one_b(int P, int m) { return {schedule_family::one_f_one_b, {P, m}}; }
constexpr schedule_spec zero_bubble(schedule_family f, int P, int m) {
  return {f, {P, m, f == schedule_family::zbv || f == schedule_family::interleaved_zb ? 2 : 1, natural_placement(f)}};
}
constexpr schedule_spec interleaved(int P, int m, int V, interleaved_variant variant = interleaved_variant::megatron,
                                    int group = 0) {
  return {schedule_family::interleaved_1f1b, {P, m, V}, variant, group};
}

inline constexpr claimed claims[] = {
    {"SPEC §5 1F1B P=4 m=8", one_f_one_b(4, 8), article, 33, {3, 11}, {4, 3, 2, 1}, 48},
    {"SPEC §5 GPipe P=4 m=8", gpipe(4, 8), article, 33, {3, 11}, {8, 8, 8, 8}, 48},
    {"SPEC §5 1F1B P=4 m=2", one_f_one_b(4, 2), article, 15, {3, 5}, {2, 2, 2, 1}, -1},
    {"issue 2: 1F1B P=8 m=1", one_f_one_b(8, 1), article, 24, {7, 8}, {1, 1, 1, 1, 1, 1, 1, 1}, -1},
    {"issue 2: GPipe P=4 m=2", gpipe(4, 2), article, 15, {3, 5}, {2, 2, 2, 2}, -1},
    {"issue 2: 1F1B P=4 m=4 (m = P)", one_f_one_b(4, 4), article, 21, {3, 7}, {4, 3, 2, 1}, -1},
    {"issue 2: 1F1B P=3 m=4", one_f_one_b(3, 4), article, 18, unclaimed, {3, 2, 1}, 16},
    {"issue 2: 1F1B P=1 m=4", one_f_one_b(1, 4), article, 12, 0, {1}, 0},
    {"issue 2: GPipe P=1 m=4", gpipe(1, 4), article, 12, 0, {4}, 0},
    {"issue 2: GPipe t_f=t_b=1 P=8 m=32", gpipe(8, 32), equal_costs, 78, {7, 39}, {32, 32, 32, 32, 32, 32, 32, 32}, -1},
    {"issue 2: 1F1B t_f=t_b=1 P=8 m=32", one_f_one_b(8, 32), equal_costs, 78, {7, 39}, {8, 7, 6, 5, 4, 3, 2, 1}, -1},
    {"SPEC §5 interleaved P=4 m=8 V=2", interleaved(4, 8, 2), article, {57, 2}, {3, 19}, {11, 9, 7, 5}, 112},
    {"SPEC §5 interleaved P=8 m=16 V=2",
     interleaved(8, 16, 2),
     article,
     {117, 2},
     {7, 39},
     {23, 21, 19, 17, 15, 13, 11, 9},
     -1},
    {"issue 7: interleaved P=4 m=4 V=2", interleaved(4, 4, 2), article, {33, 2}, {3, 11}, {8, 8, 7, 5}, 56},
    {"issue 7: interleaved legacy P=4 m=4 V=2",
     interleaved(4, 4, 2, interleaved_variant::megatron_legacy),
     article,
     {33, 2},
     {3, 11},
     {8, 8, 8, 8},
     56},
    {"issue 7: interleaved P=2 m=4 V=2", interleaved(2, 4, 2), article, unclaimed, unclaimed, {-1}, 24},
    {"issue 7: interleaved P=4 m=10 V=2 g=5",
     interleaved(4, 10, 2, interleaved_variant::megatron, 5),
     article,
     {69, 2},
     {3, 23},
     {12, 10, 8, 6},
     140},
    {"issue 7: torch P=4 m=3 V=2 (no steady state)",
     interleaved(4, 3, 2, interleaved_variant::torch),
     article,
     unclaimed,
     {2, 5},
     {-1},
     -1},
    {"SPEC §5 ZB-H1 P=4 m=8", zero_bubble(schedule_family::zb_h1, 4, 8), article, 27, {1, 9}, {4, 4, 4, 4}, 48, 3},
    {"SPEC §5 ZB-H2 P=4 m=8", zero_bubble(schedule_family::zb_h2, 4, 8), article, 27, {1, 9}, {7, 7, 7, 7}, 48, 0},
    {"SPEC §5 ZB-V P=4 m=8", zero_bubble(schedule_family::zbv, 4, 8), article, {51, 2}, {1, 17}, {8, 8, 8, 8}, 96, 0},
    {"vectors: interleaved ZB P=4 m=8 V=2",
     zero_bubble(schedule_family::interleaved_zb, 4, 8),
     article,
     {51, 2},
     {1, 17},
     {8, 8, 8, 8},
     112},
    {"SPEC §5 DualPipeV P=4 m=8 (fused pairs)",
     {schedule_family::dualpipev, {4, 8, 2, placement::v_shape}},
     article,
     27,
     {1, 9},
     {9, 9, 9, 9},
     96,
     3},
    {"SPEC §5 DualPipe P=4 m=8 (fused pairs)",
     {schedule_family::dualpipe, {4, 8, 2, placement::bidirectional}},
     article,
     26,
     {1, 13},
     {5, 5, 5, 5},
     48,
     2},
    {"SPEC §5 V-Half P=4 m=8",
     {schedule_family::v_half, {4, 8, 2, placement::v_shape}},
     article,
     {53, 2},
     {5, 53},
     {6, 6, 6, 6},
     96,
     {5, 2}},
    {"SPEC §5 V-Min P=4 m=8",
     {schedule_family::v_min, {4, 8, 2, placement::v_shape}},
     article,
     {59, 2},
     {11, 59},
     {4, 4, 4, 4},
     96,
     {11, 2}},
    {"SPEC §5 combined 1F1B P=4 m=8 V=2 g=4 (fused pairs)",
     {schedule_family::combined_1f1b, {4, 8, 2}},
     article,
     {57, 2},
     {3, 19},
     {12, 10, 8, 6},
     112,
     {9, 2}},
    {"issue 38: combined 1F1B P=4 m=10 V=2 g=5 (fused pairs)",
     {schedule_family::combined_1f1b, {4, 10, 2}, interleaved_variant::megatron, 5},
     article,
     {69, 2},
     {3, 23},
     {13, 11, 9, 7},
     140,
     {9, 2}},
};

/// True when schedule `c` is valid and its simulated values equal the claimed ones.
constexpr bool holds(const claimed& c) {
  const schedule s = generate(c.spec);
  if (!validate(s.view()).ok()) return false;
  const simulation sim = simulate(s.view(), c.cost);
  if (c.makespan != unclaimed && sim.makespan() != c.makespan) return false;
  if (c.bubble != unclaimed && sim.bubble_fraction() != c.bubble) return false;
  const in_flight_profile mem = in_flight(s.view());
  for (int r = 0; r < c.spec.shape.P && c.peaks[0] >= 0; ++r) {
    if (mem.peak(r) != rational{c.peaks[r]}) return false;
  }
  if (c.span_bubble != unclaimed && sim.span_bubble() != c.span_bubble) return false;
  return c.messages < 0 || static_cast<long long>(messages(s.view())) == c.messages;
}

}  // namespace ctpipe::tests
