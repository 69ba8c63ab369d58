// ctpipe/io/report.hpp (run time, opt-in): every analysis of one schedule, computed
// once, for the text and JSON views and the `ctpipe` tool.
#pragma once

#include <cstddef>
#include <vector>

#include "ctpipe/analysis/communication.hpp"
#include "ctpipe/analysis/formulas.hpp"
#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe::io {

/// One schedule with its simulation, in-flight profile, message count, validation and
/// closed forms. Per-rank vectors have P entries.
struct report {
  schedule_spec spec;
  costs cost;
  rational gamma;
  schedule ops;                       ///< the generated op lists
  simulation sim;                     ///< exact timeline
  in_flight_profile memory;           ///< in-flight activations for `gamma`
  std::size_t message_count = 0;      ///< point-to-point transfers of the step
  validation_result validity;         ///< ok() for every generated schedule
  closed_form makespan_formula;       ///< see analysis/formulas.hpp
  closed_form bubble_formula;
  closed_form span_bubble_formula;
  closed_form message_formula;
  std::vector<closed_form> peak_formula;  ///< per rank
};

/// Generates, validates and analyses `spec`. Raises the check_spec(), check_costs() and
/// check_gamma() messages as ctpipe::error.
inline report analyze(const schedule_spec& spec, const costs& cost, rational gamma) {
  check_costs(cost);
  check_gamma(gamma);
  report out{spec, cost, gamma, generate(spec), {}, {}, 0, {}, {}, {}, {}, {}, {}};
  out.validity = validate(out.ops.view());
  out.sim = simulate(out.ops.view(), cost);
  out.memory = in_flight(out.ops.view(), gamma);
  out.message_count = messages(out.ops.view());
  out.makespan_formula = makespan_formula(spec, cost);
  out.bubble_formula = bubble_fraction_formula(spec, cost);
  out.span_bubble_formula = span_bubble_formula(spec, cost);
  out.message_formula = messages_formula(spec);
  for (int r = 0; r < spec.shape.P; ++r) out.peak_formula.push_back(peak_in_flight_formula(spec, gamma, r));
  return out;
}

}  // namespace ctpipe::io
