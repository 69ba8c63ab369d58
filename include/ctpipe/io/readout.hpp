// ctpipe/io/readout.hpp (run time, opt-in): the readout model, what every view of one
// schedule shows, and the lines of text the text view and the SVG share.
//
// io::readout is built once from a report (readout_of()); its fields are named as the
// JSON names them (docs/json.md), with the JSON's units, and the JSON (to_json), the
// text view, the SVG and the trace all render from it. Its per-op fields (`ranks`,
// `timeline`, `drawn`, `in_flight`, `drawn_run`) refer to the report's op lists,
// simulation, in-flight profile and executed run instead of copying them (the tool draws
// up to 2^24 ops): a readout must not outlive its report.
//
// Overlapped pairs (op_kind::overlap_f_b, DualPipeV's F&B): a pair takes two words of a
// rank's list, its word (the forward) and its B word right after it, which the
// simulation gives the same start and end. Every view shows a pair as ONE item spanning
// that time: one box in the text and SVG timelines, labelled with both halves
// (pair_label(): `F4/B0`, `F4.1/B0.0` with V > 1), one trace event, one JSON entry named
// by PyTorch's action string `(7F4;0B0)OVERLAP_F_B` (io::pair_action()). starts_pair()
// finds them. Busy, idle and every number are the library's (simulate()), never summed
// from the boxes, so a pair is never counted twice.
//
// CSV is not rendered from it: io::to_csv() writes a schedule_view, the type of the
// model's `ranks` (so `to_csv(ro.ranks)` writes the ops of readout `ro`), and the tool's `--format
// csv` and `csv-comms` write the generated or lowered lists without analysing them. The
// CSV reader and writer are general tools for op lists (ctpipe/io/csv.hpp) that need no
// simulation, and csv-comms writes lowered lists with transfers, which are not a
// report's compute ops.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/report.hpp"

namespace ctpipe::io {

/// A fill job's name as every view shows it: `encoder F 3` (its micro-batch when >= 0).
inline std::string fill_job_label(const fill_job& job) {
  return job.microbatch >= 0 ? fmt::format("{} {}", job.name, job.microbatch) : std::string(job.name);
}

/// The times a timeline gives the ops of a readout's `ranks` (op k is `ranks.ops[k]`), in
/// whole ticks of tick() time units of t_f: a simulation's, or an executed run's
/// (executed_timeline), which it refers to and does not copy. A default one has no ops,
/// tick 1 and makespan 0.
class op_timeline {
 public:
  op_timeline() = default;
  explicit op_timeline(const simulation& sim) : sim_(&sim) {}
  explicit op_timeline(const executed_timeline& run) : run_(&run) {}

  /// The length of a tick, in time units.
  rational tick() const { return run_ != nullptr ? run_->tick : sim_ != nullptr ? sim_->tick() : rational{1}; }
  /// The end of the last op, in ticks (transfers included for an executed run).
  std::int64_t makespan_ticks() const {
    return run_ != nullptr ? run_->makespan_ticks : sim_ != nullptr ? sim_->makespan_ticks() : 0;
  }
  /// Op k's start and end, in ticks.
  std::int64_t start_ticks(std::size_t k) const {
    return run_ != nullptr ? run_->start_ticks[k] : sim_->start_ticks(k);
  }
  std::int64_t end_ticks(std::size_t k) const { return run_ != nullptr ? run_->end_ticks[k] : sim_->end_ticks(k); }
  /// `ticks` ticks in time units.
  rational time(std::int64_t ticks) const { return tick() * rational{ticks}; }
  /// Op k's start and end, and the makespan, in time units, exact.
  rational start(std::size_t k) const { return time(start_ticks(k)); }
  rational end(std::size_t k) const { return time(end_ticks(k)); }
  rational makespan() const { return time(makespan_ticks()); }

