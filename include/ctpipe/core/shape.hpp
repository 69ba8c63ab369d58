// ctpipe/core/shape.hpp: the pipeline shape (P, m, V, placement) and where stages live.
#pragma once

#include <cstdint>  // std::uint8_t

#include "ctpipe/core/error.hpp"

namespace ctpipe {

/// How the `S = P*V` stages are laid on the `P` pipeline ranks (docs/spec.md §1).
/// - `loop` (Megatron-LM, PyTorch default): chunk `c` of rank `r` is stage `c*P + r`.
/// - `v_shape` (ZB-V, DualPipeV; needs `V == 2`): rank `r` holds stages `r` and
///   `2P-1-r`, so the last rank holds two adjacent stages.
enum class placement : std::uint8_t { loop, v_shape };

/// Largest stage count and micro-batch count an op can encode (see core/op.hpp).
inline constexpr int max_stages = 1 << 12;
inline constexpr int max_microbatches = 1 << 16;

/// The shape of a pipeline: `P` pipeline ranks, `m` micro-batches, `V` model chunks
/// (virtual stages) per rank, and the placement of stages on ranks.
///
/// An aggregate, so `pipeline_shape{4, 8}` is P = 4, m = 8, V = 1 on the loop
/// placement. A structural type: usable as a template argument.
/// Checked by check_shape() (messages listed there).
struct pipeline_shape {
  int P = 1;                      ///< pipeline ranks (devices), >= 1
  int m = 1;                      ///< micro-batches per training step, >= 1
  int V = 1;                      ///< model chunks per rank, >= 1
  placement layout = placement::loop;  ///< stage-to-rank placement

  /// Total number of stages `S = P*V`.
  constexpr int stages() const { return P * V; }

  /// The rank that owns stage `s` (0 <= s < S).
  constexpr int rank_of(int s) const {
    if (layout == placement::loop) return s % P;
    return s < P ? s : 2 * P - 1 - s;
  }
  /// The chunk index (0 <= c < V) of stage `s` on its rank.
  constexpr int chunk_of(int s) const {
    if (layout == placement::loop) return s / P;
    return s < P ? 0 : 1;
  }
  /// The stage held as chunk `c` by rank `r`.
  constexpr int stage_of(int r, int c) const {
    if (layout == placement::loop) return c * P + r;
    return c == 0 ? r : 2 * P - 1 - r;
  }

  friend constexpr bool operator==(const pipeline_shape&, const pipeline_shape&) = default;
};

namespace detail {
/// The shape rules: on the first broken rule calls `on_error("ctpipe: ...")` with the
/// message literal and returns false. Callers: check_shape (raises), shape_error.
template <class OnError>
constexpr bool shape_rules(const pipeline_shape& s, OnError&& on_error) {
  if (s.P < 1) { on_error("ctpipe: P (pipeline ranks) must be >= 1"); return false; }
  if (s.m < 1) { on_error("ctpipe: m (micro-batches) must be >= 1"); return false; }
  if (s.V < 1) { on_error("ctpipe: V (model chunks per rank) must be >= 1"); return false; }
  if (s.layout != placement::loop && s.layout != placement::v_shape) {
    on_error("ctpipe: placement must be loop or v_shape");
    return false;
  }
  if (s.layout == placement::v_shape && s.V != 2) { on_error("ctpipe: the V-shape placement needs V = 2"); return false; }
  if (s.P > max_stages || s.V > max_stages || s.P * s.V > max_stages) {
    on_error("ctpipe: P*V must be at most 4096 stages");
    return false;
  }
  if (s.m > max_microbatches) { on_error("ctpipe: m must be at most 65536 micro-batches"); return false; }
  return true;
}
}  // namespace detail

/// The gate on a shape, used by every generator and by the `ctpipe` tool.
/// Raises (compile error in a constant expression, ctpipe::error at run time):
/// - `ctpipe: P (pipeline ranks) must be >= 1`
/// - `ctpipe: m (micro-batches) must be >= 1`
/// - `ctpipe: V (model chunks per rank) must be >= 1`
/// - `ctpipe: placement must be loop or v_shape` (a value cast from another number)
/// - `ctpipe: the V-shape placement needs V = 2`
/// - `ctpipe: P*V must be at most 4096 stages`
/// - `ctpipe: m must be at most 65536 micro-batches`
constexpr void check_shape(const pipeline_shape& s) { detail::shape_rules(s, detail::raise); }

/// The message check_shape() would raise for `s`, or nullptr when `s` is valid.
constexpr const char* shape_error(const pipeline_shape& s) {
  const char* error = nullptr;
  detail::shape_rules(s, [&error](const char* message) { error = message; });
  return error;
}

/// Name of a placement as the tool and JSON print it: `loop` or `v`.
constexpr const char* placement_name(placement p) { return p == placement::loop ? "loop" : "v"; }

}  // namespace ctpipe
