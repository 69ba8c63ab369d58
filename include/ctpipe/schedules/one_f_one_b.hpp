// ctpipe/schedules/one_f_one_b.hpp: 1F1B (PipeDream-Flush; Narayanan et al., SC 2021).
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe::schedules {

/// Writes rank `r`'s 1F1B order into `out` (a callable taking an op), as Megatron-LM's
/// `forward_backward_pipelining_without_interleaving`:
/// - warmup: `min(P-1-r, m)` forwards;
/// - steady: for each remaining micro-batch, one forward then the oldest backward;
/// - cooldown: the backwards left.
/// Valid for every P >= 1 and m >= 1 (m < P included: the warmup is cut at m and the
/// steady phase may be empty). Needs V = 1 (checked by check_spec). Rank r holds at most
/// `min(m, P-r)` activations.
template <class Out>
constexpr void one_f_one_b(const pipeline_shape& s, int r, Out&& out) {
  const int warmup = s.P - 1 - r < s.m ? s.P - 1 - r : s.m;
  for (int j = 0; j < warmup; ++j) out(detail::make_op(op_kind::F, r, j));
  for (int j = 0; j < s.m - warmup; ++j) {
    out(detail::make_op(op_kind::F, r, warmup + j));
    out(detail::make_op(op_kind::B, r, j));
  }
  for (int j = s.m - warmup; j < s.m; ++j) out(detail::make_op(op_kind::B, r, j));
}

}  // namespace ctpipe::schedules
