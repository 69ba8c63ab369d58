// ctpipe/plan/repair.hpp: search()'s local repair (docs/search.md): adjacent ops of a
// rank traded while the schedule stays valid, within the limits, and its largest span
// drops, each trial one exact check. Run time.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint32_t
#include <utility>  // std::swap
#include <vector>

#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/search_problem.hpp"

namespace ctpipe::detail {

/// The schedule of a greedy order (CSR, rank 0 first).
inline schedule schedule_of(const pipeline_shape& shape, const std::vector<std::vector<op>>& order) {
  std::size_t total = 0;
  for (const auto& o : order) total += o.size();
  schedule out{shape, total};
  std::size_t k = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    out.offsets()[r] = static_cast<std::uint32_t>(k);
    for (const op o : order[r]) out.ops()[k++] = o;
  }
  out.offsets()[order.size()] = static_cast<std::uint32_t>(k);
  return out;
}

/// The largest per-rank span of `s` for `p`, or -1 when `s` is not valid (validate())
/// or passes a rank's limit. O(ops).
inline rational checked_span(const schedule& s, const search_problem& p) {
  const schedule_view v = s.view();
  if (!validate(v).ok()) return rational{-1};
  const in_flight_profile memory = in_flight(v, p.gamma);
  for (int r = 0; r < p.shape.P; ++r) {
    if (memory.peak_activations(r) > p.limit(r)) return rational{-1};
  }
  return simulate(v, p.cost).largest_span();
}

/// Whether adjacent ops a, b of one rank may trade places in local repair. Loop placement:
/// of two micro-batches a > b, a's F or I and b's I or W, or a's F and b's I. V-shape: any
/// two ops but those of one stage and micro-batch and those of one stage and kind (the
/// validity check rejects the rest that deadlock).
constexpr bool swappable(const pipeline_shape& s, op a, op b) {
  if (s.layout == placement::v_shape) {
    const bool same_stage = a.stage() == b.stage();
    return !(same_stage && (a.microbatch() == b.microbatch() || a.kind() == b.kind()));
  }
  const op later = a.microbatch() > b.microbatch() ? a : b, earlier = a.microbatch() > b.microbatch() ? b : a;
  return later.microbatch() != earlier.microbatch() &&
         (later.kind() == op_kind::F ? earlier.kind() != op_kind::F
                                     : later.kind() == op_kind::I && earlier.kind() == op_kind::W);
}

/// Local repair: passes over every pair of neighbours on a rank that may trade places
/// (swappable()),
/// each swap kept when the schedule stays valid, within the limits, and its largest span
/// drops; until a pass keeps none or `budget` ops have been simulated. Returns the swaps
/// kept. Each trial is one exact check (checked_span()): O(ops).
inline int repair(schedule& s, const search_problem& p, std::int64_t budget) {
  rational best = checked_span(s, p);
  if (best < rational{0}) return 0;  // not a schedule of p: nothing to repair
  const std::int64_t n = static_cast<std::int64_t>(s.size());
  int kept = 0;
  for (bool improved = true; improved && budget >= n;) {
    improved = false;
    for (int r = 0; r < p.shape.P && budget >= n; ++r) {
      for (std::uint32_t k = s.offsets()[static_cast<std::size_t>(r)];
           k + 1 < s.offsets()[static_cast<std::size_t>(r) + 1] && budget >= n; ++k) {
        if (!swappable(p.shape, s.ops()[k], s.ops()[k + 1])) continue;
        std::swap(s.ops()[k], s.ops()[k + 1]);
        budget -= n;
        const rational span = checked_span(s, p);
        if (span >= rational{0} && span < best) {
          best = span, improved = true, ++kept;
        } else {
          std::swap(s.ops()[k], s.ops()[k + 1]);
        }
      }
    }
  }
  return kept;
}

}  // namespace ctpipe::detail
