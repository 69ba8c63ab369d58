// ctpipe/schedules/interleaved.hpp: interleaved 1F1B (Narayanan et al., SC 2021), as
// Megatron-LM and PyTorch run it.
#pragma once

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/one_f_one_b.hpp"  // V = 1: plain 1F1B

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

/// Where the closed forms of interleaved 1F1B and of looped BFS come from
/// (closed_form::source).
inline constexpr const char* interleaved_source =
    "Narayanan et al. (SC 2021); Megatron-LM get_pp_rank_microbatches; docs/spec.md §4";
inline constexpr const char* looped_source =
    "Lamy-Poirier, Breadth-First Pipeline Parallelism (2023); PyTorch ScheduleLoopedBFS";

}  // namespace ctpipe::schedules

namespace ctpipe::detail {
/// Why interleaved 1F1B and looped BFS have no timing closed form for `s` and `c`, or
/// nullptr when they do: latency stalls the chunks' round trips; with V > 1 and m < P
/// PyTorch's rounds (torch variant) and looped BFS never fill the pipe.
constexpr const char* chunked_timing_exception(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return "needs t_c = 0 (with latency the chunks' round trips stall)";
  if (s.shape.V > 1 && s.shape.m < s.shape.P) {
    if (s.family == schedule_family::looped_bfs) {
      return "needs m >= P (with m < P each chunk waits for micro-batch 0 to come round)";
    }
    if (s.variant == interleaved_variant::torch) {
      return "needs m >= P (with m < P PyTorch's rounds never reach a steady state)";
    }
  }
  return nullptr;
}
constexpr const char* chunked_source(const schedule_spec& s) {
  return s.family == schedule_family::looped_bfs ? schedules::looped_source : schedules::interleaved_source;
}
}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// Interleaved 1F1B's and looped BFS's makespan with t_c = 0: `(m+(P-1)/V)(t_f+t_b)`:
/// the fill and drain are made of chunk ops, 1/V as long (not for V > 1 with m < P under
/// the torch variant or looped BFS).
constexpr closed_form chunked_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::chunked_timing_exception(s, c)) return detail::no_formula(why);
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  return {true, (m + (P - 1) / rational{s.shape.V}) * (c.f + c.b), "(m+(P-1)/V)(t_f+t_b)", detail::chunked_source(s),
          "t_c = 0"};
}

/// Their bubble fraction with t_c = 0: the article's `(P-1)/(mV+P-1)`.
constexpr closed_form chunked_bubble_fraction(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::chunked_timing_exception(s, c)) return detail::no_formula(why);
  const rational P{s.shape.P};
  const rational m{s.shape.m};
  return {true, (P - 1) / (m * rational{s.shape.V} + P - 1), "(P-1)/(mV+P-1)", detail::chunked_source(s), "t_c = 0"};
}

/// Their span bubble: rank 0's idle, `(P-1)(t_f+t_b)/V`.
constexpr closed_form chunked_span_bubble(const schedule_spec& s, const costs& c) {
  return detail::rank0_span_bubble(s, c, chunked_makespan(s, c));
}

/// Interleaved 1F1B's peak in-flight chunks of rank r: its warmup plus one,
/// `min(mV, k(P-1-r) + (V-1)g + 1)` with warmup factor k (the torch variant at V = 1 too:
/// PyTorch keeps its 2(P-1-r) warmup with one stage per rank); `mV` for megatron-legacy
/// with m = P; 1F1B's `min(m, P-r)` with V = 1 under megatron and megatron-legacy.
constexpr closed_form interleaved_peak_in_flight(const schedule_spec& s, rational gamma, int r) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  const int V = s.shape.V;
  if (V == 1 && s.variant != interleaved_variant::torch) {
    closed_form plain = one_f_one_b_peak_in_flight(s, gamma, r);
    plain.condition = "V = 1 (plain 1F1B)";
    return plain;
  }
  if (s.variant == interleaved_variant::megatron_legacy && m == P) {
    return {true, rational{m * V}, "mV", interleaved_source, "megatron-legacy with m = P: all forwards first"};
  }
  const int k = s.warmup_factor;
  const int peak = k * (P - 1 - r) + (V - 1) * group_size(s) + 1;
  return {true, rational{peak < m * V ? peak : m * V},
          k == 2 ? "min(mV, 2(P-1-r) + (V-1)g + 1)" : "min(mV, (P-1-r) + (V-1)g + 1)", interleaved_source,
          "any costs, any gamma"};
}

/// Looped BFS's peak in-flight chunks: `mV` (every forward first).
constexpr closed_form looped_peak_in_flight(const schedule_spec& s, rational, int) {
  return {true, rational{s.shape.m * s.shape.V}, "mV", looped_source, "any costs, any gamma"};
}

}  // namespace ctpipe::schedules
