// ctpipe/analysis/validate.hpp: is a set of per-rank op lists a valid schedule?
// (docs/spec.md §2: every needed op exactly once on the rank owning its stage, F before B/I
// before W, and the lists run to completion.)
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::uint8_t

#include "ctpipe/analysis/walk.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

/// What is wrong with one op of a schedule.
enum class fault : std::uint8_t {
  bad_shape,    ///< the shape fails check_shape() (P, m or V < 1, ...)
  bad_offsets,  ///< offsets are not P+1 non-decreasing positions ending at the op count
  not_compute,  ///< a transfer op (SEND/RECV, SEND_ACT/RECV_ACT) in a compute schedule, or an op of an unused kind code
                ///< (11 to 15) anywhere
  out_of_shape,    ///< stage >= P*V or micro-batch >= m
  wrong_rank,      ///< the op's stage is owned by another rank
  duplicate,       ///< the same (kind, stage, micro-batch) appears twice
  mixed_backward,  ///< both B and I/W for one (stage, micro-batch)
  missing,         ///< a needed op appears nowhere (`at` names it; rank = owner, step = -1)
  out_of_order,    ///< B/I before its F, or W before its I, on the same rank
  deadlock,        ///< the rank's first op that can never run (`needs` = what it waits for)
  broken_pair,     ///< an overlapped pair's word (OVERLAP_F_B) not followed on its rank by a B word (its backward half)
  // Faults of lowered schedules (validate_lowered(), ctpipe/lower/validate.hpp):
  local_transfer,       ///< a send/recv between two stages of one rank (no message is needed)
  send_before_compute,  ///< a send before the compute op that produces its data (`needs` = that op)
  not_received,         ///< a compute op whose input from another rank was not received before it
  wrong_microbatch,     ///< a compute op's input was not received, another micro-batch's was (`needs` = its own RECV)
  no_partner,           ///< a send/recv whose partner stage does not exist (SEND_F on the last stage, ...)
  wrong_pairing,        ///< batched, paired first in first out per rank pair: the k-th send and the k-th receive carry
                        ///< different messages (`needs` = the op it was paired with)
  two_hosts,  ///< an activation copy (SEND_ACT/RECV_ACT) on a second host rank: an activation moves to one host
              ///< (`needs` = the first host's op)
};

/// One-line description of a fault, for messages.
constexpr const char* fault_description(fault f) {
  constexpr const char* text[] = {
      "the shape is invalid (see check_shape)",
      "offsets are not P+1 non-decreasing positions ending at the op count",
      "not an op this schedule may hold: a send/recv in a compute schedule, or an unused kind code (11 to 15)",
      "stage or micro-batch outside the shape",
      "op on a rank that does not own its stage",
      "op appears twice",
      "both B and I/W for one stage and micro-batch",
      "op missing",
      "op comes before the op it needs on the same rank",
      "deadlock: this op waits for an op that never runs",
      "overlapped pair (OVERLAP_F_B) not followed on its rank by a B, its backward half",
      "send/recv between two stages on one rank",
      "send comes before the compute op that produces its data",
      "compute op whose input was not received before it on its rank",
      "compute op whose input was not received before it, while another micro-batch's was (matching by order feeds it "
      "that one)",
      "send/recv whose partner stage does not exist",
      "receive paired, first in first out, with a send of another message (a batched runtime without tags would mix "
      "them up)",
      "activation copy on a second host rank (an activation moves to one host and back)",
  };
  return text[static_cast<int>(f)];
}

/// One problem found by validate(). `rank` and `step` locate the offending op (`step`
/// is its index in that rank's list; -1 for a missing op, which is in no list); `at` is
/// the op; `needs` is the op it waits for (deadlock, out_of_order) or equals `at`.
struct validation_issue {
  fault what = fault::missing;
  int rank = -1;
  int step = -1;
  op at{};
  op needs{};
  friend constexpr bool operator==(const validation_issue&, const validation_issue&) = default;
};

/// Summary of validate(): how many issues and the first one.
struct validation_result {
  std::size_t count = 0;     ///< number of issues found
  validation_issue first{};  ///< the first issue (meaningful when count > 0)
  constexpr bool ok() const { return count == 0; }
};

