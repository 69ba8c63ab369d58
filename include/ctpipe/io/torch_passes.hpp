// ctpipe/io/torch_passes.hpp (run time, opt-in): the actions PyTorch's runtime needs
// beside the compute and transfer ops, placed as PyTorch's own lowering passes place them.
//
// `torch.distributed.pipelining`'s `_PipelineScheduleRuntime` reduces (and, with its
// default `scale_grads=True`, divides by m) a stage's gradients only at a
// `<stage>REDUCE_GRAD` action, and an FSDP-sharded stage computes only between its
// `<stage>UNSHARD` and `<stage>RESHARD`. Its compute-only route adds them itself
// (`_add_unshard_reshard`, then `_add_reduce_grad`, in torch/distributed/pipelining/
// schedules.py); a compute_comms file must carry them, or the gradients come out m times
// too large and FSDP stages refuse to compute. torch_annotations() computes them for any
// schedule view, compute-only or lowered, as io::csv_annotation values that to_csv() writes
// in place and parse_csv() reads back.
//
// The rules, on each rank's compute actions (an overlapped pair is one action holding the
// stages of its F and its B):
// - UNSHARD / RESHARD: before each action, the first `max_active_stages` distinct stages of
//   the rank's remaining actions (from this one on; a pair adds both its stages, so the
//   window may hold one more) are the wanted ones; each active stage not wanted is
//   resharded, then each wanted stage not active is unsharded, in the window's order; after
//   the last action every active stage is resharded. PyTorch resharding iterates a Python
//   set; ctpipe reshards in increasing stage order, which is that set's order for the
//   stage indices below 8 (docs/pytorch.md).
// - REDUCE_GRAD: right after the action that holds the m-th backward (B or W; I does not
//   count) of a stage.
// In a lowered view (with SEND/RECV ops) an action placed "before" a compute op goes after
// the previous compute op and the sends that directly follow it, and one placed "after" a
// compute op goes after the sends that directly follow it: that is where PyTorch's
// `_add_send_recv` leaves them relative to its own sends.
#pragma once

#include <algorithm>  // std::find, std::sort
#include <cstddef>    // std::size_t
#include <span>       // a rank's ops
#include <string>     // action texts
#include <utility>    // std::pair, std::move
#include <vector>     // annotations, the window

#include "ctpipe/core/error.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/io/csv.hpp"

