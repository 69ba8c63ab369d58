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
// message: n log n.
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

/// Whether the stream order of lower(v, c, model) (a stream model) provably loses
/// nothing: in simulate(v, c)'s timeline, every two messages that follow each other on
/// one stream of a rank (both of them sends or receives of that rank, on the stream
/// stream_index() gives them) are produced at least t_c apart. Then every message is at
/// its receiver at its producer's end + t_c, and execute(lower(v, c, model), c, model)
/// has every op at simulate()'s time (docs/runtimes.md gives the induction). Always true
/// with t_c = 0; with latency it fails where one stream must carry two messages closer
/// than t_c, which no order of that stream can run on time (one of the two is at least
/// t_c minus their distance late, a delay the consumer may or may not absorb).
/// Errors: lower()'s. Linear in the ops (one lower() and one simulation).
constexpr bool stream_spacing(schedule_view v, const costs& c, runtime_model model) {
  detail::require(is_stream_model(model), "ctpipe: stream_spacing() takes a stream model");
  const schedule lowered = lower(v, c, model);
  const simulation sim = simulate(v, c);
  const pipeline_shape shape = v.shape;
  // The producer's end of each message, by message_tag().
  detail::buffer<rational> produced(static_cast<std::size_t>(2 * (shape.stages() + 1) * shape.m));
  const schedule plain = split_pairs(v);  // a pair's word read as its F (both words share the pair's end)
  const std::span<const op> ops = plain.view().ops;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const op o = ops[k];
    const op_kind kind = o.kind();
    const int s = o.stage();
    const bool forward = kind == op_kind::F;
    if (!forward && kind != op_kind::B && kind != op_kind::I) continue;
    const int to = forward ? s + 1 : s - 1;
    if (to < 0 || to >= shape.stages() || shape.rank_of(to) == shape.rank_of(s)) continue;
    const op send = detail::make_op(forward ? op_kind::send_f : op_kind::send_b, s, o.microbatch());
    produced[static_cast<std::size_t>(message_tag(shape, send))] = sim.end(k);
  }
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
  const op_index index(v);
  const buffer<std::uint8_t> pair_b = pair_b_words(v);
  const schedule plain = split_pairs(v);  // a pair's word read as its F (both words share the pair's end)
  const std::span<const op> ops = plain.view().ops;
  std::size_t count = 0;
  buffer<stream_end> out(2 * ops.size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const op o = ops[k];
    const bool forward = o.kind() == op_kind::F;
    if (!forward && o.kind() != op_kind::B && o.kind() != op_kind::I) continue;
    const int s = o.stage(), to = forward ? s + 1 : s - 1, j = o.microbatch();
    if (to < 0 || to >= shape.stages() || shape.rank_of(to) == shape.rank_of(s)) continue;
    std::uint32_t q = forward ? index.at[index.slot(code_f, to, j)] : index.at[index.slot(code_b, to, j)];
    if (!forward && q == 0) q = index.at[index.slot(code_i, to, j)];
    const std::uint32_t node = op_node(pair_b, q - 1);
    const int from_rank = shape.rank_of(s), to_rank = shape.rank_of(to);
    out[count++] = {stream_index(model, from_rank, to_rank, true, forward, shape.P), sim.end_ticks(k), node};
    out[count++] = {stream_index(model, to_rank, from_rank, false, forward, shape.P), sim.end_ticks(k), node};
  }
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
/// takes a stream model`, rational overflow. Time: a sort of the messages, then linear
/// (32^2 steps per message at most).
constexpr rational stream_loss_bound(schedule_view v, const costs& c, runtime_model model) {
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
