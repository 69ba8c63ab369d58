// ctpipe/io/trace.hpp (run time, opt-in): a schedule's simulated timeline as Chrome
// trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open, rendered
// from the readout model (io::readout, ctpipe/io/readout.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>  // std::max
#include <cstdint>
#include <span>  // a fill's pieces
#include <string>
#include <utility>  // std::move

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"

namespace ctpipe::io {

namespace detail {

/// `time` (time units of t_f, exact) in ticks of `tick` time units, as the trace writes
/// `ts` and `dur`: an integer when it is a whole number of ticks, else a double.
inline nlohmann::ordered_json trace_ticks(rational time, rational tick) {
  const rational ticks = time / tick;
  return ticks.den == 1 ? nlohmann::ordered_json(ticks.num) : nlohmann::ordered_json(ticks.to_double());
}

/// A bubble fill's events (readout::fill), appended to `events`: on each rank with
/// pieces a `thread_name` metadata event naming `tid` 1 "fill", then per piece (sorted
/// by rank, then start) one complete event on its rank's `pid` and `tid` 1, named by its
/// job (`encoder F 3`: the name and, when >= 0, the micro-batch), category `fill`, `ts`
/// and `dur` in ticks of `tick` (trace_ticks()), args `job` (index into
/// fill_overlay::jobs) and the exact `start` and `end` as strings. Nothing without a fill.
inline void trace_fill(nlohmann::ordered_json& events, const readout& ro, rational tick) {
  if (ro.fill == nullptr) return;
  int named = -1;  // the last rank whose fill thread is named
  for (const fill_piece& p : ro.fill->result.pieces.span()) {
    if (p.rank != named) {
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", p.rank}, {"tid", 1}, {"args", {{"name", "fill"}}}});
      named = p.rank;
    }
    const fill_job& job = ro.fill->jobs[p.job];
    events.push_back({{"name", fill_job_label(job)},
                      {"cat", "fill"},
                      {"ph", "X"},
                      {"pid", p.rank},
                      {"tid", 1},
                      {"ts", trace_ticks(p.start, tick)},
                      {"dur", trace_ticks(p.end - p.start, tick)},
                      {"args", {{"job", p.job}, {"start", to_string(p.start)}, {"end", to_string(p.end)}}}});
  }
}

}  // namespace detail

/// The trace of readout `ro`, its `ranks` at their `timeline` times (the simulation's,
/// never an executed run's): one process per rank (`pid` = rank, named "rank r"), one
/// complete event (`ph: "X"`) per op, named by its action string (`0F3`), category its
/// kind, with args `microbatch`, `stage`, `chunk`, and the exact `start` and `end` as
/// strings. An overlapped pair (its word and its B word) is one event spanning the pair,
/// named by PyTorch's `(7F4;0B0)OVERLAP_F_B`, category `OVERLAP_F_B`; its `microbatch`,
/// `stage` and `chunk` are its forward's, and `backward_microbatch`, `backward_stage`,
/// `backward_chunk` its backward's. Timestamps are the simulation's integer ticks, written as microseconds: 1
/// tick = 1 us, so `ts` and `dur` are exact integers; `otherData.time_units_per_tick`
/// gives the tick in time units of t_f (e.g. "1/2"), to turn them back into the
/// simulation's times; `otherData` also names the schedule, P, m, V and the makespan.
/// The ops are on `tid` 0 of their rank. With a bubble fill (readout::fill) each piece is
/// one more complete event on its rank's `tid` 1, named "fill" by a `thread_name`
/// metadata event, named by its job (`encoder F 3`), category `fill`, with args `job`
/// and the exact `start` and `end` (detail::trace_fill()); a piece's `ts` and `dur` are
/// integers when whole ticks, else doubles (its times need not be whole ticks).
inline nlohmann::ordered_json to_trace(const readout& ro) {
  using json = nlohmann::ordered_json;
  const schedule_view v = ro.ranks;
  json events = json::array();
  for (int r = 0; r < v.shape.P; ++r) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"tid", 0},
                      {"args", {{"name", fmt::format("rank {}", r)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"sort_index", r}}}});
  }
  for (int r = 0; r < v.shape.P; ++r) {
    const std::uint32_t rank_end = v.offsets[static_cast<std::size_t>(r) + 1];
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < rank_end; ++k) {
      const op o = v.ops[k];
      const bool pair = starts_pair(v, k, rank_end);
      const std::uint32_t last = pair ? k + 1 : k;  // the pair's B word ends with it
      const std::int64_t end = std::max(ro.timeline.end_ticks(k), ro.timeline.end_ticks(last));
      json args = {{"microbatch", o.microbatch()}, {"stage", o.stage()}, {"chunk", v.shape.chunk_of(o.stage())}};
      if (pair) {
        const op b = v.ops[last];
        args["backward_microbatch"] = b.microbatch();
        args["backward_stage"] = b.stage();
        args["backward_chunk"] = v.shape.chunk_of(b.stage());
      }
      args["start"] = to_string(ro.timeline.start(k));
      args["end"] = to_string(ro.timeline.time(end));
      events.push_back({{"name", pair ? pair_action(o, v.ops[last]) : action(o)},
                        {"cat", kind_name(o.kind())},
                        {"ph", "X"},
                        {"pid", r},
                        {"tid", 0},
                        {"ts", ro.timeline.start_ticks(k)},
                        {"dur", end - ro.timeline.start_ticks(k)},
                        {"args", std::move(args)}});
      k = last;
    }
  }
  detail::trace_fill(events, ro, ro.timeline.tick());
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
