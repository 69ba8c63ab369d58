// ctpipe/schedules/gpipe.hpp: GPipe (Huang et al., NeurIPS 2019).
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe::schedules {

/// Writes rank `r`'s GPipe order into `out` (a callable taking an op): all `m` forwards,
/// then all `m` backwards, both in micro-batch order, as PyTorch's `ScheduleGPipe`
/// (`torch/distributed/pipelining/schedules.py`). Needs V = 1 (checked by check_spec).
/// Every rank stores `m` activations before its first backward.
template <class Out>
constexpr void gpipe(const pipeline_shape& s, int r, Out&& out) {
  for (int j = 0; j < s.m; ++j) out(detail::make_op(op_kind::F, r, j));
  for (int j = 0; j < s.m; ++j) out(detail::make_op(op_kind::B, r, j));
}

}  // namespace ctpipe::schedules
