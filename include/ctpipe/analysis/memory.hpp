// ctpipe/analysis/memory.hpp: in-flight activations and their peaks (docs/spec.md §3).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

/// In-flight activations of every rank, in units of one model chunk's activation.
///
/// The model (Zero Bubble paper, Qi et al. 2024): an `F` allocates 1 at its start, a `B`
/// frees 1 at its end (an overlapped pair: its forward allocates, then its B frees), an
/// `I` frees `1 - gamma` and a `W` frees `gamma` at their ends;
/// `gamma = M_W / M_B` in [0, 1]. With gamma = 1 (the default) this is the plain count
/// of (micro-batch, chunk) pairs whose F has started and whose last backward piece has
/// not ended.
///
/// Only list order matters for these values: a rank's ops run one after another, so its
/// events happen in list order whatever the costs. To draw the level over time, pair
/// level_after(k) with the simulated time of op k's event: the start of an F, the end of
/// a B, I or W.
class in_flight_profile {
 public:
  constexpr in_flight_profile() = default;
  /// Peak over time of rank r, in chunks.
  constexpr rational peak(int r) const { return {peak_[static_cast<std::size_t>(r)], unit_}; }
  /// The largest peak over the ranks, in chunks.
  constexpr rational largest_peak() const {
    std::int64_t top = 0;
    for (const std::int64_t x : peak_.span()) top = x > top ? x : top;
    return {top, unit_};
  }
  /// Peak of rank r in full activations of one stage's layers: chunks / V, or chunks on
  /// the bidirectional placement, whose chunk is a whole stage of its copy.
  constexpr rational peak_activations(int r) const { return peak(r) / rational{V_}; }
  /// Level of op k's rank just after op k's event (allocation or free), in chunks.
  constexpr rational level_after(std::size_t k) const { return {level_[k], unit_}; }
  /// Number of ranks.
  constexpr int ranks() const { return static_cast<int>(peak_.size()); }

 private:
  friend constexpr in_flight_profile in_flight(schedule_view v, rational gamma);
  std::int64_t unit_ = 1;  // levels are stored as integers in units of 1/unit_ chunks
  int V_ = 1;
  detail::buffer<std::int64_t> level_;
  detail::buffer<std::int64_t> peak_;
};

/// Computes the in-flight profile of schedule `v` for a given `gamma` (default 1).
/// Linear in the number of ops. Raises the check_view() messages,
/// `ctpipe: gamma must lie in [0, 1]`, and rational overflow when ops x gamma's
/// denominator does not fit 64 bits.
constexpr in_flight_profile in_flight(schedule_view v, rational gamma = rational{1}) {
  check_view(v);
  check_gamma(gamma);
  // Every level lies within +-(ops * den): one overflow check covers the whole loop.
  rational::mul(static_cast<std::int64_t>(v.size()) + 1, gamma.den);
  in_flight_profile out;
  out.unit_ = gamma.den;
  out.V_ = v.shape.cost_chunks();
  const std::int64_t q = gamma.den;
  const std::int64_t p = gamma.num;
  // What each kind adds, in units of 1/q chunks: F +1, B -1, I -(1-gamma), W -gamma;
  // an overlapped pair's word +1 (its forward; its B word then frees); transfers and the
  // unused kind codes (up to 15) nothing.
  const std::int64_t delta[16] = {q, -q, p - q, -p, 0, 0, 0, 0, q};
  out.level_ = detail::buffer<std::int64_t>(v.size());
  out.peak_ = detail::buffer<std::int64_t>(static_cast<std::size_t>(v.shape.P));
  const op* ops = v.ops.data();
  const std::uint32_t* off = v.offsets.data();
  std::int64_t* level = out.level_.data();
  std::int64_t* peaks = out.peak_.data();
  for (int r = 0; r < v.shape.P; ++r) {
    std::int64_t now = 0;
    std::int64_t peak = 0;
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      level[k] = now += delta[ops[k].bits >> 28];
      peak = now > peak ? now : peak;
    }
    peaks[r] = peak;
  }
  return out;
}

}  // namespace ctpipe
