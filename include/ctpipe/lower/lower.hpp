// ctpipe/lower/lower.hpp: adds the point-to-point transfers to a compute schedule, in
// the order a given runtime model (ctpipe/lower/runtime.hpp) runs without loss.
//
// Two orders (docs/spec.md §7.2 argues each):
//
// - Adjacent order, for `blocking` (and the first step of `posted`'s): each rank's own compute ops in their
//   order, the RECV of each input from another rank right before the op that consumes
//   it, the SEND of each output that crosses ranks right after the op that produces it.
//   A SEND is posted at its producer's end, so its message is at the receiver at that
//   end + t_c: exactly when simulate() lets the consumer start. A RECV is reached no
//   later than its consumer's simulated start and returns by then. So every compute op
//   runs at its simulated time, for every cost set: zero loss. The order does not depend
//   on the costs. Under `rendezvous` it can deadlock (two ranks each sending first).
//
// - Posted order, for `posted`: the adjacent order, then each rank's RECVs from one peer
//   moved earlier where needed into the order in which that peer sends them (each as
//   late as that allows). PyTorch's runtime posts an irecv at a RECV and gloo (like
//   NCCL) pairs a rank pair's messages in posting order, with no tag: where a rank holds
//   several chunks (ZB-V, interleaved, the V-shapes) the adjacent order can receive one
//   peer's messages in another order than it sends them, and each would land in another
//   micro-batch's buffer. Under `posted` a RECV only posts, so the move changes no time:
//   zero loss as the adjacent order, and the messages between two ranks come in one
//   order on both sides.
//
// - Key order, for `rendezvous` and `batched`: simulate the schedule under the given
//   costs; each compute op is an event at its start tick, each message one event (its
//   SEND and its RECV) at its producer's end tick; every rank's list is its events sorted
//   by tick, and within a tick messages whose producer took time come first (by their
//   producers' positions in the flat op array, as before costs were taken into account),
//   then compute ops and the messages of zero-time producers in a dependency order (the
//   walk's, needed only when an op that sends can take no time: a backward or pair of cost
//   0, or a stage or micro-batch of factor 0). Why
//   it cannot deadlock: take the events in that global order; when an event's turn
//   comes, every earlier one has run, so a compute op is at the head of its rank's list
//   with its inputs received, and both ends of a message are at the heads of their lists
//   (under `batched`, both groups are posted). The order of the messages between any two
//   ranks is the same on both sides, so first-in first-out pairing matches them. With
//   equal op costs, t_c = 0 and no fused pair (which lasts two ops) every rank is between
//   ops at every message's tick, so nothing waits: zero loss. Elsewhere a rendezvous can hold a sender until its
//   receiver ends the op it is in; docs/runtimes.md tabulates the loss.
//
// - Stream order, for the stream models: the key order, then each RECV moved up to just
//   after the previous transfer op of its own stream (the model's channel policy), or to
//   the front of its rank's list. The streams keep the key order's order, so nothing can
//   deadlock that did not before, and a RECV issued earlier only lets its stream's head
//   be reached sooner: never slower than the key order. Where each stream's consecutive
//   messages are produced at least t_c apart in the simulation (stream_spacing()), every
//   message arrives at its producer's end + t_c: zero loss (docs/spec.md §7.2 gives the
//   induction). Linear: one pass over each rank's list.
//
// Cost: adjacent order, one pass over the ops; key order, one simulation and a counting
// sort over ticks (linear in the ops; the makespan in ticks is at most 4 per op there),
// or, when the costs' denominators make the ticks finer than that, a comparison sort
// (n log n).
#pragma once

#include <algorithm>  // std::sort (key order with costs of fine denominators)
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint32_t
#include <span>       // rank lists

#include "ctpipe/analysis/communication.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/analysis/walk.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/lower/transfer.hpp"
#include "ctpipe/schedules/generate.hpp"

