// ctpipe/io/report.hpp (run time, opt-in): every analysis of one schedule, computed
// once; and, for a schedule with transfers, the executed run its timelines draw instead
// of the simulation. The views render from the readout model that readout_of() builds
// from a report (ctpipe/io/readout.hpp).
#pragma once

#include <algorithm>  // std::equal
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>  // set_memory's roles
#include <string>
#include <utility>
#include <vector>

#include "ctpipe/analysis/communication.hpp"
#include "ctpipe/analysis/formulas.hpp"
#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/model.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/plan/fill.hpp"
#include "ctpipe/plan/fill_stretch.hpp"
#include "ctpipe/plan/moves.hpp"
#include "ctpipe/plan/rebalance.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe::io {

/// A stretch [start, end) of a timeline, in ticks.
struct tick_span {
  std::int64_t start = 0;
  std::int64_t end = 0;
  friend bool operator==(const tick_span&, const tick_span&) = default;
};

/// An executed run of a schedule's lowered lists (execute()), as the timeline views draw
/// it in place of the simulation: its compute ops' times and the stretches where a rank
/// stalls. Made by executed_timeline_of(); attached to a report as `report::executed`,
/// which a readout draws as `readout::drawn_run`.
struct executed_timeline {
  runtime_model model = runtime_model::blocking;
  /// Why this model is drawn, for the title (`blocking hangs`); empty when it needs no word.
  std::string note;
  rational tick{1};                 ///< the length of a tick, in time units
  std::int64_t makespan_ticks = 0;  ///< the end of the last op, transfers included
  /// Per compute op, indexed like report::ops (the lowered lists' compute ops in each
  /// rank's order, as compute_part() keeps them): start and end in ticks.
  std::vector<std::int64_t> start_ticks, end_ticks;
  /// Where each rank's compute ops begin in start_ticks and end_ticks (P + 1 entries).
  std::vector<std::uint32_t> offsets;
  /// Per rank: its stalls (execution::stall_intervals(), touching ones merged), in time order.
  std::vector<std::vector<tick_span>> stalls;
  std::vector<rational> stall;  ///< per rank: execution::stall()
  std::vector<rational> idle;   ///< per rank: execution::idle()

  bool has_stall() const {
    for (const auto& spans : stalls) {
      if (!spans.empty()) return true;
    }
    return false;
  }
};

/// The timeline of `run`, an execution of lowered schedule `lowered` that completed:
/// its compute ops' times in compute_part() order, its stall intervals per rank, stall
/// and idle per rank; `note` as given. Linear. Raises `ctpipe: an executed timeline needs
/// a run that completed` for a run that hangs, and `ctpipe: an executed timeline needs
/// the execution of these lowered lists` when the run's ranks or op count differ.
inline executed_timeline executed_timeline_of(schedule_view lowered, const execution& run, std::string note = {}) {
  ctpipe::detail::require(run.completed(), "ctpipe: an executed timeline needs a run that completed");
  ctpipe::detail::require(run.ranks() == lowered.shape.P && run.size() == lowered.size(),
                          "ctpipe: an executed timeline needs the execution of these lowered lists");
  executed_timeline out;
  out.model = run.model();
  out.note = std::move(note);
  out.tick = run.tick();
  out.makespan_ticks = run.makespan_ticks();
  const auto P = static_cast<std::size_t>(lowered.shape.P);
  out.stalls.resize(P);
  out.offsets.push_back(0);
  for (std::size_t r = 0; r < P; ++r) {
    for (std::size_t k = lowered.offsets[r]; k < lowered.offsets[r + 1]; ++k) {
      if (is_transfer(lowered.ops[k].kind()) || is_move(lowered.ops[k].kind())) continue;  // compute ops only
      out.start_ticks.push_back(run.start_ticks(k));
      out.end_ticks.push_back(run.end_ticks(k));
    }
    out.offsets.push_back(static_cast<std::uint32_t>(out.start_ticks.size()));
  }
  for (const stall_interval& i : run.stall_intervals()) {
    auto& spans = out.stalls[static_cast<std::size_t>(i.rank)];
    if (!spans.empty() && spans.back().end == i.start_ticks) {
      spans.back().end = i.end_ticks;
    } else {
      spans.push_back({i.start_ticks, i.end_ticks});
    }
  }
  for (int r = 0; r < lowered.shape.P; ++r) {
    out.stall.push_back(run.stall(r));
    out.idle.push_back(run.idle(r));
  }
  return out;
}

