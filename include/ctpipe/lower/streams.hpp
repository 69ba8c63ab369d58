// ctpipe/lower/streams.hpp: what an order of the transfers can achieve under the stream
// models (ctpipe/lower/runtime.hpp), against simulate()'s timeline.
//
// - stream_spacing(): the condition under which lower()'s stream order loses nothing.
// - stream_loss_bound(): a loss that no order of the transfers avoids. Whatever the
//   order, a stream runs its transfers one at a time, each for t_c; a message cannot
//   start before its producer ends, and no op ends before simulate() ends it (the
//   simulation is the least solution of the constraints every execution also meets). So
//   for two messages a and b on one stream (e_a <= e_b, their producers' simulated
//   ends), the one the stream takes second completes at least max(e_second, e_first +
//   t_c) + t_c, and the step lasts at least that plus the longest path from its
//   consumer's start to the end of the simulated graph (its "tail"). The smaller of the
//   two orders' values, over every two messages that follow each other on a stream less
//   than t_c apart, minus simulate()'s makespan, is a lower bound on the loss of any
//   lists with the same compute order. Where lower()'s loss equals it, the stream order
//   is the best there is.
//
// Cost: one pass over the messages, one simulation, a sort of the messages by stream and
// production time, one backward pass over the op graph, and at most 32^2 steps per
// message: n log n, so stream_loss_bound() and lower_by_deadline() are run-time functions
// (stream_spacing(), linear, is constexpr).
#pragma once

#include <algorithm>  // std::sort
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint32_t, std::int64_t

#include "ctpipe/analysis/graph.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/lower/transfer.hpp"

namespace ctpipe {

namespace detail {

/// Calls f(k, forward, s, to, consumer) for every message of `v`: the op at flat index k
/// (a pair's word read as its F) of stage s whose output goes to stage `to` on another
/// rank (an activation when `forward`, else a gradient), and the node of the op that
/// consumes it (a pair's word for its B word: a pair's inputs come before its word).
template <class F>
constexpr void for_each_message(schedule_view v, F&& f) {
  const pipeline_shape shape = v.shape;
  const op_index index(v);
  const buffer<std::uint8_t> pair_b = pair_b_words(v);
  const schedule plain = split_pairs(v);  // both words of a pair share the pair's times
  const std::span<const op> ops = plain.view().ops;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const op o = ops[k];
    const bool forward = o.kind() == op_kind::F;
    if (!forward && o.kind() != op_kind::B && o.kind() != op_kind::I) continue;
    const int s = o.stage(), to = forward ? s + 1 : s - 1, j = o.microbatch();
    if (to < 0 || to >= shape.stages() || shape.rank_of(to) == shape.rank_of(s)) continue;
    std::uint32_t q = index.at[index.slot(forward ? code_f : code_b, to, j)];
    if (!forward && q == 0) q = index.at[index.slot(code_i, to, j)];
    f(k, forward, s, to, op_node(pair_b, q - 1));
  }
}

}  // namespace detail

