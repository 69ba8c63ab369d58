// ctpipe/io/trace.hpp (run time, opt-in): a schedule's simulated timeline as Chrome
// trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open, rendered
// from the readout model (io::readout, ctpipe/io/readout.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"

namespace ctpipe::io {

/// The trace of readout `ro`, its `ranks` at their `timeline` times (the simulation's,
/// never an executed run's): one process per rank (`pid` = rank, named "rank r"), one
/// complete event (`ph: "X"`) per op, named by its action string (`0F3`), category its
/// kind, with args `microbatch`, `stage`, `chunk`, and the exact `start` and `end` as
/// strings. Timestamps are the simulation's integer ticks, written as microseconds: 1
/// tick = 1 us, so `ts` and `dur` are exact integers; `otherData.time_units_per_tick`
/// gives the tick in time units of t_f (e.g. "1/2"), to turn them back into the
/// simulation's times; `otherData` also names the schedule, P, m, V and the makespan.
inline nlohmann::ordered_json to_trace(const readout& ro) {
  using json = nlohmann::ordered_json;
  const schedule_view v = ro.ranks;
  json events = json::array();
  for (int r = 0; r < v.shape.P; ++r) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"name", fmt::format("rank {}", r)}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"sort_index", r}}}});
  }
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const op o = v.ops[k];
      events.push_back({{"name", action(o)},
                        {"cat", kind_name(o.kind())},
                        {"ph", "X"},
                        {"pid", r},
                        {"tid", 0},
                        {"ts", ro.timeline.start_ticks(k)},
                        {"dur", ro.timeline.end_ticks(k) - ro.timeline.start_ticks(k)},
                        {"args",
                         {{"microbatch", o.microbatch()},
                          {"stage", o.stage()},
                          {"chunk", v.shape.chunk_of(o.stage())},
                          {"start", to_string(ro.timeline.start(k))},
                          {"end", to_string(ro.timeline.end(k))}}}});
    }
  }
  return json{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"schedule", ro.schedule},
                {"P", ro.P},
                {"m", ro.m},
                {"V", ro.V},
                {"time_units_per_tick", to_string(ro.timeline.tick())},
                {"makespan", to_string(ro.makespan)}}}};
}

/// to_trace() of readout_of(rep).
inline nlohmann::ordered_json to_trace(const report& rep) { return to_trace(readout_of(rep)); }

}  // namespace ctpipe::io
