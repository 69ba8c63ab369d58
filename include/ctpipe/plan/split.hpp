// ctpipe/plan/split.hpp (run time): how a model's L layers go to the stages of a
// schedule, contiguous, to minimise the simulated makespan (docs/memory.md, "The layer
// split").
//
// A split is a count of layers per stage of one model copy (S stages, or P per copy on
// the bidirectional placement, where both copies get the same split). The stage costs
// come from the model (model_costs() scaled by the caller's unit, model_stage_factors():
// forward FLOPs with the LM head on the last stage). Method:
// 1. the split that minimises the largest stage's forward FLOPs, exactly: a binary search
//    on that largest load, each step filling the stages greedily (layers all cost the
//    same; the last stage also carries the head), O(S log(L v));
// 2. for every family but GPipe, and under a memory limit, a local search: one layer
//    moved from any stage to any other while the result improves (first the bytes over
//    the limit, summed over ranks, then the simulated makespan), at most
//    `max_simulations` simulations.
// For GPipe step 1 is the optimum: its makespan is (Σa + (m-1) max a)(t_f+t_b)
// (docs/spec.md §4.2), Σa is the same for every split, so the least largest stage is the
// least makespan; the result says so (`exact`). For the other families the result is
// the best split the search found, never worse than the even split or the Zero Bubble
// authors' advice, not proved optimal. Standard library only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ctpipe/analysis/model.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe {

/// One split and what the schedule does with it.
struct split_point {
  std::vector<std::int64_t> layers;  ///< per stage, S entries (each copy's summing to L)
  rational makespan;                 ///< simulated, in the costs' unit
  rational over_bytes;               ///< summed over ranks: how far the peaks pass the limit (0: fits, or no limit)
  bool fits() const { return over_bytes == rational{0}; }
};

/// choose_split()'s answer: the split found, the even split and the Zero Bubble authors'
/// advice for comparison.
struct split_result {
  split_point best;
  split_point even;               ///< even_split() on each copy
  std::optional<split_point> zb;  ///< the first and last stage one layer fewer, when L = kS - 2 (else none)
  bool exact = false;             ///< `best` is proved optimal (GPipe, no memory limit)
  int simulations = 0;            ///< how many splits were simulated
  bool stopped = false;           ///< the search reached max_simulations before it ended
};

namespace detail {

/// Per stage of one copy (`per` stages): the layers that minimise the largest forward
/// FLOPs (stage_forward_flops(), the head on the last), each stage at least one layer.
/// Exact: a binary search on the largest load, the stages filled greedily.
inline std::vector<std::int64_t> min_max_split(const transformer_model& m, int per) {
  const std::int64_t L = m.layers, unit = stage_forward_flops(m, 1, false);
  const auto capacity = [&](std::int64_t bound, int i) {  // layers stage i takes within `bound`
    const std::int64_t extra = i == per - 1 ? m.vocab : 0;
    return bound < extra + unit ? 0 : (bound - extra) / unit;
  };
  const auto feasible = [&](std::int64_t bound) {
    std::int64_t total = 0;
    for (int i = 0; i < per; ++i) {
      const std::int64_t c = capacity(bound, i);
      if (c < 1) return false;
      total = std::min(L, total + c);
    }
    return total >= L;
  };
  std::int64_t lo = unit, hi = rational::add(rational::mul(L, unit), m.vocab);  // hi is feasible
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (feasible(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(per), 1);
  std::int64_t left = L - per;
  for (int i = 0; i < per; ++i) {
    const std::int64_t more = std::min(left, capacity(lo, i) - 1);
    out[static_cast<std::size_t>(i)] += more;
    left -= more;
  }
  return out;
}

}  // namespace detail

/// Simulates schedule `s` (of `shape`) with the per-copy split `copy` of `model` repeated
/// over the copies (costs `c`: model_costs() in the caller's unit, with t_c; stage factors
/// model_stage_factors()) and sums how far each rank's peak bytes pass `limit_bytes`.
/// Raises memory_of()'s and simulate()'s errors.
inline split_point evaluate_split(const schedule& s, const transformer_model& model,
                                  const std::vector<std::int64_t>& copy, const costs& c, rational gamma,
                                  std::optional<rational> limit_bytes) {
  const pipeline_shape& shape = s.view().shape;
  split_point out;
  for (int k = 0; k < shape.stages() / copy_stages(shape); ++k)
    out.layers.insert(out.layers.end(), copy.begin(), copy.end());
  std::vector<rational> factors(out.layers.size());
  model_stage_factors(model, shape, out.layers, factors);
  out.makespan = simulate(s.view(), c, cost_scale{factors, {}}).makespan();
  if (limit_bytes) {
    const model_memory mm = memory_of(s.view(), model, out.layers, gamma);
    for (int r = 0; r < mm.ranks(); ++r)
      out.over_bytes = out.over_bytes + max(rational{0}, mm.peak_bytes(r) - *limit_bytes);
  }
  return out;
}

/// The layer split of `model` for `spec` under costs `c` (see the file comment). Raises
/// check_spec(), check_model() messages and `ctpipe: the model needs at least one layer
/// per stage (L >= S)`. Run time: the first split in O(S log(L v)), then at most
/// `max_simulations` simulations.
inline split_result choose_split(const schedule_spec& spec, const transformer_model& model, const costs& c,
                                 rational gamma = rational{1}, std::optional<rational> limit_bytes = std::nullopt,
                                 int max_simulations = 2000) {
  check_model(model);
  const int per = copy_stages(spec.shape);
  detail::require(model.layers >= per, "ctpipe: the model needs at least one layer per stage (L >= S)");
  const schedule s = generate(spec);
  split_result out;
  const auto eval = [&](const std::vector<std::int64_t>& copy) {
    ++out.simulations;
    return evaluate_split(s, model, copy, c, gamma, limit_bytes);
  };
  const auto better = [](const split_point& a, const split_point& b) {
    return a.over_bytes < b.over_bytes || (a.over_bytes == b.over_bytes && a.makespan < b.makespan);
  };
  std::vector<std::int64_t> even;
  for (int i = 0; i < per; ++i) even.push_back(even_split(model.layers, per, i));
  out.even = eval(even);
  if (per >= 2 && (model.layers + 2) % per == 0 && (model.layers + 2) / per >= 2) {
    std::vector<std::int64_t> zb(static_cast<std::size_t>(per), (model.layers + 2) / per);
    zb.front() -= 1;
    zb.back() -= 1;
    out.zb = eval(zb);
  }
  std::vector<std::int64_t> copy = detail::min_max_split(model, per);
  out.best = eval(copy);
  out.exact = spec.family == schedule_family::gpipe && !limit_bytes;
  for (bool moved = !out.exact; moved && !out.stopped;) {  // one layer from stage i to stage j, while it helps
    moved = false;
    for (int i = 0; i < per && !out.stopped; ++i) {
      for (int j = 0; j < per && !out.stopped; ++j) {
        if (i == j || copy[static_cast<std::size_t>(i)] < 2) continue;
        std::vector<std::int64_t> next = copy;
        --next[static_cast<std::size_t>(i)];
        ++next[static_cast<std::size_t>(j)];
        split_point candidate = eval(next);
        out.stopped = out.simulations >= max_simulations;
        if (better(candidate, out.best)) {
          out.best = std::move(candidate);
          copy = std::move(next);
          moved = true;
        }
      }
    }
  }
  for (const split_point* p :
       {&out.even, out.zb ? &*out.zb : nullptr}) {  // never worse than the splits it is compared with
    if (p != nullptr && better(*p, out.best)) out.best = *p;
  }
  return out;
}

}  // namespace ctpipe