/// Whether the stream order of lower(v, c, model) (a stream model) provably loses
/// nothing: in simulate(v, c)'s timeline, every two messages that follow each other on
/// one stream of a rank (both of them sends or receives of that rank, on the stream
/// stream_index() gives them) are produced at least t_c apart. Then every message is at
/// its receiver at its producer's end + t_c, and execute(lower(v, c, model), c, model)
/// has every op at simulate()'s time (docs/runtimes.md gives the induction). Always true
/// with t_c = 0; with latency it fails where one stream must carry two messages closer
/// than t_c, which no order of that stream can run on time (one of the two is at least
/// t_c minus their distance late, a delay the consumer may or may not absorb).
/// Errors: lower()'s. Linear in the ops (one lower(), one simulation and one walk of the
/// messages).
constexpr bool stream_spacing(schedule_view v, const costs& c, runtime_model model) {
  detail::require(is_stream_model(model), "ctpipe: stream_spacing() takes a stream model");
  const schedule lowered = lower(v, c, model);
  const simulation sim = simulate(v, c);
  const pipeline_shape shape = v.shape;
  // The producer's end of each message, by message_tag().
  detail::buffer<rational> produced(static_cast<std::size_t>(2 * (shape.stages() + 1) * shape.m));
  detail::for_each_message(v, [&](std::size_t k, bool forward, int s, int, std::uint32_t) {
    const op send = detail::make_op(forward ? op_kind::send_f : op_kind::send_b, s, v.ops[k].microbatch());
    produced[static_cast<std::size_t>(message_tag(shape, send))] = sim.end(k);
  });
  for (int r = 0; r < shape.P; ++r) {
    rational last[streams_per_rank];
    bool seen[streams_per_rank] = {false, false, false, false};
    for (const op o : lowered.view().rank(r)) {
      if (!is_transfer(o.kind())) continue;
      const int local = stream_index(model, r, peer_rank(shape, o), is_send(o.kind()),
                                     o.kind() == op_kind::send_f || o.kind() == op_kind::recv_f, shape.P) -
                        streams_per_rank * r;
      const rational at = produced[static_cast<std::size_t>(message_tag(shape, o))];
      if (seen[local] && at - last[local] < c.c) return false;
      seen[local] = true, last[local] = at;
    }
  }
  return true;
}

namespace detail {

/// One end of a message on a stream: the stream (stream_index()), the producer's
/// simulated end and the consumer's node in the op graph (a pair's word for its B word).
struct stream_end {
  int stream = 0;
  std::int64_t produced = 0;  ///< ticks of the simulation
  std::uint32_t consumer = 0;
};

/// The ends of every message of `v` (two per message: the sender's stream, the
/// receiver's) under stream model `model`, with `sim` = simulate(v, c).
constexpr buffer<stream_end> stream_ends(schedule_view v, const simulation& sim, runtime_model model) {
  const pipeline_shape shape = v.shape;
  std::size_t count = 0;
  buffer<stream_end> out(2 * v.size());
  for_each_message(v, [&](std::size_t k, bool forward, int s, int to, std::uint32_t node) {
    const int from_rank = shape.rank_of(s), to_rank = shape.rank_of(to);
    out[count++] = {stream_index(model, from_rank, to_rank, true, forward, shape.P), sim.end_ticks(k), node};
    out[count++] = {stream_index(model, to_rank, from_rank, false, forward, shape.P), sim.end_ticks(k), node};
  });
  buffer<stream_end> ends(count);
  for (std::size_t x = 0; x < count; ++x) ends[x] = out[x];
  return ends;
}

/// The tail of every node of `v`'s op graph under `sim` and latency `c` (ticks): the
/// longest path from its start to the end of the step (its own length, then the most of
/// its outputs' edges plus their tails), in ticks. Pair B words get none. Linear (a
/// backward Kahn pass).
constexpr buffer<std::int64_t> op_tails(schedule_view v, const simulation& sim, std::int64_t c) {
  const std::size_t N = v.size();
  const op_index index(v);
  const buffer<int> ranks = op_ranks(v);
  const buffer<std::uint8_t> pair_b = pair_b_words(v);
  op_edges g(5 * N + 1);
  add_dependency_edges(v, index, ranks, pair_b, 1, g);  // 1 marks an edge across ranks
  add_rank_order_edges(v, pair_b, g);
  buffer<std::uint32_t> in_first(N + 1), in_edge(g.edges), outputs(N), queue(N);
  for (std::size_t e = 0; e < g.edges; ++e) ++in_first[g.to[e] + 1], ++outputs[g.from[e]];
  for (std::size_t u = 0; u < N; ++u) in_first[u + 1] += in_first[u];
  buffer<std::uint32_t> at(N);
  for (std::size_t u = 0; u < N; ++u) at[u] = in_first[u];
  for (std::size_t e = 0; e < g.edges; ++e) in_edge[at[g.to[e]]++] = static_cast<std::uint32_t>(e);
  buffer<std::int64_t> tail(N), most(N);
  std::size_t end = 0;
  for (std::size_t u = 0; u < N; ++u) {
    if (!pair_b[u] && outputs[u] == 0) queue[end++] = static_cast<std::uint32_t>(u);
  }
  for (std::size_t head = 0; head < end; ++head) {
    const std::uint32_t u = queue[head];
    tail[u] = sim.end_ticks(u) - sim.start_ticks(u) + most[u];
    for (std::uint32_t x = in_first[u]; x < in_first[u + 1]; ++x) {
      const std::size_t e = in_edge[x];
      const std::uint32_t w = g.from[e];
      const std::int64_t through = (g.lat[e] != 0 ? c : 0) + tail[u];
      if (most[w] < through) most[w] = through;
      if (--outputs[w] == 0) queue[end++] = w;
    }
  }
  return tail;
}

/// The most of e_0 + j c + tails[j - 1] over j (ticks): the least makespan any order of
/// a stream gives to messages produced from e_0 on, with `tails` sorted longest first.
constexpr std::int64_t run_bound(std::int64_t e0, std::int64_t c, const std::int64_t* tails, std::size_t count) {
  std::int64_t most = 0;
  for (std::size_t j = 0; j < count; ++j) {
    const std::int64_t bound = e0 + c * static_cast<std::int64_t>(j + 1) + tails[j];
    most = bound > most ? bound : most;
  }
  return most;
}

/// How many messages from each start stream_loss_bound() tries besides the whole
/// congested run: runs are cut at this length (the bound stays valid), so the time is
/// linear in the messages.
inline constexpr std::size_t bound_run_cap = 32;

}  // namespace detail

