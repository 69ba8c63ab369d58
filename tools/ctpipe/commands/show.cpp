// `ctpipe [options]`, the default view: generates one schedule with the library's
// functions (the same ones a static_assert evaluates), simulates it exactly and shows the
// article's views (timeline, bubble readouts against their closed forms, in-flight
// activations per rank), or writes it as JSON, SVG, a trace or PyTorch's CSV.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/lower/lower.hpp"
#include "../invoke.hpp"
#include "../lowered.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"
#include "../request.hpp"

namespace ctpipe::tool {
namespace {

/// --lowering's rules: a format with transfers; for deepseek, DeepSeek's two schedules;
/// for deepseek and the torch orders no --runtime with csv-comms (their lists are the same
/// for every model); for the torch orders no dualpipe (PyTorch's runtime has one copy).
void check_lowering(const schedule_spec& spec, const show_options& o) {
  if (o.format != "csv-comms" && o.format != "json") {
    throw usage_error("ctpipe: --lowering applies to --format csv-comms and json (the executed entry) only");
  }
  if (o.lowering == lowering_choice::own || o.lowering == lowering_choice::least_loss) return;
  const bool deepseek = o.lowering == lowering_choice::deepseek;
  if (deepseek && spec.family != schedule_family::dualpipev && spec.family != schedule_family::dualpipe) {
    throw usage_error("ctpipe: --lowering deepseek applies to dualpipev and dualpipe (DeepSeek's step())");
  }
  if (!deepseek && spec.shape.layout == placement::bidirectional) {
    throw usage_error(
        "ctpipe: --lowering torch-* applies to the schedules PyTorch's runtime runs, not dualpipe (two model copies; "
        "docs/pytorch.md)");
  }
  if (o.runtime_given && o.format == "csv-comms") {
    throw usage_error(deepseek
                          ? "ctpipe: --lowering deepseek writes DeepSeek's own batches, the same for every runtime "
                            "model (--runtime applies to json's executed entry)"
                          : "ctpipe: --lowering torch-* writes PyTorch's own order, the same for every runtime "
                            "model (--runtime applies to json's executed entry)");
  }
}

/// What the tool says on standard error (exit code 0) when it writes DualPipe's file.
constexpr const char* dualpipe_note =
    "ctpipe: note: dualpipe's two model copies share their stage indices (each stage runs m/2 micro-batches of "
    "each copy), which PyTorch's one-copy format cannot express: `ctpipe validate` reads this file, PyTorch's "
    "runtime refuses it (it expects m forwards per stage); dualpipev runs there";

/// The default view (see the file comment).
class show final : public command_with_options<show_options> {
 private:
  std::string run_checked() override {
    const schedule_spec spec = opts_.spec_for(opts_.families.front());
    check_spec(spec);  // throws ctpipe::error with the library's message
    check_op_limit(static_cast<long long>(total_ops(spec)), max_ops(opts_.format), "--format " + opts_.format);
    if (opts_.runtime_given && opts_.format != "csv-comms" && opts_.format != "json") {
      throw usage_error(
          "ctpipe: --runtime applies to --format csv-comms (the order of the transfers) and json (the "
          "executed entry) only");
    }
    if (opts_.lowering_given) check_lowering(spec, opts_);
    if (opts_.torch_passes_given && opts_.format != "csv-comms" && !(opts_.format == "json" && opts_.torch_order())) {
      throw usage_error(
          "ctpipe: --torch-passes and --max-active-stages apply to --format csv-comms, and to json with a torch-* "
          "--lowering (whose order they change)");
    }
    if (!opts_.memory_limit_text.empty() && opts_.format != "text" && opts_.format != "json" && opts_.format != "svg") {
      throw usage_error("ctpipe: --memory-limit shows in --format text, json and svg only");
    }
    const request req = checked_request(opts_);  // --costs, --stage-scale, or the model's
    const run_costs run{req.cost, req.stage_scale};
    const cost_scale scale = req.scale();
    if (opts_.format == "csv" || opts_.format == "csv-comms") {
      const schedule s = generate(spec);
      if (spec.shape.layout == placement::bidirectional) note(dualpipe_note);
      if (opts_.format == "csv") return io::to_csv(s.view());
      return io::to_csv(lowered_lists(&spec, s.view(), run.cost, opts_.runtime, scale, opts_));
    }
    io::report rep = io::analyze(spec, run.cost, opts_.gamma, run.stage_scale, opts_.microbatch_scale);
    apply_memory(rep, opts_, opts_.memory_limit_text);
    if (opts_.format != "json") {
      std::string out = render(rep, opts_);
      if (opts_.format == "text" && !opts_.device_flops_text.empty()) out += "\ntimes in seconds (--device-flops)\n";
      return out;
    }
    nlohmann::ordered_json j = json_of(rep);
    j["executed"] = lowering_json(&spec, generate(spec).view(), run.cost, opts_.runtime_or_all(), scale, opts_);
    return json_text(j);
  }
};

}  // namespace

std::unique_ptr<command> make_show() { return std::make_unique<show>(); }

}  // namespace ctpipe::tool
