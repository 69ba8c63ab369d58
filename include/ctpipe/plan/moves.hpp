// ctpipe/plan/moves.hpp: a rebalancing plan (ctpipe/plan/rebalance.hpp) written
// into lowered lists as activation copies, SEND_ACT and RECV_ACT (docs/spec.md §8.3), so
// that execute() runs the moves on the copy channels as a runtime would; and the moves
// read back from such a run, to be replayed by check_rebalance().
//
// A runtime starts a copy without a clock: when both its ops have been reached in their
// lists and the copies before them on their channels have arrived. So lower_moves()
// places each copy op right after the last compute op of its rank that ends at or
// before the copy's planned start, and rebalance() plans only starts that such a runtime
// reproduces (the end of a compute op of one of the two ranks, or of the copy before on
// one of the two channels). The run then starts every copy at its planned time.
#pragma once

#include <algorithm>  // std::sort, std::upper_bound
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/transfer.hpp"
#include "ctpipe/analysis/graph.hpp"
#include "ctpipe/plan/rebalance.hpp"

namespace ctpipe {

namespace detail {

/// One activation copy op to insert: its rank, its place (after that many compute ops of
/// the rank), its planned start, its phase (0: the copy out, 1: the copy back), its move.
struct copy_op {
  std::size_t rank = 0, position = 0;
  rational time{0};
  int phase = 0;
  std::size_t move = 0;
  op what{};
};

/// lower_moves()'s message for check_rebalance()'s `problem` (a literal each: the
/// library's messages have static storage).
inline const char* plan_problem(const char* problem) {
  const std::string_view p = problem == nullptr ? "" : problem;
  if (p == "a move must take an F's activation from its own rank to another, once") {
    return "ctpipe: lower_moves() takes a plan check_rebalance() accepts: a move must take an F's activation from its "
           "own rank to another, once";
  }
  if (p == "a move leaves before its F ends or comes back after its backward starts") {
    return "ctpipe: lower_moves() takes a plan check_rebalance() accepts: a move leaves before its F ends or comes "
           "back after its backward starts";
  }
  if (p == "two transfers share a copy channel") {
    return "ctpipe: lower_moves() takes a plan check_rebalance() accepts: two transfers share a copy channel";
  }
  return "ctpipe: lower_moves() takes a plan check_rebalance() accepts";
}

/// The place of a copy at `time` on rank r of compute lists `cv` timed by `sim`: how many
/// of r's ops come before it: every compute op of r that ends by then, but for
/// zero-length ops at `time` itself (one may wait for this very copy; in list order they
/// follow every op that lasts and ends there). O(log ops of r).
inline std::size_t copy_place(schedule_view cv, const simulation& sim, std::size_t r, const rational& time) {
  std::size_t lo = cv.offsets[r], hi = cv.offsets[r + 1];  // the first op not before the copy
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (sim.end(mid) < time || (sim.end(mid) == time && sim.start(mid) < time)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - cv.offsets[r];
}

/// The four copy ops of each move of `moves` (lower_moves()'s doc comment) on compute
/// lists `cv` timed by `sim`, sorted by rank, place, time, phase, then move. O(n log n).
inline std::vector<copy_op> copy_ops_of(schedule_view cv, const simulation& sim,
                                        std::span<const activation_move> moves) {
  const op_index index(cv);
  std::vector<copy_op> copies;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const activation_move& mv = moves[i];
    const std::size_t home = static_cast<std::size_t>(mv.from), host = static_cast<std::size_t>(mv.to);
    std::uint32_t first_back = index.find(op{op_kind::B, mv.stage, mv.microbatch});
    if (first_back == 0) first_back = index.find(op{op_kind::I, mv.stage, mv.microbatch});
    std::size_t latest = first_back - 1 - cv.offsets[home];  // the home's copy back comes before it
    if (latest > 0 && cv.ops[first_back - 2].kind() == op_kind::overlap_f_b) --latest;  // and before its pair
    // The home's copy out comes after its F (a zero-length pair word, t_fb = 0, ends at
    // the copy's start: the copy waits for it, never the other way round), and after a
    // pair's B word.
    const std::uint32_t f = index.find(op{op_kind::F, mv.stage, mv.microbatch});
    const std::size_t earliest = f - cv.offsets[home] + (cv.ops[f - 1].kind() == op_kind::overlap_f_b ? 1 : 0);
    const op out_send{op_kind::send_act, mv.stage, mv.microbatch}, out_recv{op_kind::recv_act, mv.stage, mv.microbatch};
    copies.push_back({home, std::max(copy_place(cv, sim, home, mv.send), earliest), mv.send, 0, i, out_send});
    copies.push_back({host, copy_place(cv, sim, host, mv.send), mv.send, 0, i, out_recv});
    copies.push_back({host, copy_place(cv, sim, host, mv.back), mv.back, 1, i, out_send});
    copies.push_back({home, std::min(copy_place(cv, sim, home, mv.back), latest), mv.back, 1, i, out_recv});
  }
  std::sort(copies.begin(), copies.end(), [](const copy_op& a, const copy_op& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.position != b.position) return a.position < b.position;
    if (a.time != b.time) return a.time < b.time;
    return a.phase != b.phase ? a.phase < b.phase : a.move < b.move;
  });
  return copies;
}

/// Lowered lists `lowered` with `copies` (copy_ops_of()'s, sorted) written in: each after
/// that many compute ops of its rank (transfers not counted), before the transfers that
/// follow them. Shapes: `lowered.size() + copies.size()` ops, CSR. Linear.
inline schedule with_copies(schedule_view lowered, const std::vector<copy_op>& copies) {
  schedule out{lowered.shape, lowered.size() + copies.size()};
  std::span<op> ops = out.ops();
  std::span<std::uint32_t> offsets = out.offsets();
  std::size_t w = 0, next = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(lowered.shape.P); ++r) {
    std::size_t seen = 0;  // compute ops of r written so far
    const auto copies_here = [&] {
      for (; next < copies.size() && copies[next].rank == r && copies[next].position == seen; ++next)
        ops[w++] = copies[next].what;
    };
    copies_here();
    for (const op o : lowered.rank(static_cast<int>(r))) {
      ops[w++] = o;
      if (is_transfer(o.kind())) continue;
      ++seen;
      copies_here();
    }
    offsets[r + 1] = static_cast<std::uint32_t>(w);
  }
  return out;
}

}  // namespace detail