/// Memory per rank against a limit (docs/spec.md §3.1): in bytes from a model, and/or a
/// limit. Per-rank vectors have P entries; a vector is empty when its part is not given.
struct memory_budget {
  std::string model;                   ///< the model's name or file; empty without a model
  std::vector<std::int64_t> layers;    ///< per stage (S entries): the layer split; empty without a model
  std::vector<rational> static_bytes;  ///< per rank: weights, gradients, optimizer state
  std::vector<rational> peak_bytes;    ///< per rank: static bytes + the most activation bytes held at once
  /// `--memory-limit`: bytes per rank (a byte unit, with a model), or full activations
  /// per rank (a plain number: compared with peak_in_flight x chunk_fraction).
  std::optional<rational> limit_bytes, limit_activations;
};

/// Why a fill shown with --allow-stretch has no stretch: stretch_fill() refused the work
/// (stretch_limit_error's numbers).
struct stretch_refusal {
  std::size_t remainders = 0;  ///< the jobs with time left, whose remainders it would insert
  std::uint64_t work = 0;      ///< one greedy pass's estimated steps
  std::uint64_t limit = 0;     ///< the most it takes (stretch_limits::work)

  /// How many times the limit the work is, rounded up (0 when the limit is 0).
  std::uint64_t over_limit() const { return limit == 0 ? 0 : work / limit + (work % limit != 0 ? 1 : 0); }
};

/// A bubble fill shown with its schedule (`ctpipe fill`, docs/spec.md §8.1): the jobs
/// asked for and where they went, and with --allow-stretch where the rest went when the
/// pipeline may grow (or why that was not computed). `jobs` index `result`'s per-job
/// vectors; their names view `names` (a deque: its strings never move).
struct fill_overlay {
  std::string request;                    ///< what was asked, as given (`encoder:f=1/4,b=1/2; ...`), for the views
  std::deque<std::string> names;          ///< storage of the jobs' names
  std::vector<fill_job> jobs;             ///< the jobs, in the order asked
  fill_result result;                     ///< one iteration: what the timeline draws
  std::optional<fill_result> steady;      ///< with --steady-state: back-to-back iterations
  std::optional<stretch_result> stretch;  ///< with --allow-stretch: stretch_fill() of `result` (empty when refused)
  std::optional<stretch_refusal>
      stretch_refused;  ///< with --allow-stretch when stretch_fill() refused the work, else empty
};

/// A rebalancing shown with its schedule (`ctpipe rebalance`, docs/spec.md §8.2): the
/// plan, BPipe's at the same capacity, and the least uniform capacity each reaches.
struct rebalance_overlay {
  rebalance_plan plan;      ///< ctpipe's planner at the capacity asked (or the least it reaches)
  rebalance_plan bpipe;     ///< BPipe's pairing (x <-> P-1-x) at the same capacity
  rational least{0};        ///< least uniform capacity ctpipe's planner reaches
  rational bpipe_least{0};  ///< and BPipe's
  bool searched = false;    ///< no capacity asked: `plan` is at `least`
  std::optional<executed_plan>
      executed;  ///< `plan` written into lowered lists as activation copies and run (run_moves())
  std::optional<rebalance_delay> delay;  ///< when `plan` does not fit: least_delay() at the same capacity
};

