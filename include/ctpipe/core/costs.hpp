// ctpipe/core/costs.hpp: the exact cost model (docs/spec.md §1-§2).
#pragma once

#include <span>

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// Costs of the ops, in time units, for one whole rank's layers (all its `V` chunks):
/// a chunk's op costs `t/V`. Defaults are the article's: a forward costs 1, a full
/// backward 2, split into an input-gradient part 1 and a weight-gradient part 1; no
/// point-to-point latency. `c` is added to a dependency that crosses ranks.
/// A structural type: usable as a template argument.
/// Checked by check_costs(): `t_f > 0`, every cost >= 0 (t_fb may be -1, its default).
struct costs {
  rational f{1};  ///< t_f: forward of one micro-batch through a rank's layers
  rational b{2};  ///< t_b: full backward (B)
  rational i{1};  ///< t_i: input-gradient backward (I)
  rational w{1};  ///< t_w: weight-gradient backward (W)
  rational c{0};  ///< t_c: latency of one point-to-point transfer between ranks
  /// t_fb: an overlapped F&B pair (op_kind::overlap_f_b) run as one op, for a forward and
  /// a full backward through a rank's layers. `-1`, the default, stands for t_f + t_b (no
  /// overlap gain); a smaller value models the overlap (DeepSeek's "F&B").
  rational fb{-1};
  /// t_move: moving one chunk's activation from one rank to another (bubble
  /// rebalancing, docs/spec.md §8.2), on the ranks' copy channels, apart from compute.
  /// Not divided by V and not scaled; 0 by default. No schedule op uses it.
  rational move{0};

  /// t_fb with its default resolved: `fb`, or t_f + t_b when fb is -1.
  constexpr rational pair() const { return fb == rational{-1} ? f + b : fb; }

  /// The cost of one op of kind `k` on one of `V` chunks: `t_k / V`; an overlapped
  /// pair's word `pair() / V` (the whole pair: its B word runs inside it). Transfers cost
  /// 0 here (their latency is `c`, charged on the dependency).
  constexpr rational of(op_kind k, int V) const {
    switch (k) {
      case op_kind::F: return f / V;
      case op_kind::B: return b / V;
      case op_kind::I: return i / V;
      case op_kind::W: return w / V;
      case op_kind::overlap_f_b: return pair() / V;
      default: return rational{0};
    }
  }

  friend constexpr bool operator==(const costs&, const costs&) = default;
};

/// The gate on a cost set. Raises:
/// - `ctpipe: t_f (forward cost) must be > 0`
/// - `ctpipe: costs must be >= 0`
/// - `ctpipe: t_fb (overlapped pair cost) must be >= 0, or -1 for t_f + t_b`
constexpr void check_costs(const costs& c) {
  detail::require(c.f > rational{0}, "ctpipe: t_f (forward cost) must be > 0");
  detail::require(
      c.b >= rational{0} && c.i >= rational{0} && c.w >= rational{0} && c.c >= rational{0} && c.move >= rational{0},
      "ctpipe: costs must be >= 0");
  detail::require(c.fb >= rational{0} || c.fb == rational{-1},
                  "ctpipe: t_fb (overlapped pair cost) must be >= 0, or -1 for t_f + t_b");
}

/// Unequal stages and micro-batches (docs/spec.md §2.2): the op (kind, stage s,
/// micro-batch j) costs `costs::of(kind, V) * stage[s] * microbatch[j]`, exact. An
/// overlapped pair keeps its overlap ratio: it costs `t_fb / (t_f + t_b)` times the sum
/// of its two halves' scaled costs (its F's stage and micro-batch, its B's). The latency
/// t_c is not scaled. Empty spans stand for factors of 1, so a default cost_scale is the
/// plain cost model.
///
/// Shapes: `stage` has S = P*V entries (stage s = chunk c of rank r as the placement
/// lays them: `pipeline_shape::stage_of(r, c)`) or none; `microbatch` has m entries or
/// none. The spans refer to the caller's arrays, which must outlive the scale. Checked
/// by check_scale().
struct cost_scale {
  std::span<const rational> stage{};       ///< per stage: its factor (S entries, or none for all 1)
  std::span<const rational> microbatch{};  ///< per micro-batch: its factor (m entries, or none)

  /// Whether every factor is 1 (then the plain model applies).
  constexpr bool uniform() const {
    for (const rational x : stage) {
      if (x != rational{1}) return false;
    }
    for (const rational x : microbatch) {
      if (x != rational{1}) return false;
    }
    return true;
  }
  /// The factor of stage s and of micro-batch j (1 where the span is empty).
  constexpr rational of_stage(int s) const { return stage.empty() ? rational{1} : stage[static_cast<std::size_t>(s)]; }
  constexpr rational of_microbatch(int j) const {
    return microbatch.empty() ? rational{1} : microbatch[static_cast<std::size_t>(j)];
  }
};

/// The gate on a cost_scale for `shape`. Raises:
/// - `ctpipe: the stage scale needs one factor per stage (P*V of them)`
/// - `ctpipe: the micro-batch scale needs one factor per micro-batch (m of them)`
/// - `ctpipe: stage factors must be >= 0, at least one > 0`: a stage of factor 0 does no
///   work (its ops last 0; an empty stage of a Megatron-LM layout, docs/memory.md), but a
///   pipeline whose every stage is empty has no time to measure
/// - `ctpipe: scale factors must be > 0` (a micro-batch factor)
constexpr void check_scale(const cost_scale& scale, const pipeline_shape& shape) {
  detail::require(scale.stage.empty() || scale.stage.size() == static_cast<std::size_t>(shape.stages()),
                  "ctpipe: the stage scale needs one factor per stage (P*V of them)");
  detail::require(scale.microbatch.empty() || scale.microbatch.size() == static_cast<std::size_t>(shape.m),
                  "ctpipe: the micro-batch scale needs one factor per micro-batch (m of them)");
  bool some_work = scale.stage.empty();
  for (const rational x : scale.stage) {
    detail::require(x >= rational{0}, "ctpipe: stage factors must be >= 0, at least one > 0");
    some_work = some_work || x > rational{0};
  }
  detail::require(some_work, "ctpipe: stage factors must be >= 0, at least one > 0");
  for (const rational x : scale.microbatch) detail::require(x > rational{0}, "ctpipe: scale factors must be > 0");
}

/// Checks gamma = M_W / M_B of the finer memory model (docs/spec.md §3). Raises
/// `ctpipe: gamma must lie in [0, 1]`.
constexpr void check_gamma(rational gamma) {
  detail::require(gamma >= rational{0} && gamma <= rational{1}, "ctpipe: gamma must lie in [0, 1]");
}

}  // namespace ctpipe