/// Lowered lists `lowered` (lower()'s, or any that validate_lowered() accepts, without
/// activation copies) with the moves of plan `moves` (rebalance_plan::moves) written in
/// as activation copies (docs/spec.md §8.3): per move, four ops
/// - on the home rank `from`: `SEND_ACT` (the copy out) and later `RECV_ACT` (the copy back);
/// - on the host rank `to`: `RECV_ACT` (the copy out) and later `SEND_ACT` (the copy back);
/// each placed right after the last compute op of its rank that ends (in simulate(), under
/// `c` and `scale`) at or before its copy's planned start (`send` or `back`), zero-length
/// ops at that very time excepted (one may wait for the copy), before the transfers that
/// follow that op, and the home's RECV_ACT before the activation's first backward. Ops at
/// one place keep their copies' time order.
///
/// execute() of the result under a model on which the lowered lists run with simulate()'s
/// times (blocking and posted always: lower()'s zero loss) starts every copy at its planned
/// time when the plan is rebalance()'s (its starts are ones a runtime reproduces), so no
/// compute op moves and executed_moves() gives the plan back (tested on every family).
/// Shapes: `lowered`'s shape, `lowered.size() + 4 * moves.size()` ops, CSR.
///
/// Errors: check_view()'s messages; `ctpipe: lower_moves() takes lowered lists without
/// activation copies`; `ctpipe: lower_moves() takes lowered lists that
/// validate_lowered_ops() accepts (lower()'s)`; `ctpipe: lower_moves() takes a plan
/// check_rebalance() accepts: ` and check_rebalance()'s problem; simulate()'s messages.
/// Run time: O(n log n).
inline schedule lower_moves(schedule_view lowered, const costs& c, std::span<const activation_move> moves,
                            const cost_scale& scale = {}) {
  check_view(lowered);
  for (const op o : lowered.ops)
    detail::require(!is_move(o.kind()), "ctpipe: lower_moves() takes lowered lists without activation copies");
  detail::require(validate_lowered_ops(lowered, [](const validation_issue&) {}) == 0,
                  "ctpipe: lower_moves() takes lowered lists that validate_lowered_ops() accepts (lower()'s)");
  const schedule compute = compute_part(lowered);
  const schedule_view cv = compute.view();
  const rebalance_check replay = check_rebalance(cv, c, moves, rational{1}, scale);
  detail::require(replay.problem == nullptr, detail::plan_problem(replay.problem));
  const simulation sim = simulate(cv, c, scale);
  return detail::with_copies(lowered, detail::copy_ops_of(cv, sim, moves));
}

