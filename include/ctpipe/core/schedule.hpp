// ctpipe/core/schedule.hpp: schedule storage (one flat op array + per-rank offsets).
//
// Layout (CSR): all ranks' ops back to back, rank 0 first; `offsets` has P+1 entries and
// rank r's ops are ops[offsets[r] .. offsets[r+1]). No padding to the longest rank.
// Three owners share one view type:
// - frozen_schedule<N, P>: fixed arrays, the value of schedule_v<spec> (compile time,
//   static storage, readable by a runtime at zero cost);
// - schedule: free-store arrays, built by generate() at run time or transiently inside
//   a constant expression;
// - any caller's own arrays, wrapped in a schedule_view (e.g. a schedule read from a file).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <span>     // per-rank op lists

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// A non-owning view of a schedule: its shape, its ops (all ranks, rank 0 first) and the
/// `P+1` per-rank offsets. Every analysis takes this type.
struct schedule_view {
  pipeline_shape shape;                    ///< P, m, V, placement
  std::span<const op> ops;                 ///< all ops, CSR order
  std::span<const std::uint32_t> offsets;  ///< P+1 entries, offsets[P] == ops.size()

  /// Rank r's ops in execution order (0 <= r < P).
  constexpr std::span<const op> rank(int r) const { return ops.subspan(offsets[r], offsets[r + 1] - offsets[r]); }
  /// Total number of ops over all ranks.
  constexpr std::size_t size() const { return ops.size(); }
};

namespace detail {
/// The view-structure rule on a view whose shape passed check_shape(): `offsets` holds
/// P+1 non-decreasing positions from 0 to the op count. O(P). Used by check_view() (which
/// raises) and the validators (which report fault::bad_offsets).
constexpr bool offsets_sound(const schedule_view& v) {
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  bool ok = v.offsets.size() == P + 1 && v.offsets[0] == 0 && v.offsets[P] == v.ops.size();
  for (std::size_t r = 0; ok && r < P; ++r) ok = v.offsets[r] <= v.offsets[r + 1];
  return ok;
}
}  // namespace detail

/// Checks the structure of a view before an analysis indexes it: the shape passes
/// check_shape() (its messages), and `offsets` holds P+1 non-decreasing positions from 0
/// to the op count, else `ctpipe: schedule view offsets must be P+1 non-decreasing
/// positions from 0 to the op count`. O(P). Op contents are each analysis's business.
constexpr void check_view(const schedule_view& v) {
  check_shape(v.shape);
  detail::require(detail::offsets_sound(v),
                  "ctpipe: schedule view offsets must be P+1 non-decreasing positions from 0 to the op count");
}

/// A schedule frozen at compile time: `N` ops over `R` ranks in fixed arrays (plain C
/// arrays: cheaper to index during constant evaluation than std::array). The value type
/// of schedule_v; 4 bytes per op plus 4 bytes per rank.
template <std::size_t N, std::size_t R>
struct frozen_schedule {
  pipeline_shape shape;          ///< P, m, V, placement
  op ops[N];                     ///< all ops, CSR order
  std::uint32_t offsets[R + 1];  ///< rank r's ops are ops[offsets[r] .. offsets[r+1])

  constexpr schedule_view view() const { return {shape, {ops, N}, {offsets, R + 1}}; }
  constexpr std::span<const op> rank(int r) const { return view().rank(r); }
  constexpr std::size_t size() const { return N; }
};

/// A schedule owning its ops on the free store (run time, or transient inside a
/// constant expression). Build it with generate(spec) or fill it yourself:
/// `schedule s{shape, total_ops}; s.ops()[k] = ...; s.offsets()[r] = ...`.
class schedule {
 public:
  constexpr schedule() = default;
  /// Storage for `total_ops` ops over `shape.P` ranks (offsets start as all zero).
  constexpr schedule(const pipeline_shape& shape, std::size_t total_ops)
      : shape_(shape), ops_(total_ops), offsets_(static_cast<std::size_t>(shape.P) + 1) {}

  constexpr schedule_view view() const { return {shape_, ops_.span(), offsets_.span()}; }
  constexpr std::span<const op> rank(int r) const { return view().rank(r); }
  constexpr std::size_t size() const { return ops_.size(); }
  constexpr const pipeline_shape& shape() const { return shape_; }
  constexpr std::span<op> ops() { return ops_.span(); }
  constexpr std::span<std::uint32_t> offsets() { return offsets_.span(); }

 private:
  pipeline_shape shape_;
  detail::buffer<op> ops_;
  detail::buffer<std::uint32_t> offsets_;
};

/// `v` read under pair_model::split: every overlapped pair's word becomes a plain F (its
/// B word stays). Same shape and op count, CSR; a schedule without pairs comes back
/// unchanged. Raises check_view()'s messages. Linear.
constexpr schedule split_pairs(schedule_view v) {
  check_view(v);
  schedule out{v.shape, v.size()};
  std::span<op> ops = out.ops();
  for (std::size_t k = 0; k < v.size(); ++k) {
    const op o = v.ops[k];
    ops[k] = o.kind() == op_kind::overlap_f_b ? op{op_kind::F, o.stage(), o.microbatch()} : o;
  }
  for (std::size_t r = 0; r < v.offsets.size(); ++r) out.offsets()[r] = v.offsets[r];
  return out;
}

/// Whether `v` holds an overlapped pair's word. Linear.
constexpr bool has_pairs(schedule_view v) {
  for (const op o : v.ops) {
    if (o.kind() == op_kind::overlap_f_b) return true;
  }
  return false;
}

}  // namespace ctpipe
