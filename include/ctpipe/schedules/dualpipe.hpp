// ctpipe/schedules/dualpipe.hpp: DualPipe and DualPipeV (DeepSeek), their generators
// and closed forms.
//
// Sources: deepseek-ai/DualPipe, `dualpipe/dualpipev.py`, `DualPipeV.step` (eight
// phases), and PyTorch's `ScheduleDualPipeV`, which issues the same order; and
// `dualpipe/dualpipe.py`, `DualPipe.step`, the same eight phases on half the ranks.
// - DualPipeV: ranks hold two chunks on the V-shape: chunk 0 is stage r, chunk 1 stage
//   2P-1-r (a chunk is half a rank's layers, so an op costs t_x / 2, as every chunked op
//   does).
// - DualPipe: two copies of the model on the bidirectional placement (core/shape.hpp):
//   chunk 0 of rank r is stage r of the "down" pipeline (micro-batches 0..m/2-1, fed at
//   rank 0), chunk 1 stage 2P-1-r, the up pipeline's stage P-1-r (micro-batches
//   m/2..m-1, fed at rank P-1). Each chunk is a whole stage of its copy: an op costs
//   t_x. Rank r runs DualPipeV's phases with P/2 ranks, m/2 micro-batches and
//   half_rank = min(r, P-1-r) in place of P, m and r; DeepSeek's "phase" p is chunk
//   p ^ (r >= P/2) (`phase ^= self.is_in_second_half`), and its first pair is not
//   overlapped on the two middle ranks (`is_middle_rank`), as DualPipeV's on the last.
//
// Overlapped pairs: DeepSeek issues some forward and backward as one overlapped call,
// `_forward_backward_chunk` (PyTorch's `(F;B)OVERLAP_F_B`). The generator writes each as
// an op_kind::overlap_f_b word and its B word, the forward first, as PyTorch's vector
// does. split_pairs() gives the split reading (each half its own op).
//
// Backwards: a backward with DeepSeek's `enable_zb` is an I whose W is queued and run
// first in, first out by a later `_weight_chunk` (WeightGradStore); the others are full
// B. Per rank r that makes 2P-1-r W ops (see dualpipev_ops_of_rank).
#pragma once

#include <cstddef>  // std::size_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe::detail {
/// A rank's generator state for DualPipeV and DualPipe, per DeepSeek "phase" p (0 or 1):
/// its stage, the next forward and backward micro-batch, and the queue of W ops
/// (DeepSeek's WeightGradStore), first in, first out.
template <class Out>
struct dualpipev_rank {
  int stage[2];
  Out& out;
  int next_f[2] = {0, 0}, next_b[2] = {0, 0};
  buffer<op> queued_w;
  std::size_t w_head = 0, w_tail = 0;
  bool fused = true;  // write a pair as an overlap_f_b word (else as a plain F)

  /// DualPipeV: phase c is chunk c (stages r and 2P-1-r), micro-batches from 0.
  /// DualPipe (`dual`): phase p is chunk p ^ (r >= P/2), and chunk 1's micro-batches
  /// (the up pipeline's) start at m/2.
  constexpr dualpipev_rank(const pipeline_shape& s, int r, Out& o, bool fuse, bool dual = false)
      : stage{r, 2 * s.P - 1 - r}, out(o), queued_w(2 * static_cast<std::size_t>(s.m + s.P)), fused(fuse) {
    if (!dual) return;
    if (2 * r >= s.P) stage[0] = 2 * s.P - 1 - r, stage[1] = r;
    for (int p = 0; p < 2; ++p) next_f[p] = next_b[p] = stage[p] >= s.P ? s.m / 2 : 0;
  }

