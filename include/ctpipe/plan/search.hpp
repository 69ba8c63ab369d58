// ctpipe/plan/search.hpp: the best split-backward schedule under a memory limit
// (docs/search.md): the problem of the Zero Bubble paper's automatic scheduler (Qi et
// al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3 and appendix), searched at run
// time and judged by the exact simulator.
//
// Given P, m, the costs t_f, t_i, t_w, t_c, gamma = M_W / M_B and a memory limit per rank
// (full activations, gamma-weighted: an F adds 1, an I frees 1 - gamma, a W frees gamma),
// find per-rank F/I/W lists (loop placement, one stage per rank; or the V-shape, two
// chunks per rank, each chunk's op costing t/2 and holding half an activation) that stay
// within the limit and minimise the largest per-rank span (last end - first start).
//
// The public entry: it includes the pieces, one concept a header, and defines search():
// - search_problem.hpp: the problem, options, report and result types, and their gates;
// - search_bound.hpp: search_lower_bound();
// - greedy.hpp (loop placement) and search_v.hpp (V-shape): the greedy constructions;
// - rule_sets.hpp: the authors' rule sets and ctpipe's variants;
// - greedy_best.hpp: every construction and the best of them (detail::greedy_best());
// - repair.hpp: local repair (detail::repair());
// - searched.hpp: the compile-time searched() and searched_v.
#pragma once

#include <algorithm>  // std::equal
#include <chrono>     // search_report::seconds
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int64_t
#include <utility>    // std::move

#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/greedy.hpp"
#include "ctpipe/plan/greedy_best.hpp"
#include "ctpipe/plan/repair.hpp"
#include "ctpipe/plan/rule_sets.hpp"
#include "ctpipe/plan/search_bound.hpp"
#include "ctpipe/plan/search_problem.hpp"
#include "ctpipe/plan/search_v.hpp"
#include "ctpipe/plan/searched.hpp"

namespace ctpipe {

/// Searches the schedule of `p` with the least largest per-rank span (docs/search.md):
/// every greedy rule set (detail::rule_set(): the Zero Bubble authors' eight and ctpipe's
/// variants), each an O(P m) construction (detail::greedy_best()), keeping the one with the
/// least span (ties: the first); then, with `options.repair` (the default), local repair
/// (detail::repair(), search_method::local) within its budget, unless the greedy already
/// meets the lower bound.
/// The result is checked before it is returned: validate() passes, the exact simulation
/// gives at most the span the construction computed, and every rank's in_flight() peak is within
/// the limit (else `ctpipe: search's schedule failed its own check (a bug)`).
/// `optimal` when the span equals search_lower_bound(). Errors: check_search_problem()'s;
/// with `authors_only`, `ctpipe: search: none of the Zero Bubble authors' rule sets stays
/// within this memory limit (their code stops on an assertion here); search without
/// authors_only finds a schedule` (it happens on the V-shape at low limits).
inline search_result search(const search_problem& p, const search_options& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  check_search_problem(p);
  const pipeline_shape& s = p.shape;
  const costs& c = p.cost;
  search_result out;
  search_report& rep = out.report;
  out.ops =
      schedule{s, 3 * static_cast<std::size_t>(s.V) * static_cast<std::size_t>(s.P) * static_cast<std::size_t>(s.m)};
  schedule rules{s, out.ops.size()};  // the best of the rule sets alone, for local repair
  const detail::greedy_outcome g =
      detail::greedy_best(s, c, p.gamma, p.memory_limit, detail::rule_sets_of(s, options.authors_only),
                          out.ops.ops().data(), out.ops.offsets().data(), rules.ops().data());
  for (std::size_t r = 0; r <= static_cast<std::size_t>(s.P); ++r) rules.offsets()[r] = out.ops.offsets()[r];
  rep.rule_sets = g.tried, rep.rule_sets_fitting = g.fitting;
  detail::require(g.span >= 0 || !options.authors_only,
                  "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their "
                  "code stops on an assertion here); search without authors_only finds a schedule");
  detail::require(g.span >= 0, "ctpipe: search's schedule failed its own check (a bug)");  // a limit >= 1 always fits
  const std::int64_t best = g.span, den = g.den;
  rep.method = search_method::greedy;
  rep.lower_bound = search_lower_bound(p);
  if (options.repair && !options.authors_only &&
      rational{best, den} > rep.lower_bound) {  // nothing to gain at the bound
    // repair the best schedule, and the best of the rule sets when a fixed order won
    // (and some rule set fitted): each with the whole budget, the shorter kept (ties:
    // the first)
    rep.method = search_method::local;
    const bool fixed_won = !std::equal(out.ops.ops().begin(), out.ops.ops().end(), rules.ops().begin());
    rep.repairs = detail::repair(out.ops, p, options.repair_ops);
    if (fixed_won && detail::checked_span(rules, p) >= rational{0}) {
      const int kept = detail::repair(rules, p, options.repair_ops);
      if (detail::checked_span(rules, p) < detail::checked_span(out.ops, p))
        out.ops = std::move(rules), rep.repairs = kept;
    }
  }
  const schedule_view v = out.ops.view();
  const simulation sim = simulate(v, c);
  const in_flight_profile memory = in_flight(v, p.gamma);
  const rational span = sim.largest_span();
  rational peak{0};
  bool within = true;
  for (int r = 0; r < s.P; ++r)
    within = within && memory.peak_activations(r) <= p.limit(r), peak = max(peak, memory.peak_activations(r));
  detail::require(validate(v).ok() && span <= rational{best, den} && within,
                  "ctpipe: search's schedule failed its own check (a bug)");
  rep.span = span;
  rep.makespan = sim.makespan();
  rep.peak = peak;
  rep.optimal = rep.span == rep.lower_bound;
  rep.bubble = (span - rational{s.m} * (c.f + c.i + c.w)) / span;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace ctpipe