 private:
  const simulation* sim_ = nullptr;
  const executed_timeline* run_ = nullptr;
};

/// Whether op k of `v` starts an overlapped pair: an op_kind::overlap_f_b word followed,
/// before `rank_end` (the end of its rank's ops, `v.offsets[r + 1]`), by a B word. The
/// views then draw ops k and k + 1 as one item and skip k + 1. A pair word without its
/// B (an invalid list, which simulate() refuses) is drawn as a lone op.
inline bool starts_pair(schedule_view v, std::size_t k, std::size_t rank_end) {
  return v.ops[k].kind() == op_kind::overlap_f_b && k + 1 < rank_end && v.ops[k + 1].kind() == op_kind::B;
}

/// The label of an overlapped pair in the timelines: its forward's and its backward's
/// kind letter and micro-batch, `F4/B0`, each with its chunk when the shape has V > 1
/// (`F4.1/B0.0`: forward of micro-batch 4 on chunk 1 with backward of micro-batch 0 on
/// chunk 0).
inline std::string pair_label(op word, op backward, const pipeline_shape& shape) {
  const auto half = [&shape](char kind, op o) {
    return shape.V > 1 ? fmt::format("{}{}.{}", kind, o.microbatch(), shape.chunk_of(o.stage()))
                       : fmt::format("{}{}", kind, o.microbatch());
  };
  return half('F', word) + "/" + half('B', backward);
}

/// A generated interleaved-1f1b's parameters, which the title names.
struct interleaved_parameters {
  interleaved_variant variant = interleaved_variant::megatron;  ///< which framework's rules
  int group = 0;            ///< micro-batches per group g, as run (group_size(), never 0)
  int warmup_factor = 2;    ///< warmup forwards added per rank away from the last
  bool group_only = false;  ///< combined-1f1b: only its group is shown (no variant, no factor)
};

/// What the views show of one schedule (see the file comment), built by readout_of().
/// The fields up to `timeline` are the JSON's, in its order and with its names (docs/json.md;
/// the tool adds `executed`, tools/ctpipe/executed.hpp); the rest are what the text, SVG
/// and trace views need beyond them. Numbers are exact; times are in time units of t_f
/// (simulate(), report::sim); memory is in chunks (in_flight(), report::memory: one
/// model chunk's activation of one micro-batch; full activations are chunks * chunk_fraction); closed
/// forms come from analysis/formulas.hpp (report::*_formula); per-rank vectors have P
/// entries, rank 0 first.
struct readout {
  std::string schedule;  ///< the family's name, or the source of a schedule read from elsewhere (schedule_name())
  int P = 0;             ///< pipeline ranks
  int m = 0;             ///< micro-batches
  int V = 0;             ///< model chunks per rank
  /// The part of a rank's layers one chunk holds, exact: 1/V for every family (a chunk
  /// op costs t/V; full activations = chunks * chunk_fraction).
  rational chunk_fraction{1};
  ctpipe::placement placement = ctpipe::placement::loop;  ///< stage placement (JSON: placement_name())
  /// How the schedule's overlapped F&B pairs run (docs/spec.md §2.1): `"fused"` when it
  /// holds pairs, `"split"` when they were generated split (schedule_spec::pairs), empty
  /// when it has none (JSON: null).
  std::string pairs;
  ctpipe::costs costs;  ///< t_f, t_b, t_i, t_w, t_c as analysed, time units (t_f is the unit)
  /// The per-stage and per-micro-batch factors the costs are scaled by (report::stage_scale,
  /// report::microbatch_scale; S = P*V and m entries, or empty for factors of 1; JSON:
  /// arrays of exact strings, or null).
  std::vector<rational> stage_scale, microbatch_scale;
  rational gamma;            ///< M_W / M_B of the finer memory model, in [0, 1]
  rational makespan;         ///< simulated: the end of the last op, time units
  rational bubble_fraction;  ///< simulated: total idle / (P * makespan), in [0, 1]
  /// The bubble fraction's closed form: its value where it holds (JSON: the value, else
  /// null), its formula text and condition for the text views.
  closed_form bubble_fraction_formula;
  std::vector<rational> idle;            ///< per rank: simulated makespan - busy time, time units
  rational span_bubble;                  ///< simulated: max over ranks of (span - busy), time units
  std::vector<rational> peak_in_flight;  ///< per rank: peak in-flight activations with `gamma`, chunks
  /// Per rank: the peak's closed form, in chunks (JSON: each value or null; the whole
  /// field null when no rank's holds).
  std::vector<closed_form> peak_in_flight_formula;
  std::size_t messages = 0;  ///< point-to-point transfers of the whole step (a count)
  /// Per rank: its compute ops in execution order, `ranks.rank(r)` (JSON: action
  /// strings, an overlapped pair's two words as one, io::actions()); op k of the whole schedule is `ranks.ops[k]`.
  /// Refers to the report's op lists (report::ops); `ranks.shape` is P, m, V and the placement.
  schedule_view ranks;
  /// The simulated [start, end) of each op of `ranks`: `timeline.start(k)`, `end(k)`
  /// (JSON: [action, start, end] per rank and action, time units); the trace writes its
  /// ticks. An overlapped pair's two words have the same start and end.
  /// Refers to the report's simulation (report::sim).
  op_timeline timeline;
  closed_form makespan_formula;     ///< the makespan's closed form (time units)
  closed_form span_bubble_formula;  ///< the span bubble's closed form (time units)
  closed_form messages_formula;     ///< the message count's closed form
  /// Per rank: the plain count's peak (gamma = 1), chunks, beside `peak_in_flight` for a
  /// split-backward schedule (I and W) with gamma != 1; empty otherwise.
  std::vector<rational> plain_peak_in_flight;
  /// Set for a generated interleaved-1f1b with V > 1 only (at V = 1 it is plain 1F1B):
  /// its parameters, for the title.
  std::optional<interleaved_parameters> interleaved;
  /// The in-flight profile (report::memory): `level_after(k)`, the level of op k's rank
  /// after op k of `ranks`, in chunks, which the SVG's step lines draw. Never null in a
  /// readout from readout_of().
  const in_flight_profile* in_flight = nullptr;
  /// Null, or the executed run (report::executed) that the text and SVG timelines draw in
  /// place of `timeline`: its model, note, per-rank stall and idle (time units) and stall
  /// stretches (ticks). The JSON's `timeline` and the trace keep to the simulation.
  const executed_timeline* drawn_run = nullptr;
  /// Memory per rank against a limit (report::budget), or nullptr (JSON: `memory`, null).
  const memory_budget* budget = nullptr;
  /// A bubble fill (report::fill), or nullptr (JSON: `fill`, present only with one).
  const fill_overlay* fill = nullptr;
  /// A rebalancing (report::rebalance), or nullptr (JSON: `rebalance`, present only with one).
  const rebalance_overlay* rebalance = nullptr;
  /// What the text and SVG timelines draw: `drawn_run`'s times when set, else `timeline`.
  op_timeline drawn;
};

/// The readout of `rep` (see readout): copies its scalars and per-rank values, computes
/// the plain count's peaks where they apply (one pass over the ops), and refers to its op
/// lists, simulation, in-flight profile and executed run. Linear in P, or in the op count
/// for a split-backward schedule with gamma != 1.
inline readout readout_of(const report& rep) {
  const pipeline_shape& s = rep.spec.shape;
  readout out;
  out.schedule = schedule_name(rep);
  out.P = s.P;
  out.m = s.m;
  out.V = s.V;
  out.chunk_fraction = rational{1, s.cost_chunks()};  // 1 on the bidirectional placement (DualPipe)
  out.placement = s.layout;
  out.pairs = rep.spec.pairs == pair_model::split && rep.source.empty() ? "split"
              : has_pairs(rep.ops.view())                               ? "fused"
                                                                        : "";
  out.costs = rep.cost;
  out.budget = rep.budget ? &*rep.budget : nullptr;
  out.fill = rep.fill ? &*rep.fill : nullptr;
  out.rebalance = rep.rebalance ? &*rep.rebalance : nullptr;
  out.stage_scale = rep.stage_scale;
  out.microbatch_scale = rep.microbatch_scale;
  out.gamma = rep.gamma;
  out.makespan = rep.sim.makespan();
  out.bubble_fraction = rep.sim.bubble_fraction();
  out.bubble_fraction_formula = rep.bubble_formula;
  out.span_bubble = rep.sim.span_bubble();
  out.peak_in_flight_formula = rep.peak_formula;
  out.messages = rep.message_count;
  out.ranks = rep.ops.view();
  out.timeline = op_timeline(rep.sim);
  out.makespan_formula = rep.makespan_formula;
  out.span_bubble_formula = rep.span_bubble_formula;
  out.messages_formula = rep.message_formula;
  for (int r = 0; r < s.P; ++r) {
    out.idle.push_back(rep.sim.idle(r));
    out.peak_in_flight.push_back(rep.memory.peak(r));
  }
  if (has_split_backward(rep) && rep.gamma != rational{1}) {
    const in_flight_profile plain = in_flight(out.ranks);
    for (int r = 0; r < s.P; ++r) out.plain_peak_in_flight.push_back(plain.peak(r));
  }
  // At V = 1 interleaved-1f1b is plain 1F1B: its group and warmup factor play no part.
  // combined-1f1b is Megatron's interleaved table with one more warmup forward: only its
  // group is shown (it takes no variant or warmup factor).
  const bool grouped =
      rep.spec.family == schedule_family::interleaved_1f1b || rep.spec.family == schedule_family::combined_1f1b;
  if (rep.source.empty() && grouped && s.V > 1) {
    out.interleaved = interleaved_parameters{rep.spec.variant, group_size(rep.spec), rep.spec.warmup_factor,
                                             rep.spec.family == schedule_family::combined_1f1b};
  }
  out.in_flight = &rep.memory;
  out.drawn_run = rep.executed ? &*rep.executed : nullptr;
  out.drawn = rep.executed ? op_timeline(*rep.executed) : out.timeline;
  return out;
}
/// A readout refers to its report: none of a temporary.
readout readout_of(const report&&) = delete;

namespace detail {

/// Compares a simulated value with its closed form, as the readouts print it: `= formula
/// TEXT`, `(no closed form: WHY)`, or, should they ever differ, `!= formula ... (a bug:
/// please report it)`.
inline std::string against(rational simulated, const closed_form& f) {
  if (!f.holds) return fmt::format("(no closed form: {})", f.condition);
  if (f.value == simulated) return fmt::format("= formula {}", f.formula);
  return fmt::format("!= formula {} = {} (a bug: please report it)", f.formula, to_string(f.value));
}

/// Per rank: how far `peak` passes `limit` (0 when it fits).
inline std::vector<rational> over(const std::vector<rational>& peak, rational limit) {
  std::vector<rational> out;
  for (const rational& x : peak) out.push_back(max(rational{0}, x - limit));
  return out;
}

/// Per rank: its peak in full activations, peak_in_flight x chunk_fraction.
inline std::vector<rational> peak_activations(const readout& ro) {
  std::vector<rational> out;
  for (const rational& x : ro.peak_in_flight) out.push_back(x * ro.chunk_fraction);
  return out;
}

/// `27.3%`: a fraction as a percentage with one decimal (display only).
inline std::string percent(rational x) { return fmt::format("{:.1f}%", 100.0 * x.to_double()); }

/// Exact values joined by `separator`: `1,1,1,5/4`.
inline std::string joined(const std::vector<rational>& values, const char* separator) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k != 0) out += separator;
    out += to_string(values[k]);  // appended apart: GCC 12 at -O3 warns of the `" " + string` form (-Wrestrict)
  }
  return out;
}