  /// `_forward_chunk(c)`: F of chunk c's next micro-batch (the communication flags are
  /// dual_phases()' record of DeepSeek's calls: a compute order ignores them).
  constexpr void forward(int c, bool = true, bool = true) { out(make_op(op_kind::F, stage[c], next_f[c]++)); }
  /// `_backward_chunk(c, enable_zb)`: an I with its W queued, or a full B.
  constexpr void backward(int c, bool zero_bubble, bool = true, bool = true) {
    const int j = next_b[c]++;
    if (!zero_bubble) {
      out(make_op(op_kind::B, stage[c], j));
      return;
    }
    out(make_op(op_kind::I, stage[c], j));
    queued_w[w_tail++] = make_op(op_kind::W, stage[c], j);
  }
  /// `_weight_chunk()`: the oldest queued W. The queue holds room for every W a rank's
  /// phases call for at any m (2P-1-r of them), so a shape below DualPipeV's rule writes
  /// wrong ops but reads nothing out of bounds (the rule refuses it first).
  constexpr void weight() { out(queued_w[w_head++]); }
  /// `_forward_backward_chunk(f, b)`: the overlapped pair, its word (the forward of
  /// chunk f) then the full B of chunk b (file comment).
  constexpr void pair(int f, int b, bool = true) {
    out(make_op(fused ? op_kind::overlap_f_b : op_kind::F, stage[f], next_f[f]++));
    backward(b, false);
  }
  /// DeepSeek's explicit `_recv_forward`, `_send_forward`, `_send_backward` and the last
  /// `_commit_and_wait_comm`: nothing in a compute order (lower/deepseek.hpp writes them).
  constexpr void recv_forward(int) {}
  constexpr void send_forward(int) {}
  constexpr void send_backward(int) {}
  constexpr void commit() {}
};

/// Steps 1 to 3 of DeepSeek's `DualPipeV.step()` (its warm-up) for `P` ranks (or
/// half-ranks) and (half-)rank `r`, written through rank state `g`, with DeepSeek's
/// communication calls as they stand in `step()`: the `recv`/`send` flags of
/// `_forward_chunk`, `_backward_chunk` and `_forward_backward_chunk` (`recv0`), and its
/// explicit `_recv_forward`, `_send_forward`, `_send_backward` calls (dual_phases()).
template <class Rank>
constexpr void dual_warmup(int P, int r, Rank& g) {
  const bool last = r == P - 1;
  // Step 1: nF0.
  for (int i = 0; i < 2 * (P - r - 1); ++i) g.forward(0);
  // Step 2: nF0F1; chunk 0's forward sends after chunk 1's, but at once on the last
  // (half-)rank: DualPipe's middle ranks send it across the middle (`send=
  // is_middle_rank`); DualPipeV's last rank has nothing to send (its turn stays local).
  g.recv_forward(0);
  for (int i = 0; i < r + 1; ++i) {
    g.forward(0, false, last);
    g.recv_forward(0);
    g.forward(1, true, !last || i < r);
    if (!last) g.send_forward(0);
  }
  // Step 3: nB1W1F1, chunk 1's next input received before the W.
  for (int i = 0; i < P - r - 1; ++i) g.backward(1, true), g.recv_forward(1), g.weight(), g.forward(1, false);
}

/// Iteration `i` of step 4 of `DualPipeV.step()` (nF0B1F1B0, its steady state, run
/// m-2P+r+1 times): pair (F chunk 0; B chunk 1), pair (F chunk 1; B chunk 0); on the
/// last (half-)rank the first (F 0; B 1) is not overlapped (dual_phases()).
template <class Rank>
constexpr void dual_steady(int P, int r, int i, Rank& g) {
  if (i == 0 && r == P - 1) {
    g.forward(0, false, false), g.send_forward(1), g.backward(1, false, true, false), g.send_forward(0),
        g.send_backward(1);
  } else {
    g.pair(0, 1, i != 0);
  }
  g.pair(1, 0);
}

