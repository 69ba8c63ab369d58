// `ctpipe split`: the layer split of a model for one schedule (ctpipe/plan/split.hpp,
// docs/memory.md): the split found, its simulated makespan, and the gain over the even
// split and over the Zero Bubble authors' advice for Megatron-LM (the first and last stage
// one layer fewer, L = kS - 2), as text or JSON.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "ctpipe/plan/split.hpp"
#include "ctpipe/io/format.hpp"
#include "../layout.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"

namespace ctpipe::tool {
namespace {

std::string joined(const std::vector<std::int64_t>& layers) {
  std::string out;
  for (std::size_t k = 0; k < layers.size(); ++k) out += (k == 0 ? "" : ",") + std::to_string(layers[k]);
  return out;
}

nlohmann::ordered_json point_json(const split_point& p) {
  return {{"layers", p.layers},
          {"makespan", io::to_string(p.makespan)},
          {"fits", p.fits()},
          {"over_bytes", io::to_string(p.over_bytes)}};
}

/// `  (over the memory limit by 1.25 GiB, summed over ranks)` for a split that does not fit.
std::string over_note(const split_point& p) {
  return p.fits() ? ""
                  : fmt::format("  (over the memory limit by {:.2f} GiB, summed over ranks)",
                                p.over_bytes.to_double() / 1073741824.0);
}

/// `ctpipe split` (see the file comment).
/// `ctpipe split`'s options.
struct split_options : options_of<schedule_options, cost_options, model_options, view_options> {
  split_options() {
    formats = {"text", "json"};
    format_help =
        "text or json ({\"split\": {layers, makespan, fits, over_bytes}, \"layout\" (Megatron-LM's string, or null), "
        "\"even\", \"zb\" (or null), \"exact\", \"method\", \"simulations\", \"fits\"})";
    command = "split";
    takes_width = false;
    takes_color = false;
  }
};

class split final : public command_with_options<split_options> {
  /// --layers and --layout stay declared (so that they are refused with split's reason,
  /// below) but are not listed by --help: split chooses the layers.
  void adjust_shared(CLI::App& app) override {
    app.get_option("--layers")->group("");
    app.get_option("--layout")->group("");
  }

 private:
  std::string run_checked() override {
    if (!opts_.model_given) throw usage_error("ctpipe: split needs --model (a preset or a JSON file)");
    if (!opts_.layers.empty() || opts_.layout_given) {
      throw usage_error(fmt::format("ctpipe: split chooses the layers; {} is for the other commands",
                                    opts_.layout_given ? "--layout" : "--layers"));
    }
    const schedule_spec spec = opts_.spec_for(opts_.families.front());
    check_spec(spec);
    check_op_limit(static_cast<long long>(total_ops(spec)), max_json_ops, "split");
    std::optional<rational> limit;
    if (!opts_.memory_limit_text.empty()) {
      const memory_limit l = parse_memory_limit(opts_.memory_limit_text);
      if (!l.bytes) throw usage_error("ctpipe: split takes a memory limit in bytes (80GiB)");
      limit = l.value;
    }
    const run_costs run =
        costs_for(opts_, opts_, {}, spec);  // the model's costs (in seconds with --device-flops), --costs' c
    const split_result r = choose_split(spec, opts_.model, run.cost, opts_.gamma, limit);
    std::string method =
        r.exact ? "min-max stage FLOPs by binary search (exact for gpipe)"
                : "min-max stage FLOPs by binary search, then one layer moved between any two stages while "
                  "the bytes over the limit or the simulated makespan fall (not proved optimal)";
    if (r.stopped) method += fmt::format("; stopped at {} simulations", r.simulations);
    // Megatron-LM's layouts put stage s on rank s mod P: the loop placement's.
    const std::optional<std::string> layout =
        spec.shape.layout == placement::loop ? std::optional<std::string>(layout_of(r.best.layers)) : std::nullopt;
    if (opts_.format == "json") {
      return json_text(nlohmann::ordered_json{{"schedule", family_name(spec.family)},
                                              {"model", opts_.model_text},
                                              {"split", point_json(r.best)},
                                              {"layout", layout ? nlohmann::ordered_json(*layout) : nullptr},
                                              {"even", point_json(r.even)},
                                              {"zb", r.zb ? point_json(*r.zb) : nlohmann::ordered_json(nullptr)},
                                              {"exact", r.exact},
                                              {"method", method},
                                              {"simulations", r.simulations},
                                              {"fits", r.best.fits()}});
    }
    return text(spec, r, limit.has_value(), method, layout);
  }

  /// The text answer (docs/tool.md, `ctpipe split`).
  std::string text(const schedule_spec& spec, const split_result& r, bool limited, const std::string& method,
                   const std::optional<std::string>& layout) const {
    const auto gain = [&r](const split_point& p) {
      return fmt::format("{} ({})", io::to_string(p.makespan - r.best.makespan),
                         io::to_string((p.makespan - r.best.makespan) / p.makespan));
    };
    const char* unit = opts_.device_flops_text.empty() ? "one rank's average forward" : "seconds";
    std::string out = fmt::format("{}  P = {}  m = {}  V = {}  model {}  ({} layers per model copy over {} stages)\n",
                                  family_name(spec.family), spec.shape.P, spec.shape.m, spec.shape.V, opts_.model_text,
                                  opts_.model.layers, spec.shape.stages());
    if (limited && !r.best.fits()) out += "no split found within the memory limit; the one closest to it:\n";
    out += fmt::format("split     {}  makespan {}{}\n", joined(r.best.layers), io::to_string(r.best.makespan),
                       over_note(r.best));
    out += layout ? fmt::format("layout    {}\n", *layout)
                  : fmt::format(
                        "layout    none (Megatron-LM's layouts put stage s on rank s mod P; {}'s placement is "
                        "{})\n",
                        family_name(spec.family), placement_name(spec.shape.layout));
    out += fmt::format("even      {}  makespan {}  gain {}{}\n", joined(r.even.layers), io::to_string(r.even.makespan),
                       gain(r.even), over_note(r.even));
    if (r.zb) {
      out += fmt::format("zb advice {}  makespan {}  gain {}{}\n", joined(r.zb->layers), io::to_string(r.zb->makespan),
                         gain(*r.zb), over_note(*r.zb));
    } else {
      out += "zb advice (first and last stage one layer fewer) needs L = kS - 2 layers\n";
    }
    out += fmt::format("method: {}; {} splits simulated; time in {}\n", method, r.simulations, unit);
    return out;
  }
};

}  // namespace

std::unique_ptr<command> make_split() { return std::make_unique<split>(); }

}  // namespace ctpipe::tool
