// ctpipe/lower/lower.hpp: adds the point-to-point transfers to a compute schedule, in an
// order that runs to completion whether a send blocks until its receive is posted
// (rendezvous) or returns at once (buffered).
//
// Algorithm. Simulate the compute schedule with every op costing one tick and no
// latency (any positive costs would do). Give each compute op the key (start tick, 1)
// and each message the key (end tick of the op that produces it, 0), ties among
// messages broken by the producer's position; then every rank's lowered list is its
// compute ops, its sends and its receives sorted by key. Each SEND follows its producer
// with no compute op between them (receives of the same tick may be: the producer
// starts a tick before the message's key, the rank's next compute op no earlier than
// it), each RECV comes before its consumer (which starts no earlier than the producer
// ends).
//
// Why it cannot deadlock: take the events (compute ops, and messages as one event for
// their SEND and RECV) in increasing key order. When an event's turn comes, every
// smaller key has run, so a compute op is at the head of its rank's list with its
// inputs received, and a message's SEND and RECV are both at the heads of their ranks'
// lists: the rendezvous happens. Buffered sends only allow more. The same key order
// also makes the order of the messages between any two ranks the same on both sides,
// so a batched call (for_each_batch) sees its peers in a consistent order.
//
// Cost: one simulation and a counting sort over ticks: linear in the number of ops
// (the makespan of a unit-cost schedule is at most its op count).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <span>     // rank lists

#include "ctpipe/analysis/communication.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/transfer.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe {

/// The lowered form of compute schedule `v`: every rank's compute ops in their order,
/// with a SEND after each op whose output crosses to another rank (no compute op
/// between them; receives may be) and the matching RECV on the receiving rank placed
/// before the op that consumes it (see the
/// file comment for the order and why it cannot deadlock). Shapes: the result has the
/// same shape as `v` and `v.size() + 2 * messages(v)` ops, CSR like every schedule.
/// Neighbouring stages on one rank (the V-shape turn, P = 1) get no message.
/// Source of the op names and stage convention: PyTorch's `_add_send_recv`.
///
/// Errors: check_view()'s messages; `ctpipe: lower() takes a valid compute schedule
/// (validate() names the problems)` when validate(v) finds any issue (a lowered input
/// included). Linear in the number of ops; usable in constant expressions.
constexpr schedule lower(schedule_view v) {
  check_view(v);
  detail::require(validate(v).ok(), "ctpipe: lower() takes a valid compute schedule (validate() names the problems)");
  const simulation sim = simulate(v, costs{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}});
  const pipeline_shape& shape = v.shape;
  const std::size_t n = v.size();
  const op* ops = v.ops.data();

  // sends[kind * S + s]: 1 when an op of that kind on stage s sends a message (F up,
  // B/I down across ranks); peer[kind * S + s]: the rank receiving it; owner[s]: the
  // rank of stage s. The per-op loops
  // below decode ops by hand and read these tables: Clang charges a constant
  // evaluation per statement (docs/compile-time.md).
  const int S = shape.stages();
  const std::uint32_t uS = static_cast<std::uint32_t>(S);
  detail::buffer<std::uint32_t> sends_b(4 * static_cast<std::size_t>(S)), peer_b(4 * static_cast<std::size_t>(S)),
      owner_b(static_cast<std::size_t>(S));
  for (int st = 0; st < S; ++st) {
    const std::size_t i = static_cast<std::size_t>(st);
    owner_b[i] = static_cast<std::uint32_t>(shape.rank_of(st));
    sends_b[i] = st + 1 < S && shape.rank_of(st + 1) != shape.rank_of(st) ? 1 : 0;
    sends_b[uS + i] = sends_b[2 * uS + i] = st > 0 && shape.rank_of(st - 1) != shape.rank_of(st) ? 1 : 0;
    peer_b[i] = static_cast<std::uint32_t>(shape.rank_of(st + 1 < S ? st + 1 : st));
    peer_b[uS + i] = peer_b[2 * uS + i] = static_cast<std::uint32_t>(shape.rank_of(st > 0 ? st - 1 : st));
  }
  const std::uint32_t* sends = sends_b.data();
  const std::uint32_t* peer = peer_b.data();
  const std::uint32_t* owner = owner_b.data();

  // Per-op values live outside the loops and are assigned in one expression: Clang
  // keeps each local declared in a loop body in a map node, per op.
  std::uint32_t bits = 0, sent = 0, row = 0, producer = 0, kind = 0, s = 0, j = 0, rank = 0, gradient = 0;

  // Counting sort of the events by key: bucket 2t holds the messages sent at tick t,
  // bucket 2t+1 the compute ops starting at tick t. Event e = 2k (message of op k) or
  // 2k+1 (op k itself).
  const std::size_t buckets = 2 * static_cast<std::size_t>(sim.makespan_ticks()) + 2;
  detail::buffer<std::uint32_t> first_b(buckets + 1), start_b(n), end_b(n);
  std::uint32_t* first = first_b.data();
  std::uint32_t* start = start_b.data();  // start tick of op k
  std::uint32_t* end = end_b.data();      // end tick of op k: when its message leaves
  std::size_t events = n;
  for (std::size_t k = 0; k < n; ++k) {
    start[k] = static_cast<std::uint32_t>(sim.start_ticks(k));
    end[k] = static_cast<std::uint32_t>(sim.end_ticks(k));
  }
  for (std::size_t k = 0; k < n; ++k) {
    bits = ops[k].bits, sent = sends[(bits >> 28) * uS + ((bits >> 16) & 0xFFFu)];
    events += sent;
    ++first[2 * start[k] + 2];
    first[2 * end[k] + 1] += sent;
  }
  for (std::size_t b = 1; b <= buckets; ++b) first[b] += first[b - 1];
  detail::buffer<std::uint32_t> order_b(events);
  std::uint32_t* order = order_b.data();
  for (std::size_t k = 0; k < n; ++k) {
    bits = ops[k].bits, sent = sends[(bits >> 28) * uS + ((bits >> 16) & 0xFFFu)];
    order[first[2 * start[k] + 1]++] = static_cast<std::uint32_t>(2 * k + 1);
    if (sent != 0) order[first[2 * end[k]]++] = static_cast<std::uint32_t>(2 * k);
  }

  // Per-rank sizes: compute ops, plus one SEND per message sent, one RECV per received.
  const int P = shape.P;
  schedule out{shape, events + (events - n)};
  std::uint32_t* offsets = out.offsets().data();
  for (int r = 0; r < P; ++r) offsets[r + 1] = v.offsets[static_cast<std::size_t>(r) + 1] - v.offsets[static_cast<std::size_t>(r)];
  for (std::size_t k = 0; k < n; ++k) {
    bits = ops[k].bits, row = (bits >> 28) * uS + ((bits >> 16) & 0xFFFu);
    if (sends[row] != 0) ++offsets[peer[row] + 1];
    offsets[owner[(bits >> 16) & 0xFFFu] + 1] += sends[row];
  }
  detail::buffer<std::uint32_t> cursor_b(static_cast<std::size_t>(P));
  std::uint32_t* cursor = cursor_b.data();
  for (int r = 0; r < P; ++r) {
    offsets[r + 1] += offsets[r];
    cursor[r] = offsets[r];
  }
  // Emit in key order. A message event writes SEND on the producer's rank and RECV on
  // the peer: kind codes 4 + 2*(kind != F) and 5 + 2*(kind != F), the RECV's stage one
  // up (activation) or one down (gradient).
  op* lowered = out.ops().data();
  for (std::size_t e = 0; e < events; ++e) {
    producer = order[e] / 2, bits = ops[producer].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu,
    j = bits & 0xFFFFu, rank = owner[s], gradient = kind != 0 ? 1u : 0u;
    if (order[e] % 2 == 1) {
      lowered[cursor[rank]++] = ops[producer];
      continue;
    }
    lowered[cursor[rank]++] = detail::make_op(static_cast<op_kind>(4 + 2 * gradient), static_cast<int>(s), static_cast<int>(j));
    lowered[cursor[peer[kind * uS + s]]++] =
        detail::make_op(static_cast<op_kind>(5 + 2 * gradient), static_cast<int>(gradient != 0 ? s - 1 : s + 1), static_cast<int>(j));
  }
  return out;
}

