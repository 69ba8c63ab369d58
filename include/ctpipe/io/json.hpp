// ctpipe/io/json.hpp (run time, opt-in): one schedule and its analyses as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/report.hpp"

namespace ctpipe::io {

/// The JSON object the `ctpipe` tool prints with `--format json`, fields in this order. Exact numbers are
/// strings ("3/11", "33"); counts are integers. Fields, exactly:
/// `schedule` (the family, or the file name of a schedule read from a file: schedule_name),
/// `P`, `m`, `V`, `placement` ("loop" or "v"), `costs` ({"f","b","i","w","c"} as strings),
/// `gamma`, `makespan`, `bubble_fraction`, `bubble_fraction_formula` (the closed form's value, or null where none applies), `idle` (per rank), `span_bubble`,
/// `peak_in_flight` (per rank, in chunks), `peak_in_flight_formula` (per rank, an entry
/// null where no closed form applies; the whole field null when none applies), `messages` (integer), `ranks` (per rank, action
/// strings such as "0F3"), `timeline` (per rank, [action, start, end] triples).
inline nlohmann::ordered_json to_json(const report& rep) {
  using json = nlohmann::ordered_json;
  const auto& s = rep.spec.shape;
  const schedule_view v = rep.ops.view();
  json idle = json::array();
  json peaks = json::array();
  json peak_formula = json::array();
  json ranks = json::array();
  json timeline = json::array();
  bool any_peak_formula = false;
  for (int r = 0; r < s.P; ++r) {
    idle.push_back(to_string(rep.sim.idle(r)));
    peaks.push_back(to_string(rep.memory.peak(r)));
    const closed_form& f = rep.peak_formula[static_cast<std::size_t>(r)];
    any_peak_formula = any_peak_formula || f.holds;
    peak_formula.push_back(f.holds ? json(to_string(f.value)) : json(nullptr));
    json actions = json::array();
    json slices = json::array();
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      actions.push_back(action(v.ops[k]));
      slices.push_back(json::array({action(v.ops[k]), to_string(rep.sim.start(k)), to_string(rep.sim.end(k))}));
    }
    ranks.push_back(std::move(actions));
    timeline.push_back(std::move(slices));
  }
  return json{
      {"schedule", schedule_name(rep)},
      {"P", s.P},
      {"m", s.m},
      {"V", s.V},
      {"placement", placement_name(s.layout)},
      {"costs", {{"f", to_string(rep.cost.f)}, {"b", to_string(rep.cost.b)}, {"i", to_string(rep.cost.i)},
                 {"w", to_string(rep.cost.w)}, {"c", to_string(rep.cost.c)}}},
      {"gamma", to_string(rep.gamma)},
      {"makespan", to_string(rep.sim.makespan())},
      {"bubble_fraction", to_string(rep.sim.bubble_fraction())},
      {"bubble_fraction_formula", rep.bubble_formula.holds ? json(to_string(rep.bubble_formula.value)) : json(nullptr)},
      {"idle", std::move(idle)},
      {"span_bubble", to_string(rep.sim.span_bubble())},
      {"peak_in_flight", std::move(peaks)},
      {"peak_in_flight_formula", any_peak_formula ? std::move(peak_formula) : json(nullptr)},
      {"messages", rep.message_count},
      {"ranks", std::move(ranks)},
      {"timeline", std::move(timeline)},
  };
}

}  // namespace ctpipe::io