/// Steps 5 to 8 of `DualPipeV.step()` (its cool-down), as dual_warmup().
template <class Rank>
constexpr void dual_cooldown(int P, int r, Rank& g) {
  // Step 5: nB1F1B0.
  for (int i = 0; i < P - r - 1; ++i) g.backward(1, false), g.pair(1, 0);
  // Step 6: nB1B0, the second half with zero bubble.
  bool zero_bubble = false;
  for (int i = 0; i < r + 1; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1) zero_bubble = true;
    g.backward(1, zero_bubble);
    if (i == (r + 1) / 2 && r % 2 == 0) zero_bubble = true;
    g.backward(0, zero_bubble);
  }
  // Step 7: nWB0; step 8: nW; the last communication batch.
  for (int i = 0; i < P - r - 1; ++i) g.weight(), g.backward(0, true);
  for (int i = 0; i < r + 1; ++i) g.weight();
  g.commit();
}

/// The eight phases of DeepSeek's `DualPipeV.step()` for `P` ranks (or half-ranks), `m`
/// micro-batches per direction and (half-)rank `r`, written through rank state `g`
/// (schedules::dualpipev() lists them): dual_warmup(), m-2P+r+1 iterations of
/// dual_steady(), dual_cooldown(), with DeepSeek's communication calls. One
/// transcription for the compute order (dualpipev_rank ignores the communication),
/// DeepSeek's lowering (lower/deepseek.hpp) and the periodic program
/// (schedules/program.hpp).
template <class Rank>
constexpr void dual_phases(int P, int m, int r, Rank& g) {
  dual_warmup(P, r, g);
  for (int i = 0; i < m - 2 * P + r + 1; ++i) dual_steady(P, r, i, g);
  dual_cooldown(P, r, g);
}

}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// DualPipeV's ops of rank r (shape: P ranks, V = 2 on the V-shape, m >= 2P, or m >= 2P-1
/// at the structural minimum: schedule_spec::structural_minimum), in
/// DeepSeek's `DualPipeV.step` order, its eight phases:
/// 1. `2(P-1-r)` forwards of chunk 0;
/// 2. `r+1` times: forward chunk 0, forward chunk 1;
/// 3. `P-1-r` times: I of chunk 1, the oldest W, forward chunk 1;
/// 4. `m-2P+r+1` times: pair (F chunk 0; B chunk 1), pair (F chunk 1; B chunk 0) (the last
///    rank's first (F chunk 0; B chunk 1) is not overlapped: two plain ops, as DeepSeek
///    issues them "to further reduce bubble size");
/// 5. `P-1-r` times: B chunk 1, pair (F chunk 1; B chunk 0);
/// 6. `r+1` times: backward chunk 1, backward chunk 0, each an I (W queued) from the middle
///    iteration `(r+1)/2` on (for even r, from that iteration's chunk 0 on), else a B;
/// 7. `P-1-r` times: the oldest W, I of chunk 0;
/// 8. `r+1` times: the oldest W.
/// Calls `out(op)` per op; writes dualpipev_ops_of_rank(s, r) ops. Needs a valid shape.
/// `fused`: a pair as an op_kind::overlap_f_b word and its B (else a plain F and its B).
template <class Out>
constexpr void dualpipev(const pipeline_shape& s, int r, Out&& out, bool fused = true) {
  ctpipe::detail::dualpipev_rank<Out> g(s, r, out, fused);
  ctpipe::detail::dual_phases(s.P, s.m, r, g);
}

/// DualPipe's ops of rank r (shape: P even ranks, m even, V = 2 on the bidirectional
/// placement, m >= 2P, or m >= 2P-2 at the structural minimum), in DeepSeek's
/// `DualPipe.step` order: DualPipeV's eight phases (dualpipev()) with P/2, m/2 and
/// half_rank = min(r, P-1-r) for P, m and r, phase p on chunk p ^ (r >= P/2) (file
/// comment). Writes dualpipe_ops_of_rank(s, r) ops. Needs a valid shape.
template <class Out>
constexpr void dualpipe(const pipeline_shape& s, int r, Out&& out, bool fused = true) {
  ctpipe::detail::dualpipev_rank<Out> g(s, r, out, fused, true);
  ctpipe::detail::dual_phases(s.P / 2, s.m / 2, r < s.P - 1 - r ? r : s.P - 1 - r, g);
}

