// ctpipe/io/report.hpp (run time, opt-in): every analysis of one schedule, computed
// once, for the text and JSON views and the `ctpipe` tool.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
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
  /// Empty for a generated schedule. For one read from elsewhere (a CSV file): where it
  /// came from, which the views show in place of the family name (see schedule_name).
  std::string source;
};

/// Generates, validates and analyses `spec`. Raises the check_spec(), check_costs() and
/// check_gamma() messages as ctpipe::error.
inline report analyze(const schedule_spec& spec, const costs& cost, rational gamma) {
  check_costs(cost);
  check_gamma(gamma);
  report out{spec, cost, gamma, generate(spec), {}, {}, 0, {}, {}, {}, {}, {}, {}, {}};
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

/// Analyses compute schedule `ops`, which was not generated (read from a file, written by
/// hand or by another framework): the same fields as analyze(spec, ...), with
/// `spec.shape` = the schedule's shape (the other fields of `spec` mean nothing), every
/// closed form absent ("read from a file") and `source` as given (non-empty: a file name,
/// `-` for standard input). The caller validates first: simulate() and in_flight() need a
/// valid schedule (`validity` holds validate()'s verdict). Raises the check_costs() and
/// check_gamma() messages, and `ctpipe: analyze() needs the source of a schedule it did
/// not generate` for an empty `source`.
inline report analyze(schedule ops, const costs& cost, rational gamma, std::string source) {
  check_costs(cost);
  check_gamma(gamma);
  ctpipe::detail::require(!source.empty(), "ctpipe: analyze() needs the source of a schedule it did not generate");
  report out{};
  out.spec.shape = ops.shape();
  out.cost = cost;
  out.gamma = gamma;
  out.ops = std::move(ops);
  out.source = std::move(source);
  out.validity = validate(out.ops.view());
  out.sim = simulate(out.ops.view(), cost);
  out.memory = in_flight(out.ops.view(), gamma);
  out.message_count = messages(out.ops.view());
  const closed_form none = ctpipe::detail::no_formula("read from a file");
  out.makespan_formula = none;
  out.bubble_formula = none;
  out.span_bubble_formula = none;
  out.message_formula = none;
  out.peak_formula.assign(static_cast<std::size_t>(out.spec.shape.P), none);
  return out;
}

/// The name the views give the schedule: its family's (`1f1b`), or for a schedule read
/// from elsewhere its `source`.
inline std::string schedule_name(const report& rep) {
  return rep.source.empty() ? std::string(family_name(rep.spec.family)) : rep.source;
}

/// Whether the schedule splits its backwards into I and W (the views then compare the
/// finer memory model with the plain count): by its family, or for a schedule read from
/// elsewhere by its ops.
inline bool has_split_backward(const report& rep) {
  if (rep.source.empty()) return splits_backward(rep.spec.family);
  for (const op o : rep.ops.view().ops) {
    if (o.kind() == op_kind::I || o.kind() == op_kind::W) return true;
  }
  return false;
}

}  // namespace ctpipe::io