namespace ctpipe {

namespace detail {

/// lower()'s gate: a valid compute schedule (the costs are checked by the caller).
/// Returns its number of overlapped pairs.
constexpr std::size_t check_lowerable(schedule_view v) {
  check_view(v);
  std::size_t pairs = 0, issues = 0;
  validate_counting_pairs(
      v, [&issues](const validation_issue&) { ++issues; }, &pairs);
  require(issues == 0, "ctpipe: lower() takes a valid compute schedule (validate() names the problems)");
  return pairs;
}

/// Keeps each overlapped pair whole in lowered lists `out`: the transfers that the
/// per-op orders put between a pair's word and its B word move out, the RECVs before
/// the word (in their order), the SENDs after the B. The pair starts when both its
/// inputs are there and both its outputs exist when it ends, so this loses nothing and,
/// as the SENDs only move later and the RECVs earlier within one rank's run of ops that
/// start together, keeps the orders' guarantees. Linear; called only when `out` holds
/// pairs.
constexpr void keep_pairs_whole(schedule& out) {
  std::span<op> ops = out.ops();
  const std::span<std::uint32_t> off = out.offsets();
  buffer<op> sends(ops.size());
  for (std::size_t r = 0; r + 1 < off.size(); ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      if (ops[k].kind() != op_kind::overlap_f_b) continue;
      std::uint32_t b = k + 1;  // the pair's B word: the next compute op (lower()'s input is valid)
      while (is_transfer(ops[b].kind())) ++b;
      if (b == k + 1) continue;
      const op word = ops[k], backward = ops[b];
      std::uint32_t w = k, n_sends = 0;
      for (std::uint32_t x = k + 1; x < b; ++x) {
        if (is_send(ops[x].kind())) {
          sends[n_sends++] = ops[x];
        } else {
          ops[w++] = ops[x];
        }
      }
      ops[w++] = word, ops[w++] = backward;
      for (std::uint32_t x = 0; x < n_sends; ++x) ops[w++] = sends[x];
      k = b;  // the segment k..b keeps its length
    }
  }
}

/// The adjacent order (file comment): per rank, each compute op with the RECV of its
/// remote input right before it and the SEND of its remote output right after it.
/// `pairs`: the overlapped pairs of `v` (check_lowerable()).
constexpr schedule lower_adjacent(schedule_view v, std::size_t pairs) {
  const stage_table table(v.shape);
  const std::uint32_t uS = table.S, none = table.none;
  const std::uint32_t* sends = table.sends.data();
  const std::uint32_t* channel = table.channel.data();  // a compute op's input is remote when its channel is not `none`
  const std::size_t n = v.size();
  const op* ops = v.ops.data();
  // Per-op values outside the loops, assigned in one expression (core/engine.hpp).
  std::uint32_t bits = 0, row = 0, extra = 0;
  for (std::size_t k = 0; k < n; ++k)
    bits = ops[k].bits, row = (bits >> 28) * uS + ((bits >> 16) & 0xFFFu),
    extra += sends[row] + (channel[row] != none ? 1 : 0);
  schedule out{v.shape, n + extra};
  op* lowered = out.ops().data();
  std::uint32_t* offsets = out.offsets().data();
  const std::uint32_t* off = v.offsets.data();
  // RECV_F / SEND_F for an F (kind 0) or a pair's word (8), RECV_B / SEND_B for a B or
  // I: kind codes 5 and 4, or 7 and 6; a transfer keeps the stage and micro-batch of the
  // op it serves.
  std::uint32_t w = 0, gradient = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      bits = ops[k].bits, row = (bits >> 28) * uS + ((bits >> 16) & 0xFFFu),
      gradient = ((bits >> 28) & 7u) != 0 ? 1u : 0u;
      if (channel[row] != none) lowered[w++].bits = ((5 + 2 * gradient) << 28) | (bits & 0x0FFFFFFFu);
      lowered[w++].bits = bits;
      if (sends[row] != 0) lowered[w++].bits = ((4 + 2 * gradient) << 28) | (bits & 0x0FFFFFFFu);
    }
    offsets[r + 1] = w;
  }
  if (pairs != 0) keep_pairs_whole(out);
  return out;
}

