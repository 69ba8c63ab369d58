// ctpipe/analysis/graph.hpp: the op graph the planners share (plan/fill.hpp's
// re-simulation, fill_stretch.hpp's stretched timeline, rebalance.hpp's delayed
// timeline) and the periodic certificate reads (analysis/periodic.hpp). docs/spec.md
// §2's dependencies restated as edges between the compute ops of a schedule, apart from
// simulate()'s walk: the ops by identity (op_index), each op's rank, the pair words, the
// edges into each op, and the earliest-start propagation over a graph (Kahn's order:
// a node starts once all its inputs have ended, at the latest input end plus that
// edge's latency). Linear in ops + edges; usable in constant expressions.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::int64_t, std::uint8_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe::detail {

/// Flat index of every compute op of a schedule by (kind code, stage, micro-batch): slots
/// [F | B | I | W] x S x m (kind_code's code_f to code_w), the value k + 1 (0: absent). A
/// pair word counts as its F, its B word as that B. Linear.
struct op_index {
  std::size_t S = 0, m = 0;
  buffer<std::uint32_t> at;

  constexpr op_index() = default;
  constexpr explicit op_index(schedule_view v)
      : S(static_cast<std::size_t>(v.shape.stages())), m(static_cast<std::size_t>(v.shape.m)), at(4 * S * m) {
    // core/engine.hpp's discipline: the word decoded by hand (kind 8, a pair word, as F).
    const op* ops = v.ops.data();
    std::uint32_t* slots = at.data();
    std::uint32_t bits = 0, kind = 0, s = 0, j = 0;
    for (std::size_t k = 0, n = v.size(); k < n; ++k) {
      bits = ops[k].bits, kind = bits >> 28 == 8 ? 0 : bits >> 28, s = (bits >> 16) & 0xFFF, j = bits & 0xFFFF;
      if (kind <= 3 && s < S && j < m) slots[(kind * S + s) * m + j] = static_cast<std::uint32_t>(k + 1);
    }
  }
  /// The kind code `o` is indexed under: a pair word's is code_f.
  static constexpr std::uint32_t code_of(op o) {
    const std::uint32_t kind = o.bits >> kind_shift;
    return kind == code_overlap_f_b ? static_cast<std::uint32_t>(code_f) : kind;
  }
  /// The slot of (kind code, stage, micro-batch); kind <= code_w.
  constexpr std::size_t slot(std::uint32_t kind, int s, int j) const {
    return (static_cast<std::size_t>(kind) * S + static_cast<std::size_t>(s)) * m + static_cast<std::size_t>(j);
  }
  /// Flat index + 1 of `o` (0 when the schedule does not hold it).
  constexpr std::uint32_t find(op o) const {
    const std::uint32_t kind = code_of(o);
    if (kind > code_w || static_cast<std::size_t>(o.stage()) >= S || static_cast<std::size_t>(o.microbatch()) >= m)
      return 0;
    return at[slot(kind, o.stage(), o.microbatch())];
  }
};

/// Rank of every op of `v`, flat order. Linear.
constexpr buffer<int> op_ranks(schedule_view v) {
  buffer<int> out(v.size());
  int* rank = out.data();
  const std::uint32_t* offsets = v.offsets.data();
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = offsets[r]; k < offsets[r + 1]; ++k) rank[k] = r;
  }
  return out;
}

/// Per op of `v`, flat order: 1 when it is an overlapped pair's B word (the word after an
/// overlap_f_b word, kind code 8), whose node in an op graph is its pair word (k - 1),
/// else 0. Linear.
constexpr buffer<std::uint8_t> pair_b_words(schedule_view v) {
  buffer<std::uint8_t> out(v.size());
  std::uint8_t* pair_b = out.data();
  const op* ops = v.ops.data();
  for (std::size_t k = 1, n = v.size(); k < n; ++k) pair_b[k] = ops[k - 1].bits >> 28 == 8 ? 1 : 0;
  return out;
}

/// The node of op `d` (flat index) in an op graph: `d`, or its pair word's for a pair's B
/// word (`pair_b` as pair_b_words() gives it).
constexpr std::uint32_t op_node(const buffer<std::uint8_t>& pair_b, std::uint32_t d) { return pair_b[d] ? d - 1 : d; }

