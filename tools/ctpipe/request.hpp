// One request (family, shape, rules, costs, scales, model) parsed once: the default
// view's options as the tool's parser reads them, checked, with the costs and the scales
// the schedule runs under. The default view (commands/show.cpp) and the Python package
// (python/src/core.cpp) both take it, so a keyword in Python means what the option means
// in the tool.
#pragma once

#include <string>
#include <vector>

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/schedules/family.hpp"
#include "options.hpp"

namespace ctpipe::tool {

/// A checked request for one schedule.
struct request {
  show_options opts;                       ///< every option, checked (options_of::check)
  schedule_spec spec;                      ///< passed check_spec()
  costs cost{};                            ///< --costs, or the model's (--model, --device-flops)
  std::vector<rational> stage_scale;       ///< --stage-scale or the model's layers; empty: all 1
  std::vector<rational> microbatch_scale;  ///< --microbatch-scale; empty: all 1

  /// The scales as the library takes them (views into this request).
  cost_scale scale() const { return {stage_scale, microbatch_scale}; }
};

/// The spec, costs and scales of `opts` (the default view's checked options): the
/// library's check_spec() and the scale checks, their messages as ctpipe::error.
request checked_request(const show_options& opts);

/// Parses `args` (the default view's options, as on the command line, without a program
/// name or a subcommand) and checks them as `ctpipe ARGS` would; raises usage_error or
/// ctpipe::error with the tool's message. `--help` and `--version` are usage errors here.
request parse_request(const std::vector<std::string>& args);

}  // namespace ctpipe::tool