/// Op words of DualPipeV's rank r: 2m forwards (F or a pair's word), 2m backwards (B or
/// I), and a W per I: `2(P-1-r)` in phases 3 and 7 and `r+1` in phase 6, so
/// `4m + 2P - 1 - r` in all.
constexpr std::size_t dualpipev_ops_of_rank(const schedule_spec& s, int r) {
  return static_cast<std::size_t>(4 * s.shape.m + 2 * s.shape.P - 1 - r);
}

/// Op words of DualPipe's rank r: DualPipeV's count with P/2, m/2 and half_rank
/// h = min(r, P-1-r): `2m + P - 1 - h`.
constexpr std::size_t dualpipe_ops_of_rank(const schedule_spec& s, int r) {
  const int h = r < s.shape.P - 1 - r ? r : s.shape.P - 1 - r;
  return static_cast<std::size_t>(2 * s.shape.m + s.shape.P - 1 - h);
}

/// DualPipe's peak in-flight chunks of rank r, gamma = 1 (a chunk is a whole stage of
/// its copy: one full activation): `P + 1` for m >= 2P, DeepSeek's "PP+1" (README of
/// deepseek-ai/DualPipe, "Activation Per Device"); at the structural minimum m = 2P-2
/// the two outer ranks hold one less, `P`. Proved on a grid in
/// tests/static/proofs_dualpipe.cpp.
constexpr closed_form dualpipe_peak_in_flight(const schedule_spec& s, rational gamma, int r) {
  if (gamma != rational{1}) return ctpipe::detail::no_formula("needs gamma = 1 (the claimed form)");
  const int P = s.shape.P;
  if (s.shape.m >= 2 * P) {
    return {true, rational{P + 1}, "P+1", "DeepSeek DualPipe README (DualPipe)", "m >= 2P, gamma = 1, any costs"};
  }
  const bool outer = r == 0 || r == P - 1;
  return {true, rational{outer ? P : P + 1}, outer ? "P (ranks 0 and P-1 at m = 2P-2)" : "P+1",
          "DeepSeek DualPipe README (DualPipe); the outer ranks at the structural minimum: ctpipe",
          "m = 2P-2 (structural minimum), gamma = 1, any costs"};
}

/// DualPipeV's peak in-flight chunks of rank r, gamma = 1: `2P + 1` on every rank for
/// m >= 2P, DeepSeek's "PP+1" with PP = 2P pipeline stages (README of
/// deepseek-ai/DualPipe, "Activation Per Device", in chunks: one chunk is half a rank's
/// layers); at the structural minimum m = 2P-1, rank 0 holds one less, `2P`. Proved on a
/// grid in tests/static/proofs_dualpipe.cpp.
constexpr closed_form dualpipev_peak_in_flight(const schedule_spec& s, rational gamma, int r) {
  if (gamma != rational{1}) return ctpipe::detail::no_formula("needs gamma = 1 (the claimed form)");
  const int P = s.shape.P;
  if (s.shape.m >= 2 * P) {
    return {true, rational{2 * P + 1}, "2P+1", "DeepSeek DualPipe README (DualPipeV)", "m >= 2P, gamma = 1, any costs"};
  }
  return {true, rational{r == 0 ? 2 * P : 2 * P + 1}, r == 0 ? "2P (rank 0 at m = 2P-1)" : "2P+1",
          "DeepSeek DualPipe README (DualPipeV); rank 0 at the structural minimum: ctpipe",
          "m = 2P-1 (structural minimum), gamma = 1, any costs"};
}

}  // namespace ctpipe::schedules