/// The edges of an op graph: (from, to, latency in ticks) triples, at most `capacity`.
/// Nodes are the schedule's ops (flat index; a pair's B word folded into its word) and
/// whatever a planner adds after them (fill's pieces).
struct op_edges {
  buffer<std::uint32_t> from, to;
  buffer<std::int64_t> lat;
  std::size_t edges = 0;
  constexpr explicit op_edges(std::size_t capacity) : from(capacity), to(capacity), lat(capacity) {}
  constexpr void add(std::uint32_t a, std::uint32_t b, std::int64_t l) {
    from[edges] = a, to[edges] = b, lat[edges++] = l;
  }
};

/// The ops that an op waits for, by docs/spec.md §2 restated (not the walk's tables): F
/// waits for the F of the stage below; B and I for their own F and the B (else I) of the
/// stage above; W for its I (else B). Holds the schedule's op_index and each micro-batch's
/// first and last stage (pipeline_shape::first_stage(), last_stage()), so that of() asks
/// neither the shape nor the placement per op (core/engine.hpp's discipline). O(m) to
/// build.
struct op_inputs {
  buffer<int> ends;          ///< [2j]: first_stage(j), [2j + 1]: last_stage(j)
  const std::uint32_t* at;   ///< op_index::at (the index outlives this)
  const int* end;            ///< ends.data()
  std::size_t S = 0, m = 0;  ///< op_index's

  constexpr op_inputs(schedule_view v, const op_index& index)
      : ends(2 * index.m), at(index.at.data()), end(ends.data()), S(index.S), m(index.m) {
    for (int j = 0; j < v.shape.m; ++j) {
      ends[2 * static_cast<std::size_t>(j)] = v.shape.first_stage(j);
      ends[2 * static_cast<std::size_t>(j) + 1] = v.shape.last_stage(j);
    }
  }
  /// Writes to `out` the flat index + 1 of each op that the op word `bits` waits for and
  /// the schedule holds, and returns how many it wrote (0 to 2). `bits` is a compute op
  /// of the schedule (stage < S, micro-batch < m); a pair word (kind code 8) stands for
  /// its forward, its B half being the next word (call of() for both). Constant time.
  constexpr int of(std::uint32_t bits, std::uint32_t* out) const {
    // Slots (kind * S + stage) * m + j: F kind 0, B 1, I 2 (B's slot + S * m), W 3. Two
    // statements (a constant evaluation's steps): i is W's I, else the B of the stage
    // above B's or I's (the I's a row on).
    const std::size_t kind = bits >> 28, s = (bits >> 16) & 0xFFF, j = bits & 0xFFFF, row = S * m,
                      i = kind == 3 ? 2 * row + s * m + j : row + (s + 1) * m + j;
    int n = 0;
    return kind == 0 || kind == 8   ? (static_cast<int>(s) > end[2 * j] && (out[0] = at[(s - 1) * m + j]) != 0 ? 1 : 0)
           : kind == 3              ? ((out[0] = at[i] != 0 ? at[i] : at[i - row]) != 0 ? 1 : 0)
           : kind != 1 && kind != 2 ? 0
                                    : (n = (out[0] = at[s * m + j]) != 0 ? 1 : 0,  // its F, then the B (else I) above
                                       static_cast<int>(s) >= end[2 * j + 1]              ? n
                                       : (out[n] = at[i] != 0 ? at[i] : at[i + row]) != 0 ? n + 1
                                                                                          : n);
  }
};

/// The ops that op k of `v` waits for (op_inputs; a pair word for both halves'): added
/// to `g` as edges into node k, with latency `c` (ticks) across ranks. `pair_b[k]`: op
/// k is a pair's B word (its node is k - 1).
constexpr void add_op_edges(schedule_view v, const op_inputs& inputs, const buffer<int>& ranks,
                            const buffer<std::uint8_t>& pair_b, std::int64_t c, std::size_t k, op_edges& g) {
  std::uint32_t found[4] = {};
  int n = inputs.of(v.ops[k].bits, found);
  n += v.ops[k].bits >> 28 == 8 ? inputs.of(v.ops[k + 1].bits, found + n) : 0;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t d = found[i] - 1;
    g.add(op_node(pair_b, d), static_cast<std::uint32_t>(k), ranks[d] != ranks[k] ? c : 0);
  }
}

/// add_op_edges() of every op of `v` but the pair B words: all the dependency edges, at
/// most 4 per op. Linear.
constexpr void add_dependency_edges(schedule_view v, const op_index& index, const buffer<int>& ranks,
                                    const buffer<std::uint8_t>& pair_b, std::int64_t c, op_edges& g) {
  const op_inputs inputs(v, index);
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (!pair_b[k]) add_op_edges(v, inputs, ranks, pair_b, c, k, g);
  }
}

