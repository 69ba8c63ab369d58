// ctpipe/core/shape.hpp: the pipeline shape (P, m, V, placement) and where stages live.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t

#include "ctpipe/core/error.hpp"

namespace ctpipe {

/// How the `S = P*V` stages are laid on the `P` pipeline ranks (docs/spec.md §1).
/// - `loop` (Megatron-LM, PyTorch default): chunk `c` of rank `r` is stage `c*P + r`.
/// - `v_shape` (ZB-V, DualPipeV; needs `V == 2`): rank `r` holds stages `r` and
///   `2P-1-r`, so the last rank holds two adjacent stages.
/// - `bidirectional` (DualPipe; needs `V == 2`): two copies of the model, laid as the
///   V-shape. Stages `0..P-1` are the "down" pipeline (stage `r` on rank `r`), fed at
///   rank 0 with micro-batches `j` with `2j < m` (`0..m/2-1` for an even m); stages
///   `P..2P-1` the "up" pipeline (its stage `i` is stage `P+i`, on rank `P-1-i`), fed at
///   rank P-1 with the others. A micro-batch runs only through its own pipeline's
///   stages (first_stage(), last_stage()), and a chunk is a whole stage of its copy: an
///   op costs `t`, not `t/V` (cost_chunks()).
enum class placement : std::uint8_t { loop, v_shape, bidirectional };

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
  int P = 1;                           ///< pipeline ranks (devices), >= 1
  int m = 1;                           ///< micro-batches per training step, >= 1
  int V = 1;                           ///< model chunks per rank, >= 1
  placement layout = placement::loop;  ///< stage-to-rank placement

  /// Total number of stages `S = P*V`.
  constexpr int stages() const { return P * V; }

  /// Where stages live, by the placement's entry of placement_table (below): the rank
  /// that owns stage `s` (0 <= s < S), the chunk index (0 <= c < V) of stage `s` on its
  /// rank, and the stage held as chunk `c` by rank `r`.
  constexpr int rank_of(int s) const;
  constexpr int chunk_of(int s) const;
  constexpr int stage_of(int r, int c) const;
  /// The stage that chunk `c` of rank `r` runs micro-batch `j` on, or -1 when that chunk
  /// holds no stage of j's pipeline (bidirectional: a down micro-batch on chunk 1, an up
  /// one on chunk 0). The placement as a function of (rank, chunk, micro-batch).
  constexpr int stage_of(int r, int c, int j) const {
    const int s = stage_of(r, c);
    return s >= first_stage(j) && s <= last_stage(j) ? s : -1;
  }
  /// The dependency rule (docs/spec.md §2): the first and last stage micro-batch `j`
  /// runs through, 0 and S-1 except on the bidirectional placement (0 and P-1 for
  /// 2j < m, P and 2P-1 for the others). F(s, j) needs F(s-1, j) for s > first_stage(j);
  /// B/I(s, j) needs B/I(s+1, j) for s < last_stage(j).
  constexpr int first_stage(int j) const;
  constexpr int last_stage(int j) const;
  /// What an op's cost is divided by (costs::of): `V`, a chunk being 1/V of a rank's
  /// layers; 1 on the bidirectional placement, whose chunk is a whole stage of its copy.
  constexpr int cost_chunks() const;

  friend constexpr bool operator==(const pipeline_shape&, const pipeline_shape&) = default;
};

/// One placement: its name and its functions of the shape (placement_table). Adding a
/// placement is its enumerator, one entry, and its rule in shape_rules().
struct placement_entry {
  placement id;
  const char* name;  ///< as the tool and JSON print it (placement_name())
  int (*rank_of)(const pipeline_shape&, int stage);
  int (*chunk_of)(const pipeline_shape&, int stage);
  int (*stage_of)(const pipeline_shape&, int rank, int chunk);
  int (*first_stage)(const pipeline_shape&, int microbatch);  ///< the dependency rule: where j enters
  int (*last_stage)(const pipeline_shape&, int microbatch);   ///< and where it turns back
  bool whole_stage_chunks;                                    ///< a chunk is a whole stage (an op costs t, not t/V)
};

namespace detail {
constexpr int loop_rank(const pipeline_shape& s, int st) { return st % s.P; }
constexpr int loop_chunk(const pipeline_shape& s, int st) { return st / s.P; }
constexpr int loop_stage(const pipeline_shape& s, int r, int c) { return c * s.P + r; }
constexpr int v_rank(const pipeline_shape& s, int st) { return st < s.P ? st : 2 * s.P - 1 - st; }
constexpr int v_chunk(const pipeline_shape& s, int st) { return st < s.P ? 0 : 1; }
constexpr int v_stage(const pipeline_shape& s, int r, int c) { return c == 0 ? r : 2 * s.P - 1 - r; }
constexpr int whole_first(const pipeline_shape&, int) { return 0; }
constexpr int whole_last(const pipeline_shape& s, int) { return s.stages() - 1; }
constexpr int two_way_first(const pipeline_shape& s, int j) { return 2 * j >= s.m ? s.P : 0; }
constexpr int two_way_last(const pipeline_shape& s, int j) { return 2 * j < s.m ? s.P - 1 : s.stages() - 1; }
}  // namespace detail