/// The compute ops of `v` (a lowered schedule, or any schedule), in their order: the
/// transfer ops dropped. Same shape; CSR. Raises check_view()'s messages. Linear.
constexpr schedule compute_part(schedule_view v) {
  check_view(v);
  std::size_t n = 0;
  for (const op o : v.ops) n += is_transfer(o.kind()) ? 0 : 1;
  schedule out{v.shape, n};
  std::span<op> ops = out.ops();
  std::span<std::uint32_t> offsets = out.offsets();
  std::size_t w = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    for (const op o : v.rank(r)) {
      if (!is_transfer(o.kind())) ops[w++] = o;
    }
    offsets[static_cast<std::size_t>(r) + 1] = static_cast<std::uint32_t>(w);
  }
  return out;
}

/// Calls `f(first, last)` for each batch of rank list `rank_ops`: a maximal run
/// `rank_ops[first .. last)` of consecutive transfer ops, which a runtime may post as
/// one batched call (PyTorch's `batch_isend_irecv`, MPI_Isend/MPI_Irecv + MPI_Waitall).
/// On a schedule from lower(), the messages a batch exchanges with any one peer rank
/// come in the same order on both ranks. Linear in the list's length.
template <class F>
constexpr void for_each_batch(std::span<const op> rank_ops, F&& f) {
  const std::size_t n = rank_ops.size();
  std::size_t k = 0;
  while (k < n) {
    if (!is_transfer(rank_ops[k].kind())) {
      ++k;
      continue;
    }
    const std::size_t first = k;
    while (k < n && is_transfer(rank_ops[k].kind())) ++k;
    f(first, k);
  }
}

namespace detail {

/// Op count of lower(generate(s)), after s's gate.
constexpr std::size_t lowered_size(const schedule_spec& s) {
  const schedule compute = generate(s);
  return compute.size() + 2 * messages(compute.view());
}

/// Writes lower(generate(s)) into `ops` and `offsets` (sized by lowered_size(s), P+1).
constexpr void fill_lowered(const schedule_spec& s, op* ops, std::uint32_t* offsets) {
  const schedule l = lower(generate(s).view());
  const schedule_view lv = l.view();
  const op* from = lv.ops.data();
  for (std::size_t k = 0, n = lv.size(); k < n; ++k) ops[k] = from[k];
  for (int r = 0; r <= s.shape.P; ++r) offsets[r] = lv.offsets[static_cast<std::size_t>(r)];
}

}  // namespace detail

/// Schedule `S` lowered and frozen at compile time: `lower(generate(S))` as a
/// frozen_schedule in static storage (`P * ops_per_rank(S) + 2 * messages` ops).
/// `lowered_v<S>.rank(r)` is rank r's executable list (compute and transfer ops), which
/// a runtime walks with no allocation or lookup. An invalid `S` is a compile error
/// showing the check_spec() message.
template <schedule_spec S>
inline constexpr auto lowered_v = detail::freeze<S, detail::lowered_size, detail::fill_lowered>();

}  // namespace ctpipe
