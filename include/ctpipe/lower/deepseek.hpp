// ctpipe/lower/deepseek.hpp: DualPipeV and DualPipe lowered as DeepSeek's runtime issues
// them, every communication batch in place (deepseek-ai/DualPipe, `dualpipe/dualpipev.py`,
// `DualPipeV.step`, and `dualpipe/dualpipe.py`, `DualPipe.step`).
//
// DeepSeek's runtime keeps a list of pending sends and receives. `_recv_forward` and
// `_recv_backward` append a receive, `_send_forward` and `_send_backward` a send (of the
// oldest output of that chunk not sent yet); before every compute call
// (`_forward_chunk`, `_backward_chunk`, `_forward_backward_chunk`, `_weight_chunk`) and
// once at the end, `_commit_and_wait_comm` posts the whole list as one
// `batch_isend_irecv` and waits for it. So:
// - a compute op's sends join the next batch, before that batch's receives (they were
//   appended first);
// - some receives come one op early: the explicit `_recv_forward` before `_weight_chunk`
//   (step 3) and before `_forward_chunk(recv=False)` (step 2);
// - some sends are deferred: `send=False`, then `_send_forward` after a later op (step 2,
//   and the last rank's first steady step; DualPipe's middle ranks send at once in step
//   2, and defer in their first steady step as DualPipeV's last rank does);
// - a pair receives both inputs in the batch before it and sends both outputs after it.
// The phases are schedules::dualpipev's (detail::dual_phases), the one transcription of
// `step()`; this file supplies the communication. In ctpipe's lowered form a batch is a
// maximal run of transfer ops (for_each_batch()), which is exactly one DeepSeek batch:
// a batch is only posted before a compute op, and nothing is appended between two
// posts without a compute op in between.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/schedules/dualpipe.hpp"
#include "ctpipe/schedules/family.hpp"

namespace ctpipe {

namespace detail {

/// A rank of DualPipeV or DualPipe as DeepSeek's runtime runs it: dual_phases()' calls,
/// each compute call posting the pending transfers first (`commit`), each transfer kept
/// pending until then. Chunk c is stage `stage[c]`; per chunk the next micro-batch to
/// receive or send in each direction (from the chunk's first micro-batch: m/2 for
/// DualPipe's up pipeline).
template <class Out>
struct deepseek_rank {
  dualpipev_rank<Out> compute;  // the compute ops and the W queue
  Out& out;
  pipeline_shape shape;
  int r;
  int recv_f[2] = {0, 0}, send_f[2] = {0, 0}, recv_b[2] = {0, 0}, send_b[2] = {0, 0};
  op pending[8] = {};  // at most two sends and two receives wait for a batch
  int n_pending = 0;

  constexpr deepseek_rank(const pipeline_shape& s, int rank, Out& o, bool fused, bool dual)
      : compute(s, rank, o, fused, dual), out(o), shape(s), r(rank) {
    for (int c = 0; c < 2; ++c) recv_f[c] = send_f[c] = recv_b[c] = send_b[c] = compute.next_f[c];
  }

  /// `_commit_and_wait_comm`: the pending transfers, in the order they were appended.
  constexpr void commit() {
    for (int k = 0; k < n_pending; ++k) out(pending[k]);
    n_pending = 0;
  }
  constexpr void append(op_kind k, int c, int& next) { pending[n_pending++] = make_op(k, compute.stage[c], next++); }

  // The transfers, skipped where DeepSeek skips them: where the stage before (a forward's
  // input, a backward's output) or after (a forward's output, a backward's input) is
  // none or on this rank: the ends of each pipeline, and DualPipeV's turn on the last
  // rank (DualPipe's two pipelines meet on the outer ranks, the same rule).
  constexpr bool before_here(int c) const { return compute.stage[c] == 0 || shape.rank_of(compute.stage[c] - 1) == r; }
  constexpr bool after_here(int c) const {
    return compute.stage[c] == 2 * shape.P - 1 || shape.rank_of(compute.stage[c] + 1) == r;
  }
  constexpr void recv_forward(int c) {
    if (!before_here(c)) append(op_kind::recv_f, c, recv_f[c]);
  }
  constexpr void send_forward(int c) {
    if (!after_here(c)) append(op_kind::send_f, c, send_f[c]);
  }
  constexpr void recv_backward(int c) {
    if (!after_here(c)) append(op_kind::recv_b, c, recv_b[c]);
  }
  constexpr void send_backward(int c) {
    if (!before_here(c)) append(op_kind::send_b, c, send_b[c]);
  }