namespace detail {

/// One message of the deadline order: its consumer's latest start minus t_c (`due`),
/// its production, its producer (flat index), and where its two ops may go.
struct due_message {
  std::int64_t due = 0, produced = 0;
  std::uint32_t producer = 0;
  int from = 0, to = 0;                 ///< sender's and receiver's ranks
  std::uint32_t after = 0, before = 0;  ///< the SEND after this many of its rank's ops; the RECV before op `before`
  int send_stream = 0, recv_stream = 0;
  op send, recv;
};

/// The messages of `v` under stream model `model` and costs `c`, each with its due time
/// and places (due_message), sorted by due time, then production, then producer.
inline buffer<due_message> due_messages(schedule_view v, const costs& c, runtime_model model) {
  const pipeline_shape shape = v.shape;
  const simulation sim = simulate(v, c);
  const std::int64_t t_c = (c.c / sim.tick()).num;
  const buffer<int> rank_of_op = op_ranks(v);
  buffer<due_message> all(v.size());
  std::size_t n = 0;
  for_each_message(v, [&](std::size_t k, bool forward, int s, int to, std::uint32_t consumer) {
    const int from = rank_of_op[k], dest = rank_of_op[consumer], j = v.ops[k].microbatch();
    const std::uint32_t last =
        v.ops[k].kind() == op_kind::overlap_f_b ? static_cast<std::uint32_t>(k) + 1 : static_cast<std::uint32_t>(k);
    all[n++] = {sim.start_ticks(consumer) - t_c,
                sim.end_ticks(k),
                static_cast<std::uint32_t>(k),
                from,
                dest,
                last + 1 - v.offsets[static_cast<std::size_t>(from)],
                consumer - v.offsets[static_cast<std::size_t>(dest)],
                stream_index(model, from, dest, true, forward, shape.P),
                stream_index(model, dest, from, false, forward, shape.P),
                make_op(forward ? op_kind::send_f : op_kind::send_b, s, j),
                make_op(forward ? op_kind::recv_f : op_kind::recv_b, to, j)};
  });
  buffer<due_message> msgs(n);
  for (std::size_t x = 0; x < n; ++x) msgs[x] = all[x];
  std::sort(msgs.data(), msgs.data() + n, [](const due_message& a, const due_message& b) {
    if (a.due != b.due) return a.due < b.due;
    return a.produced != b.produced ? a.produced < b.produced : a.producer < b.producer;
  });
  return msgs;
}

/// Each transfer's place in the deadline order, as the count of its rank's compute ops
/// before it: `slot[2x]` message x's SEND (after its producer and its stream's previous
/// transfer), `slot[2x + 1]` its RECV (after its stream's previous transfer). False when a
/// RECV would come after its consumer.
inline bool due_slots(const buffer<due_message>& msgs, int P, buffer<std::uint32_t>& slot) {
  buffer<std::uint32_t> last_slot(static_cast<std::size_t>(streams_per_rank * P));
  for (std::size_t x = 0; x < msgs.size(); ++x) {
    const due_message& m = msgs[x];
    const std::uint32_t at = last_slot[static_cast<std::size_t>(m.send_stream)];
    slot[2 * x] = last_slot[static_cast<std::size_t>(m.send_stream)] = m.after > at ? m.after : at;
    slot[2 * x + 1] = last_slot[static_cast<std::size_t>(m.recv_stream)];
    if (slot[2 * x + 1] > m.before) return false;
  }
  return true;
}

/// The lowered lists of `v` with the transfers of `msgs` at their `slot`s: per rank its
/// transfers (bucketed by rank in the global order, then sorted by slot, stable) merged
/// with its compute ops.
inline schedule due_lists(schedule_view v, const buffer<due_message>& msgs, const buffer<std::uint32_t>& slot) {
  const std::size_t n = msgs.size(), P = static_cast<std::size_t>(v.shape.P);
  schedule out{v.shape, v.size() + 2 * n};
  buffer<std::uint32_t> count(P + 1), first(P + 1), fill(P);
  for (std::size_t x = 0; x < n; ++x)
    ++count[static_cast<std::size_t>(msgs[x].from)], ++count[static_cast<std::size_t>(msgs[x].to)];
  std::span<std::uint32_t> offsets = out.offsets();
  for (std::size_t r = 0; r < P; ++r) {
    offsets[r + 1] = offsets[r] + (v.offsets[r + 1] - v.offsets[r]) + count[r];
    first[r + 1] = first[r] + count[r];
  }
  buffer<std::uint64_t> keyed(2 * n);
  for (std::size_t x = 0; x < 2 * n; ++x) {
    const std::size_t r = static_cast<std::size_t>(x % 2 == 0 ? msgs[x / 2].from : msgs[x / 2].to);
    keyed[first[r] + fill[r]++] = (std::uint64_t{slot[x]} << 32) | x;
  }
  for (std::size_t r = 0; r < P; ++r) {
    std::uint64_t* begin = keyed.data() + first[r];
    std::sort(begin, keyed.data() + first[r + 1]);  // slot, then x: x grows with the global order
    std::uint32_t w = offsets[r], t = 0;
    const std::uint32_t compute = v.offsets[r + 1] - v.offsets[r], mine = count[r];
    for (std::uint32_t p = 0; p <= compute; ++p) {
      for (; t < mine && (begin[t] >> 32) == p; ++t) {
        const std::size_t x = begin[t] & 0xFFFFFFFFu;
        out.ops()[w++] = x % 2 == 0 ? msgs[x / 2].send : msgs[x / 2].recv;
      }
      if (p < compute) out.ops()[w++] = v.ops[v.offsets[r] + p];
    }
  }
  return out;
}

}  // namespace detail

