// One request parsed once (see request.hpp).
#include "request.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "model.hpp"

namespace ctpipe::tool {

option_set show_option_set() {
  return {opt_schedule | opt_shape | opt_chunks | opt_placement | opt_interleaved | opt_costs | opt_width | opt_color |
              opt_runtime | opt_lowering | opt_scale | opt_model,
          {"text", "json", "svg", "trace", "csv", "csv-comms"},
          "text, json, svg (the timeline and in-flight views), trace (Chrome trace-event JSON for Perfetto), csv "
          "(PyTorch's CSV schedule, compute ops) or csv-comms (with the SEND/RECV ops of lower() for --runtime, under "
          "--costs, and the UNSHARD, RESHARD and REDUCE_GRAD of --torch-passes)",
          "",
          chunks_scope::every_family};
}

request checked_request(const options& opts) {
  request out{opts, opts.spec_for(opts.families.front(), chunks_scope::every_family), {}, {}, opts.microbatch_scale};
  check_spec(out.spec);  // throws ctpipe::error with the library's message
  run_costs run = costs_for(opts, out.spec);
  check_scale_lengths(run.stage_scale, opts.microbatch_scale, out.spec.shape);
  out.cost = run.cost;
  out.stage_scale = std::move(run.stage_scale);
  check_scale(out.scale(), out.spec.shape);
  return out;
}

request parse_request(const std::vector<std::string>& args) {
  const option_set set = show_option_set();
  options opts;
  CLI::App app{"ctpipe request", "ctpipe"};
  app.set_help_flag();
  opts.declare(app, set);
  std::vector<const char*> argv{"ctpipe"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw usage_error(fmt::format("ctpipe: {}", e.what()));
  }
  opts.check(app, set);
  return checked_request(opts);
}

}  // namespace ctpipe::tool
