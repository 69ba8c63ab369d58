// ctpipe/analysis/walk.hpp: runs a schedule's per-rank lists under docs/spec.md §2's
// dependencies, in an order that is linear in the number of ops. Shared by the
// simulator (which stamps end times) and the validator (which reports where it stalls).
//
// Algorithm: a stack of runnable ranks. A rank runs ops until its next op needs one that
// has not run; then it parks on that op (a per-op list of waiting ranks). When an op
// runs, the ranks parked on it go back on the stack. Each op runs once and each rank
// parks at most once per op it runs, so the work is O(ops + P).
//
// The per-op loop keeps core/engine.hpp's constant-evaluation discipline.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::int64_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe::detail {

/// The placement's dependency rule (placement_table), where it differs from "F(s) needs F(s-1), B/I(s)
/// needs B/I(s+1)": on the bidirectional placement an up micro-batch's F(P, j) needs no
/// F(P-1, j), and a down micro-batch's B/I(P-1, j) no B/I(P, j) (pipeline_shape::
/// first_stage, last_stage). Marks those absent ops as done in `done` ([F keys | B/I
/// keys], `keys` = S*m entries each), so the per-op loops keep their one rule. O(m), once.
template <class T>
constexpr void mark_pipeline_ends(const pipeline_shape& shape, T* done, std::size_t keys) {
  if (shape.layout != placement::bidirectional) return;
  const std::size_t P = static_cast<std::size_t>(shape.P), m = static_cast<std::size_t>(shape.m);
  for (std::size_t j = 0; j < m; ++j) {
    if (2 * j >= m) {
      done[(P - 1) * m + j] = 1;  // F(P-1, j): the up pipeline starts at stage P
    } else {
      done[keys + P * m + j] = 1;  // B/I(P, j): the down pipeline ends at stage P-1
    }
  }
}

class dependency_walk {
 public:
  /// Prepares a walk of `v` (the view must outlive the walk).
  constexpr explicit dependency_walk(schedule_view v)
      : v_(v),
        S_(static_cast<std::uint32_t>(v.shape.stages())),
        m_(static_cast<std::uint32_t>(v.shape.m)),
        keys_(static_cast<std::size_t>(S_) * m_),
        stamp_(2 * keys_ + 2),
        wait_(2 * keys_ + 2),
        next_wait_(static_cast<std::size_t>(v.shape.P)),
        work_(static_cast<std::uint32_t>(v.shape.P), v.offsets.data()) {
    mark_pipeline_ends(v.shape, stamp_.data(), keys_);
  }

  /// Runs every op whose dependencies can be met, in a dependency-respecting order.
  /// For each op calls `visit(rank, index, kind, stage, stamp_a, stamp_b)` and stores the
  /// non-zero stamp it returns as the op's completion stamp (the simulator returns end
  /// time + 1). `index` is the op's position in the flat array; `kind` its op_kind as an
  /// integer; `stamp_a` / `stamp_b` are the stamps of the ops it depends on, or 1 where
  /// it has none: `a` = the previous stage's F for an F, the same stage's F for B/I, the
  /// same stage's I (or B) for W; `b` = the next stage's B/I for a B/I.
  /// An overlapped pair (an op_kind::overlap_f_b word at `index` and its B word at
  /// `index + 1`) runs as one op when the inputs of both halves have run: the walk calls
  /// `visit_pair(rank, index, stage_f, stamp_f, stage_b, stamp_b_a, stamp_b_b)` (its
  /// forward's dependency; its backward's two, as for a B) and stores the stamp it
  /// returns for both halves.
  /// Stops at the first op outside the shape, and at a pair word that is not followed on
  /// its rank by a B inside the shape (see out_of_shape()).
  /// Returns true when every rank ran all of its ops. Call it once per walk (its
  /// worklist starts full and ends empty).
  template <class Visit, class VisitPair>
  constexpr bool run(Visit&& visit, VisitPair&& visit_pair) {
    const op* ops = v_.ops.data();
    const std::uint32_t* off = v_.offsets.data();
    std::int64_t* stamp = stamp_.data();
    std::uint32_t* wait = wait_.data();
    std::uint32_t* next_wait = next_wait_.data();
    std::uint32_t* pos = work_.pos.data();
    std::uint32_t* stack = work_.stack.data();
    const std::uint32_t keys = static_cast<std::uint32_t>(keys_);
    const std::uint32_t always = 2 * keys;       // a slot that is always done (stamp 1)
    const std::uint32_t nowhere = 2 * keys + 1;  // where W's completion goes
    stamp[always] = 1;
    std::uint32_t top = work_.top;  // the pop loop of core/engine.hpp's rank_worklist
    std::uint32_t bits = 0, kind = 0, s = 0, j = 0, in_shape = 0, key = 0, a = 0, b = 0, self = 0, missing = 0;
    while (top > 0) {
      const std::uint32_t r = stack[--top];
      std::uint32_t k = pos[r];
      for (const std::uint32_t end = off[r + 1]; k < end; ++k) {
        // One expression statement assigning variables declared outside the loops
        // (core/engine.hpp).
        // `a`, `b`: slots of the two dependencies; `self`: this op's slot.
        bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu,
        in_shape = kind <= 3 && s < S_ && j < m_, key = in_shape ? s * m_ + j : 0,
        a = !in_shape   ? always
            : kind == 0 ? (s > 0 ? key - m_ : always)
            : kind == 3 ? keys + key
                        : key,
        b = in_shape && (kind == 1 || kind == 2) && s + 1 < S_ ? keys + key + m_ : always,
        self = kind == 0   ? key
               : kind == 3 ? nowhere
                           : keys + key,
        missing = stamp[a] == 0   ? a
                  : stamp[b] == 0 ? b
                                  : nowhere;
        if (!in_shape || missing != nowhere) {  // one test per op on the common path
          if (!in_shape) {
            // An overlapped pair (kind 8, then its B), or an op that stops the walk.
            missing = run_pair_or_stop(r, k, end, top, visit_pair);
            if (missing == nowhere) {
              ++k;  // past the pair's B
              continue;
            }
            if (missing == nowhere + 1) return false;
          }
          next_wait[r] = wait[missing];  // park rank r on that op
          wait[missing] = r + 1;
          break;
        }
        stamp[self] = visit(r, k, kind, s, stamp[a], stamp[b]);
        if (wait[self] != 0) {  // wake the ranks parked on this op
          for (std::uint32_t w = wait[self]; w != 0; w = next_wait[w - 1]) stack[top++] = w - 1;
          wait[self] = 0;
        }
      }
      pos[r] = k;
    }
    return work_.finished(off);
  }