/// Each rank's order of `v` as edges of latency 0 (a pair's B word folded into its word):
/// at most one per op. Linear.
constexpr void add_rank_order_edges(schedule_view v, const buffer<std::uint8_t>& pair_b, op_edges& g) {
  for (int r = 0; r < v.shape.P; ++r) {
    std::uint32_t prev = 0;  // node + 1
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      if (pair_b[k]) continue;
      if (prev != 0) g.add(prev - 1, k, 0);
      prev = k + 1;
    }
  }
}

/// The earliest start of every node of a graph (docs/spec.md §2's rule over edges), in
/// Kahn's order: a node runs once all its inputs have; `ready[u]` receives the latest of
/// its inputs' ends plus each edge's latency, `start[u]` its start. `Graph` says:
/// - `nodes()`: N; `runs(u)`: false for a node left out (neither run nor counted);
/// - `count_inputs(pending)`: adds each node's number of inputs to `pending` (N zeros);
/// - `start_at(u, ready)`: its start (ready, or later: a hold); `end_at(u, start)`: its end;
/// - `outputs(u, end, reach)`: calls reach(w, at) for each input of node w that u gives,
///   available at `at`.
/// `start` and `ready` (N entries each, zeros) may be buffers or vectors. Returns how many
/// nodes ran (every one that runs() when the graph has no cycle). Linear in nodes + edges.
template <class Graph, class Times>
constexpr std::size_t earliest_starts(const Graph& g, Times& start, Times& ready) {
  const std::size_t N = g.nodes();
  buffer<std::uint32_t> pending(N), queue(N);
  g.count_inputs(pending);
  std::size_t tail = 0;
  for (std::size_t u = 0; u < N; ++u) {
    if (pending[u] == 0 && g.runs(u)) queue[tail++] = static_cast<std::uint32_t>(u);
  }
  const auto reach = [&](std::uint32_t w, std::int64_t at) {
    ready[w] = at > ready[w] ? at : ready[w];
    if (--pending[w] == 0) queue[tail++] = w;
  };
  for (std::size_t head = 0; head < tail; ++head) {
    const std::uint32_t u = queue[head];
    start[u] = g.start_at(u, ready[u]);
    g.outputs(u, g.end_at(u, start[u]), reach);
  }
  return tail;
}

/// An op_edges graph of `N` nodes in the form earliest_starts() takes: the edges by their
/// source (CSR), each node's length (`length`, ticks) and hold (`hold`, ticks, or null:
/// none; a node starts no earlier than its hold), and the nodes left out (`skip[u]` != 0
/// for u < skip.size(): the pair B words). Times are overflow-checked (`ctpipe: rational
/// overflow (64-bit numerator or denominator)`). Linear to build.
struct timed_graph {
  const op_edges& g;
  std::size_t N;
  const std::int64_t* length;
  const std::int64_t* hold;
  const buffer<std::uint8_t>& skip;
  buffer<std::uint32_t> first, next;  ///< edges out of u: next[first[u] .. first[u + 1])

  constexpr timed_graph(const op_edges& edges, std::size_t n, const std::int64_t* lengths, const std::int64_t* holds,
                        const buffer<std::uint8_t>& skipped)
      : g(edges), N(n), length(lengths), hold(holds), skip(skipped), first(n + 1), next(edges.edges) {
    for (std::size_t e = 0; e < g.edges; ++e) ++first[g.from[e] + 1];
    for (std::size_t u = 0; u < N; ++u) first[u + 1] += first[u];
    buffer<std::uint32_t> at(N);
    for (std::size_t u = 0; u < N; ++u) at[u] = first[u];
    for (std::size_t e = 0; e < g.edges; ++e) next[at[g.from[e]]++] = static_cast<std::uint32_t>(e);
  }
  constexpr std::size_t nodes() const { return N; }
  constexpr bool runs(std::size_t u) const { return u >= skip.size() || !skip[u]; }
  constexpr void count_inputs(buffer<std::uint32_t>& pending) const {
    for (std::size_t e = 0; e < g.edges; ++e) ++pending[g.to[e]];
  }
  constexpr std::int64_t start_at(std::size_t u, std::int64_t ready) const {
    return hold != nullptr && hold[u] > ready ? hold[u] : ready;
  }
  constexpr std::int64_t end_at(std::size_t u, std::int64_t start) const { return rational::add(start, length[u]); }
  template <class Reach>
  constexpr void outputs(std::size_t u, std::int64_t end, Reach& reach) const {
    for (std::uint32_t e = first[u]; e < first[u + 1]; ++e) reach(g.to[next[e]], rational::add(end, g.lat[next[e]]));
  }
};

}  // namespace ctpipe::detail