/// The deadline order for stream model `model` under costs `c`, a candidate of
/// io::lower_least_loss(): every stream takes its messages by their consumers' simulated
/// starts minus t_c (then by production), and each SEND and RECV goes as early in its
/// rank's list as that order allows (a SEND right after its producer or its stream's
/// previous transfer, whichever is later; a RECV right after its stream's previous
/// transfer). Not proved: ties between ops that take no time can leave a RECV no place
/// before its consumer, and then the result is empty (size 0); a caller runs it and keeps
/// it only when it completes and is faster. Run time only (a sort: n log n, not a
/// constexpr algorithm, which the project keeps linear in the ops).
inline schedule lower_by_deadline(schedule_view v, const costs& c, runtime_model model) {
  detail::check_lowerable(v);
  detail::require(is_stream_model(model), "ctpipe: lower_by_deadline() takes a stream model");
  const detail::buffer<detail::due_message> msgs = detail::due_messages(v, c, model);
  detail::buffer<std::uint32_t> slot(2 * msgs.size());
  if (!detail::due_slots(msgs, v.shape.P, slot)) return schedule{};
  return detail::due_lists(v, msgs, slot);
}

/// A lower bound on the loss (makespan minus simulate(v, c)'s) of any lowered lists of
/// compute schedule `v` that keep its compute order, run under stream model `model` with
/// costs `c` (file comment): for a run of messages that follow each other on a stream (by
/// production), all produced no earlier than the first's e_0, the stream completes them
/// one at a time after e_0, the j-th (from 1) no earlier than e_0 + j t_c, and the step
/// lasts at least that plus the consumer's tail; the order that puts the longest tails
/// first gives the least of those maxima, which is the run's bound. Runs tried: from each
/// message, the next ones while the run stays congested (its last message produced before
/// e_0 + (count - 1) t_c), up to bound_run_cap (32) messages; and each maximal congested
/// run whole (the greedy cover of each stream). The most of their bounds, minus
/// simulate()'s makespan; 0 where no stream carries two messages closer than t_c (then
/// stream_spacing() holds, and lower()'s stream order reaches it). Exact rational, in
/// time units. Errors: check_view()'s and check_costs()'s, `ctpipe: stream_loss_bound()
/// takes a stream model`, rational overflow. Run time only: a sort of the messages, then
/// linear (32^2 steps per message at most).
inline rational stream_loss_bound(schedule_view v, const costs& c, runtime_model model) {
  check_view(v);
  check_costs(c);
  detail::require(is_stream_model(model), "ctpipe: stream_loss_bound() takes a stream model");
  const simulation sim = simulate(v, c);
  detail::buffer<detail::stream_end> ends = detail::stream_ends(v, sim, model);
  std::sort(ends.data(), ends.data() + ends.size(), [](const detail::stream_end& a, const detail::stream_end& b) {
    return a.stream != b.stream ? a.stream < b.stream : a.produced < b.produced;
  });
  const rational in_ticks = c.c / sim.tick();  // one tick divides the latency
  const std::int64_t t_c = in_ticks.num;
  const detail::buffer<std::int64_t> tail = detail::op_tails(v, sim, t_c);
  const std::size_t n = ends.size();
  const auto congested = [&](std::size_t first, std::size_t x, std::size_t count) {
    return x < n && ends[x].stream == ends[first].stream &&
           ends[x].produced - ends[first].produced < t_c * static_cast<std::int64_t>(count);
  };
  std::int64_t longest = sim.makespan_ticks();
  detail::buffer<std::int64_t> tails(n + 1);  // a run's tails, longest first
  for (std::size_t i = 0; i < n; ++i) {       // runs from each message, capped
    std::size_t count = 0;
    for (std::size_t x = i; count < detail::bound_run_cap && (count == 0 || congested(i, x, count)); ++x) {
      std::size_t at = count++;
      for (; at > 0 && tails[at - 1] < tail[ends[x].consumer]; --at) tails[at] = tails[at - 1];
      tails[at] = tail[ends[x].consumer];
      if (count > 1) longest = std::max(longest, detail::run_bound(ends[i].produced, t_c, tails.data(), count));
    }
  }
  for (std::size_t i = 0; i < n;) {  // each maximal congested run whole
    std::size_t count = 1;
    tails[0] = tail[ends[i].consumer];
    while (congested(i, i + count, count)) tails[count] = tail[ends[i + count].consumer], ++count;
    std::sort(tails.data(), tails.data() + count, [](std::int64_t a, std::int64_t b) { return a > b; });
    if (count > 1) longest = std::max(longest, detail::run_bound(ends[i].produced, t_c, tails.data(), count));
    i += count;
  }
  return sim.tick() * rational{longest - sim.makespan_ticks()};
}

}  // namespace ctpipe