namespace detail {

/// The validators' report(fault, rank, step, at, needs): counts each issue in `count`
/// and passes it to `on_issue(validation_issue)`.
template <class OnIssue>
constexpr auto counting_report(std::size_t& count, OnIssue& on_issue) {
  return [&count, &on_issue](fault f, int r, int step, op at, op needs) {
    ++count;
    on_issue(validation_issue{f, r, step, at, needs});
  };
}

/// Per (stage, micro-batch) of `v`'s shape, `stage * m + micro-batch`: 1 where `v` holds
/// an I of it (its backward is split into I and W), else 0. A schedule may mix full and
/// split backwards (DualPipeV does), so a diagnosis names the producer of a gradient
/// from this table, not from the op that waits. One pass over the ops; ops outside the
/// shape are skipped. For diagnoses only, off the per-op paths.
constexpr buffer<std::uint8_t> split_backwards(schedule_view v) {
  const std::size_t S = static_cast<std::size_t>(v.shape.stages()), m = static_cast<std::size_t>(v.shape.m);
  buffer<std::uint8_t> split(S * m);
  for (const op o : v.ops) {
    const std::size_t s = static_cast<std::size_t>(o.stage()), j = static_cast<std::size_t>(o.microbatch());
    if (o.kind() == op_kind::I && s < S && j < m) split[s * m + j] = 1;
  }
  return split;
}

/// The backward that produces (stage, micro-batch)'s input gradient: I where
/// split_backwards() marks it, else B.
constexpr op_kind backward_kind(const buffer<std::uint8_t>& split, const pipeline_shape& shape, int stage,
                                int microbatch) {
  return split[static_cast<std::size_t>(stage) * static_cast<std::size_t>(shape.m) +
               static_cast<std::size_t>(microbatch)] != 0
             ? op_kind::I
             : op_kind::B;
}

/// The op that blocked op `o` of a stuck rank waits for (`split`: split_backwards();
/// `pair_b`: the B word after `o` when `o` is an overlapped pair's word).
constexpr op needed_dependency(const dependency_walk& walk, const buffer<std::uint8_t>& split,
                               const pipeline_shape& shape, op o, op pair_b = op{}) {
  if (o.kind() == op_kind::overlap_f_b) {  // its forward's input first, then its backward's
    if (o.stage() > 0 && !walk.ran(true, o.stage() - 1, o.microbatch()))
      return op{op_kind::F, o.stage() - 1, o.microbatch()};
    o = pair_b;
  }
  const int s = o.stage();
  const int j = o.microbatch();
  if (o.kind() == op_kind::F) return op{op_kind::F, s - 1, j};
  if (o.kind() == op_kind::W) return op{op_kind::I, s, j};
  if (!walk.ran(true, s, j)) return op{op_kind::F, s, j};
  return op{backward_kind(split, shape, s + 1, j), s + 1, j};
}

/// Whether `v` cannot be indexed at all, and why: `what` = bad_shape when its shape
/// fails check_shape(), bad_offsets when `offsets` is not P+1 non-decreasing positions
/// from 0 to the op count. The validators' first check; O(P).
constexpr bool structure_broken(const schedule_view& v, fault& what) {
  if (shape_error(v.shape) != nullptr) {
    what = fault::bad_shape;
    return true;
  }
  what = fault::bad_offsets;
  return !offsets_sound(v);
}

}  // namespace detail

namespace detail {

/// check_compute_ops()'s last step: the ops missing from `where` (its table of seen
/// ops, [kind][stage * m + micro-batch]), by (stage, micro-batch): an F, and a B or an I
/// and a W (I and W when the schedule splits its backward). Calls `report` per op.
template <class Report>
constexpr void report_missing_ops(const pipeline_shape& shape, const std::uint8_t* where, const std::uint32_t* owner,
                                  bool split, Report& report) {
  const int S = shape.stages();
  const int m = shape.m;
  const std::size_t keys = static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  for (int s = 0; s < S; ++s) {
    // The micro-batches whose pipeline holds stage s (all but on the bidirectional
    // placement: the down ones below stage P, the up ones from it).
    const bool both_ways = shape.layout == placement::bidirectional;
    const int j_first = both_ways && s >= shape.P ? (m + 1) / 2 : 0, j_end = both_ways && s < shape.P ? (m + 1) / 2 : m;
    for (int j = j_first; j < j_end; ++j) {
      const std::size_t key = static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j);
      const bool has_b = where[keys + key] != 0, has_i = where[2 * keys + key] != 0, has_w = where[3 * keys + key] != 0;
      if (where[key] != 0 && (has_b || (has_i && has_w))) continue;  // the common case
      auto missing = [&](op_kind k) {
        report(fault::missing, static_cast<int>(owner[s]), -1, op{k, s, j}, op{k, s, j});
      };
      if (where[key] == 0) missing(op_kind::F);
      if (has_b) continue;
      if (!has_i && !has_w) missing(split ? op_kind::I : op_kind::B);
      if (has_i && !has_w) missing(op_kind::W);
      if (!has_i && has_w) missing(op_kind::I);
      if (split && !has_i && !has_w) missing(op_kind::W);
    }
  }
}