/// The moves an execution of lists with activation copies ran (lower_moves()'s, or any
/// that execute() accepts): per home SEND_ACT, in rank and list order, its activation,
/// home, host (the rank of its RECV_ACT), and the executed starts of its copy out
/// (`send`) and copy back (`back`). check_rebalance() of these on the lists' compute part
/// gives the executed peaks. Errors: `ctpipe: executed_moves() takes a completed run of
/// these lists` when `run` is not a completed execution of `lists`. Linear.
inline std::vector<activation_move> executed_moves(schedule_view lists, const execution& run) {
  check_view(lists);
  detail::require(run.completed() && run.size() == lists.size(),
                  "ctpipe: executed_moves() takes a completed run of these lists");
  const std::size_t keys = static_cast<std::size_t>(lists.shape.stages()) * static_cast<std::size_t>(lists.shape.m);
  std::vector<std::size_t> host_of(keys), back_of(keys);  // per key: the host + 1, the home's RECV_ACT + 1
  const auto key_of = [&](op o) {
    return static_cast<std::size_t>(o.stage()) * static_cast<std::size_t>(lists.shape.m) +
           static_cast<std::size_t>(o.microbatch());
  };
  for (int r = 0; r < lists.shape.P; ++r) {
    for (std::uint32_t k = lists.offsets[static_cast<std::size_t>(r)];
         k < lists.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const op o = lists.ops[k];
      if (!is_move(o.kind())) continue;
      const bool home = lists.shape.rank_of(o.stage()) == r;
      if (!home) host_of[key_of(o)] = static_cast<std::size_t>(r) + 1;
      if (home && o.kind() == op_kind::recv_act) back_of[key_of(o)] = k + 1;
    }
  }
  std::vector<activation_move> out;
  for (int r = 0; r < lists.shape.P; ++r) {
    for (std::uint32_t k = lists.offsets[static_cast<std::size_t>(r)];
         k < lists.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const op o = lists.ops[k];
      if (o.kind() != op_kind::send_act || lists.shape.rank_of(o.stage()) != r) continue;
      const std::size_t key = key_of(o);
      out.push_back({o.stage(), o.microbatch(), r, static_cast<int>(host_of[key]) - 1, run.start(k),
                     run.start(back_of[key] - 1)});
    }
  }
  return out;
}

/// A plan run as a runtime runs it (run_moves()).
struct executed_plan {
  runtime_model model = runtime_model::blocking;  ///< the lowering and the run's model
  schedule lists;                                 ///< lower(v, c, model) with the moves written in (lower_moves())
  std::size_t copy_ops = 0;                       ///< 4 per move
  bool completed = false;                         ///< execute() ran every list to its end
  bool as_planned = false;     ///< every compute op at its simulated times, every copy at its planned start
  rational makespan{0};        ///< the run's makespan (time units of t_f)
  std::vector<rational> peak;  ///< per rank (P): check_rebalance() of the executed moves (chunks, gamma-weighted)
  std::vector<activation_move> moves;  ///< executed_moves() of the run
};

/// Plan `plan` of schedule `v` (rebalance()'s, under `c`, `gamma`, `scale`) written into
/// `v`'s lowered lists for `model` (lower_moves(lower(v, c, model, scale), ...)) and
/// executed under `model`: whether the run kept every compute op and every copy where
/// the plan has it, its makespan, and the peaks of the moves it ran. Errors: lower()'s,
/// lower_moves()'s and execute()'s messages. Run time, O(n log n).
inline executed_plan run_moves(schedule_view v, const costs& c, const rebalance_plan& plan, runtime_model model,
                               rational gamma = rational{1}, const cost_scale& scale = {}) {
  executed_plan out;
  out.model = model;
  const schedule plain = lower(v, c, model, scale);
  out.lists = lower_moves(plain.view(), c, plan.moves, scale);
  out.copy_ops = out.lists.size() - plain.size();
  const schedule_view lv = out.lists.view();
  const execution run = execute(lv, c, model, scale);
  out.completed = run.completed();
  if (!out.completed) return out;
  out.makespan = run.makespan();
  out.moves = executed_moves(lv, run);
  const simulation sim = simulate(v, c, scale);
  bool same = true;
  for (int r = 0; r < v.shape.P; ++r) {  // the compute ops in order against the simulation
    std::size_t i = v.offsets[static_cast<std::size_t>(r)];
    for (std::uint32_t k = lv.offsets[static_cast<std::size_t>(r)]; k < lv.offsets[static_cast<std::size_t>(r) + 1];
         ++k) {
      if (is_transfer(lv.ops[k].kind()) || is_move(lv.ops[k].kind())) continue;
      same = same && run.start(k) == sim.start(i) && run.end(k) == sim.end(i);
      ++i;
    }
  }
  std::vector<activation_move> planned(plan.moves.begin(), plan.moves.end());
  const auto order = [](const activation_move& a, const activation_move& b) {
    return a.stage != b.stage ? a.stage < b.stage : a.microbatch < b.microbatch;
  };
  std::vector<activation_move> ran = out.moves;
  std::sort(planned.begin(), planned.end(), order), std::sort(ran.begin(), ran.end(), order);
  same = same && ran.size() == planned.size();
  for (std::size_t i = 0; same && i < ran.size(); ++i)
    same = ran[i].send == planned[i].send && ran[i].back == planned[i].back;
  out.as_planned = same;
  const rebalance_check replay = check_rebalance(v, c, out.moves, gamma, scale);
  out.peak = replay.problem == nullptr ? replay.peak : std::vector<rational>{};
  return out;
}

}  // namespace ctpipe
