// Faulty schedules for the validator, built in constant expressions so that the same
// cases are checked by static_assert (spec_values.cpp) and at run time (analysis_test).
#pragma once

#include <ctpipe/ctpipe.hpp>

#include <cstddef>           // std::size_t
#include <initializer_list>  // hand-written op lists

namespace ctpipe::tests {

enum class fault_case {
  missing_backward,              ///< 1F1B P=4 m=8 without rank 2's B of micro-batch 3
  duplicate_forward,             ///< 1F1B P=4 m=8, rank 0 runs F of micro-batch 2 twice
  late_backward_before_forward,  ///< 1F1B P=4 m=8, rank 2 swaps steps 9 (F5) and 12 (B5)
  cross_rank_deadlock,           ///< P=2 m=2: rank 0 waits for 1B0, rank 1 for 0F1
};

/// A schedule from explicit per-rank lists.
constexpr schedule from_lists(pipeline_shape shape, std::initializer_list<std::initializer_list<op>> lists) {
  std::size_t total = 0;
  for (const auto& list : lists) total += list.size();
  schedule s{shape, total};
  std::size_t k = 0;
  int r = 0;
  for (const auto& list : lists) {
    for (const op o : list) s.ops()[k++] = o;
    s.offsets()[static_cast<std::size_t>(++r)] = static_cast<std::uint32_t>(k);
  }
  return s;
}

/// The 1F1B P=4 m=8 schedule with rank `r`'s list edited: `drop` (a position to remove
/// or -1), `insert_at` / `inserted` (a position and op to insert, or -1), `swap_a` /
/// `swap_b` (two positions to exchange, or -1).
constexpr schedule edited_1f1b(int r, int drop, int insert_at, op inserted, int swap_a, int swap_b) {
  const schedule base = generate({schedule_family::one_f_one_b, {4, 8}});
  const std::size_t total = base.size() - (drop >= 0) + (insert_at >= 0);
  schedule s{base.shape(), total};
  std::size_t k = 0;
  for (int rank = 0; rank < 4; ++rank) {
    const auto list = base.rank(rank);
    for (int step = 0; step < static_cast<int>(list.size()); ++step) {
      if (rank == r && step == insert_at) s.ops()[k++] = inserted;
      if (rank == r && step == drop) continue;
      const int from = rank == r && step == swap_a ? swap_b : rank == r && step == swap_b ? swap_a : step;
      s.ops()[k++] = list[static_cast<std::size_t>(from)];
    }
    s.offsets()[static_cast<std::size_t>(rank) + 1] = static_cast<std::uint32_t>(k);
  }
  return s;
}

constexpr schedule make_faulty(fault_case c) {
  switch (c) {
    case fault_case::missing_backward:  // rank 2: ... F6(11) B5(12) F7 B6 B7; B3 is step 8
      return edited_1f1b(2, 8, -1, op{}, -1, -1);
    case fault_case::duplicate_forward:  // rank 0: F0 F1 F2 F2 F3 B0 ...
      return edited_1f1b(0, -1, 3, op{op_kind::F, 0, 2}, -1, -1);
    case fault_case::late_backward_before_forward: return edited_1f1b(2, -1, -1, op{}, 9, 12);
    case fault_case::cross_rank_deadlock:
      return from_lists({2, 2},
                        {{op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::B, 0, 1}},
                         {op{op_kind::F, 1, 0}, op{op_kind::F, 1, 1}, op{op_kind::B, 1, 0}, op{op_kind::B, 1, 1}}});
  }
  return schedule{};
}

constexpr validation_issue first_issue(fault_case c) { return validate(make_faulty(c).view()).first; }
constexpr std::size_t issue_count(fault_case c) { return validate(make_faulty(c).view()).count; }

}  // namespace ctpipe::tests
