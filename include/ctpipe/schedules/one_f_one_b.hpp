// ctpipe/schedules/one_f_one_b.hpp: 1F1B (PipeDream-Flush; Narayanan et al., SC 2021).
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/closed_form.hpp"

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

/// Where 1F1B's closed forms come from (closed_form::source), and why it has none with
/// latency (closed_form::condition).
inline constexpr const char* one_f_one_b_source =
    "Narayanan et al., PipeDream-Flush / Megatron-LM (SC 2021); docs/spec.md §4";
inline constexpr const char* one_f_one_b_no_latency = "needs t_c = 0 (with latency the 1F1B steady state stalls)";

/// 1F1B's makespan with t_c = 0: `(m+P-1)(t_f+t_b)`, the same as GPipe's.
constexpr closed_form one_f_one_b_makespan(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula(one_f_one_b_no_latency);
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  return {true, (m + P - 1) * (c.f + c.b), "(m+P-1)(t_f+t_b)", one_f_one_b_source, "t_c = 0"};
}

/// 1F1B's bubble fraction with t_c = 0: the article's `(P-1)/(m+P-1)`.
constexpr closed_form one_f_one_b_bubble_fraction(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula(one_f_one_b_no_latency);
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  return {true, (P - 1) / (m + P - 1), "(P-1)/(m+P-1)", one_f_one_b_source, "t_c = 0"};
}

/// 1F1B's span bubble: rank 0's idle, `(P-1)(t_f+t_b)`.
constexpr closed_form one_f_one_b_span_bubble(const schedule_spec& s, const costs& c) {
  return detail::rank0_span_bubble(s, c, one_f_one_b_makespan(s, c));
}

/// 1F1B's peak in-flight activations of rank r: `min(m, P-r)` (P-1-r warmup forwards,
/// then one more forward before each backward).
constexpr closed_form one_f_one_b_peak_in_flight(const schedule_spec& s, rational, int r) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  return {true, rational{P - r < m ? P - r : m}, "min(m, P-r)", one_f_one_b_source, "any costs, any gamma"};
}

}  // namespace ctpipe::schedules