/// On the bidirectional placement: reports each compute op on a stage outside its
/// micro-batch's pipeline as out_of_shape (pipeline_shape::first_stage, last_stage), in
/// rank order, and returns their number. Linear; run only for that placement.
template <class Report>
constexpr std::size_t outside_pipelines_reported(schedule_view v, Report& report) {
  std::size_t count = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1];
         ++k) {
      const op o = v.ops[k];
      if (((o.bits >> 28) <= 3 || (o.bits >> 28) == 8) && o.stage() < v.shape.stages() && o.microbatch() < v.shape.m &&
          (o.stage() < v.shape.first_stage(o.microbatch()) || o.stage() > v.shape.last_stage(o.microbatch()))) {
        report(fault::out_of_shape, r, static_cast<int>(k - v.offsets[static_cast<std::size_t>(r)]), o, o);
        ++count;
      }
    }
  }
  return count;
}

/// check_compute_ops()'s step for op k of rank r when it is no F, B, I or W inside the
/// shape. Returns true for an overlapped pair's word followed on its rank by a B word
/// (it is then checked as its F); else reports it (a transfer of a lowered list is
/// checked elsewhere): broken_pair for a word without its B (its F still counts as seen,
/// so the backward after it is not out of order), not_compute for a transfer or an
/// unused kind, out_of_shape for a stage or micro-batch outside the shape, and clears
/// `in_shape`.
template <bool Lowered, class Report>
constexpr bool unfit_is_pair(schedule_view v, std::uint32_t r, std::uint32_t k, std::uint8_t* where, bool& in_shape,
                             Report& report) {
  const std::uint32_t* off = v.offsets.data();
  const op o = v.ops[k];
  const std::uint32_t kind = o.bits >> 28;
  if (Lowered && ((kind >= 4 && kind <= 7) || kind == 9 || kind == 10)) return false;  // transfers, activation copies
  const bool inside = o.stage() < v.shape.stages() && o.microbatch() < v.shape.m;
  const bool paired = kind == 8 && k + 1 < off[r + 1] && (v.ops[k + 1].bits >> 28) == 1;
  if (paired && inside) return true;
  report(kind == 8 && !paired    ? fault::broken_pair
         : kind > 3 && kind != 8 ? fault::not_compute
                                 : fault::out_of_shape,
         static_cast<int>(r), static_cast<int>(k - off[r]), o, o);
  if (kind == 8 && inside)
    where[static_cast<std::size_t>(o.stage()) * static_cast<std::size_t>(v.shape.m) +
          static_cast<std::size_t>(o.microbatch())] = 1;
  in_shape = false;
  return false;
}

/// validate()'s checks of the ops themselves, in its order: on the bidirectional
/// placement first each op on a stage outside its micro-batch's pipeline (out_of_shape);
/// then per op in rank order out_of_shape (or not_compute, broken_pair), wrong rank,
/// duplicate, mixed backward, out of order;
/// then, when every op is in the shape, missing ops by (stage, micro-batch). Calls
/// `report(fault, rank, step, at, needs)` per issue and returns whether every op was in
/// the shape (the dependency walk can run). `Lowered`: the lists may hold transfer ops
/// too (kinds SEND_F..RECV_B), which it skips (execute()'s precondition); steps then count
/// positions in the lowered lists. Counts the overlapped pairs in `*pairs` when given (its
/// slow path sees each: the passes that treat pairs apart learn of them at no per-op
/// cost). Linear; tables indexed by (stage, micro-batch).
template <bool Lowered, class Report>
constexpr bool check_compute_ops(schedule_view v, Report& report, std::size_t* pairs = nullptr) {
  const std::uint32_t P = static_cast<std::uint32_t>(v.shape.P);
  const int S = v.shape.stages();
  const int m = v.shape.m;
  // One pass over every op: range, owner, duplicate, mixed backward, order.
  // where[kind * keys + key] = 1 when that op was seen.
  const std::size_t keys = static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  detail::buffer<std::uint8_t> where_buffer(keys * 4);
  const stage_table stages(v.shape);
  std::uint8_t* where = where_buffer.data();
  const std::uint32_t* owner = stages.owner.data();
  const std::uint32_t* off = v.offsets.data();
  bool split = false;
  bool in_shape = true;
  const op* ops = v.ops.data();
  // Per-op values outside the loops, assigned in one expression (core/engine.hpp).
  // `mixed`: B next to an I/W, or I/W next to a B; `early`: a B/I before its F, or a W
  // before its I.
  std::size_t bits = 0, kind = 0, s = 0, j = 0, fits = 0, key = 0, slot = 0, mixed = 0, early = 0;
  if (v.shape.layout == placement::bidirectional) in_shape = outside_pipelines_reported(v, report) == 0;
  for (std::uint32_t r = 0; r < P; ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu,
      fits = kind <= 3 && s < static_cast<std::size_t>(S) && j < static_cast<std::size_t>(m),
      key = fits ? s * static_cast<std::size_t>(m) + j : 0, slot = kind * keys + key,
      mixed = fits &&
              (kind == 1 ? (where[2 * keys + key] | where[3 * keys + key]) != 0 : kind != 0 && where[keys + key] != 0),
      early = fits && kind != 0 && where[(kind == 3 ? 2 * keys : 0) + key] == 0;
      if (!fits) {  // off the common path, in a function of its own (core/engine.hpp)
        if (!unfit_is_pair<Lowered>(v, r, k, where, in_shape, report)) continue;
        kind = 0, key = s * static_cast<std::size_t>(m) + j, slot = key, mixed = 0, early = 0;
        if (pairs != nullptr) ++*pairs;
      }
      if (owner[s] != r) report(fault::wrong_rank, static_cast<int>(r), static_cast<int>(k - off[r]), ops[k], ops[k]);
      if (where[slot] != 0) {
        report(fault::duplicate, static_cast<int>(r), static_cast<int>(k - off[r]), ops[k], ops[k]);
        continue;
      }
      where[slot] = 1;
      split = split || kind > 1;
      if (mixed || early) {
        report(mixed ? fault::mixed_backward : fault::out_of_order, static_cast<int>(r), static_cast<int>(k - off[r]),
               ops[k],
               mixed ? ops[k] : op{kind == 3 ? op_kind::I : op_kind::F, static_cast<int>(s), static_cast<int>(j)});
      }
    }
  }
  if (!in_shape) return false;
  report_missing_ops(v.shape, where, owner, split, report);
  return true;
}

}  // namespace detail