/// The posted order's last step (file comment): in adjacent-order lists `out`, each
/// rank's RECVs from one peer move earlier where needed, into the order in which that
/// peer sends them, each as late as that order allows (right before the next receive
/// from the same peer that stays in place). Nothing else moves, and a moved RECV lands
/// before another RECV, never inside an overlapped pair. Linear in the ops plus
/// 2 * P*V * m (a table indexed by message_tag()).
constexpr void receive_in_send_order(schedule& out) {
  const schedule_view v = out.view();
  const pipeline_shape& shape = v.shape;
  const std::size_t n = v.size(), P = static_cast<std::size_t>(shape.P);
  const std::span<const std::uint32_t> off = v.offsets;
  buffer<std::uint32_t> recv_at(2 * static_cast<std::size_t>(shape.stages()) * static_cast<std::size_t>(shape.m));
  buffer<std::uint32_t> first(P + 1);  // receiver r's bucket: [first[r], first[r + 1]) of `incoming`
  for (std::size_t r = 0; r < P; ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      if (is_transfer(v.ops[k].kind()) && !is_send(v.ops[k].kind())) {
        recv_at[static_cast<std::size_t>(message_tag(shape, v.ops[k]))] = k, ++first[r + 1];
      }
    }
    first[r + 1] += first[r];
  }
  // Every receiver's RECV positions, by sender (ascending) and in each sender's order.
  buffer<std::uint32_t> incoming(first[P]), fill(P);
  for (std::size_t r = 0; r < P; ++r) fill[r] = first[r];
  for (std::uint32_t k = 0; k < n; ++k) {
    if (is_send(v.ops[k].kind())) {
      incoming[fill[static_cast<std::size_t>(peer_rank(shape, v.ops[k]))]++] =
          recv_at[static_cast<std::size_t>(message_tag(shape, v.ops[k]))];
    }
  }
  // Per sender's run, from its last receive back: a RECV stays when it comes before every
  // later one of the run that stays, else it moves; a RECV that stays takes the moved
  // ones of its run since the previous one that stays ([from[k], self[k]) of `incoming`).
  buffer<std::uint8_t> moved(n);
  buffer<std::uint32_t> from(n), self(n);
  for (std::size_t r = 0; r < P; ++r) {
    for (std::uint32_t end = first[r + 1], begin = end; end > first[r]; end = begin) {
      const int sender = peer_rank(shape, v.ops[incoming[end - 1]]);
      while (begin > first[r] && peer_rank(shape, v.ops[incoming[begin - 1]]) == sender) --begin;
      std::uint32_t slot = static_cast<std::uint32_t>(n);
      for (std::uint32_t t = end; t-- > begin;) {
        if (incoming[t] < slot) {
          slot = incoming[t];
        } else {
          moved[incoming[t]] = 1;
        }
      }
      for (std::uint32_t t = begin, run = begin; t < end; ++t) {
        if (moved[incoming[t]] == 0) from[incoming[t]] = run, self[incoming[t]] = t, run = t + 1;
      }
    }
  }
  buffer<op> result(n);
  std::size_t w = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    const op o = v.ops[k];
    if (is_transfer(o.kind()) && !is_send(o.kind())) {
      if (moved[k] != 0) continue;
      for (std::uint32_t t = from[k]; t < self[k]; ++t) result[w++] = v.ops[incoming[t]];
    }
    result[w++] = o;
  }
  const std::span<op> ops = out.ops();
  for (std::size_t k = 0; k < n; ++k) ops[k] = result[k];
}

/// One event of the key order with its sort key: bucket (2 * tick, + 1 for compute ops
/// and zero-time producers' messages), then insertion order.
struct keyed_event {
  std::int64_t bucket = 0;
  std::uint32_t sequence = 0;
  std::uint32_t event = 0;
};

/// Whether some op that sends can take no time under `c` scaled by `scale`: a backward
/// or an overlapped pair of cost 0, or any op of a stage or micro-batch of factor 0 (an
/// empty stage of a Megatron layout).
constexpr bool some_sender_takes_no_time(const costs& c, const cost_scale& scale) {
  if (c.b == rational{0} || c.i == rational{0} || c.pair() == rational{0}) return true;
  for (const rational x : scale.stage) {
    if (x == rational{0}) return true;
  }
  for (const rational x : scale.microbatch) {
    if (x == rational{0}) return true;
  }
  return false;
}

