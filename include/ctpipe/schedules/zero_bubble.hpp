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
#include "ctpipe/schedules/closed_form.hpp"
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
/// Ops of micro-batches m .. n-1 are dropped (so m < 2P-1 stays complete and valid), and
/// the iterations that would only drop ops are skipped, their counters advanced at once:
/// the work stays linear in the ops written when m is much smaller than P.
template <class Out>
constexpr void zbv(const pipeline_shape& s, int r, Out&& out) {
  const int m = s.m, n = m > 2 * s.P - 1 ? m : 2 * s.P - 1;
  const int c0 = r;
  const int c1 = 2 * s.P - 1 - r;
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  auto emit = [&](op_kind k, int stage, int microbatch) {
    if (microbatch < m) out(detail::make_op(k, stage, microbatch));
  };
  // Of `count` iterations that advance counters x and y by one each, those that write
  // an op: while x < m or y < m.
  auto writing = [m](int count, int x, int y) {
    const int left = m - (x < y ? x : y);
    return left < 0 ? 0 : left < count ? left : count;
  };
  const int warmup = 2 * (s.P - r) - 1;
  for (int i = 0, k = writing(warmup, f0, f0); i < k; ++i) emit(op_kind::F, c0, f0++);
  f0 = warmup;
  for (int i = 0, k = writing(r, f0, f1), start0 = f0, start1 = f1; i < r; ++i) {
    if (i == k) {
      f0 = start0 + r, f1 = start1 + r;
      break;
    }
    emit(op_kind::F, c1, f1++);
    emit(op_kind::F, c0, f0++);
  }
  for (int i = 0, k = writing(s.P - r, f1, b1), start1 = f1, startb = b1; i < s.P - r; ++i) {
    if (i == k) {
      f1 = start1 + s.P - r, b1 = startb + s.P - r;
      break;
    }
    emit(op_kind::F, c1, f1++);
    emit(op_kind::I, c1, b1);
    emit(op_kind::W, c1, b1++);
  }
  while ((f1 < f0 || f0 < n) && (f0 < m || f1 < m || b0 < m || b1 < m)) {
    if (f0 < n) emit(op_kind::F, c0, f0++);
    emit(op_kind::I, c0, b0);
    emit(op_kind::W, c0, b0++);
    emit(op_kind::F, c1, f1++);
    emit(op_kind::I, c1, b1);
    emit(op_kind::W, c1, b1++);
  }
  if (b0 >= m && b1 >= m) return;  // every op of micro-batches below m is written
  int w0 = b0;
  int w1 = b1;
  for (int i = 0, k = writing(r, b0, b1), start0 = b0, start1 = b1; i < r; ++i) {
    if (i == k) {
      b0 = start0 + r, b1 = start1 + r;
      break;
    }
    emit(op_kind::I, c0, b0++);
    emit(op_kind::I, c1, b1++);
  }
  for (int i = 0; i < s.P - r && (b0 < m || w0 < m); ++i) {
    emit(op_kind::I, c0, b0++);
    emit(op_kind::W, c0, w0++);
  }
  while (w1 < b1 && w1 < m) emit(op_kind::W, c1, w1++);
  while (w0 < b0 && w0 < m) emit(op_kind::W, c0, w0++);
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

/// Where the Zero Bubble closed forms come from (closed_form::source).
inline constexpr const char* zb_source = "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024); docs/spec.md §4";

}  // namespace ctpipe::schedules

