// `ctpipe compare`: several schedules for the same P and m (and V where it applies) on one
// time axis, with a table of their bubble, span bubble, rank 0's peak and messages; or
// their JSON summaries. A schedule the shape does not suit becomes a `rejected` row. With
// --fill, how much of the work fits each one's bubbles; with --rebalance, how flat moving
// activations gets each one's staircase (a second table; each JSON object's `fill` and
// `rebalance`).
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <utility>
#include <vector>

#include "command.hpp"
#include "ctpipe/io/json.hpp"
#include "ctpipe/io/svg.hpp"
#include "ctpipe/io/text.hpp"
#include "../executed.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"
#include "../overlays.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe compare` (see the file comment).
/// `ctpipe compare`'s options.
struct compare_options : options_of<schedule_options, cost_options, scale_options, model_options, view_options> {
  compare_options() {
    several = true;
    scope = chunks_scope::chunked_families;
    takes_placement = false;
    formats = {"text", "svg", "json"};
    format_help = "text, svg or json (each schedule's ctpipe --format json object; docs/json.md)";
    command = "compare";
    takes_color = false;
  }
};

class compare final : public command_with_options<compare_options> {
 private:
  void declare_own(CLI::App& app) override {
    app.add_option("--fill", fill_requests_,
                   "also fill each schedule's bubbles (as `ctpipe fill --fill`, e.g. encoder:f=1/4,b=1/2; repeatable)");
    app.add_flag(
        "--rebalance", rebalance_,
        "also rebalance each schedule's activations (as `ctpipe rebalance` without --capacity: the least uniform "
        "capacity reached, with t_move from --costs move=)");
  }

  /// Schedule k's report with --fill and --rebalance applied, or its reason to be a
  /// rejected row: the shape or rules it refuses, scales of another length (P*V), or a
  /// job naming an op it does not have (after=, before=).
  std::optional<io::report> report_for(std::size_t k, std::string& reason) const {
    const schedule_spec spec = opts_.spec_for(opts_.families[k]);
    if (const char* why = spec_error(spec)) {
      reason = why;
      return std::nullopt;
    }
    const std::string& name = opts_.family_names[k];
    run_costs run;
    try {  // a stage scale and --layers fit the schedules with their number of stages (P*V) only
      run = costs_for(opts_, opts_, opts_.stage_scale, spec);
      check_scale_lengths(run.stage_scale, opts_.microbatch_scale, spec.shape);
      check_scale(cost_scale{run.stage_scale, opts_.microbatch_scale}, spec.shape);
    } catch (const ctpipe::error& e) {
      reason = e.what();
      return std::nullopt;
    } catch (const usage_error& e) {
      reason = e.what();
      return std::nullopt;
    }
    check_op_limit(static_cast<long long>(total_ops(spec)), max_json_ops, "compare", name);
    io::report rep = io::analyze(spec, run.cost, opts_.gamma, run.stage_scale, opts_.microbatch_scale);
    apply_memory(rep, opts_, opts_.memory_limit_text);
    try {  // a job naming an op (after=, before=) may fit some schedules only: the others become rejected rows
      if (!fill_requests_.empty()) apply_fill(rep, fill_requests_, false, fill_method::best);
    } catch (const usage_error& e) {
      reason = e.what();
      return std::nullopt;
    }
    if (rebalance_) {
      check_op_limit(static_cast<long long>(total_ops(spec)), max_rebalance_ops, "compare --rebalance", name);
      apply_rebalance(rep, "");
    }
    return rep;
  }

  /// The error when no schedule accepts the request: one reason for every schedule is the
  /// request's fault (a malformed --fill, scales of the wrong length for all), said once
  /// as the command that takes one schedule would; else each schedule's, by name.
  static usage_error rejected_error(const std::vector<std::pair<std::string, std::string>>& rejected) {
    const bool same = std::all_of(rejected.begin(), rejected.end(),
                                  [&](const auto& r) { return r.second == rejected.front().second; });
    if (same) return usage_error(rejected.front().second);
    std::string reasons;  // the library's reason for each: the first is the one to fix
    for (const auto& [name, reason] : rejected) reasons += fmt::format("; {}: {}", name, reason);
    return usage_error("ctpipe: compare needs at least one schedule that accepts the shape" + reasons);
  }

  std::string run_checked() override {
    check_shape({opts_.P, opts_.m});
    // Each schedule with its own V and placement; one it rejects becomes a table row.
    std::vector<io::report> reports;
    std::vector<std::pair<std::string, std::string>> rejected;  // name, reason
    for (std::size_t k = 0; k < opts_.families.size(); ++k) {
      std::string reason;
      if (std::optional<io::report> rep = report_for(k, reason)) {
        reports.push_back(std::move(*rep));
      } else {
        rejected.emplace_back(opts_.family_names[k], std::move(reason));
      }
    }
    if (reports.empty()) throw rejected_error(rejected);
    std::vector<io::readout> readouts;  // every view renders from these (they refer to `reports`)
    for (const io::report& rep : reports) readouts.push_back(io::readout_of(rep));
    if (opts_.format == "json") return json(readouts, rejected);
    if (opts_.format == "svg") {
      std::vector<std::string> lines = notes(readouts, rejected);
      const std::string table = overlay_table(readouts);  // --fill, --rebalance: their table's lines under the notes
      for (std::size_t at = 0, end = 0; at < table.size(); at = end + 1) {
        end = table.find('\n', at);
        lines.push_back(table.substr(at, end - at));
      }
      return io::render_svg_compare(readouts, 1200, lines);
    }
    return text(readouts, rejected);
  }