/// A dependency order of `v`'s ops, for the key order's ties inside a tick (file
/// comment): the walk's when an op that sends can take no time under `c` and `scale`
/// (its message and its consumer may share its tick), else the flat order (a tick's
/// bucket then holds compute ops only, each rank's in its order).
constexpr buffer<std::uint32_t> tie_order(schedule_view v, const costs& c, const cost_scale& scale) {
  const std::size_t n = v.size();
  buffer<std::uint32_t> walk_order_b(n);
  std::uint32_t* walk_order = walk_order_b.data();
  if (some_sender_takes_no_time(c, scale)) {
    std::uint32_t seen = 0;
    dependency_walk walk(v);
    walk.run([&](std::uint32_t, std::uint32_t k, std::uint32_t, std::uint32_t, std::int64_t,
                 std::int64_t) { return walk_order[seen++] = k, std::int64_t{1}; },
             [&](std::uint32_t, std::uint32_t k, auto...) {  // a pair: its word, then its B word
               return walk_order[seen++] = k, walk_order[seen++] = k + 1, std::int64_t{1};
             });
  } else {
    for (std::uint32_t q = 0; q < n; ++q) walk_order[q] = q;
  }
  return walk_order_b;
}

/// The events of the key order, sorted: event 2k is the message of op k, 2k+1 op k
/// itself. `sends` is stage_table's, `walk_order` tie_order()'s.
constexpr buffer<std::uint32_t> key_sorted_events(schedule_view v, const simulation& sim, const std::uint32_t* sends,
                                                  const std::uint32_t* walk_order) {
  const std::uint32_t uS = static_cast<std::uint32_t>(v.shape.stages());
  const std::size_t n = v.size();
  const op* ops = v.ops.data();
  // Sort of the events: bucket 2t holds the messages of producers that end at tick t
  // after taking time, bucket 2t+1 the compute ops starting at t and the messages of
  // zero-time producers ending at t, in walk order. Event e = 2k (message of op k) or
  // 2k+1 (op k itself). A counting sort over the buckets when the makespan in ticks is
  // within a few times the op count (every generated schedule at simple costs); else,
  // with costs of fine denominators, a comparison sort of (bucket, insertion order).
  std::uint32_t bits = 0, sent = 0, k = 0;
  std::size_t events = n;
  for (std::size_t q = 0; q < n; ++q) events += sends[(ops[q].bits >> 28) * uS + ((ops[q].bits >> 16) & 0xFFFu)];
  buffer<std::uint32_t> order_b(events);
  std::uint32_t* order = order_b.data();
  if (sim.makespan_ticks() <= 4 * static_cast<std::int64_t>(n) + 64) {
    const std::size_t buckets = 2 * static_cast<std::size_t>(sim.makespan_ticks()) + 2;
    buffer<std::uint32_t> first_b(buckets + 1), start_b(n), end_b(n);
    std::uint32_t* first = first_b.data();
    std::uint32_t* start = start_b.data();
    std::uint32_t* end = end_b.data();
    for (std::size_t q = 0; q < n; ++q) {
      start[q] = static_cast<std::uint32_t>(sim.start_ticks(q)), end[q] = static_cast<std::uint32_t>(sim.end_ticks(q));
    }
    for (std::size_t q = 0; q < n; ++q) {
      bits = ops[q].bits, sent = sends[(bits >> 28) * uS + ((bits >> 16) & 0xFFFu)];
      ++first[2 * start[q] + 2];
      first[2 * end[q] + (end[q] > start[q] ? 1 : 2)] += sent;
    }
    for (std::size_t b = 1; b <= buckets; ++b) first[b] += first[b - 1];
    for (std::size_t q = 0; q < n; ++q) {
      k = walk_order[q], bits = ops[k].bits, sent = sends[(bits >> 28) * uS + ((bits >> 16) & 0xFFFu)];
      order[first[2 * start[k] + 1]++] = 2 * k + 1;
      if (sent != 0) order[first[2 * end[k] + (end[k] > start[k] ? 0 : 1)]++] = 2 * k;
    }
  } else {
    buffer<keyed_event> keyed(events);
    std::size_t e = 0;
    for (std::uint32_t q = 0; q < n; ++q) {
      k = walk_order[q], bits = ops[k].bits, sent = sends[(bits >> 28) * uS + ((bits >> 16) & 0xFFFu)];
      const std::int64_t start = sim.start_ticks(k), end = sim.end_ticks(k);
      keyed[e++] = keyed_event{2 * start + 1, 2 * q, 2 * k + 1};
      if (sent != 0) keyed[e++] = keyed_event{2 * end + (end > start ? 0 : 1), 2 * q + 1, 2 * k};
    }
    std::sort(keyed.data(), keyed.data() + events, [](const keyed_event& x, const keyed_event& y) {
      return x.bucket != y.bucket ? x.bucket < y.bucket : x.sequence < y.sequence;
    });
    for (std::size_t i = 0; i < events; ++i) order[i] = keyed[i].event;
  }

  return order_b;
}