  /// run()'s step for rank r's op k outside the shape's compute ops (`!in_shape`), off
  /// the common path and in a function of its own (written inline in run() it cut GCC's
  /// largest lowered_v proof although no pair-free schedule runs it: core/engine.hpp).
  /// For an overlapped pair's word followed by its B word (rank r's list ends at `end`):
  /// runs the pair when the inputs of both halves have run (visit_pair, both stamps,
  /// wakes) and returns `nowhere`; returns the slot to park rank r on when one has not.
  /// Any other op, or a pair word without a B word inside the shape after it, stops the
  /// walk: sets out_of_shape_ and returns `nowhere + 1`.
  template <class VisitPair>
  constexpr std::uint32_t run_pair_or_stop(std::uint32_t r, std::uint32_t k, std::uint32_t end, std::uint32_t& top,
                                           VisitPair& visit_pair) {
    // Raw pointers, no range-for (core/engine.hpp): DualPipe's steady ops are all pairs.
    const std::uint32_t keys = static_cast<std::uint32_t>(keys_), always = 2 * keys, nowhere = 2 * keys + 1;
    const op* ops = v_.ops.data();
    std::int64_t* stamp = stamp_.data();
    std::uint32_t *wait = wait_.data(), *next_wait = next_wait_.data(), *stack = work_.stack.data();
    const std::uint32_t word = ops[k].bits, s = (word >> 16) & 0xFFFu, j = word & 0xFFFFu;
    const std::uint32_t next = (word >> 28) == 8 && s < S_ && j < m_ && k + 1 < end ? ops[k + 1].bits : 0;
    const std::uint32_t s2 = (next >> 16) & 0xFFFu, j2 = next & 0xFFFFu;
    if ((next >> 28) != 1 || s2 >= S_ || j2 >= m_) return out_of_shape_ = true, nowhere + 1;
    const std::uint32_t key_f = s * m_ + j, key_b = s2 * m_ + j2;
    const std::uint32_t dep_f = s > 0 ? key_f - m_ : always, dep_b = s2 + 1 < S_ ? keys + key_b + m_ : always;
    if (stamp[dep_f] == 0 || stamp[key_b] == 0 || stamp[dep_b] == 0)
      return stamp[dep_f] == 0 ? dep_f : stamp[key_b] == 0 ? key_b : dep_b;
    stamp[key_f] = stamp[keys + key_b] = visit_pair(r, k, s, stamp[dep_f], s2, stamp[key_b], stamp[dep_b]);
    for (std::uint32_t w = wait[key_f]; w != 0; w = next_wait[w - 1]) stack[top++] = w - 1;
    for (std::uint32_t w = wait[keys + key_b]; w != 0; w = next_wait[w - 1]) stack[top++] = w - 1;
    wait[key_f] = wait[keys + key_b] = 0;
    return nowhere;
  }

  /// Position in the flat array of rank r's first op that did not run (== offsets[r+1]
  /// when the rank finished).
  constexpr std::uint32_t position(int r) const { return work_.pos[static_cast<std::size_t>(r)]; }

  /// Whether run() stopped at an op that is not a compute op or lies outside the shape,
  /// or at a pair word without its B.
  constexpr bool out_of_shape() const { return out_of_shape_; }

  /// Whether an F (forward == true) or a B/I of (stage, micro-batch) has run.
  constexpr bool ran(bool forward, int stage, int microbatch) const {
    const std::size_t key = static_cast<std::size_t>(stage) * m_ + static_cast<std::size_t>(microbatch);
    return stamp_[forward ? key : keys_ + key] != 0;
  }

 private:
  schedule_view v_;
  std::uint32_t S_;
  std::uint32_t m_;
  std::size_t keys_;                 // S*m
  buffer<std::int64_t> stamp_;       // [F keys | B/I keys | always | nowhere]: stamps
  buffer<std::uint32_t> wait_;       // same slots: first rank + 1 parked on that op
  buffer<std::uint32_t> next_wait_;  // per rank: next rank + 1 parked on the same op
  rank_worklist work_;               // per rank its next op; the runnable ranks
  bool out_of_shape_ = false;
};

}  // namespace ctpipe::detail