/// Exact values separated by single spaces: `9 9 9 9`.
inline std::string spaced(const std::vector<rational>& values) { return joined(values, " "); }

/// What the title says of an executed run (readout::drawn_run): `  timeline: run
/// executed under MODEL (NOTE)`; empty without one.
inline std::string title_run(const readout& ro) {
  if (ro.drawn_run == nullptr) return "";
  std::string run = fmt::format("  timeline: run executed under {}", runtime_model_name(ro.drawn_run->model));
  if (!ro.drawn_run->note.empty()) run += fmt::format(" ({})", ro.drawn_run->note);
  return run;
}

}  // namespace detail

/// The readout lines, shared by the text view and the SVG: makespan, idle per rank,
/// bubble fraction, span bubble and messages, each against its closed form. With an
/// executed run (readout::drawn_run) a first line names what the timeline draws
/// (`timeline: run executed under blocking: makespan 10 (simulated 9); stall per rank 0
/// 1; idle per rank 4 4`), and the makespan and idle lines say `simulated`.
inline std::vector<std::string> readout_lines(const readout& ro) {
  std::vector<std::string> lines;
  const char* simulated = "";
  if (ro.drawn_run != nullptr) {
    const executed_timeline& e = *ro.drawn_run;
    lines.push_back(
        fmt::format("timeline: run executed under {}: makespan {} (simulated {}); stall per rank {}; idle per rank {}",
                    runtime_model_name(e.model), to_string(e.tick * rational{e.makespan_ticks}), to_string(ro.makespan),
                    detail::spaced(e.stall), detail::spaced(e.idle)));
    simulated = "simulated ";
  }
  const rational msgs{static_cast<std::int64_t>(ro.messages)};
  lines.push_back(fmt::format("{}makespan {} {}", simulated, to_string(ro.makespan),
                              detail::against(ro.makespan, ro.makespan_formula)));
  lines.push_back(fmt::format("{}idle per rank {}", simulated, detail::spaced(ro.idle)));
  lines.push_back(fmt::format("simulated bubble {} ({}) {}", to_string(ro.bubble_fraction),
                              detail::percent(ro.bubble_fraction),
                              detail::against(ro.bubble_fraction, ro.bubble_fraction_formula)));
  lines.push_back(fmt::format("span bubble {} (largest span - busy over ranks) {}", to_string(ro.span_bubble),
                              detail::against(ro.span_bubble, ro.span_bubble_formula)));
  lines.push_back(fmt::format("messages {} {}", ro.messages, detail::against(msgs, ro.messages_formula)));
  return lines;
}