  constexpr void forward(int c, bool recv = true, bool send = true) {
    if (recv) recv_forward(c);
    commit();
    compute.forward(c);
    if (send) send_forward(c);
  }
  constexpr void backward(int c, bool zero_bubble, bool recv = true, bool send = true) {
    if (recv) recv_backward(c);
    commit();
    compute.backward(c, zero_bubble);
    if (send) send_backward(c);
  }
  constexpr void pair(int f, int b, bool recv_f0 = true) {
    if (recv_f0) recv_forward(f);
    recv_backward(b);
    commit();
    compute.pair(f, b);
    send_forward(f);
    send_backward(b);
  }
  constexpr void weight() {
    commit();
    compute.weight();
  }
};

/// Writes rank r's DeepSeek-lowered list through `out`: DualPipeV's phases, or
/// DualPipe's (the same phases on P/2 half-ranks, half-rank min(r, P-1-r), m/2).
template <class Out>
constexpr void deepseek_lowered_rank(const schedule_spec& s, int r, Out&& out) {
  const bool dual = s.family == schedule_family::dualpipe;
  deepseek_rank<Out> g(s.shape, r, out, s.pairs == pair_model::fused, dual);
  if (dual) {
    dual_phases(s.shape.P / 2, s.shape.m / 2, r < s.shape.P - 1 - r ? r : s.shape.P - 1 - r, g);
  } else {
    dual_phases(s.shape.P, s.shape.m, r, g);
  }
}

}  // namespace detail

/// DualPipeV or DualPipe `s` lowered as DeepSeek's runtime issues it (file comment):
/// rank r's list is its compute ops in `DualPipeV.step` / `DualPipe.step` order with,
/// before each compute op, the batch DeepSeek posts there (sends first, then receives,
/// as appended), and a last batch at the end. Transfers use PyTorch's names and stage
/// convention (docs/spec.md §6; a transfer of chunk c's k-th output or input carries
/// the k-th micro-batch of that chunk's pipeline). Same shape as generate(s); CSR. It
/// runs to completion under runtime_model::batched with tagless first-in first-out
/// pairing (tests/runtime/vectors_test.cpp), and DualPipeV's equals DeepSeek's own
/// sequence token for token (tests/data/vectors/deepseek/dualpipev_P2_m4_lowered.txt).
///
/// Errors: check_spec()'s messages; `ctpipe: lower_deepseek() reproduces DeepSeek's
/// step() (dualpipev, dualpipe); lower() lowers every family` for another family.
/// Linear in the number of ops.
constexpr schedule lower_deepseek(const schedule_spec& s) {
  check_spec(s);
  detail::require(
      s.family == schedule_family::dualpipev || s.family == schedule_family::dualpipe,
      "ctpipe: lower_deepseek() reproduces DeepSeek's step() (dualpipev, dualpipe); lower() lowers every family");
  std::size_t total = 0;
  for (int r = 0; r < s.shape.P; ++r) detail::deepseek_lowered_rank(s, r, [&total](op) { ++total; });
  schedule out{s.shape, total};
  op* ops = out.ops().data();
  std::uint32_t* offsets = out.offsets().data();
  std::size_t w = 0;
  for (int r = 0; r < s.shape.P; ++r) {
    detail::deepseek_lowered_rank(s, r, [&](op o) { ops[w++] = o; });
    offsets[r + 1] = static_cast<std::uint32_t>(w);
  }
  return out;
}

}  // namespace ctpipe
