// ctpipe/schedules/combined.hpp: Megatron-LM's "combined 1F1B", interleaved 1F1B with
// the expert-parallel all-to-all overlap (`overlap_moe_expert_parallel_comm`): in the
// steady state the forward of one virtual micro-batch and the backward of another run as
// one combined step, an overlapped F&B pair.
#pragma once

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/interleaved.hpp"  // interleaved_table
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe::schedules {

/// Writes rank `r`'s combined 1F1B order into `out` (a callable taking an op), as
/// Megatron-LM's `forward_backward_pipelining_with_interleaving` runs it with
/// `overlap_moe_expert_parallel_comm` (the order of `convert_schedule_table_to_order`
/// over `get_schedule_table`, with `get_pp_rank_microbatches`' warmup), for loop
/// placement, group size `g` and `warmup` warmup forwards (combined_warmup()):
/// - warmup: the forwards of table entries 0 .. warmup-1;
/// - steady: for k = 0, 1, ...: one combined step, the forward of entry warmup+k and the
///   backward of entry k (entry (j, c) runs its backward on chunk V-1-c). `fused`: the
///   step is an op_kind::overlap_f_b word carrying the forward, then its B word (the
///   forward first, as in Megatron's order); else a plain F then its B (the split
///   reading, split_pairs() of the fused order);
/// - cooldown: the backwards left.
/// The same op sequence as interleaved_1f1b() with one more warmup forward per rank.
/// Linear in the ops; needs a spec check_spec() accepts.
template <class Out>
constexpr void combined_1f1b(const pipeline_shape& s, int r, int g, int warmup, Out&& out, bool fused = true) {
  const int total = s.m * s.V;
  const op_kind pair = fused ? op_kind::overlap_f_b : op_kind::F;
  interleaved_table forward{s.m, s.V, g};
  interleaved_table backward{s.m, s.V, g};
  for (int k = 0; k < warmup; ++k, forward.next()) {
    out(detail::make_op(op_kind::F, forward.chunk * s.P + r, forward.microbatch()));
  }
  for (int k = warmup; k < total; ++k, forward.next(), backward.next()) {
    out(detail::make_op(pair, forward.chunk * s.P + r, forward.microbatch()));
    out(detail::make_op(op_kind::B, (s.V - 1 - backward.chunk) * s.P + r, backward.microbatch()));
  }
  for (int k = total - warmup; k < total; ++k, backward.next()) {
    out(detail::make_op(op_kind::B, (s.V - 1 - backward.chunk) * s.P + r, backward.microbatch()));
  }
}

/// Where combined 1F1B's order and closed forms come from (closed_form::source).
inline constexpr const char* combined_source =
    "Megatron-LM get_pp_rank_microbatches (overlap_moe_expert_parallel_comm), get_schedule_table, "
    "convert_schedule_table_to_order; closed forms: ctpipe's proofs";

/// Warmup forwards of rank r: Megatron's `get_pp_rank_microbatches` with the overlap,
/// interleaved 1F1B's `2(P-1-r) + (V-1)g` plus one, cut at `mV`:
/// `min(mV, 2(P-1-r) + (V-1)g + 1)`. At P = 1 (V = 1) this is 1, the first forward that
/// Megatron's `combined_1f1b_schedule_for_no_pipelining` runs alone. Needs a valid spec.
constexpr int combined_warmup(const schedule_spec& s, int r) {
  const int P = s.shape.P, m = s.shape.m, V = s.shape.V;
  const int w = 2 * (P - 1 - r) + (V - 1) * group_size(s) + 1;
  return w < m * V ? w : m * V;
}

/// Combined 1F1B's peak in-flight chunks of rank r: its warmup plus the forward of its
/// first combined step (the pair counts as its forward, which comes first),
/// `min(mV, 2(P-1-r) + (V-1)g + 2)`: one more than interleaved 1F1B's on every rank
/// where that is below mV (P = 4, V = 2, m = 8, g = 4: 12 10 8 6 against 11 9 7 5; at
/// m = 4: 8 8 8 6 against 8 8 7 5). Any costs, any gamma (the
/// backwards are whole). Proved on a grid in tests/static/proofs_combined.cpp.
constexpr closed_form combined_peak_in_flight(const schedule_spec& s, rational, int r) {
  const int total = s.shape.m * s.shape.V;
  const int w = combined_warmup(s, r);
  return {true, rational{w < total ? w + 1 : total}, "min(mV, 2(P-1-r) + (V-1)g + 2)", combined_source,
          "any costs, any gamma"};
}

}  // namespace ctpipe::schedules

namespace ctpipe::detail {
/// Why combined 1F1B has no timing closed form under `s` and `c`, or nullptr when it has:
/// latency stalls the chunks' round trips; a fused pair with an overlap gain
/// (t_fb < t_f + t_b) or loss changes the steady step, while split pairs never read t_fb.
constexpr const char* combined_timing_exception(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return "needs t_c = 0 (with latency the chunks' round trips stall)";
  if (s.pairs == pair_model::fused && c.pair() != c.f + c.b) {
    return "needs t_fb = t_f + t_b with fused pairs (an overlap gain shortens the steady steps unevenly)";
  }
  return nullptr;
}
}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// Combined 1F1B's makespan: interleaved 1F1B's `(m+(P-1)/V)(t_f+t_b)`, under both pair
/// readings: fused at t_fb = t_f + t_b (a pair lasts its two halves; the extra warmup
/// forward makes both of its inputs arrive in time) and split. Needs t_c = 0. ctpipe's
/// proof (tests/static/proofs_combined.cpp), not Megatron's claim.
constexpr closed_form combined_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::combined_timing_exception(s, c)) return detail::no_formula(why);
  closed_form T = chunked_makespan(s, c);  // interleaved 1F1B's form, its own source and condition
  T.source = combined_source;
  T.condition = s.pairs == pair_model::fused ? "t_c = 0, t_fb = t_f + t_b" : "t_c = 0 (pairs split)";
  return T;
}

/// Combined 1F1B's bubble fraction where combined_makespan() holds: `(P-1)/(mV+P-1)`,
/// interleaved 1F1B's.
constexpr closed_form combined_bubble_fraction(const schedule_spec& s, const costs& c) {
  const closed_form T = combined_makespan(s, c);
  if (!T.holds) return T;
  const rational P{s.shape.P};
  return {true, (P - 1) / (rational{s.shape.m * s.shape.V} + P - 1), "(P-1)/(mV+P-1)", T.source, T.condition};
}

/// Combined 1F1B's span bubble: rank 0's idle, `(P-1)(t_f+t_b)/V`, where
/// combined_makespan() holds.
constexpr closed_form combined_span_bubble(const schedule_spec& s, const costs& c) {
  return detail::rank0_span_bubble(s, c, combined_makespan(s, c));
}

}  // namespace ctpipe::schedules
