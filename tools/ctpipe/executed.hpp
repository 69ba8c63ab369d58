// The tool's view of execute(): a lowered schedule run under each runtime model, as text
// lines, as the JSON `executed` object, and, for lists that hang under every model, the
// `ctpipe:` lines naming each stuck rank and the cycle of ranks waiting for each other.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ctpipe/io/format.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/lower/lower.hpp"

namespace ctpipe::tool {

/// One model's run of a lowered schedule.
struct executed_run {
  runtime_model model;
  execution run;
};

/// Runs `v` (a lowered schedule that passes validate_lowered()'s checks of its ops)
/// under every model, or only under `*only` when it is given; costs scaled by `scale`.
inline std::vector<executed_run> execute_models(schedule_view v, const costs& c, const runtime_model* only,
                                                const cost_scale& scale = {}) {
  std::vector<executed_run> runs;
  for (const runtime_model m : all_runtime_models) {
    if (only == nullptr || *only == m) runs.push_back({m, execute(v, c, m, scale)});
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
      continue;
    }
    std::string stalls;
    for (int r = 0; r < e.run.ranks(); ++r)
      stalls += fmt::format("{}{}", r == 0 ? "" : " ", io::to_string(e.run.stall(r)));
    const rational b = e.run.bubble_fraction();
    out += fmt::format("executed, {:<10}  makespan {}  bubble {} ({:.1f}%)  stall per rank {}\n", name,
                       io::to_string(e.run.makespan()), io::to_string(b),
                       100.0 * static_cast<double>(b.num) / static_cast<double>(b.den), stalls);
  }
  return out;
}

/// The JSON `executed` object: per model either {"makespan", "bubble", "idle", "stall",
/// "wait"} (exact rationals as strings, per-rank arrays of length P, time units of t_f)
/// or {"deadlock": true, "stuck": [{"rank", "step", "op", "fault", "needs"}]}.
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
    out[runtime_model_name(e.model)] = entry;
  }
  return out;
}

/// The `executed` object of a compute schedule: the lists lower() makes for each model
/// (or only `*only`), each run under that model; costs scaled by `scale`.
inline nlohmann::ordered_json own_lowering_json(schedule_view compute, const costs& c, const runtime_model* only,
                                                const cost_scale& scale = {}) {
  nlohmann::ordered_json executed = nlohmann::ordered_json::object();
  for (const runtime_model m : all_runtime_models) {
    if (only != nullptr && *only != m) continue;
    const schedule lowered = lower(compute, c, m, scale);
    const char* name = runtime_model_name(m);
    executed[name] = executed_json(execute_models(lowered.view(), c, &m, scale))[name];
  }
  return executed;
}

/// The `ctpipe:` lines for lists that hang under every model that was run (all four, or
/// the one --runtime named): one per stuck rank of the first model's run, then the
/// cycle, if any.
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
  return lines;
}

}  // namespace ctpipe::tool
