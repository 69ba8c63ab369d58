// ctpipe/schedules/gpipe.hpp: GPipe (Huang et al., NeurIPS 2019).
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/closed_form.hpp"

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

/// Where GPipe's closed forms come from (closed_form::source).
inline constexpr const char* gpipe_source = "Huang et al., GPipe (NeurIPS 2019); docs/spec.md §4";

/// GPipe's makespan: `(m+P-1)(t_f+t_b) + 2(P-1)t_c` (forwards fill the pipe in m+P-1
/// steps, the backwards drain it in m+P-1 steps, each of the P-1 boundaries is crossed
/// once each way on the critical path); any costs.
constexpr closed_form gpipe_makespan(const schedule_spec& s, const costs& c) {
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  if (c.c == rational{0}) return {true, (m + P - 1) * (c.f + c.b), "(m+P-1)(t_f+t_b)", gpipe_source, "t_c = 0"};
  return {true, (m + P - 1) * (c.f + c.b) + rational{2} * (P - 1) * c.c, "(m+P-1)(t_f+t_b) + 2(P-1)t_c", gpipe_source,
          "any costs"};
}

/// GPipe's bubble fraction: `(P-1)/(m+P-1)` with t_c = 0, else
/// `(P-1)(t_f+t_b+2t_c) / ((m+P-1)(t_f+t_b) + 2(P-1)t_c)`.
constexpr closed_form gpipe_bubble_fraction(const schedule_spec& s, const costs& c) {
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  const rational busy = c.f + c.b;
  if (c.c != rational{0} && s.shape.P > 1) {
    return {true, (P - 1) * (busy + rational{2} * c.c) / ((m + P - 1) * busy + rational{2} * (P - 1) * c.c),
            "(P-1)(t_f+t_b+2t_c)/((m+P-1)(t_f+t_b)+2(P-1)t_c)", gpipe_source, "any costs"};
  }
  return {true, (P - 1) / (m + P - 1), "(P-1)/(m+P-1)", gpipe_source, "t_c = 0"};
}

/// GPipe's span bubble: rank 0's idle, `(P-1)(t_f+t_b+2t_c)`.
constexpr closed_form gpipe_span_bubble(const schedule_spec& s, const costs& c) {
  return detail::rank0_span_bubble(s, c, gpipe_makespan(s, c));
}

/// GPipe's peak in-flight activations: `m` on every rank.
constexpr closed_form gpipe_peak_in_flight(const schedule_spec& s, rational, int) {
  return {true, rational{s.shape.m}, "m", gpipe_source, "any costs, any gamma"};
}

}  // namespace ctpipe::schedules