/// readout_lines() of readout_of(rep).
inline std::vector<std::string> readout_lines(const report& rep) { return readout_lines(readout_of(rep)); }

/// Title line, ending in a newline: schedule (readout::schedule), shape, the interleaved
/// parameters, costs (with t_fb and `pairs fused` when the schedule holds overlapped
/// pairs, `pairs split` when they were generated split); with an executed run (readout::drawn_run) `timeline: run
/// executed under MODEL` and its note in brackets.
inline std::string render_title(const readout& ro) {
  std::string params;
  if (ro.interleaved && ro.interleaved->group_only) {
    params = fmt::format("  g = {}", ro.interleaved->group);
  } else if (ro.interleaved) {
    params = fmt::format("  variant {}  g = {}  warmup factor {}", variant_name(ro.interleaved->variant),
                         ro.interleaved->group, ro.interleaved->warmup_factor);
  }
  const std::string pairs = ro.pairs == "fused"   ? fmt::format(", t_fb = {}  pairs fused", to_string(ro.costs.pair()))
                            : ro.pairs == "split" ? std::string("  pairs split")
                                                  : std::string();
  std::string scales;
  if (!ro.stage_scale.empty()) scales += "  stage scale " + detail::joined(ro.stage_scale, ",");
  if (!ro.microbatch_scale.empty()) scales += "  micro-batch scale " + detail::joined(ro.microbatch_scale, ",");
  return fmt::format(
      "{}  P = {}  m = {}  V = {}  placement {}{}  costs t_f = {}, t_b = {}, t_i = {}, t_w = {}, t_c = {}{}{}{}\n",
      ro.schedule, ro.P, ro.m, ro.V, placement_name(ro.placement), params, to_string(ro.costs.f), to_string(ro.costs.b),
      to_string(ro.costs.i), to_string(ro.costs.w), to_string(ro.costs.c), pairs, scales, detail::title_run(ro));
}

/// render_title() of readout_of(rep).
inline std::string render_title(const report& rep) { return render_title(readout_of(rep)); }

}  // namespace ctpipe::io