namespace ctpipe::detail {
/// Where DeepSeek's idle formulas are exact (ctpipe's proof, tests/static/proofs_dualpipe.cpp):
/// t_i = t_f, t_w <= t_f, t_b = t_i + t_w, the pair fused at t_fb = t_f + t_b (no
/// overlap gain), t_c = 0. Else the reason, for no_formula().
constexpr const char* dual_idle_exception(const costs& c) {
  if (c.c != rational{0}) return "needs t_c = 0";
  if (c.i != c.f || c.w > c.f || c.b != c.i + c.w) return "needs t_i = t_f, t_w <= t_f and t_b = t_i + t_w";
  if (c.pair() != c.f + c.b) return "needs t_fb = t_f + t_b (the fused pair without overlap gain)";
  return nullptr;
}

/// DeepSeek's idle per rank, `k (F&B + B - 3W)` with the op costs of one chunk (F&B the
/// pair, B the full backward, W the weight backward): k = P-1 for DualPipeV (a chunk
/// half a rank's layers), P/2-1 for DualPipe (a chunk a whole stage). The same on every
/// rank, in the range of dual_idle_exception().
constexpr rational dual_idle(const schedule_spec& s, const costs& c) {
  const int chunks = s.shape.cost_chunks();
  const int k = s.family == schedule_family::dualpipe ? s.shape.P / 2 - 1 : s.shape.P - 1;
  return rational{k} * ((c.pair() + c.b - rational{3} * c.w) / chunks);
}
}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// DualPipeV's and DualPipe's makespan: every rank is busy m(t_f + t_b) and idles
/// DeepSeek's `(P-1)(F&B + B - 3W)` (DualPipeV, F, B, W = t_x / 2) or
/// `(P/2-1)(F&B + B - 3W)` (DualPipe, F, B, W = t_x) (README of deepseek-ai/DualPipe,
/// "Pipeline Bubbles"), so T = m(t_f + t_b) + that idle. Exact, by ctpipe's proof on a
/// grid, for t_i = t_f, t_w <= t_f, t_b = t_i + t_w, t_fb = t_f + t_b and t_c = 0, by
/// DeepSeek's rule and at the structural minimum; outside (t_w > t_f, t_i != t_f, an
/// overlap gain) no closed form is claimed: at t_f = 1, t_i = 2, t_w = 1 the formula
/// is one too high for DualPipe at P = 4, m = 8; nor with the pairs read split
/// (schedule_spec::pairs).
constexpr closed_form dual_makespan(const schedule_spec& s, const costs& c) {
  if (s.pairs != pair_model::fused)
    return ctpipe::detail::no_formula("the pairs are read split: DeepSeek's idle is for fused pairs");
  if (const char* why = ctpipe::detail::dual_idle_exception(c)) return ctpipe::detail::no_formula(why);
  const bool v = s.family == schedule_family::dualpipev;
  return {true, rational{s.shape.m} * (c.f + c.b) + ctpipe::detail::dual_idle(s, c),
          v ? "m(t_f+t_b) + (P-1)(F&B+B-3W), F, B, W = t_x/2" : "m(t_f+t_b) + (P/2-1)(F&B+B-3W), F, B, W = t_x",
          "DeepSeek DualPipe README (bubble per rank); range: ctpipe's proof",
          "t_i = t_f, t_w <= t_f, t_b = t_i + t_w, t_fb = t_f + t_b, t_c = 0"};
}

/// DualPipeV's and DualPipe's bubble fraction: the idle per rank over the makespan
/// (every rank idles the same), where dual_makespan() holds.
constexpr closed_form dual_bubble_fraction(const schedule_spec& s, const costs& c) {
  const closed_form T = dual_makespan(s, c);
  if (!T.holds) return T;  // the idle is computed only where the formula holds
  return ctpipe::detail::idle_fraction(
      T, ctpipe::detail::dual_idle(s, c),
      s.family == schedule_family::dualpipev ? "(P-1)(F&B+B-3W) / T" : "(P/2-1)(F&B+B-3W) / T");
}

/// DualPipeV's and DualPipe's span bubble: no closed form (the ranks start at different
/// times; simulate() gives it).
constexpr closed_form dual_span_bubble(const schedule_spec&, const costs&) {
  return ctpipe::detail::no_formula("none claimed (simulate() gives it)");
}

}  // namespace ctpipe::schedules