/// The key order (file comment), from the simulation of `v` under `c` (scaled by
/// `scale`). `pairs`: the overlapped pairs of `v` (check_lowerable()).
constexpr schedule lower_by_key(schedule_view v, const costs& c, std::size_t pairs, const cost_scale& scale) {
  simulation sim;  // if-assigned: GCC's constant evaluation mishandles `uniform ? simulate(..) : simulate(..)`
  if (scale.uniform()) sim = simulate(v, c);
  if (!scale.uniform()) sim = simulate(v, c, scale);
  const stage_table table(v.shape);
  const std::uint32_t uS = table.S;
  const std::uint32_t* sends = table.sends.data();
  const std::uint32_t* peer = table.peer.data();
  const std::uint32_t* owner = table.owner.data();
  const std::size_t n = v.size();
  // The per-event loops decode the ops with a pair's word read as its F (kind 0: the
  // same table rows, and "not a gradient"), so they pay nothing for pairs; a compute
  // op's event writes the op itself (`own`).
  schedule plain;
  if (pairs != 0) plain = split_pairs(v);
  const op* ops = pairs != 0 ? plain.view().ops.data() : v.ops.data();
  const op* own = v.ops.data();

  const buffer<std::uint32_t> walk_order = tie_order(v, c, scale);
  const buffer<std::uint32_t> order_b = key_sorted_events(v, sim, sends, walk_order.data());
  const std::uint32_t* order = order_b.data();
  const std::size_t events = order_b.size();
  std::uint32_t bits = 0, k = 0, kind = 0, s = 0, j = 0, rank = 0, gradient = 0, producer = 0;

  // Per-rank sizes: compute ops, plus one SEND per message sent, one RECV per received.
  const int P = v.shape.P;
  schedule out{v.shape, events + (events - n)};
  std::uint32_t* offsets = out.offsets().data();
  for (int r = 0; r < P; ++r)
    offsets[r + 1] = v.offsets[static_cast<std::size_t>(r) + 1] - v.offsets[static_cast<std::size_t>(r)];
  for (std::size_t q = 0; q < n; ++q) {
    bits = ops[q].bits, k = (bits >> 28) * uS + ((bits >> 16) & 0xFFFu);
    if (sends[k] != 0) ++offsets[peer[k] + 1];
    offsets[owner[(bits >> 16) & 0xFFFu] + 1] += sends[k];
  }
  buffer<std::uint32_t> cursor_b(static_cast<std::size_t>(P));
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
      lowered[cursor[rank]++] = own[producer];
      continue;
    }
    lowered[cursor[rank]++] = make_op(static_cast<op_kind>(4 + 2 * gradient), static_cast<int>(s), static_cast<int>(j));
    lowered[cursor[peer[kind * uS + s]]++] = make_op(
        static_cast<op_kind>(5 + 2 * gradient), static_cast<int>(gradient != 0 ? s - 1 : s + 1), static_cast<int>(j));
  }
  if (pairs != 0) keep_pairs_whole(out);
  return out;
}

