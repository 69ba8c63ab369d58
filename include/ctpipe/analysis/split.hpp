// ctpipe/analysis/split.hpp (run time): how a model's L layers go to the S stages of a
// schedule, contiguous, to minimise the simulated makespan (docs/memory.md, "The layer
// split").
//
// The stage costs come from the model (model_costs(), model_stage_factor(): forward FLOPs
// with the LM head on the last stage). Method: the split that minimises the largest
// stage's forward FLOPs, found exactly by dynamic programming over (stage, layers so far)
// in O(S L^2); then, for every family but GPipe, a local search that moves one layer
// across one boundary at a time while the simulated makespan falls (each step S-1
// simulations). For GPipe the first step is the optimum: its makespan is
// (Σa + (m-1) max a)(t_f+t_b) (docs/spec.md §4.2), Σa is the same for every split, so
// the least largest stage is the least makespan; the result says so (`exact`). For the
// other families the result is the best split the search found, not proved optimal.
// With a memory limit in bytes, splits whose peak bytes (memory_of()) pass it on some
// rank are skipped. Standard library only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ctpipe/analysis/model.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe {

/// One split and what the schedule does with it.
struct split_point {
  std::vector<std::int64_t> layers;  ///< per stage, S entries summing to L
  rational makespan;                 ///< simulated, in the costs' unit (t_f = one rank's average forward)
  bool fits = true;                  ///< every rank's peak bytes within the limit (true without one)
};

/// choose_split()'s answer: the split found, the even split and the Zero Bubble authors'
/// advice for comparison.
struct split_result {
  split_point best;
  split_point even;                 ///< even_split()
  std::optional<split_point> zb;    ///< the first and last stage one layer fewer, when L = kS - 2 (else none)
  bool exact = false;               ///< `best` is proved optimal (GPipe, no memory limit)
  int simulations = 0;              ///< how many splits were simulated
};

namespace detail {

/// The contiguous split of m.layers over S stages that minimises the largest stage's
/// forward FLOPs (stage_forward_flops(), the head on the last stage), each stage at least
/// one layer; exact, O(S L^2).
inline std::vector<std::int64_t> min_max_split(const transformer_model& m, int S) {
  const std::int64_t L = m.layers;
  const std::int64_t unit = stage_forward_flops(m, 1, 0, 2);
  const std::int64_t inf = std::numeric_limits<std::int64_t>::max();
  // best[s][i]: the least largest load of stages 0..s holding layers [0, i); from[s][i]: where stage s starts.
  std::vector<std::vector<std::int64_t>> best(static_cast<std::size_t>(S), std::vector<std::int64_t>(static_cast<std::size_t>(L) + 1, inf));
  std::vector<std::vector<std::int64_t>> from(best);
  for (std::int64_t i = 1; i <= L; ++i) best[0][static_cast<std::size_t>(i)] = i * unit + (S == 1 ? m.vocab : 0);
  for (int s = 1; s < S; ++s) {
    const std::int64_t head = s == S - 1 ? m.vocab : 0;
    for (std::int64_t i = s + 1; i <= L; ++i) {
      for (std::int64_t j = s; j < i; ++j) {
        const std::int64_t before = best[static_cast<std::size_t>(s) - 1][static_cast<std::size_t>(j)];
        if (before == inf) continue;
        const std::int64_t load = std::max(before, (i - j) * unit + head);
        if (load < best[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)]) {
          best[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)] = load;
          from[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)] = j;
        }
      }
    }
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(S));
  std::int64_t end = L;
  for (int s = S - 1; s > 0; --s) {
    const std::int64_t start = from[static_cast<std::size_t>(s)][static_cast<std::size_t>(end)];
    out[static_cast<std::size_t>(s)] = end - start;
    end = start;
  }
  out[0] = end;
  return out;
}

}  // namespace detail

/// Simulates `spec`'s schedule with `layers` per stage of `model` (model_costs() and
/// model_stage_factor(), plus `latency` as t_c) and checks its peak bytes against
/// `limit_bytes` (none: fits). Raises memory_of()'s and simulate()'s errors.
inline split_point evaluate_split(const schedule& s, const transformer_model& model, std::vector<std::int64_t> layers,
                                  rational gamma, rational latency, std::optional<rational> limit_bytes) {
  costs c = model_costs(model);
  c.c = latency;
  std::vector<rational> factors;
  for (std::size_t k = 0; k < layers.size(); ++k) factors.push_back(model_stage_factor(model, layers, static_cast<int>(k)));
  split_point out{std::move(layers), simulate(s.view(), c, cost_scale{factors, {}}).makespan(), true};
  if (limit_bytes) {
    const model_memory mm = memory_of(s.view(), model, out.layers, gamma);
    for (int r = 0; r < mm.ranks(); ++r) out.fits = out.fits && mm.peak_bytes(r) <= *limit_bytes;
  }
  return out;
}

/// The layer split of `model` for `spec` (see the file comment). Raises check_spec(),
/// check_model() messages and `ctpipe: the model needs at least one layer per stage (L >=
/// S)`. Run time: O(S L^2) for the first split, then S-1 simulations per step of the
/// search.
inline split_result choose_split(const schedule_spec& spec, const transformer_model& model, rational gamma = rational{1},
                                 rational latency = rational{0}, std::optional<rational> limit_bytes = std::nullopt) {
  check_model(model);
  const int S = spec.shape.stages();
  detail::require(model.layers >= S, "ctpipe: the model needs at least one layer per stage (L >= S)");
  const schedule s = generate(spec);
  split_result out;
  const auto eval = [&](std::vector<std::int64_t> layers) {
    ++out.simulations;
    return evaluate_split(s, model, std::move(layers), gamma, latency, limit_bytes);
  };
  std::vector<std::int64_t> even;
  for (int st = 0; st < S; ++st) even.push_back(even_split(model.layers, S, st));
  out.even = eval(even);
  if (S >= 2 && (model.layers + 2) % S == 0 && (model.layers + 2) / S >= 2) {
    std::vector<std::int64_t> zb(static_cast<std::size_t>(S), (model.layers + 2) / S);
    zb.front() -= 1;
    zb.back() -= 1;
    out.zb = eval(zb);
  }
  out.best = eval(detail::min_max_split(model, S));
  out.exact = spec.family == schedule_family::gpipe && !limit_bytes;
  const auto better = [](const split_point& a, const split_point& b) {
    return (a.fits && !b.fits) || (a.fits == b.fits && a.makespan < b.makespan);
  };
  for (bool moved = !out.exact; moved;) {  // one layer across one boundary, while it helps
    moved = false;
    for (int b = 0; b + 1 < S; ++b) {
      for (const int dir : {-1, 1}) {
        std::vector<std::int64_t> next = out.best.layers;
        next[static_cast<std::size_t>(b)] += dir;
        next[static_cast<std::size_t>(b) + 1] -= dir;
        if (next[static_cast<std::size_t>(b)] < 1 || next[static_cast<std::size_t>(b) + 1] < 1) continue;
        split_point candidate = eval(next);
        if (better(candidate, out.best)) {
          out.best = std::move(candidate);
          moved = true;
        }
      }
    }
  }
  for (const split_point* p : {&out.even, out.zb ? &*out.zb : nullptr}) {  // never worse than the splits it is compared with
    if (p != nullptr && better(*p, out.best)) out.best = *p;
  }
  return out;
}

}  // namespace ctpipe