/// One schedule with its simulation, in-flight profile, message count, validation and
/// closed forms. Per-rank vectors have P entries.
struct report {
  schedule_spec spec;
  costs cost;
  rational gamma;
  schedule ops;                   ///< the generated op lists
  simulation sim;                 ///< exact timeline
  in_flight_profile memory;       ///< in-flight activations for `gamma`
  std::size_t message_count = 0;  ///< point-to-point transfers of the step
  validation_result validity;     ///< ok() for every generated schedule
  closed_form makespan_formula;   ///< see analysis/formulas.hpp
  closed_form bubble_formula;
  closed_form span_bubble_formula;
  closed_form message_formula;
  std::vector<closed_form> peak_formula;  ///< per rank
  /// Empty for a generated schedule. For one read from elsewhere (a CSV file): where it
  /// came from, which the views show in place of the family name (see schedule_name).
  std::string source;
  /// Empty unless set (draw_executed()): the executed run of the schedule's lowered
  /// lists, which the text and SVG timelines then draw in place of `sim`, with its
  /// stalls (readout::drawn_run, readout::drawn); the readouts name it. JSON and traces
  /// keep to `sim`.
  std::optional<executed_timeline> executed;
  /// Unequal stages and micro-batches (cost_scale, docs/spec.md §2.2): one factor per
  /// stage (S = P*V) and per micro-batch (m), or empty for factors of 1. `sim` and every
  /// closed form are under them.
  std::vector<rational> stage_scale, microbatch_scale;

  /// Empty unless set (set_memory(), set_memory_limit()): memory per rank against a limit.
  std::optional<memory_budget> budget;
  /// Empty unless set (`ctpipe fill`): independent work placed into the bubbles, which the
  /// views draw in the idle time.
  std::optional<fill_overlay> fill;
  /// Empty unless set (`ctpipe rebalance`): moves of activations between ranks, which the
  /// in-flight views show beside the staircase.
  std::optional<rebalance_overlay> rebalance;

  /// The cost_scale of `stage_scale` and `microbatch_scale` (refers to them).
  cost_scale scale() const { return {stage_scale, microbatch_scale}; }
};

/// Counts `rep`'s memory in bytes for `model` (named `name`) with `layers` per stage (S
/// entries; memory_of(), with rep's gamma and micro-batch factors, and `roles`: S entries
/// placing the embedding and the loss, or none for role_of()). Raises memory_of()'s
/// messages.
inline void set_memory(report& rep, std::string name, const transformer_model& model, std::vector<std::int64_t> layers,
                       std::span<const stage_role> roles = {}) {
  const model_memory ranks = memory_of(rep.ops.view(), model, layers, rep.gamma, rep.microbatch_scale, roles);
  if (!rep.budget) rep.budget.emplace();
  memory_budget& m = *rep.budget;
  m.model = std::move(name);
  m.layers = std::move(layers);
  m.static_bytes.clear();
  m.peak_bytes.clear();
  for (int r = 0; r < ranks.ranks(); ++r) {
    m.static_bytes.push_back(ranks.static_bytes(r));
    m.peak_bytes.push_back(ranks.peak_bytes(r));
  }
}

/// Sets `rep`'s memory limit: bytes per rank (`bytes` true; needs set_memory() first) or
/// full activations per rank. Raises `ctpipe: a memory limit in bytes needs --model (a
/// plain number is full activations per rank)` and `ctpipe: a memory limit must be > 0`.
inline void set_memory_limit(report& rep, rational limit, bool bytes) {
  ctpipe::detail::require(limit > rational{0}, "ctpipe: a memory limit must be > 0");
  ctpipe::detail::require(
      !bytes || (rep.budget && !rep.budget->model.empty()),
      "ctpipe: a memory limit in bytes needs --model (a plain number is full activations per rank)");
  if (!rep.budget) rep.budget.emplace();
  (bytes ? rep.budget->limit_bytes : rep.budget->limit_activations) = limit;
}

