// ctpipe/io/json.hpp (run time, opt-in): one schedule and its analyses as JSON, rendered
// from the readout model (io::readout, ctpipe/io/readout.hpp), whose fields carry the
// JSON's names.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"

namespace ctpipe::io {

namespace detail {
/// A closed form's value as a JSON string, or null where it does not hold.
inline nlohmann::ordered_json formula_json(const closed_form& f) {
  return f.holds ? nlohmann::ordered_json(to_string(f.value)) : nlohmann::ordered_json(nullptr);
}
}  // namespace detail

namespace detail {
/// Exact values as an array of strings.
inline nlohmann::ordered_json string_array(const std::vector<rational>& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const rational& x : values) out.push_back(to_string(x));
  return out;
}
inline nlohmann::ordered_json string_array(const ctpipe::detail::buffer<rational>& values) {
  return string_array(std::vector<rational>(values.data(), values.data() + values.size()));
}

/// The `memory` object (docs/json.md): per rank, exact strings; null parts not given;
/// null as a whole without --model and --memory-limit.
inline nlohmann::ordered_json memory_json(const readout& ro) {
  using json = nlohmann::ordered_json;
  if (ro.budget == nullptr) return json(nullptr);
  const memory_budget& b = *ro.budget;
  const auto strings = [](const std::vector<rational>& values) { return string_array(values); };
  const auto per_rank = [&](std::optional<rational> x) {
    return x ? strings(std::vector<rational>(static_cast<std::size_t>(ro.P), *x)) : json(nullptr);
  };
  const bool model = !b.model.empty();
  return json{
      {"model", model ? json(b.model) : json(nullptr)},
      {"layers", model ? json(b.layers) : json(nullptr)},
      {"static_bytes", model ? strings(b.static_bytes) : json(nullptr)},
      {"peak_bytes", model ? strings(b.peak_bytes) : json(nullptr)},
      {"limit_bytes", per_rank(b.limit_bytes)},
      {"over_bytes", b.limit_bytes ? strings(over(b.peak_bytes, *b.limit_bytes)) : json(nullptr)},
      {"limit_activations", per_rank(b.limit_activations)},
      {"over_activations",
       b.limit_activations ? strings(over(peak_activations(ro), *b.limit_activations)) : json(nullptr)},
  };
}
/// One fill_result of `jobs` (docs/json.md, `fill`): placed pieces, jobs not (wholly)
/// placed with the time missing and the reason, per rank filled and remaining idle, the
/// totals, the bound and the method.
inline nlohmann::ordered_json fill_result_json(const std::vector<fill_job>& jobs, const fill_result& r) {
  using json = nlohmann::ordered_json;
  json placed = json::array(), unplaced = json::array();
  for (const fill_piece& p : r.pieces.span()) {
    const fill_job& job = jobs[p.job];
    placed.push_back({{"job", job.name},
                      {"microbatch", job.microbatch < 0 ? json(nullptr) : json(job.microbatch)},
                      {"rank", p.rank},
                      {"start", to_string(p.start)},
                      {"end", to_string(p.end)}});
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (r.reason[j] == fill_reason::placed) continue;
    unplaced.push_back({{"job", jobs[j].name},
                        {"microbatch", jobs[j].microbatch < 0 ? json(nullptr) : json(jobs[j].microbatch)},
                        {"missing", to_string(jobs[j].duration - r.placed[j])},
                        {"reason", reason_text(r.reason[j])}});
  }
  return json{{"placed", std::move(placed)},
              {"unplaced", std::move(unplaced)},
              {"filled", string_array(r.filled)},
              {"remaining_idle", string_array(r.remaining_idle)},
              {"work", to_string(r.work)},
              {"total", to_string(r.total)},
              {"bound", to_string(r.bound)},
              {"optimal", r.optimal},
              {"method", r.method}};
}

/// The `fill.stretch` object (docs/json.md) of a stretch_fill() result of `jobs`: the
/// stretched makespan, the stretch, the bound, whether it is reached with nothing left
/// out but the jobs no order admits (`least`), the method and the greedy passes, each
/// remainder inserted (`placed`), the jobs no order admits (`impossible`) and the jobs
/// blocked by the remainders inserted before them (`blocked`; per job the first 20 of
/// those, by job index, and how many there are).
inline nlohmann::ordered_json stretch_json(const std::vector<fill_job>& jobs, const stretch_result& s) {
  using json = nlohmann::ordered_json;
  const auto name = [&](std::uint32_t j) {
    return json{{"job", jobs[j].name},
                {"microbatch", jobs[j].microbatch < 0 ? json(nullptr) : json(jobs[j].microbatch)}};
  };
  json placed = json::array(), impossible = json::array(), blocked = json::array();
  for (const fill_piece& x : s.placed) {
    json one = name(x.job);
    one.update(json{{"rank", x.rank}, {"start", to_string(x.start)}, {"end", to_string(x.end)}});
    placed.push_back(std::move(one));
  }
  for (const std::uint32_t j : s.impossible) impossible.push_back(name(j));
  for (const stretch_blocked& b : s.blocked) {
    json one = name(b.job), by = json::array();
    for (std::size_t q = 0; q < b.by.size() && q < 20; ++q)
      by.push_back(name(b.by[q]));  // the total beside: n x n entries could be huge
    one["by"] = std::move(by);
    one["by_total"] = b.by.size();
    one["proved"] = b.proved;
    blocked.push_back(std::move(one));
  }
  return json{{"makespan", to_string(s.makespan)},
              {"stretch", to_string(s.stretch)},
              {"bound", to_string(s.bound)},
              {"least", s.least},
              {"method", s.method},
              {"passes", s.passes},
              {"placed", std::move(placed)},
              {"impossible", std::move(impossible)},
              {"blocked", std::move(blocked)}};
}

/// The `fill.stretch_not_computed` object (docs/json.md): why --allow-stretch has no
/// stretch (`"too large"`), the remainders it would insert, and how many times the work
/// the tool allows one greedy pass would take (rounded up).
inline nlohmann::ordered_json stretch_refusal_json(const stretch_refusal& r) {
  return {{"reason", "too large"}, {"remainders", r.remainders}, {"over_limit", r.over_limit()}};
}

/// The `fill` object (docs/json.md): fill_result_json() of the one iteration, with the
/// request, `stretch` (stretch_json() with --allow-stretch, else null),
/// `stretch_not_computed` (stretch_refusal_json() when --allow-stretch was refused, else
/// null) and `steady_state` (the same object as the one iteration's for back-to-back
/// iterations, or null).
inline nlohmann::ordered_json fill_json(const fill_overlay& f) {
  nlohmann::ordered_json out = {{"request", f.request}};
  out.update(fill_result_json(f.jobs, f.result));
  out["stretch"] = f.stretch ? stretch_json(f.jobs, *f.stretch) : nlohmann::ordered_json(nullptr);
  out["stretch_not_computed"] =
      f.stretch_refused ? stretch_refusal_json(*f.stretch_refused) : nlohmann::ordered_json(nullptr);
  out["steady_state"] = f.steady ? fill_result_json(f.jobs, *f.steady) : nlohmann::ordered_json(nullptr);
  return out;
}

/// A move of a rebalancing plan: {"microbatch", "stage", "from", "to", "send", "back"}.
inline nlohmann::ordered_json move_json(const activation_move& mv) {
  return {{"microbatch", mv.microbatch}, {"stage", mv.stage},         {"from", mv.from}, {"to", mv.to},
          {"send", to_string(mv.send)},  {"back", to_string(mv.back)}};
}

/// The `rebalance.delay` object (docs/json.md): least_delay()'s result.
inline nlohmann::ordered_json delay_json(const rebalance_delay& d) {
  using json = nlohmann::ordered_json;
  json out = {{"found", d.found}};
  if (!d.found) {
    out["why_not"] = d.why_not != nullptr ? d.why_not : "";
    out["stuck"] = d.stuck_rank < 0 ? json(nullptr) : json{{"rank", d.stuck_rank}, {"time", to_string(d.stuck_at)}};
    out["rounds"] = d.rounds;
    return out;
  }
  out["delay"] = to_string(d.delay);
  out["makespan"] = to_string(d.makespan);
  json waits = json::array();
  for (const delayed_op& w : d.waits) {
    waits.push_back({{"rank", w.rank},
                     {"kind", kind_name(w.o.kind())},
                     {"stage", w.o.stage()},
                     {"microbatch", w.o.microbatch()},
                     {"start", to_string(w.start)},
                     {"delayed_start", to_string(w.delayed_start)}});
  }
  out["waits"] = std::move(waits);
  json moves = json::array();
  for (const activation_move& mv : d.moves) moves.push_back(move_json(mv));
  out["moves"] = std::move(moves);
  out["peak_in_flight"] = string_array(d.peak_after);
  out["channel_busy"] = string_array(d.channel_busy);
  out["rounds"] = d.rounds;
  return out;
}

/// The `rebalance` object (docs/json.md): capacity, peaks after and before, moves, the
/// lower bound, channel busy time, BPipe's plan at the same capacity, and the least delay
/// (`delay`, null when the plan fits with no compute op delayed).
inline nlohmann::ordered_json rebalance_json(const rebalance_overlay& o) {
  using json = nlohmann::ordered_json;
  const auto plan_json = [](const rebalance_plan& p, bool moves_listed) {
    json moves = json::array();
    for (const activation_move& mv : p.moves) moves.push_back(move_json(mv));
    json out = {{"capacity", string_array(p.capacity)},
                {"feasible", p.feasible},
                {"peak_in_flight", string_array(p.peak_after)}};
    if (moves_listed)
      out["moves"] = std::move(moves);
    else
      out["move_count"] = p.moves.size();
    out["channel_busy"] = string_array(p.channel_busy);
    out["stuck"] = p.feasible ? json(nullptr) : json{{"rank", p.stuck_rank}, {"time", to_string(p.stuck_at)}};
    return out;
  };
  json out = plan_json(o.plan, true);
  out["peak_in_flight_before"] = string_array(o.plan.peak_before);
  out["lower_bound"] = to_string(o.plan.bound.bound);
  out["live"] = to_string(o.plan.bound.live);
  out["move_cost"] = to_string(o.plan.move_cost);
  out["least_capacity"] = to_string(o.least);
  out["searched"] = o.searched;
  json bpipe = plan_json(o.bpipe, false);
  bpipe["least_capacity"] = to_string(o.bpipe_least);
  out["bpipe"] = std::move(bpipe);
  out["delay"] = o.delay ? delay_json(*o.delay) : json(nullptr);
  if (o.executed) {
    const executed_plan& e = *o.executed;
    out["executed"] = {{"runtime", runtime_model_name(e.model)},
                       {"copy_ops", e.copy_ops},
                       {"completed", e.completed},
                       {"as_planned", e.as_planned},
                       {"makespan", e.completed ? json(to_string(e.makespan)) : json(nullptr)},
                       {"peak_in_flight", e.peak.empty() ? json(nullptr) : json(string_array(e.peak))}};
  }
  return out;
}

}  // namespace detail

