// ctpipe/schedules/zero_bubble.hpp: the Zero Bubble family (Qi et al., "Zero Bubble
// Pipeline Parallelism", ICLR 2024; "Pipeline Parallelism with Controllable Memory",
// arXiv 2405.15362). The backward is split into I (input gradient, on the critical path)
// and W (weight gradient, which nothing waits for); the Ws fill the bubbles.
//
// Every generator numbers a rank's Ws first-in first-out after its Is, as the runtimes
// pop them from a queue.
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/interleaved.hpp"

namespace ctpipe::schedules {

/// Writes rank `r`'s ZB-H1 (`warmup_per_rank` = 1) or ZB-H2 (2) order into `out`, as
/// the authors' `get_hand_schedule` (sail-sg/zero-bubble-pipeline-parallelism):
/// `min(k(P-1-r), m)` warmup forwards; then for each micro-batch i: a forward if any is
/// left, I(i), and the oldest pending W once `i >= k*r`; the deferred Ws close the rank.
/// Valid for every P >= 1 and m >= 1 (V = 1).
template <class Out>
constexpr void zb_handcrafted(const pipeline_shape& s, int r, int warmup_per_rank, Out&& out) {
  const int k = warmup_per_rank;
  const int warmup = k * (s.P - 1 - r) < s.m ? k * (s.P - 1 - r) : s.m;
  int next_forward = 0;
  int next_w = 0;
  for (; next_forward < warmup; ++next_forward) out(detail::make_op(op_kind::F, r, next_forward));
  for (int i = 0; i < s.m; ++i) {
    if (next_forward < s.m) out(detail::make_op(op_kind::F, r, next_forward++));
    out(detail::make_op(op_kind::I, r, i));
    if (i >= k * r) out(detail::make_op(op_kind::W, r, next_w++));
  }
  for (; next_w < s.m; ++next_w) out(detail::make_op(op_kind::W, r, next_w));
}

/// Writes rank `r`'s ZB-V order into `out`: the authors' handcrafted V-shape schedule as
/// PyTorch's `ScheduleZBVZeroBubble` runs it. V-shape placement: chunk 0 is stage r,
/// chunk 1 stage 2P-1-r. With n = max(m, 2P-1) micro-batches:
/// - warmup: 2(P-r)-1 chunk-0 forwards; r pairs (chunk-1 forward, chunk-0 forward);
///   P-r triples (chunk-1 F, I, W);
/// - steady: while chunk-1 forwards lag chunk-0 forwards or chunk-0 forwards remain:
///   [chunk-0 F if any left], chunk-0 I and W, chunk-1 F, I and W;
/// - cooldown: r pairs of Is (chunk 0, chunk 1); P-r pairs (chunk-0 I, chunk-0 W); the
///   chunk-1 Ws left, then the chunk-0 Ws left.
/// Ops of micro-batches m .. n-1 are dropped (so m < 2P-1 stays complete and valid).
template <class Out>
constexpr void zbv(const pipeline_shape& s, int r, Out&& out) {
  const int n = s.m > 2 * s.P - 1 ? s.m : 2 * s.P - 1;
  const int c0 = r;
  const int c1 = 2 * s.P - 1 - r;
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  auto emit = [&](op_kind k, int stage, int microbatch) {
    if (microbatch < s.m) out(detail::make_op(k, stage, microbatch));
  };
  for (int i = 0; i < 2 * (s.P - r) - 1; ++i) emit(op_kind::F, c0, f0++);
  for (int i = 0; i < r; ++i) {
    emit(op_kind::F, c1, f1++);
    emit(op_kind::F, c0, f0++);
  }
  for (int i = 0; i < s.P - r; ++i) {
    emit(op_kind::F, c1, f1++);
    emit(op_kind::I, c1, b1);
    emit(op_kind::W, c1, b1++);
  }
  while (f1 < f0 || f0 < n) {
    if (f0 < n) emit(op_kind::F, c0, f0++);
    emit(op_kind::I, c0, b0);
    emit(op_kind::W, c0, b0++);
    emit(op_kind::F, c1, f1++);
    emit(op_kind::I, c1, b1);
    emit(op_kind::W, c1, b1++);
  }
  int w0 = b0;
  int w1 = b1;
  for (int i = 0; i < r; ++i) {
    emit(op_kind::I, c0, b0++);
    emit(op_kind::I, c1, b1++);
  }
  for (int i = 0; i < s.P - r; ++i) {
    emit(op_kind::I, c0, b0++);
    emit(op_kind::W, c0, w0++);
  }
  while (w1 < b1) emit(op_kind::W, c1, w1++);
  while (w0 < b0) emit(op_kind::W, c0, w0++);
}

/// Writes rank `r`'s interleaved Zero Bubble order into `out`, as PyTorch's
/// `ScheduleInterleavedZeroBubble` (the ZB1P schedule): the interleaved 1F1B table with
/// group `g` and `warmup` warmup forwards (PyTorch: warmup factor 1), I instead of B,
/// and after each I from the (r+1)-th on, the W of the oldest I still pending; the
/// remaining Ws close the rank. Loop placement.
template <class Out>
constexpr void interleaved_zero_bubble(const pipeline_shape& s, int r, int g, int warmup, Out&& out) {
  const int total = s.m * s.V;
  interleaved_table forward{s.m, s.V, g};
  interleaved_table input{s.m, s.V, g};
  interleaved_table weight{s.m, s.V, g};
  int is_done = 0;
  int ws_done = 0;
  auto backward = [&] {
    out(detail::make_op(op_kind::I, (s.V - 1 - input.chunk) * s.P + r, input.microbatch()));
    input.next();
    if (is_done++ >= r) {  // Ws start r backwards late
      out(detail::make_op(op_kind::W, (s.V - 1 - weight.chunk) * s.P + r, weight.microbatch()));
      weight.next();
      ++ws_done;
    }
  };
  for (int k = 0; k < warmup; ++k, forward.next()) {
    out(detail::make_op(op_kind::F, forward.chunk * s.P + r, forward.microbatch()));
  }
  for (int k = warmup; k < total; ++k, forward.next()) {
    out(detail::make_op(op_kind::F, forward.chunk * s.P + r, forward.microbatch()));
    backward();
  }
  for (int k = total - warmup; k < total; ++k) backward();
  for (; ws_done < total; ++ws_done, weight.next()) {
    out(detail::make_op(op_kind::W, (s.V - 1 - weight.chunk) * s.P + r, weight.microbatch()));
  }
}

}  // namespace ctpipe::schedules
