// ctpipe/schedules/interleaved.hpp: interleaved 1F1B (Narayanan et al., SC 2021), as
// Megatron-LM and PyTorch run it.
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe::schedules {

/// Walks Megatron's schedule table (`get_schedule_table`) in order: groups of `g`
/// micro-batches, the last group taking the remainder; inside a group, every micro-batch
/// through chunk 0, then chunk 1, and so on. `microbatch()` and `chunk` name the current
/// entry; next() moves to the following one in O(1).
struct interleaved_table {
  int m;
  int V;
  int g;
  int group_start = 0;  ///< first micro-batch of the current group
  int chunk = 0;        ///< chunk of the current entry
  int offset = 0;       ///< position of the current entry inside its group and chunk

  constexpr int microbatch() const { return group_start + offset; }
  constexpr void next() {
    if (++offset < (group_start + g < m ? g : m - group_start)) return;
    offset = 0;
    if (++chunk < V) return;
    chunk = 0;
    group_start += g;
  }
};

/// Writes rank `r`'s interleaved 1F1B order into `out` (a callable taking an op), for
/// loop placement (chunk c of rank r is stage c*P + r), group size `g` and `warmup`
/// warmup forwards (schedule_spec's warmup_forwards()):
/// - warmup: forwards of table entries 0 .. warmup-1;
/// - steady: for k = 0, 1, ...: the forward of entry warmup+k, then the backward of
///   entry k (entry (j, c) runs its backward on chunk V-1-c);
/// - cooldown: the backwards left.
/// With V = 1 and warmup P-1-r this is exactly 1F1B. Checked by check_spec.
template <class Out>
constexpr void interleaved_1f1b(const pipeline_shape& s, int r, int g, int warmup, Out&& out) {
  const int total = s.m * s.V;
  interleaved_table forward{s.m, s.V, g};
  interleaved_table backward{s.m, s.V, g};
  for (int k = 0; k < warmup; ++k, forward.next()) {
    out(detail::make_op(op_kind::F, forward.chunk * s.P + r, forward.microbatch()));
  }
  for (int k = warmup; k < total; ++k, forward.next(), backward.next()) {
    out(detail::make_op(op_kind::F, forward.chunk * s.P + r, forward.microbatch()));
    out(detail::make_op(op_kind::B, (s.V - 1 - backward.chunk) * s.P + r, backward.microbatch()));
  }
  for (int k = total - warmup; k < total; ++k, backward.next()) {
    out(detail::make_op(op_kind::B, (s.V - 1 - backward.chunk) * s.P + r, backward.microbatch()));
  }
}

/// Writes rank `r`'s looped breadth-first order into `out`, as PyTorch's
/// `ScheduleLoopedBFS`: every micro-batch through chunk 0, then chunk 1, ...; then the
/// backwards chunk by chunk from the last, each in reverse micro-batch order. Loop
/// placement. Rank r holds all m*V chunk activations before its first backward.
template <class Out>
constexpr void looped_bfs(const pipeline_shape& s, int r, Out&& out) {
  for (int c = 0; c < s.V; ++c) {
    for (int j = 0; j < s.m; ++j) out(detail::make_op(op_kind::F, c * s.P + r, j));
  }
  for (int c = s.V - 1; c >= 0; --c) {
    for (int j = s.m - 1; j >= 0; --j) out(detail::make_op(op_kind::B, c * s.P + r, j));
  }
}

}  // namespace ctpipe::schedules