/// Every placement, in placement's order (docs/spec.md §1).
inline constexpr placement_entry placement_table[] = {
    {placement::loop, "loop", detail::loop_rank, detail::loop_chunk, detail::loop_stage, detail::whole_first,
     detail::whole_last, false},
    {placement::v_shape, "v", detail::v_rank, detail::v_chunk, detail::v_stage, detail::whole_first, detail::whole_last,
     false},
    {placement::bidirectional, "bidirectional", detail::v_rank, detail::v_chunk, detail::v_stage, detail::two_way_first,
     detail::two_way_last, true},
};

/// The entry of placement `p`; the loop's for a value that is no placement (check_shape()
/// rejects such a shape first).
constexpr const placement_entry& placement_of(placement p) {
  const std::size_t k = static_cast<std::size_t>(p);
  return k < sizeof(placement_table) / sizeof(placement_table[0]) ? placement_table[k] : placement_table[0];
}

constexpr int pipeline_shape::rank_of(int s) const { return placement_of(layout).rank_of(*this, s); }
constexpr int pipeline_shape::chunk_of(int s) const { return placement_of(layout).chunk_of(*this, s); }
constexpr int pipeline_shape::stage_of(int r, int c) const { return placement_of(layout).stage_of(*this, r, c); }
constexpr int pipeline_shape::first_stage(int j) const { return placement_of(layout).first_stage(*this, j); }
constexpr int pipeline_shape::last_stage(int j) const { return placement_of(layout).last_stage(*this, j); }
constexpr int pipeline_shape::cost_chunks() const { return placement_of(layout).whole_stage_chunks ? 1 : V; }

namespace detail {
/// The shape rules: on the first broken rule calls `on_error("ctpipe: ...")` with the
/// message literal and returns false. Callers: check_shape (raises), shape_error.
template <class OnError>
constexpr bool shape_rules(const pipeline_shape& s, OnError&& on_error) {
  if (s.P < 1) {
    on_error("ctpipe: P (pipeline ranks) must be >= 1");
    return false;
  }
  if (s.m < 1) {
    on_error("ctpipe: m (micro-batches) must be >= 1");
    return false;
  }
  if (s.V < 1) {
    on_error("ctpipe: V (model chunks per rank) must be >= 1");
    return false;
  }
  if (s.layout != placement::loop && s.layout != placement::v_shape && s.layout != placement::bidirectional) {
    on_error("ctpipe: placement must be loop, v_shape or bidirectional");
    return false;
  }
  if (s.layout == placement::v_shape && s.V != 2) {
    on_error("ctpipe: the V-shape placement needs V = 2");
    return false;
  }
  if (s.layout == placement::bidirectional && s.V != 2) {
    on_error("ctpipe: the bidirectional placement needs V = 2");
    return false;
  }
  if (s.P > max_stages || s.V > max_stages || s.P * s.V > max_stages) {
    on_error("ctpipe: P*V must be at most 4096 stages");
    return false;
  }
  if (s.m > max_microbatches) {
    on_error("ctpipe: m must be at most 65536 micro-batches");
    return false;
  }
  return true;
}
}  // namespace detail

/// The gate on a shape, used by every generator and by the `ctpipe` tool.
/// Raises (compile error in a constant expression, ctpipe::error at run time):
/// - `ctpipe: P (pipeline ranks) must be >= 1`
/// - `ctpipe: m (micro-batches) must be >= 1`
/// - `ctpipe: V (model chunks per rank) must be >= 1`
/// - `ctpipe: placement must be loop, v_shape or bidirectional` (a value cast from
///   another number)
/// - `ctpipe: the V-shape placement needs V = 2`
/// - `ctpipe: the bidirectional placement needs V = 2`
/// - `ctpipe: P*V must be at most 4096 stages`
/// - `ctpipe: m must be at most 65536 micro-batches`
constexpr void check_shape(const pipeline_shape& s) { detail::shape_rules(s, detail::raise); }

/// The message check_shape() would raise for `s`, or nullptr when `s` is valid.
constexpr const char* shape_error(const pipeline_shape& s) {
  const char* error = nullptr;
  detail::shape_rules(s, [&error](const char* message) { error = message; });
  return error;
}

/// Name of a placement as the tool and JSON print it: `loop`, `v` or `bidirectional`
/// (placement_table).
constexpr const char* placement_name(placement p) { return placement_of(p).name; }

}  // namespace ctpipe