namespace ctpipe::detail {
/// Why the Zero Bubble family has no timing closed form for `s` and `c`, or nullptr.
/// ZB-H1: m >= P and t_w <= t_i. ZB-H2 makespan and ZB-V: m >= 2P-1 and t_f = t_i = t_w.
constexpr const char* zb_timing_exception(const schedule_spec& s, const costs& c) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  if (c.c != rational{0} && P > 1) return "needs t_c = 0";
  if (s.family == schedule_family::zb_h1) {
    if (m < P) return "needs m >= P (below it the steady state never forms)";
    // A W longer than the I or the F it shares a steady step with stretches the step.
    if (c.w > c.i || c.w > c.f) return "needs t_w <= t_i and t_w <= t_f (a longer W stretches every steady step)";
    return nullptr;
  }
  if (m < 2 * P - 1) return "needs m >= 2P-1 (below it the pipe never fills)";
  if (c.f != c.i || c.i != c.w) return "needs t_f = t_i = t_w (the handcrafted order assumes equal costs)";
  return nullptr;
}
/// Every rank of a Zero Bubble schedule is busy m(t_f+t_i+t_w): bubble = 1 - busy / T.
constexpr closed_form zb_bubble_fraction(const schedule_spec& s, const costs& c, const closed_form& T,
                                         const char* text) {
  if (!T.holds) return T;
  const rational busy = rational{s.shape.m} * (c.f + c.i + c.w);
  return {true, (T.value - busy) / T.value, text, T.source, T.condition};
}
}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// ZB-H1's makespan with m >= P and t_w <= min(t_i, t_f): `m(t_f+t_i+t_w) +
/// (P-1)(t_f+t_i-t_w)` (each rank idles `(P-1)(t_f+t_i-t_w)`: the W it moves into each
/// bubble shortens it). t_w <= t_i alone is not enough: with t_f < t_w <= t_i it is false
/// (P = 2, m = 2, (t_f, t_i, t_w) = (1, 2, 2): makespan 12, not 11).
constexpr closed_form zb_h1_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::zb_timing_exception(s, c)) return detail::no_formula(why);
  const rational P{s.shape.P};
  return {true, rational{s.shape.m} * (c.f + c.i + c.w) + (P - 1) * (c.f + c.i - c.w),
          "m(t_f+t_i+t_w) + (P-1)(t_f+t_i-t_w)", zb_source, "m >= P, t_w <= t_i, t_c = 0"};
}
/// ZB-H1's bubble fraction: `(P-1)(t_f+t_i-t_w) / T`.
constexpr closed_form zb_h1_bubble_fraction(const schedule_spec& s, const costs& c) {
  return detail::zb_bubble_fraction(s, c, zb_h1_makespan(s, c), "(P-1)(t_f+t_i-t_w) / T");
}
/// ZB-H1's span bubble: `(P-1)(t_f+t_i-t_w)`, where its makespan holds.
constexpr closed_form zb_h1_span_bubble(const schedule_spec& s, const costs& c) {
  const closed_form T = zb_h1_makespan(s, c);
  if (!T.holds) return T;
  return {true, rational{s.shape.P - 1} * (c.f + c.i - c.w), "(P-1)(t_f+t_i-t_w)", T.source, T.condition};
}
/// ZB-H1's peak in-flight activations of rank r (m >= P): `(P-r) + r*gamma` (the split
/// backward frees `1-gamma` at I: the W that waits keeps `gamma`).
constexpr closed_form zb_h1_peak_in_flight(const schedule_spec& s, rational gamma, int r) {
  const int P = s.shape.P;
  if (s.shape.m < P) return detail::no_formula("needs m >= P");
  return {true, rational{P - r} + rational{r} * gamma, "(P-r) + r*gamma", zb_source, "m >= P, any costs"};
}

