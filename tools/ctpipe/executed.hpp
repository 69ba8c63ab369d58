// The tool's view of execute(): a lowered schedule run under each runtime model, as text
// lines, as the JSON `executed` object, and, for lists that hang under every model, the
// `ctpipe:` lines naming each stuck rank and the cycle of ranks waiting for each other;
// under a stream model, the cycle of ranks and streams (stream_cycle()).
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>  // std::min, std::max
#include <optional>   // a stream model's loss bound
#include <string>
#include <vector>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/torch_lowering.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/streams.hpp"

namespace ctpipe::tool {

/// One model's run of a lowered schedule.
struct executed_run {
  runtime_model model;
  execution run;
  std::string cycle;  ///< a stream model's run that hangs: stream_cycle(); else empty
  /// A stream model's stream_loss_bound() of the lists' compute schedule (unscaled costs
  /// only): no order of the transfers loses less. Absent for the other models.
  std::optional<rational> loss_bound;
};

/// A stream of a stream-model run (execution::stream_of()) as the tool names it, by its
/// rank and what the channel policy gives it: `rank 0's stream` (stream-rank), `rank 0's
/// stream (0-1)` (stream-peer: its peer pair), `rank 0's stream (activations)` or
/// `(gradients)` (stream-direction), `rank 0's stream (0->1)` (stream-edge: its
/// directed pair, sender first).
inline std::string stream_label(runtime_model model, int P, std::uint32_t stream) {
  const int rank = static_cast<int>(stream) / streams_per_rank, local = static_cast<int>(stream) % streams_per_rank;
  const int next = (rank + 1) % P, previous = (rank + P - 1) % P, peer = local % 2 == 0 ? next : previous;
  const std::string owner = fmt::format("rank {}'s stream", rank);
  switch (model) {
    case runtime_model::stream_peer:
      return fmt::format("{} ({}-{})", owner, std::min(rank, peer), std::max(rank, peer));
    case runtime_model::stream_direction: return owner + (local == 0 ? " (activations)" : " (gradients)");
    case runtime_model::stream_edge:
      return local < 2 ? fmt::format("{} ({}->{})", owner, rank, peer) : fmt::format("{} ({}->{})", owner, peer, rank);
    default: return owner;
  }
}

/// The cycle that holds a stream-model run of `v` that hangs, as one line: the ranks
/// waiting at a compute op for a RECV on a stream, and the streams whose head waits for
/// its partner, which either queues behind another stream's head or lies ahead of where
/// its rank stopped: `rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream; rank 0's
/// stream: its head 0SEND_F1 needs 1RECV_F1, queued on rank 1's stream behind 1SEND_F0;
/// ...; back to rank 0's stream`: followed from the first deadlocked rank until a rank
/// or stream repeats, the cycle being the steps from its first mention on. Empty when
/// the run completed, is not a stream
/// model's, or the chain ends at a rank halted by a fault of its own (stuck() names it).
/// Linear in the ops.
inline std::string stream_cycle(schedule_view v, const execution& run) {
  if (run.completed() || !is_stream_model(run.model())) return "";
  const int P = v.shape.P;
  const std::size_t n = v.size(), streams = static_cast<std::size_t>(streams_per_rank * P);
  std::vector<std::size_t> waits(static_cast<std::size_t>(P), n), at(static_cast<std::size_t>(P), n);
  for (const validation_issue& i : run.stuck()) {
    if (i.what != fault::deadlock || is_transfer(i.at.kind()) || is_move(i.needs.kind())) continue;
    // The RECV of the stuck compute op's input (its `needs` may name the op its stream's
    // head waits for instead: execute()'s stream_blocker()).
    const bool gradient = i.at.kind() == op_kind::B || i.at.kind() == op_kind::I;
    const op recv{gradient ? op_kind::recv_b : op_kind::recv_f, i.at.stage(), i.at.microbatch()};
    const auto r = static_cast<std::size_t>(i.rank);
    at[r] = v.offsets[r] + static_cast<std::size_t>(i.step);
    for (std::size_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      if (v.ops[k] == recv) waits[r] = k;
    }
  }
  for (std::size_t first = 0; first < waits.size(); ++first) {
    if (waits[first] == n) continue;
    std::vector<std::string> steps;
    std::vector<std::size_t> seen(static_cast<std::size_t>(P) + streams, n);  // node -> its step
    std::size_t node = first;                                                 // a rank r, or stream s as P + s
    while (seen[node] == n) {
      seen[node] = steps.size();
      if (node < static_cast<std::size_t>(P)) {
        if (waits[node] == n) break;  // halted by a fault of its own
        const std::uint32_t s = run.stream_of(waits[node]);
        steps.push_back(fmt::format("rank {} waits at {} for {} on {}", node, io::action(v.ops[at[node]]),
                                    io::action(v.ops[waits[node]]), stream_label(run.model(), P, s)));
        node = static_cast<std::size_t>(P) + s;
        continue;
      }
      const auto s = static_cast<std::uint32_t>(node - static_cast<std::size_t>(P));
      const std::size_t head = run.stream_head(s), partner = run.transfer_partner(head);
      const std::string stream = stream_label(run.model(), P, s);
      if (partner == n) {  // its partner's rank stopped before it
        const op wanted = matching_transfer(v.ops[head]);
        const int q = peer_rank(v.shape, v.ops[head]);
        steps.push_back(fmt::format("{}: its head {} needs {}, which rank {} has not reached", stream,
                                    io::action(v.ops[head]), io::action(wanted), q));
        node = static_cast<std::size_t>(q);
        continue;
      }
      const std::uint32_t other = run.stream_of(partner);
      steps.push_back(fmt::format("{}: its head {} needs {}, queued on {} behind {}", stream, io::action(v.ops[head]),
                                  io::action(v.ops[partner]), stream_label(run.model(), P, other),
                                  io::action(v.ops[run.stream_head(other)])));
      node = static_cast<std::size_t>(P) + other;
    }
    if (seen[node] == steps.size()) return "";  // the chain ended at a halted rank
    std::string text;
    for (const std::string& step : steps) text += (text.empty() ? "" : "; ") + step;
    const std::string back =
        node < static_cast<std::size_t>(P)
            ? fmt::format("rank {}", node)
            : stream_label(run.model(), P, static_cast<std::uint32_t>(node - static_cast<std::size_t>(P)));
    return text + "; back to " + back;
  }
  return "";
}

/// Runs `v` (a lowered schedule that passes validate_lowered()'s checks of its ops)
/// under every model, or only under `*only` when it is given; costs scaled by `scale`.
inline std::vector<executed_run> execute_models(schedule_view v, const costs& c, const runtime_model* only,
                                                const cost_scale& scale = {}) {
  std::vector<executed_run> runs;
  std::optional<schedule> compute;  // for the stream models' bound, made once
  for (const runtime_model m : all_runtime_models) {
    if (only != nullptr && *only != m) continue;
    execution run = execute(v, c, m, scale);
    std::string cycle = stream_cycle(v, run);
    std::optional<rational> bound;
    if (is_stream_model(m) && scale.uniform()) {
      if (!compute) compute = compute_part(v);
      bound = stream_loss_bound(compute->view(), c, m);
    }
    runs.push_back({m, std::move(run), std::move(cycle), bound});
  }
  return runs;
}

/// `rank 0, step 3, op 0SEND_F1: deadlock: ... (needs 1RECV_F1)`: one stuck op.
inline std::string describe_stuck(const validation_issue& i) {
  std::string text =
      fmt::format("rank {}, step {}, op {}: {}", i.rank, i.step, io::action(i.at), fault_description(i.what));
  if (i.needs != i.at) text += fmt::format(" (needs {})", io::action(i.needs));
  return text;
}

/// The ranks the deadlocked ranks of `stuck` wait for, followed from the first until one
/// repeats: "rank 0 waits for rank 1, which waits for rank 0". Empty when no deadlock
/// forms a cycle (a rank halted by its own fault is its own cause).
inline std::string wait_cycle(const pipeline_shape& shape, std::span<const validation_issue> stuck) {
  std::vector<int> waits_for(static_cast<std::size_t>(shape.P), -1);
  for (const validation_issue& i : stuck) {
    // A backward waiting for its activation's copy back waits for the copy channels,
    // not for one rank: no edge of the cycle.
    if (i.what == fault::deadlock && i.needs.stage() < shape.stages() && !is_move(i.needs.kind())) {
      waits_for[static_cast<std::size_t>(i.rank)] = shape.rank_of(i.needs.stage());
    }
  }
  for (std::size_t start = 0; start < waits_for.size(); ++start) {
    std::vector<int> path;
    std::vector<bool> seen(waits_for.size(), false);
    int r = static_cast<int>(start);
    while (r >= 0 && !seen[static_cast<std::size_t>(r)]) {
      seen[static_cast<std::size_t>(r)] = true;
      path.push_back(r);
      r = waits_for[static_cast<std::size_t>(r)];
    }
    if (r < 0) continue;
    // The cycle starts where r first appears on the path.
    std::size_t k = 0;
    while (path[k] != r) ++k;
    std::string text = fmt::format("rank {} waits for rank {}", path[k], k + 1 < path.size() ? path[k + 1] : r);
    for (std::size_t q = k + 1; q < path.size(); ++q) {
      text += fmt::format(", which waits for rank {}", q + 1 < path.size() ? path[q + 1] : r);
    }
    return text;
  }
  return "";
}

/// One text line per model: makespan, bubble, stall per rank; or the hang.
inline std::string executed_text(const std::vector<executed_run>& runs) {
  std::string out;
  for (const executed_run& e : runs) {
    const char* name = runtime_model_name(e.model);
    if (!e.run.completed()) {
      out += fmt::format("executed, {:<10}  hangs: {}{}\n", name, describe_stuck(e.run.stuck()[0]),
                         e.run.stuck().size() > 1 ? fmt::format(" (+{} more stuck)", e.run.stuck().size() - 1) : "");
      if (!e.cycle.empty()) out += fmt::format("  cycle: {}\n", e.cycle);
      continue;
    }
    std::string stalls;
    for (int r = 0; r < e.run.ranks(); ++r)
      stalls += fmt::format("{}{}", r == 0 ? "" : " ", io::to_string(e.run.stall(r)));
    const rational b = e.run.bubble_fraction();
    const std::string bound =
        e.loss_bound && *e.loss_bound > rational{0}
            ? fmt::format("  (no order of the transfers loses less than {})", io::to_string(*e.loss_bound))
            : "";
    out += fmt::format("executed, {:<10}  makespan {}  bubble {} ({:.1f}%)  stall per rank {}{}\n", name,
                       io::to_string(e.run.makespan()), io::to_string(b),
                       100.0 * static_cast<double>(b.num) / static_cast<double>(b.den), stalls, bound);
  }
  return out;
}

/// The JSON `executed` object: per model either {"makespan", "bubble", "idle", "stall",
/// "wait"} (exact rationals as strings, per-rank arrays of length P, time units of t_f)
/// or {"deadlock": true, "stuck": [{"rank", "step", "op", "fault", "needs"}]}, with
/// "cycle" (stream_cycle()'s line) for a stream model's hang when one is found, and
/// "loss_bound" (stream_loss_bound(), exact string) for a stream model.
inline nlohmann::ordered_json executed_json(const std::vector<executed_run>& runs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const executed_run& e : runs) {
    nlohmann::ordered_json entry;
    if (!e.run.completed()) {
      entry["deadlock"] = true;
      nlohmann::ordered_json stuck = nlohmann::ordered_json::array();
      for (const validation_issue& i : e.run.stuck()) {
        stuck.push_back({{"rank", i.rank},
                         {"step", i.step},
                         {"op", io::action(i.at)},
                         {"fault", fault_description(i.what)},
                         {"needs", io::action(i.needs)}});
      }
      entry["stuck"] = stuck;
      if (!e.cycle.empty()) entry["cycle"] = e.cycle;
    } else {
      entry["makespan"] = io::to_string(e.run.makespan());
      entry["bubble"] = io::to_string(e.run.bubble_fraction());
      nlohmann::ordered_json idle = nlohmann::ordered_json::array(), stall = nlohmann::ordered_json::array(),
                             wait = nlohmann::ordered_json::array();
      for (int r = 0; r < e.run.ranks(); ++r) {
        idle.push_back(io::to_string(e.run.idle(r)));
        stall.push_back(io::to_string(e.run.stall(r)));
        wait.push_back(io::to_string(e.run.wait(r)));
      }
      entry["idle"] = idle;
      entry["stall"] = stall;
      entry["wait"] = wait;
    }
    if (e.loss_bound) entry["loss_bound"] = io::to_string(*e.loss_bound);
    out[runtime_model_name(e.model)] = entry;
  }
  return out;
}