/// The stream order's last step (file comment): in key-order lists `out`, each RECV
/// moves up to just after the previous transfer op of its own stream under stream model
/// `model` (stream_index()), or, when it is its stream's first, to the front of its
/// rank's list (after the RECVs moved there before it). Every stream keeps its order, so
/// the two ends of each stream pair as before; a RECV lands after a transfer op or at
/// the front, never inside an overlapped pair (keep_pairs_whole() leaves no transfer
/// there). Linear in the ops.
constexpr void receive_at_stream_turn(schedule& out, runtime_model model) {
  const std::span<op> ops = out.ops();
  const std::span<std::uint32_t> off = out.offsets();
  const pipeline_shape shape = out.view().shape;
  // Per rank, a doubly linked list over its positions: node 0 is the front, node x the
  // rank's x-th op (from 1), node count + 1 the end.
  buffer<std::uint32_t> next(ops.size() + 2), prev(ops.size() + 2);
  buffer<op> moved(ops.size());
  for (int r = 0; r < shape.P; ++r) {
    const std::uint32_t first = off[static_cast<std::size_t>(r)];
    const std::uint32_t count = off[static_cast<std::size_t>(r) + 1] - first, end = count + 1;
    for (std::uint32_t x = 0; x <= end; ++x) next[x] = x + 1, prev[x] = x - 1;
    std::uint32_t last_in_stream[streams_per_rank] = {0, 0, 0, 0}, front_last = 0;
    for (std::uint32_t x = 1; x <= count; ++x) {
      const op o = ops[first + x - 1];
      const op_kind k = o.kind();
      if (!is_transfer(k)) continue;
      const int local = stream_index(model, r, peer_rank(shape, o), is_send(k),
                                     k == op_kind::send_f || k == op_kind::recv_f, shape.P) -
                        streams_per_rank * r;
      std::uint32_t anchor = last_in_stream[local];
      last_in_stream[local] = x;
      if (is_send(k)) continue;
      if (anchor == 0) anchor = front_last, front_last = x;
      if (prev[x] == anchor) continue;
      next[prev[x]] = next[x], prev[next[x]] = prev[x];  // unlink x, then link it after the anchor
      next[x] = next[anchor], prev[next[anchor]] = x, next[anchor] = x, prev[x] = anchor;
    }
    std::uint32_t w = first;
    for (std::uint32_t x = next[0]; x != end; x = next[x]) moved[w++] = ops[first + x - 1];
    for (std::uint32_t q = first; q < first + count; ++q) ops[q] = moved[q];
  }
}

}  // namespace detail

/// The lowered form of compute schedule `v` for runtime model `model` under costs `c`:
/// every rank's compute ops in their order, with a SEND_F / SEND_B after each op whose
/// output crosses to another rank and the matching RECV_F / RECV_B on the receiving rank
/// before the op that consumes it, ordered so that the model runs it as the file comment
/// and docs/spec.md §7.2 say:
/// - `blocking`, `posted`: execute(lower(v, c, model), c, model) has the makespan and
///   every op time of simulate(v, c), for every cost set (zero loss); the order does not
///   depend on `c`. Under `posted` the messages between two ranks also come in the same
///   order on both (peer_order_consistent(): runtimes that post receives and pair them
///   in order, PyTorch's with gloo or NCCL).
/// - `rendezvous`, `batched`: never deadlocks under its model, and the messages between
///   two ranks come in the same order on both; zero loss under `rendezvous` with equal op
///   costs, t_c = 0 and no fused overlapped pair (a fused pair lasts two ops' time, so a
///   receiver can be inside one: combined-1f1b, P = 6, m = 6, V = 2, t_f = t_b = 1 runs
///   35/2 under rendezvous against 17 simulated).
/// - the stream models (`stream-rank`, `stream-peer`, `stream-direction`, `stream-edge`):
///   the key order of `rendezvous` with each RECV moved up to just after the previous
///   transfer of its own stream (the stream order, file comment): never deadlocks under
///   its model, never slower than the key order, each stream pairs in one order on both
///   ends (stream_order_consistent()), and zero loss (every op at simulate(v, c)'s
///   time) wherever stream_spacing(v, c, model) holds, always at t_c = 0. It runs under
///   `posted` too; a blocking RECV may wait ahead of its rank's sends there.
/// Shapes: the result has the same shape as `v` and `v.size() + 2 * messages(v)` ops,
/// CSR like every schedule. Neighbouring stages on one rank (the V-shape turn, P = 1)
/// get no message. Source of the op names and stage convention: PyTorch's
/// `_add_send_recv`.
///
/// Errors: check_view(), check_costs() and check_runtime_model() messages; `ctpipe: lower() takes a valid
/// compute schedule (validate() names the problems)` when validate(v) finds any issue
/// (a lowered input included); rational overflow when the simulated times do not fit.
/// Linear in the number of ops (plus the makespan in ticks for the key order); usable in
/// constant expressions.
constexpr schedule lower(schedule_view v, const costs& c, runtime_model model) {
  const std::size_t pairs = detail::check_lowerable(v);
  check_costs(c);
  check_runtime_model(model);
  if (model == runtime_model::blocking) return detail::lower_adjacent(v, pairs);
  if (model == runtime_model::posted) {
    schedule out = detail::lower_adjacent(v, pairs);
    detail::receive_in_send_order(out);
    return out;
  }
  schedule out = detail::lower_by_key(v, c, pairs, cost_scale{});
  if (is_stream_model(model)) detail::receive_at_stream_turn(out, model);
  return out;
}