/// Generates, validates and analyses `spec`, with costs scaled per stage and per
/// micro-batch when `stage_scale` or `microbatch_scale` is given (cost_scale: S = P*V
/// and m factors, or empty for factors of 1). Raises the check_spec(), check_costs(),
/// check_gamma() and check_scale() messages as ctpipe::error.
inline report analyze(const schedule_spec& spec, const costs& cost, rational gamma,
                      std::vector<rational> stage_scale = {}, std::vector<rational> microbatch_scale = {}) {
  check_costs(cost);
  check_gamma(gamma);
  report out{spec,
             cost,
             gamma,
             generate(spec),
             {},
             {},
             0,
             {},
             {},
             {},
             {},
             {},
             {},
             {},
             {},
             std::move(stage_scale),
             std::move(microbatch_scale),
             {},
             {},
             {}};
  const cost_scale scale = out.scale();
  check_scale(scale, spec.shape);
  out.validity = validate(out.ops.view());
  out.sim = simulate(out.ops.view(), cost, scale);
  out.memory = in_flight(out.ops.view(), gamma);
  out.message_count = messages(out.ops.view());
  out.makespan_formula = makespan_formula(spec, cost, scale);
  out.bubble_formula = bubble_fraction_formula(spec, cost, scale);
  out.span_bubble_formula = span_bubble_formula(spec, cost, scale);
  out.message_formula = messages_formula(spec);
  for (int r = 0; r < spec.shape.P; ++r) out.peak_formula.push_back(peak_in_flight_formula(spec, gamma, r));
  return out;
}

/// Analyses compute schedule `ops`, which was not generated (read from a file, written by
/// hand or by another framework): the same fields as analyze(spec, ...), with
/// `spec.shape` = the schedule's shape (the other fields of `spec` mean nothing), every
/// closed form absent (the reason `no_form`: "read from a file" by default, "searched"
/// for search()'s) and `source` as given (non-empty: a file name, `-` for standard input,
/// `search`). The caller validates first: simulate() and in_flight() need a valid
/// schedule (`validity` holds validate()'s verdict). Raises the check_costs() and
/// check_gamma() messages, and `ctpipe: analyze() needs the source of a schedule it did
/// not generate` for an empty `source`.
inline report analyze(schedule ops, const costs& cost, rational gamma, std::string source,
                      const char* no_form = "read from a file") {
  check_costs(cost);
  check_gamma(gamma);
  ctpipe::detail::require(!source.empty(), "ctpipe: analyze() needs the source of a schedule it did not generate");
  report out{};
  out.spec.shape = ops.shape();
  out.cost = cost;
  out.gamma = gamma;
  out.ops = std::move(ops);
  out.source = std::move(source);
  out.validity = validate(out.ops.view());
  out.sim = simulate(out.ops.view(), cost);
  out.memory = in_flight(out.ops.view(), gamma);
  out.message_count = messages(out.ops.view());
  const closed_form none = ctpipe::detail::no_formula(no_form);
  out.makespan_formula = none;
  out.bubble_formula = none;
  out.span_bubble_formula = none;
  out.message_formula = none;
  out.peak_formula.assign(static_cast<std::size_t>(out.spec.shape.P), none);
  return out;
}

/// Makes the text and SVG timelines of `rep` draw `timeline` (executed_timeline_of() of
/// the lowered lists whose compute ops are `rep.ops`) in place of the simulation. Raises
/// `ctpipe: an executed timeline needs the lowered lists of the report's schedule` when
/// its ranks' compute op counts differ from `rep.ops`'s.
inline void draw_executed(report& rep, executed_timeline timeline) {
  const auto offsets = rep.ops.view().offsets;
  ctpipe::detail::require(std::equal(offsets.begin(), offsets.end(), timeline.offsets.begin(), timeline.offsets.end()),
                          "ctpipe: an executed timeline needs the lowered lists of the report's schedule");
  rep.executed = std::move(timeline);
}

/// The name the views give the schedule: its family's (`1f1b`), or for a schedule read
/// from elsewhere its `source`.
inline std::string schedule_name(const report& rep) {
  return rep.source.empty() ? std::string(family_name(rep.spec.family)) : rep.source;
}

/// Whether the schedule splits its backwards into I and W (the views then compare the
/// finer memory model with the plain count): by its family, or for a schedule read from
/// elsewhere by its ops.
inline bool has_split_backward(const report& rep) {
  if (rep.source.empty()) return splits_backward(rep.spec.family);
  for (const op o : rep.ops.view().ops) {
    if (o.kind() == op_kind::I || o.kind() == op_kind::W) return true;
  }
  return false;
}

}  // namespace ctpipe::io
