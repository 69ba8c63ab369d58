// `ctpipe rebalance`: moves of saved activations from the crowded ranks into the memory
// of the idle ones (docs/spec.md §8.2, ctpipe/analysis/rebalance.hpp), at a capacity per
// rank or at the least one the planner reaches, beside BPipe's pairing and the bound no
// plan goes below; the in-flight view shows the peaks after it next to the staircase.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"
#include "../overlays.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe rebalance` (see the file comment).
class rebalance_command final : public command_with_options {
 public:
  rebalance_command()
      : command_with_options({opt_schedule | opt_shape | opt_chunks | opt_placement | opt_interleaved | opt_costs | opt_width |
                                  opt_color | opt_scale,
                              {"text", "json", "svg", "trace"},
                              "text, json (the schedule's JSON plus \"rebalance\"), svg or trace",
                              "rebalance",
                              chunks_scope::every_family}) {}

 private:
  void declare_own(CLI::App& app) override {
    app.add_option("--capacity", capacity_,
                   "in-flight activations each rank may hold, in chunks (gamma-weighted, as peak_in_flight): one number for "
                   "every rank or P comma-separated; default: the least uniform capacity the planner reaches. Moves cost "
                   "--costs move=T each way (default 0)");
  }

  std::string run_checked() override {
    const schedule_spec spec = opts_.spec_for(opts_.families.front(), set_.scope);
    check_spec(spec);
    const long long ops = static_cast<long long>(total_ops(spec));
    constexpr long long limit = 1LL << 16;  // the planner is quadratic in the worst case (rebalance.hpp)
    if (ops > limit) throw usage_error(fmt::format("ctpipe: rebalance takes at most {} ops; this schedule has {}", limit, ops));
    const cost_scale scale{opts_.stage_scale, opts_.microbatch_scale};
    check_scale_lengths(opts_.stage_scale, opts_.microbatch_scale, spec.shape);
    check_scale(scale, spec.shape);
    io::report rep = io::analyze(spec, opts_.cost, opts_.gamma, opts_.stage_scale, opts_.microbatch_scale);
    apply_rebalance(rep, capacity_);
    return render(rep, opts_);
  }

  std::string capacity_;
};

}  // namespace

std::unique_ptr<command> make_rebalance() { return std::make_unique<rebalance_command>(); }

}  // namespace ctpipe::tool
