// One request parsed once (see request.hpp).
#include "request.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "model.hpp"

namespace ctpipe::tool {

request checked_request(const show_options& opts) {
  request out{opts, opts.spec_for(opts.families.front()), {}, {}, opts.microbatch_scale};
  check_spec(out.spec);  // throws ctpipe::error with the library's message
  run_costs run = costs_for(opts, opts, opts.stage_scale, out.spec);
  check_scale_lengths(run.stage_scale, opts.microbatch_scale, out.spec.shape);
  out.cost = run.cost;
  out.stage_scale = std::move(run.stage_scale);
  check_scale(out.scale(), out.spec.shape);
  return out;
}

request parse_request(const std::vector<std::string>& args) {
  show_options opts;
  CLI::App app{"ctpipe request", "ctpipe"};
  app.set_help_flag();
  opts.declare(app);
  std::vector<const char*> argv{"ctpipe"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ExtrasError&) {
    throw usage_error(unexpected_arguments(app));
  } catch (const CLI::ParseError& e) {
    throw usage_error(fmt::format("ctpipe: {}", e.what()));
  }
  opts.check(app);
  return checked_request(opts);
}

}  // namespace ctpipe::tool