namespace ctpipe::io {

/// Which of PyTorch's passes torch_annotations() runs, and the UNSHARD window.
struct torch_passes {
  bool unshard_reshard = true;  ///< UNSHARD / RESHARD (`_add_unshard_reshard`), for FSDP stages
  bool reduce_grad = true;      ///< REDUCE_GRAD (`_add_reduce_grad`): the gradient reduction and scaling
  int max_active_stages = 3;    ///< `_add_unshard_reshard`'s window (PyTorch's default 3), >= 1
};

namespace detail {

/// One compute action of a rank: the positions of its first and last word in the rank's
/// list and its stages (an overlapped pair: its F's, then its B's).
struct torch_action {
  std::size_t first = 0;
  std::size_t last = 0;
  int stages[2] = {0, 0};
  int count = 1;      ///< stages held: 1, or 2 for a pair
  int backwards = 0;  ///< how many of its stages' backwards it completes: B or W words
  int backward_stage[2] = {0, 0};
};

/// The compute actions of one rank's list, in order.
inline std::vector<torch_action> torch_actions_of(std::span<const op> ops) {
  std::vector<torch_action> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op_kind k = ops[i].kind();
    if (!is_compute(k)) continue;
    torch_action a{i, i, {ops[i].stage(), 0}, 1, 0, {0, 0}};
    if (k == op_kind::overlap_f_b) {
      ctpipe::detail::require(
          i + 1 < ops.size() && ops[i + 1].kind() == op_kind::B,
          "ctpipe: to_csv(): an overlapped pair's word (OVERLAP_F_B) must be followed by its B on its rank");
      a.last = ++i;
      if (ops[i].stage() != a.stages[0]) a.stages[a.count++] = ops[i].stage();
      a.backward_stage[a.backwards++] = ops[i].stage();
    } else if (k == op_kind::B || k == op_kind::W) {
      a.backward_stage[a.backwards++] = ops[i].stage();
    }
    out.push_back(a);
  }
  return out;
}

/// The position after compute word `last` and the sends that directly follow it.
inline std::size_t after_sends(std::span<const op> ops, std::size_t last) {
  std::size_t p = last + 1;
  while (p < ops.size() && (ops[p].kind() == op_kind::send_f || ops[p].kind() == op_kind::send_b)) ++p;
  return p;
}

/// The UNSHARD windows of one rank: for each action, the stages `_add_unshard_reshard`
/// wants active before it. Built from the last action back, each window from the next
/// one (the action's stages first, then the next window's others), so the whole pass is
/// linear in the actions times the window.
inline std::vector<std::vector<int>> unshard_windows(const std::vector<torch_action>& acts, int window) {
  const auto want = static_cast<std::size_t>(window);
  std::vector<std::vector<int>> out(acts.size());
  // (stage, action it first appears in) of the window after the current action.
  std::vector<std::pair<int, std::size_t>> next;
  for (std::size_t k = acts.size(); k-- > 0;) {
    std::vector<std::pair<int, std::size_t>> cur;
    for (int h = 0; h < acts[k].count; ++h) cur.emplace_back(acts[k].stages[h], k);
    for (const auto& e : next) {
      if (e.first == acts[k].stages[0] || (acts[k].count == 2 && e.first == acts[k].stages[1])) continue;
      cur.push_back(e);
    }
    // Cut after the first action at which `window` stages are reached (a pair's stages
    // both stay, as PyTorch checks the count after the whole pair).
    std::size_t cut = cur.size();
    for (std::size_t i = 0; i < cur.size(); ++i) {
      if (i + 1 >= want && (i + 1 == cur.size() || cur[i + 1].second != cur[i].second)) {
        cut = i + 1;
        break;
      }
    }
    cur.resize(cut);
    out[k].reserve(cur.size());
    for (const auto& e : cur) out[k].push_back(e.first);
    next = std::move(cur);
  }
  return out;
}

/// The annotations of one rank (see torch_annotations()).
inline void torch_rank_annotations(std::span<const op> ops, int rank, int microbatches, const torch_passes& passes,
                                   std::vector<csv_annotation>& out) {
  const std::vector<torch_action> acts = torch_actions_of(ops);
  std::vector<std::vector<int>> windows;
  if (passes.unshard_reshard) windows = unshard_windows(acts, passes.max_active_stages);
  std::vector<int> active;     // kept in increasing order
  std::vector<int> backwards;  // per stage seen, B and W words so far
  auto add = [&](std::size_t position, int stage, const char* kind) {
    out.push_back({rank, position, std::to_string(stage) + kind});
  };
  for (std::size_t k = 0; k < acts.size(); ++k) {
    const std::size_t before = k == 0 ? 0 : after_sends(ops, acts[k - 1].last);
    if (passes.unshard_reshard) {
      const std::vector<int>& wanted = windows[k];
      std::vector<int> keep;
      for (const int s : active) {
        if (std::find(wanted.begin(), wanted.end(), s) == wanted.end()) {
          add(before, s, "RESHARD");
        } else {
          keep.push_back(s);
        }
      }
      for (const int s : wanted) {
        if (std::find(keep.begin(), keep.end(), s) != keep.end()) continue;
        add(before, s, "UNSHARD");
        keep.push_back(s);
      }
      std::sort(keep.begin(), keep.end());
      active = std::move(keep);
    }
    if (!passes.reduce_grad) continue;
    for (int h = 0; h < acts[k].backwards; ++h) {
      const auto s = static_cast<std::size_t>(acts[k].backward_stage[h]);
      if (backwards.size() <= s) backwards.resize(s + 1, 0);
      if (++backwards[s] == microbatches) add(after_sends(ops, acts[k].last), static_cast<int>(s), "REDUCE_GRAD");
    }
  }
  for (const int s : active) add(ops.size(), s, "RESHARD");
}

}  // namespace detail

/// PyTorch's UNSHARD, RESHARD and REDUCE_GRAD actions for `v` (compute-only or lowered),
/// by the rules of the file comment, as the annotations to_torch_csv() writes in place
/// (or a csv_schedule's `annotations`, which to_csv() writes). For a compute-only view
/// they are, action for action, what
/// `_add_reduce_grad(_add_unshard_reshard(actions, max_active_stages), m)` gives on each
/// rank (up to the order of resharding several stages at one point). Raises check_view()'s
/// messages, `ctpipe: --max-active-stages must be >= 1` and to_csv()'s pair message.
/// Linear in the op count (times the window).
inline std::vector<csv_annotation> torch_annotations(schedule_view v, const torch_passes& passes = {}) {
  check_view(v);
  ctpipe::detail::require(passes.max_active_stages >= 1, "ctpipe: --max-active-stages must be >= 1");
  std::vector<csv_annotation> out;
  for (int r = 0; r < v.shape.P; ++r) detail::torch_rank_annotations(v.rank(r), r, v.shape.m, passes, out);
  return out;
}

/// `v` in PyTorch's CSV format (to_csv()) with the actions of `passes` in place: what a
/// compute_comms file for `_PipelineScheduleRuntime` needs. Raises torch_annotations()'s
/// and to_csv()'s messages.
inline std::string to_torch_csv(schedule_view v, const torch_passes& passes = {}) {
  return detail::write_csv(v, torch_annotations(v, passes));
}

}  // namespace ctpipe::io