/// lower(v, c, model) under costs scaled per stage and per micro-batch by `scale`
/// (cost_scale, docs/spec.md §2.2): the rendezvous and batched orders follow the scaled
/// simulation; blocking and posted do not depend on the costs, and keep their zero loss
/// (execute(lower(v, c, model, scale), c, model, scale) has simulate(v, c, scale)'s
/// times). Errors: lower(v, c, model)'s and the check_scale() messages.
constexpr schedule lower(schedule_view v, const costs& c, runtime_model model, const cost_scale& scale) {
  const std::size_t pairs = detail::check_lowerable(v);
  check_scale(scale, v.shape);
  check_costs(c);
  check_runtime_model(model);
  if (model == runtime_model::blocking) return detail::lower_adjacent(v, pairs);
  if (model == runtime_model::posted) {
    schedule out = detail::lower_adjacent(v, pairs);
    detail::receive_in_send_order(out);
    return out;
  }
  schedule out = detail::lower_by_key(v, c, pairs, scale);
  if (is_stream_model(model)) detail::receive_at_stream_turn(out, model);
  return out;
}

/// lower(v, costs{}, runtime_model::blocking): the order for a runtime whose sends
/// return at once, zero loss for every cost set. A runtime whose sends block until the
/// receive is posted (MPI_Ssend) needs lower(v, c, runtime_model::rendezvous).
constexpr schedule lower(schedule_view v) { return lower(v, costs{}, runtime_model::blocking); }

/// The compute ops of `v` (a lowered schedule, or any schedule), in their order: the
/// transfer ops and activation copies dropped. Same shape; CSR. Raises check_view()'s
/// messages. Linear.
constexpr schedule compute_part(schedule_view v) {
  check_view(v);
  std::size_t n = 0;
  for (const op o : v.ops)
    n += (o.bits >> 28) - 4u < 4u || (o.bits >> 28) - 9u < 2u ? 0
                                                              : 1;  // not SEND/RECV (4..7), SEND_ACT/RECV_ACT (9, 10)
  schedule out{v.shape, n};
  std::span<op> ops = out.ops();
  std::span<std::uint32_t> offsets = out.offsets();
  std::size_t w = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    for (const op o : v.rank(r)) {
      if ((o.bits >> 28) - 4u >= 4u && (o.bits >> 28) - 9u >= 2u) ops[w++] = o;
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

/// Op count of lower(generate(s)) (whatever the model), after s's gate.
constexpr std::size_t lowered_size(const schedule_spec& s) {
  const schedule compute = generate(s);
  return compute.size() + 2 * messages(compute.view());
}

/// Writes lower(generate(s), C, M) into `ops` and `offsets` (sized by lowered_size(s),
/// P+1).
template <costs C, runtime_model M>
constexpr void fill_lowered(const schedule_spec& s, op* ops, std::uint32_t* offsets) {
  const schedule l = lower(generate(s).view(), C, M);
  const schedule_view lv = l.view();
  const op* from = lv.ops.data();
  for (std::size_t k = 0, n = lv.size(); k < n; ++k) ops[k] = from[k];
  for (int r = 0; r <= s.shape.P; ++r) offsets[r] = lv.offsets[static_cast<std::size_t>(r)];
}

}  // namespace detail

/// Schedule `S` lowered for runtime model `M` under costs `C` and frozen at compile
/// time: `lower(generate(S), C, M)` as a frozen_schedule in static storage
/// (`total_ops(S) + 2 * messages` ops). `lowered_v<S>.rank(r)` is rank r's
/// executable list (compute and transfer ops) for a runtime whose sends return at once;
/// `lowered_v<S, C, runtime_model::rendezvous>` for MPI_Ssend-style sends. A runtime
/// walks it with no allocation or lookup. An invalid `S` is a compile error showing the
/// check_spec() message; invalid `C` shows check_costs()'s.
template <schedule_spec S, costs C = costs{}, runtime_model M = runtime_model::blocking>
inline constexpr auto lowered_v = detail::freeze<S, detail::lowered_size, detail::fill_lowered<C, M>>();

}  // namespace ctpipe