namespace detail {
/// validate(v, on_issue), counting the overlapped pairs of `v` in `*pairs` when given
/// (lower() and validate_lowered() treat a schedule with pairs apart).
template <class OnIssue>
constexpr std::size_t validate_counting_pairs(schedule_view v, OnIssue&& on_issue, std::size_t* pairs) {
  std::size_t count = 0;
  auto report = detail::counting_report(count, on_issue);
  const int P = v.shape.P;
  if (fault broken{}; detail::structure_broken(v, broken)) {
    report(broken, -1, -1, op{}, op{});
    return count;
  }
  if (!detail::check_compute_ops<false>(v, report, pairs)) return count;
  // Deadlock.
  detail::dependency_walk walk(v);
  const auto stamp = [](auto...) { return std::int64_t{1}; };
  if (!walk.run(stamp, stamp)) {
    const detail::buffer<std::uint8_t> split = detail::split_backwards(v);
    for (int r = 0; r < P; ++r) {
      const std::uint32_t k = walk.position(r);
      if (k == v.offsets[static_cast<std::size_t>(r) + 1]) continue;
      const op o = v.ops[k];
      report(
          fault::deadlock, r, static_cast<int>(k - v.offsets[static_cast<std::size_t>(r)]), o,
          detail::needed_dependency(walk, split, v.shape, o, o.kind() == op_kind::overlap_f_b ? v.ops[k + 1] : op{}));
    }
  }
  return count;
}
}  // namespace detail

/// Validates schedule `v`, calling `on_issue(validation_issue)` for each problem in a
/// fixed order: shape, layout and range problems (then it stops: nothing else can be
/// indexed),
/// then per op in rank order wrong rank, duplicate, mixed backward, out of order, then
/// missing ops by (stage, micro-batch), then one deadlock issue per stuck rank naming the
/// first op of that rank that can never run, wherever in its list it is. Returns the
/// number of issues. Each (stage, micro-batch) needs an F and either one B or one I and
/// one W. An overlapped pair's word stands for its F and must be followed on its rank by
/// a B word (broken_pair); the pair runs when the inputs of both halves have run. Time
/// and memory linear in the number of ops plus P*V*m (its tables are indexed by (stage,
/// micro-batch)).
template <class OnIssue>
constexpr std::size_t validate(schedule_view v, OnIssue&& on_issue) {
  return detail::validate_counting_pairs(v, on_issue, nullptr);
}

/// Validates schedule `v` and returns the number of issues and the first one;
/// `validate(v).ok()` is the check to static_assert.
constexpr validation_result validate(schedule_view v) {
  validation_result result;
  validate(v, [&result](const validation_issue& issue) {
    if (result.count++ == 0) result.first = issue;
  });
  return result;
}

}  // namespace ctpipe
