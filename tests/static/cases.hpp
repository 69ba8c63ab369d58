// The values SPEC.md §5 and issue #2 claim for GPipe and 1F1B, as one table, and the
// function that checks one row. tests/static/spec_values.cpp static_asserts every row;
// tests/runtime/values_test.cpp checks every row at run time through the same function
// and through `ctpipe --format json`.
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// One claimed row. A value of -1 (or a rational of -1) means "not claimed".
struct claimed {
  const char* what;       ///< where the claim comes from
  schedule_family family;
  int P;
  int m;
  costs cost;
  rational makespan;
  rational bubble;
  int peaks[8];           ///< peak in-flight per rank (chunks), first P entries
  long long messages;
};

inline constexpr rational unclaimed{-1};
inline constexpr costs article{};
inline constexpr costs equal_costs{rational{1}, rational{1}};

inline constexpr claimed claims[] = {
    {"SPEC §5 1F1B P=4 m=8", schedule_family::one_f_one_b, 4, 8, article, 33, {3, 11}, {4, 3, 2, 1}, 48},
    {"SPEC §5 GPipe P=4 m=8", schedule_family::gpipe, 4, 8, article, 33, {3, 11}, {8, 8, 8, 8}, 48},
    {"SPEC §5 1F1B P=4 m=2", schedule_family::one_f_one_b, 4, 2, article, 15, {3, 5}, {2, 2, 2, 1}, -1},
    {"issue 2: 1F1B P=8 m=1", schedule_family::one_f_one_b, 8, 1, article, 24, {7, 8}, {1, 1, 1, 1, 1, 1, 1, 1}, -1},
    {"issue 2: GPipe P=4 m=2", schedule_family::gpipe, 4, 2, article, 15, {3, 5}, {2, 2, 2, 2}, -1},
    {"issue 2: 1F1B P=4 m=4 (m = P)", schedule_family::one_f_one_b, 4, 4, article, 21, {3, 7}, {4, 3, 2, 1}, -1},
    {"issue 2: 1F1B P=3 m=4", schedule_family::one_f_one_b, 3, 4, article, 18, unclaimed, {3, 2, 1}, 16},
    {"issue 2: 1F1B P=1 m=4", schedule_family::one_f_one_b, 1, 4, article, 12, 0, {1}, 0},
    {"issue 2: GPipe P=1 m=4", schedule_family::gpipe, 1, 4, article, 12, 0, {4}, 0},
    {"issue 2: GPipe t_f=t_b=1 P=8 m=32", schedule_family::gpipe, 8, 32, equal_costs, 78, {7, 39}, {32, 32, 32, 32, 32, 32, 32, 32}, -1},
    {"issue 2: 1F1B t_f=t_b=1 P=8 m=32", schedule_family::one_f_one_b, 8, 32, equal_costs, 78, {7, 39}, {8, 7, 6, 5, 4, 3, 2, 1}, -1},
};

/// True when schedule `c` is valid and its simulated values equal the claimed ones.
constexpr bool holds(const claimed& c) {
  const schedule s = generate({c.family, {c.P, c.m}});
  if (!validate(s.view()).ok()) return false;
  const simulation sim = simulate(s.view(), c.cost);
  if (sim.makespan() != c.makespan) return false;
  if (c.bubble != unclaimed && sim.bubble_fraction() != c.bubble) return false;
  const in_flight_profile mem = in_flight(s.view());
  for (int r = 0; r < c.P; ++r) {
    if (mem.peak(r) != rational{c.peaks[r]}) return false;
  }
  return c.messages < 0 || static_cast<long long>(messages(s.view())) == c.messages;
}

}  // namespace ctpipe::tests