/// The JSON object the `ctpipe` tool prints with `--format json` (docs/json.md), one field
/// per field of readout `ro` up to `timeline`, with the same names, in this order. Exact
/// numbers are strings ("3/11", "33"); counts are integers. Fields, exactly:
/// `schedule` (the family, or the file name of a schedule read from a file: schedule_name),
/// `P`, `m`, `V`, `chunk_fraction` (the share of a full activation and of an op's cost one chunk holds, as a string:
/// "1/V", or "1" for DualPipe, whose chunk is a whole stage of one of its two model copies), `placement` ("loop", "v"
/// or "bidirectional"), `costs` ({"f","b","i","w","c","fb"} as strings), `stage_scale` and `microbatch_scale` (the
/// cost_scale factors as strings, S = P*V and m of them, or null when not given), `gamma`, `makespan`,
/// `bubble_fraction`, `bubble_fraction_formula` (the closed form's value, or null where none applies), `idle` (per
/// rank), `span_bubble`, `peak_in_flight` (per rank, in chunks), `peak_in_flight_formula` (per rank, an entry null
/// where no closed form applies; the whole field null when none applies), `messages` (integer), `memory`
/// (memory_json(): bytes per rank from a model and the limit, or null), `ranks` (per rank, action strings such as
/// "0F3"), `timeline` (per rank, [action, start, end] triples: the simulated times, never an executed run's). An
/// overlapped pair (its word and its B word) is one action in both, PyTorch's
/// `(7F4;0B0)OVERLAP_F_B` (io::actions(), as the reference vectors hold it), with the
/// pair's start and end. With a fill (readout::fill) a last field `fill` (fill_json()),
/// with a rebalancing (readout::rebalance) `rebalance` (rebalance_json()).
inline nlohmann::ordered_json to_json(const readout& ro) {
  using json = nlohmann::ordered_json;
  const schedule_view v = ro.ranks;
  json peak_formula = json::array();
  json ranks = json::array();
  json timeline = json::array();
  bool any_peak_formula = false;
  for (const closed_form& f : ro.peak_in_flight_formula) {
    any_peak_formula = any_peak_formula || f.holds;
    peak_formula.push_back(detail::formula_json(f));
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(ro.P); ++r) {
    json actions = json::array();
    json slices = json::array();
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const bool pair = starts_pair(v, k, v.offsets[r + 1]);
      const std::string name = pair ? pair_action(v.ops[k], v.ops[k + 1]) : action(v.ops[k]);
      const rational end = pair ? max(ro.timeline.end(k), ro.timeline.end(k + 1)) : ro.timeline.end(k);
      actions.push_back(name);
      slices.push_back(json::array({name, to_string(ro.timeline.start(k)), to_string(end)}));
      k += pair ? 1 : 0;
    }
    ranks.push_back(std::move(actions));
    timeline.push_back(std::move(slices));
  }
  const auto strings = [](const std::vector<rational>& values) { return detail::string_array(values); };
  json out{
      {"schedule", ro.schedule},
      {"P", ro.P},
      {"m", ro.m},
      {"V", ro.V},
      {"chunk_fraction", to_string(ro.chunk_fraction)},
      {"placement", placement_name(ro.placement)},
      {"pairs", ro.pairs.empty() ? json(nullptr) : json(ro.pairs)},
      {"costs",
       {{"f", to_string(ro.costs.f)},
        {"b", to_string(ro.costs.b)},
        {"i", to_string(ro.costs.i)},
        {"w", to_string(ro.costs.w)},
        {"c", to_string(ro.costs.c)},
        {"fb", to_string(ro.costs.pair())}}},
      {"stage_scale", ro.stage_scale.empty() ? json(nullptr) : strings(ro.stage_scale)},
      {"microbatch_scale", ro.microbatch_scale.empty() ? json(nullptr) : strings(ro.microbatch_scale)},
      {"gamma", to_string(ro.gamma)},
      {"makespan", to_string(ro.makespan)},
      {"bubble_fraction", to_string(ro.bubble_fraction)},
      {"bubble_fraction_formula", detail::formula_json(ro.bubble_fraction_formula)},
      {"idle", strings(ro.idle)},
      {"span_bubble", to_string(ro.span_bubble)},
      {"peak_in_flight", strings(ro.peak_in_flight)},
      {"peak_in_flight_formula", any_peak_formula ? std::move(peak_formula) : json(nullptr)},
      {"messages", ro.messages},
      {"memory", detail::memory_json(ro)},
      {"ranks", std::move(ranks)},
      {"timeline", std::move(timeline)},
  };
  if (ro.fill != nullptr) out["fill"] = detail::fill_json(*ro.fill);
  if (ro.rebalance != nullptr) out["rebalance"] = detail::rebalance_json(*ro.rebalance);
  return out;
}

/// to_json() of readout_of(rep).
inline nlohmann::ordered_json to_json(const report& rep) { return to_json(readout_of(rep)); }

}  // namespace ctpipe::io