/// --lowering least-loss's lists of compute schedule `compute` for model `m`: under a
/// stream model with unscaled costs io::lower_least_loss()'s (the fastest of ctpipe's
/// three orders), else lower(compute, c, m, scale).
inline schedule least_loss_lists(schedule_view compute, const costs& c, runtime_model m, const cost_scale& scale) {
  if (is_stream_model(m) && scale.uniform()) return io::lower_least_loss(compute, c, m).lists;
  return lower(compute, c, m, scale);
}

/// The `executed` object of a compute schedule: the lists lower() makes for each model
/// (or only `*only`), each run under that model; costs scaled by `scale`.
inline nlohmann::ordered_json own_lowering_json(schedule_view compute, const costs& c, const runtime_model* only,
                                                const cost_scale& scale = {}, bool least_loss = false) {
  nlohmann::ordered_json executed = nlohmann::ordered_json::object();
  for (const runtime_model m : all_runtime_models) {
    if (only != nullptr && *only != m) continue;
    const schedule lowered = least_loss ? least_loss_lists(compute, c, m, scale) : lower(compute, c, m, scale);
    const char* name = runtime_model_name(m);
    executed[name] = executed_json(execute_models(lowered.view(), c, &m, scale))[name];
  }
  return executed;
}

/// The `ctpipe:` lines for lists that hang under every model that was run (all of them,
/// or the one --runtime named): one per stuck rank of the first model's run, then the
/// cycle of ranks, if any, then each stream model's cycle of ranks and streams.
inline std::vector<std::string> hang_lines(const std::string& path, const pipeline_shape& shape,
                                           const std::vector<executed_run>& runs) {
  std::vector<std::string> lines;
  const execution& first = runs.front().run;
  const std::string where = runs.size() == 1 ? fmt::format("hangs under {}", runtime_model_name(runs.front().model))
                                             : fmt::format("hangs under every runtime model; under {}",
                                                           runtime_model_name(runs.front().model));
  for (const validation_issue& i : first.stuck()) {
    const bool copy = is_move(i.needs.kind());
    const int peer =
        i.what == fault::deadlock && !copy && i.needs.stage() < shape.stages() ? shape.rank_of(i.needs.stage()) : -1;
    lines.push_back(fmt::format(
        "ctpipe: {}: {}: {}{}", path, where, describe_stuck(i),
        peer >= 0 ? fmt::format("; waits for rank {}", peer)
        : copy    ? std::string("; waits for its activation's copy back, which the copy channels' orders never run")
                  : std::string()));
  }
  const std::string cycle = wait_cycle(shape, first.stuck());
  if (!cycle.empty()) lines.push_back(fmt::format("ctpipe: {}: {}", path, cycle));
  for (const executed_run& r : runs) {  // each stream model's cycle of ranks and streams
    if (!r.cycle.empty())
      lines.push_back(fmt::format("ctpipe: {}: under {}: {}", path, runtime_model_name(r.model), r.cycle));
  }
  return lines;
}

}  // namespace ctpipe::tool
