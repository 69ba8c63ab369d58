// `ctpipe rebalance`: moves of saved activations from the crowded ranks into the memory
// of the idle ones (docs/spec.md §8.2, ctpipe/plan/rebalance.hpp), at a capacity per
// rank or at the least one the planner reaches, beside BPipe's pairing and the bound no
// plan goes below; the in-flight view shows the peaks after it next to the staircase.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ctpipe/io/csv.hpp"

#include "command.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"
#include "../overlays.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe rebalance` (see the file comment).
/// `ctpipe rebalance`'s options.
struct rebalance_options : options_of<schedule_options, cost_options, scale_options, view_options, runtime_options> {
  rebalance_options() {
    formats = {"text", "json", "svg", "trace", "csv-comms"};
    format_help =
        "text, json (the schedule's JSON plus \"rebalance\"), svg, trace or csv-comms (the lowered lists with the "
        "moves as SEND_ACT/RECV_ACT copies, for --runtime's model)";
    command = "rebalance";
  }
};

class rebalance_command final : public command_with_options<rebalance_options> {
 public:
 private:
  void declare_own(CLI::App& app) override {
    app.add_option(
        "--capacity", capacity_,
        "in-flight activations each rank may hold, in chunks (gamma-weighted, as peak_in_flight): one number for "
        "every rank or P comma-separated; default: the least uniform capacity the planner reaches. Moves cost "
        "--costs move=T each way (default 0)");
  }

  std::string run_checked() override {
    const schedule_spec spec = opts_.spec_for(opts_.families.front());
    check_spec(spec);
    check_op_limit(static_cast<long long>(total_ops(spec)), max_rebalance_ops, "rebalance");
    const cost_scale scale{opts_.stage_scale, opts_.microbatch_scale};
    check_scale_lengths(opts_.stage_scale, opts_.microbatch_scale, spec.shape);
    check_scale(scale, spec.shape);
    io::report rep = io::analyze(spec, opts_.cost, opts_.gamma, opts_.stage_scale, opts_.microbatch_scale);
    // The plan also runs as activation copies in --runtime's lowering (blocking by
    // default): the text and JSON report the run, csv-comms writes its lists.
    apply_rebalance(rep, capacity_, &opts_.runtime);
    if (opts_.format == "csv-comms") return io::to_csv(rep.rebalance->executed->lists.view());
    return render(rep, opts_);
  }

  std::string capacity_;
};

}  // namespace

std::unique_ptr<command> make_rebalance() { return std::make_unique<rebalance_command>(); }

}  // namespace ctpipe::tool