  /// `{"schedules": [ctpipe --format json's object, ...], "rejected": [{"schedule",
  /// "reason"}, ...]}` (docs/json.md).
  static std::string json(const std::vector<io::readout>& readouts,
                          const std::vector<std::pair<std::string, std::string>>& rejected) {
    using ordered = nlohmann::ordered_json;
    ordered schedules = ordered::array();
    for (const io::readout& ro : readouts) {
      ordered j = io::to_json(ro);
      j["executed"] = own_lowering_json(ro.ranks, ro.costs, nullptr, cost_scale{ro.stage_scale, ro.microbatch_scale});
      schedules.push_back(std::move(j));
    }
    ordered refused = ordered::array();
    for (const auto& [name, reason] : rejected) refused.push_back({{"schedule", name}, {"reason", reason}});
    return json_text(ordered{{"schedules", std::move(schedules)}, {"rejected", std::move(refused)}});
  }

  /// The lines under the table, in text and SVG: what the peak columns count, then each
  /// schedule the shape does not suit, with the library's reason.
  std::vector<std::string> notes(const std::vector<io::readout>& readouts,
                                 const std::vector<std::pair<std::string, std::string>>& rejected) const {
    std::vector<std::string> lines{
        fmt::format("peak r0: rank 0's peak in-flight activations (gamma = {}), in full activations of its layers "
                    "(chunks x chunk_fraction: chunks / V, chunks for dualpipe) "
                    "and in model chunks",
                    io::to_string(opts_.gamma))};
    for (const io::readout& ro : readouts) {  // with --model or --memory-limit: each schedule's memory per rank
      if (ro.budget != nullptr) lines.push_back(ro.schedule + " memory: " + io::memory_summary(ro));
    }
    for (const auto& [name, reason] : rejected) lines.push_back(fmt::format("{}: rejected ({})", name, reason));
    return lines;
  }

  /// The timelines on one time axis, then the table (rank 0's peak in full activations
  /// and in chunks), then the rejected schedules.
  std::string text(const std::vector<io::readout>& readouts,
                   const std::vector<std::pair<std::string, std::string>>& rejected) const {
    rational longest{0};
    for (const io::readout& ro : readouts) longest = max(longest, ro.makespan);
    std::string out;
    for (const io::readout& ro : readouts) {
      out += io::render_title(ro) + io::render_timeline(ro, {opts_.width, false, longest}) + "\n";
    }
    constexpr const char* row = "{:<18}{:>12}{:>14}{:>9}{:>13}{:>21}{:>18}{:>10}\n";
    out += fmt::format(row, "schedule", "makespan", "bubble", "", "span bubble", "peak r0 (full act.)",
                       "peak r0 (chunks)", "messages");
    for (const io::readout& ro : readouts) {
      out += fmt::format(row, ro.schedule, io::to_string(ro.makespan), io::to_string(ro.bubble_fraction),
                         fmt::format("{:.1f}%", 100 * ro.bubble_fraction.to_double()), io::to_string(ro.span_bubble),
                         io::to_string(ro.peak_in_flight[0] * ro.chunk_fraction), io::to_string(ro.peak_in_flight[0]),
                         ro.messages);
    }
    out += overlay_table(readouts);
    for (const std::string& note : notes(readouts, rejected)) out += note + "\n";
    return out;
  }

  /// With --fill or --rebalance, per schedule: the work filled (of the work asked, and
  /// whether it is optimal), and the least uniform capacity rebalancing reaches beside
  /// the bound and BPipe's. Empty without either.
  std::string overlay_table(const std::vector<io::readout>& readouts) const {
    if (fill_requests_.empty() && !rebalance_) return "";
    constexpr const char* row = "{:<18}{:>30}{:>26}{:>8}\n";
    std::string out = fmt::format(row, "schedule", fill_requests_.empty() ? "" : "filled (of the work)",
                                  rebalance_ ? "rebalanced peak (bound)" : "", rebalance_ ? "BPipe" : "");
    for (const io::readout& ro : readouts) {
      std::string filled, flat, bpipe;
      if (ro.fill != nullptr) {
        const fill_result& r = ro.fill->result;
        filled = fmt::format("{} of {} ({:.1f}%){}", io::to_string(r.total), io::to_string(r.work),
                             100 * (r.total / r.work).to_double(), r.optimal ? "" : " ~");
      }
      if (ro.rebalance != nullptr) {
        flat =
            fmt::format("{} ({})", io::to_string(ro.rebalance->least), io::to_string(ro.rebalance->plan.bound.bound));
        bpipe = io::to_string(ro.rebalance->bpipe_least);
      }
      out += fmt::format(row, ro.schedule, filled, flat, bpipe);
    }
    if (!fill_requests_.empty()) out += "filled: the work of --fill placed in the bubbles, optimal unless marked ~\n";
    if (rebalance_) {
      out +=
          "rebalanced peak: the least uniform in-flight capacity (chunks) the planner reaches without delaying "
          "compute; "
          "bound: live activations / P\n";
    }
    return out;
  }

  std::vector<std::string> fill_requests_;
  bool rebalance_ = false;
};

}  // namespace

std::unique_ptr<command> make_compare() { return std::make_unique<compare>(); }

}  // namespace ctpipe::tool