/// ZB-H2's makespan with m >= 2P-1 and t_f = t_i = t_w: `m(t_f+t_i+t_w) + (P-1)t_f` (no
/// rank idles inside its span; the last rank starts `(P-1)t_f` late).
constexpr closed_form zb_h2_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::zb_timing_exception(s, c)) return detail::no_formula(why);
  const rational P{s.shape.P};
  return {true, rational{s.shape.m} * (c.f + c.i + c.w) + (P - 1) * c.f, "m(t_f+t_i+t_w) + (P-1)t_f", zb_source,
          "m >= 2P-1, t_f = t_i = t_w, t_c = 0"};
}
/// ZB-H2's bubble fraction: `(P-1)/(3m+P-1)`.
constexpr closed_form zb_h2_bubble_fraction(const schedule_spec& s, const costs& c) {
  return detail::zb_bubble_fraction(s, c, zb_h2_makespan(s, c), "(P-1)/(3m+P-1)");
}
/// ZB-H2's span bubble with m >= 2P-1 and min(t_i, t_w) <= t_f: `(P-1) max(0,
/// t_f+t_i-2t_w)` (t_c = 0). False with t_i and t_w both longer than t_f (P = 2, m = 3,
/// (1, 2, 2): span bubble 1, not 0).
constexpr closed_form zb_h2_span_bubble(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula("needs t_c = 0");
  if (s.shape.m < 2 * s.shape.P - 1) return detail::no_formula("needs m >= 2P-1 (below it the pipe never fills)");
  if (c.i > c.f && c.w > c.f) {
    return detail::no_formula("needs min(t_i, t_w) <= t_f (with both longer than t_f the warmup runs dry)");
  }
  const rational gap = c.f + c.i - rational{2} * c.w;
  return {true, rational{s.shape.P - 1} * max(rational{0}, gap), "(P-1) max(0, t_f+t_i-2t_w)", zb_source,
          "m >= 2P-1, min(t_i, t_w) <= t_f, t_c = 0"};
}
/// ZB-H2's peak in-flight activations (m >= 2P-1, gamma = 1): `2P-1`.
constexpr closed_form zb_h2_peak_in_flight(const schedule_spec& s, rational gamma, int) {
  if (s.shape.m < 2 * s.shape.P - 1) return detail::no_formula("needs m >= 2P-1");
  if (gamma != rational{1}) return detail::no_formula("needs gamma = 1 (the claimed form)");
  return {true, rational{2 * s.shape.P - 1}, "2P-1", zb_source, "m >= 2P-1, gamma = 1, any costs"};
}

/// ZB-V's makespan with m >= 2P-1 and t_f = t_i = t_w: `m(t_f+t_i+t_w) + (P-1)t_f/2`
/// (ZB-H2's with chunk forwards of half the length).
constexpr closed_form zbv_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::zb_timing_exception(s, c)) return detail::no_formula(why);
  const rational P{s.shape.P};
  return {true, rational{s.shape.m} * (c.f + c.i + c.w) + (P - 1) * c.f / rational{2}, "m(t_f+t_i+t_w) + (P-1)t_f/2",
          zb_source, "m >= 2P-1, t_f = t_i = t_w, t_c = 0"};
}
/// ZB-V's bubble fraction: `(P-1)/(6m+P-1)`.
constexpr closed_form zbv_bubble_fraction(const schedule_spec& s, const costs& c) {
  return detail::zb_bubble_fraction(s, c, zbv_makespan(s, c), "(P-1)/(6m+P-1)");
}
/// ZB-V's span bubble: 0, where its makespan holds.
constexpr closed_form zbv_span_bubble(const schedule_spec& s, const costs& c) {
  const closed_form T = zbv_makespan(s, c);
  if (!T.holds) return T;
  return {true, rational{0}, "0", T.source, T.condition};
}
/// ZB-V's peak in-flight chunks (m >= 2P-1, gamma = 1): `2P`.
constexpr closed_form zbv_peak_in_flight(const schedule_spec& s, rational gamma, int) {
  if (s.shape.m < 2 * s.shape.P - 1) return detail::no_formula("needs m >= 2P-1");
  if (gamma != rational{1}) return detail::no_formula("needs gamma = 1 (the claimed form)");
  return {true, rational{2 * s.shape.P}, "2P", zb_source, "m >= 2P-1, gamma = 1, any costs"};
}

/// Interleaved Zero Bubble: no closed form is claimed (its makespan and bubble fraction
/// name t_c first when there is latency, as the other Zero Bubble schedules do).
constexpr closed_form interleaved_zb_timing(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return detail::no_formula("needs t_c = 0");
  return detail::no_formula("none is claimed for interleaved-zb");
}
/// Its span bubble and peak in-flight activations: none claimed either.
constexpr closed_form interleaved_zb_span_bubble(const schedule_spec&, const costs&) {
  return detail::no_formula("none is claimed for interleaved-zb");
}
constexpr closed_form interleaved_zb_peak_in_flight(const schedule_spec&, rational, int) {
  return detail::no_formula("none is claimed for interleaved-zb");
}

}  // namespace ctpipe::schedules
