// ctpipe/analysis/fill_stretch.hpp: letting the pipeline grow to take what its bubbles
// could not (docs/spec.md §8.1, docs/bubbles.md "Stretching the pipeline"). After a fill
// of one iteration (fill_bubbles() or fill_bubbles_optimal()), every job's remainder (its
// duration less the time placed) becomes one more op in a rank's list, the pieces already
// placed stay where they are as ops too, and the schedule is re-simulated exactly with
// all of them (docs/spec.md §2's rule, restated as fill.hpp's resimulate_unchanged()
// does): the makespan grows by the stretch. Run time only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "ctpipe/analysis/fill.hpp"

namespace ctpipe {

/// What stretch_fill() did. Times are exact, in time units of `t_f`, and are those of the
/// stretched timeline unless said otherwise. Shapes: `placed` one entry per job with time
/// left that could be placed, in job order; `impossible` job indices; `pieces` the fill's
/// pieces in fill_result::pieces' order; `op_start`/`op_end` one entry per op of the
/// schedule, flat order.
struct stretch_result {
  rational old_makespan{0};  ///< T, the schedule's makespan (the fill's, unchanged by it)
  rational makespan{0};      ///< T' of the stretched timeline: the end of its last op, piece or remainder
  rational stretch{0};       ///< T' - T (>= 0)
  /// A lower bound on T' for any stretch that keeps every rank's pipeline ops in their
  /// order and the fill's pieces on their ranks, and places the same remainders
  /// (stretch_fill() says how it is computed).
  rational bound{0};
  bool least = false;  ///< makespan == bound: no such stretch ends earlier
  /// The remainders: per job with time left, one piece {job, rank, start, end} of that
  /// length, after the job's placed pieces, within its window of the stretched timeline.
  std::vector<fill_piece> placed;
  /// Jobs with time left that no order of the lists admits: their release op depends on
  /// their deadline op (or is it), so it cannot end before that op starts. Not placed.
  std::vector<std::uint32_t> impossible;
  std::vector<fill_piece> pieces;          ///< the fill's placed pieces, moved with the timeline (same rank and order)
  std::vector<rational> op_start, op_end;  ///< every pipeline op's new start and end (a pair's B word: its pair's)
  const char* method = "greedy insertion";  ///< how the remainders were placed
};

/// Limits of stretch_fill(): `work` bounds remainders x ranks tried x 4 positions x
/// (nodes + edges), the steps its re-simulations may take (about 2 s at the default on
/// one core of a 2-core machine, measured).
struct stretch_limits {
  std::uint64_t work = 500'000'000;
};

namespace detail {

/// No node (stretch_graph's lists end, or no such op).
inline constexpr std::uint32_t no_node = std::numeric_limits<std::uint32_t>::max();

/// The graph of a stretched timeline (stretch_fill()). Nodes: the schedule's ops (flat
/// index; a pair's B word is an isolated node of length 0, its pair word stands for the
/// pair), then the fill's pieces, then one node per job with time left. Per node its
/// length in ticks and its rank; edges with `cross`: t_c (`c`) applies when their two
/// ends lie on different ranks; each rank's list of nodes, run in order.
struct stretch_graph {
  std::int64_t c = 0;
  std::vector<std::int64_t> dur;
  std::vector<int> rank;
  std::vector<std::uint32_t> from, to;
  std::vector<std::uint8_t> cross;
  std::vector<std::vector<std::uint32_t>> lists;
  std::vector<std::uint32_t> out_first, out_edge, in_first, in_edge;  ///< CSR of the edges (build())

  void add(std::uint32_t a, std::uint32_t b, bool crosses) { from.push_back(a), to.push_back(b), cross.push_back(crosses ? 1 : 0); }
  /// The CSR of the edges in both directions. Linear.
  void build() {
    const std::size_t N = dur.size(), E = from.size();
    out_first.assign(N + 1, 0), in_first.assign(N + 1, 0), out_edge.assign(E, 0), in_edge.assign(E, 0);
    for (std::size_t e = 0; e < E; ++e) ++out_first[from[e] + 1], ++in_first[to[e] + 1];
    for (std::size_t u = 0; u < N; ++u) out_first[u + 1] += out_first[u], in_first[u + 1] += in_first[u];
    std::vector<std::uint32_t> o(out_first.begin(), out_first.end() - 1), i(in_first.begin(), in_first.end() - 1);
    for (std::size_t e = 0; e < E; ++e) out_edge[o[from[e]]++] = static_cast<std::uint32_t>(e), in_edge[i[to[e]]++] = static_cast<std::uint32_t>(e);
  }
  std::int64_t latency(std::uint32_t e) const { return cross[e] != 0 && rank[from[e]] != rank[to[e]] ? c : 0; }

  /// The node after each node on its rank, with node `extra` inserted at position `p` of
  /// rank r's list (extra == no_node: none inserted). Linear.
  std::vector<std::uint32_t> next_on_rank(std::uint32_t extra = no_node, int r = 0, std::size_t p = 0) const {
    std::vector<std::uint32_t> next(dur.size(), no_node);
    for (const std::vector<std::uint32_t>& list : lists) {
      for (std::size_t i = 0; i + 1 < list.size(); ++i) next[list[i]] = list[i + 1];
    }
    if (extra != no_node) {
      const std::vector<std::uint32_t>& list = lists[static_cast<std::size_t>(r)];
      if (p > 0) next[list[p - 1]] = extra;
      next[extra] = p < list.size() ? list[p] : no_node;
    }
    return next;
  }

  /// Runs every node as soon as its rank (the node before it, `next`) and its inputs
  /// (each edge's end plus its latency) allow, in Kahn's order: `start` per node (ticks)
  /// and the makespan (the latest end). False when a cycle leaves nodes unrun. Linear.
  bool run(const std::vector<std::uint32_t>& next, std::vector<std::int64_t>& start, std::int64_t& makespan) const {
    const std::size_t N = dur.size();
    std::vector<std::uint32_t> pending(N), queue;
    queue.reserve(N);
    for (std::size_t u = 0; u < N; ++u) pending[u] = in_first[u + 1] - in_first[u];
    for (std::size_t u = 0; u < N; ++u) {
      if (next[u] != no_node) ++pending[next[u]];
    }
    start.assign(N, 0);
    for (std::size_t u = 0; u < N; ++u) {
      if (pending[u] == 0) queue.push_back(static_cast<std::uint32_t>(u));
    }
    makespan = 0;
    const auto reach = [&](std::uint32_t w, std::int64_t at) {
      start[w] = std::max(start[w], at);
      if (--pending[w] == 0) queue.push_back(w);
    };
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const std::uint32_t u = queue[h];
      const std::int64_t end = start[u] + dur[u];
      makespan = std::max(makespan, end);
      for (std::uint32_t q = out_first[u]; q < out_first[u + 1]; ++q) reach(to[out_edge[q]], end + latency(out_edge[q]));
      if (next[u] != no_node) reach(next[u], end);
    }
    return queue.size() == N;
  }

  /// The nodes reachable from `seeds` (themselves included) along the edges and the
  /// ranks' orders, forward or backward. Linear.
  std::vector<char> reach_from(std::span<const std::uint32_t> seeds, bool forward, const std::vector<std::uint32_t>& next) const {
    std::vector<std::uint32_t> prev(dur.size(), no_node), stack;
    for (std::size_t u = 0; u < dur.size(); ++u) {
      if (next[u] != no_node) prev[next[u]] = static_cast<std::uint32_t>(u);
    }
    std::vector<char> seen(dur.size(), 0);
    const auto visit = [&](std::uint32_t w) {
      if (w != no_node && !seen[w]) seen[w] = 1, stack.push_back(w);
    };
    for (const std::uint32_t s : seeds) visit(s);
    while (!stack.empty()) {
      const std::uint32_t u = stack.back();
      stack.pop_back();
      if (forward) {
        for (std::uint32_t q = out_first[u]; q < out_first[u + 1]; ++q) visit(to[out_edge[q]]);
        visit(next[u]);
      } else {
        for (std::uint32_t q = in_first[u]; q < in_first[u + 1]; ++q) visit(from[in_edge[q]]);
        visit(prev[u]);
      }
    }
    return seen;
  }
};

/// stretch_fill()'s check of its input: `fill` is a one-iteration fill of `jobs` on the
/// frame's schedule (per job vectors of J entries; each piece a whole number of ticks,
/// on a rank its job may use, in an idle interval of that rank and inside its job's
/// window; sorted by rank, then start, not overlapping; per job adding up to `placed`,
/// at most its duration; the same makespan), and the re-simulation with the pieces as
/// ops moves no pipeline op (resimulate_unchanged()). Returns the pieces in ticks.
inline buffer<tick_piece> stretch_input(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs, const fill_result& fill) {
  constexpr const char* message =
      "ctpipe: stretch_fill takes a one-iteration fill of these jobs on this schedule (fill_bubbles() or fill_bubbles_optimal() without "
      "steady_state)";
  const std::size_t J = jobs.size();
  require(fill.placed.size() == J && fill.reason.size() == J && fill.makespan == f.tick * rational{f.T}, message);
  const auto whole = [&](rational x, std::int64_t& out) {
    const rational t = x / f.tick;
    out = t.num;
    return t.den == 1;
  };
  buffer<tick_piece> p(fill.pieces.size());
  std::vector<std::int64_t> got(J, 0);
  for (std::size_t q = 0; q < p.size(); ++q) {
    const fill_piece& x = fill.pieces[q];
    std::int64_t lo = 0, hi = 0;
    require(x.job < J && x.rank >= 0 && x.rank < f.P && whole(x.start, lo) && whole(x.end, hi) && lo < hi, message);
    p[q] = {x.job, x.rank, lo, hi};
    require(job_allowed(f, x.job, x.rank) && idle_within(f, x.rank, lo, hi) == hi - lo, message);
    require(q == 0 || p[q - 1].rank < x.rank || (p[q - 1].rank == x.rank && p[q - 1].hi <= lo), message);
    window_part w[2] = {};
    const int n = job_window(f, x.job, x.rank, w);
    require(n == 1 && w[0].lo <= lo && hi <= w[0].hi, message);
    got[x.job] += hi - lo;
  }
  for (std::size_t j = 0; j < J; ++j) {
    std::int64_t placed = 0;
    require(whole(fill.placed[j], placed) && placed == got[j] && got[j] <= f.dur[j], message);
  }
  require(resimulate_unchanged(v, f, jobs, p.span()), message);
  return p;
}

}  // namespace detail

/// Stretches schedule `v` (simulated under `c`, scaled by `scale`) to take what `fill`
/// (a one-iteration fill of `jobs`: fill_bubbles() or fill_bubbles_optimal() without
/// steady_state) left out: every job with time left gets one more piece, its remainder,
/// inserted as an op into one rank's list, and the schedule is re-simulated exactly with
/// it. Nothing else moves in the lists: the pipeline ops keep their order and the fill's
/// pieces keep their rank and their place among the ops; every node starts as soon as
/// its rank and its inputs allow (docs/spec.md §2's dependencies restated as fill.hpp's
/// resimulate_unchanged() does; t_c across ranks): a remainder waits for its release op
/// (plus t_c on another rank) and for its job's last placed piece, its deadline op waits
/// for it (plus t_c on another rank), so each remainder lies in its window of the
/// stretched timeline, after its job's other pieces.
///
/// Method (a heuristic, "greedy insertion"): the remainders one by one, by their
/// deadline op's start (those without a deadline last, by their release op's end, then
/// job index); for each rank the job may use, the positions next to its window in that
/// rank's list as it stands: just after the last node that must precede its release op
/// or its job's last piece (on the release op's rank: just after the release op; with
/// no release: the rank's start), just before the first node that must follow its
/// deadline op (on the deadline op's rank: just before it; with no deadline: the rank's
/// end), and, between the two, the first idle interval that holds it whole and the
/// longest one. Every position between those two is free of cycles, and no other is.
/// Each is tried by a full re-simulation; the one with the least makespan is kept (then
/// the least sum of the pipeline ops' starts, then the earliest end of the remainder,
/// then the lower rank and position). It is not proved to give the least makespan.
///
/// Bound: the larger of two. (1) The longest path of the schedule's ops (their
/// dependencies with t_c, each rank's order) with each placed remainder as a node after
/// its release op and before its deadline op (t_c charged only when the job cannot run
/// on that op's rank), the fill's pieces and the ranks' sharing left out. (2) Per rank,
/// its ops, its pieces and the remainders that can run nowhere else (pinned to it, or
/// P = 1), one after another. Every stretch that keeps each rank's op order and the
/// fill's pieces on their ranks, and places the same remainders, meets both, so none
/// ends before the bound; `least` when the makespan reaches it.
///
/// Cost: with N nodes (ops + pieces + remainders), E edges (at most 3 per op, piece or
/// remainder, besides the ranks' orders) and R remainders: O(R x P x (N + E)) (at most
/// 4 positions per rank, each one re-simulation), plus O(N + E) for the check of `fill`,
/// the bound and the result. Memory O(N + E). Refused up front when R x (ranks the jobs
/// may use) x 4 x (N + E + N) exceeds `limits.work`.
///
/// Returns a stretch_result: the stretched makespan and the stretch, the bound, where
/// each remainder went, the jobs no order admits, the new times of the fill's pieces and
/// of every pipeline op. A fill with nothing left gives stretch 0.
///
/// Errors: simulate()'s and check_jobs()' messages, rational overflow (the stretched
/// times are checked once against the sum of every length and latency), and
/// `ctpipe: stretch_fill takes a one-iteration fill of these jobs on this schedule
/// (fill_bubbles() or fill_bubbles_optimal() without steady_state)` when `fill` is not
/// one (stretch_input()), `ctpipe: stretch_fill would take more work than
/// stretch_limits::work allows (remainders x ranks x 4 positions x graph size)`.
inline stretch_result stretch_fill(schedule_view v, const costs& c, std::span<const fill_job> jobs, const fill_result& fill,
                                   const cost_scale& scale = {}, stretch_limits limits = {}) {
  using detail::no_node;
  const detail::fill_frame f = detail::make_fill_frame(v, c, scale, jobs, false);
  const detail::buffer<detail::tick_piece> p = detail::stretch_input(v, f, jobs, fill);
  const std::size_t n_ops = v.size(), n_pieces = p.size(), J = jobs.size();
  detail::buffer<std::uint8_t> pair_b(n_ops);
  for (std::size_t k = 1; k < n_ops; ++k) pair_b[k] = v.ops[k - 1].kind() == op_kind::overlap_f_b ? 1 : 0;
  const auto node_of = [&](op o) {  // the node of a compute op of v
    const std::uint32_t d = f.index.find(o) - 1;
    return pair_b[d] ? d - 1 : d;
  };

  // Time left per job, and the node of each job's remainder.
  std::vector<std::int64_t> left(J, 0);
  for (std::size_t j = 0; j < J; ++j) left[j] = f.dur[j] - f.ticks(fill.placed[j]);
  std::vector<std::uint32_t> rem_node(J, no_node), rems;
  for (std::size_t j = 0; j < J; ++j) {
    if (left[j] > 0) rem_node[j] = static_cast<std::uint32_t>(n_ops + n_pieces + rems.size()), rems.push_back(static_cast<std::uint32_t>(j));
  }
  const std::size_t N = n_ops + n_pieces + rems.size();

  // The graph: ops, pieces (as resimulate_unchanged() inserts them), remainders isolated
  // and of length 0 until their turn.
  detail::stretch_graph g;
  g.c = f.c;
  g.dur.assign(N, 0), g.rank.assign(N, 0);
  for (std::size_t k = 0; k < n_ops; ++k) g.dur[k] = pair_b[k] ? 0 : f.end[k] - f.start[k], g.rank[k] = f.ranks[k];
  for (std::size_t q = 0; q < n_pieces; ++q) g.dur[n_ops + q] = p[q].hi - p[q].lo, g.rank[n_ops + q] = p[q].rank;
  {
    detail::fill_graph deps(4 * n_ops + 1);
    for (std::size_t k = 0; k < n_ops; ++k) {
      if (!pair_b[k]) detail::add_op_edges(v, f.index, f.ranks, pair_b, 0, k, deps);
    }
    for (std::size_t e = 0; e < deps.edges; ++e) g.add(deps.from[e], deps.to[e], true);
  }
  std::vector<std::uint32_t> last_piece(J, no_node);  // per job: its latest piece by time (node)
  std::vector<std::uint32_t> by_time(n_pieces);
  for (std::size_t q = 0; q < n_pieces; ++q) by_time[q] = static_cast<std::uint32_t>(q);
  std::sort(by_time.begin(), by_time.end(), [&](std::uint32_t a, std::uint32_t b) { return p[a].lo < p[b].lo; });
  for (const std::uint32_t q : by_time) {
    const std::uint32_t node = static_cast<std::uint32_t>(n_ops + q);
    const fill_job& job = jobs[p[q].job];
    if (job.after) g.add(node_of(*job.after), node, true);
    if (job.before) g.add(node, node_of(*job.before), true);
    if (last_piece[p[q].job] != no_node) g.add(last_piece[p[q].job], node, false);
    last_piece[p[q].job] = node;
  }
  g.lists.assign(static_cast<std::size_t>(f.P), {});
  for (std::size_t q = 0, r = 0; r < static_cast<std::size_t>(f.P); ++r) {
    std::size_t k = v.offsets[r];
    while (k < v.offsets[r + 1] || (q < n_pieces && p[q].rank == static_cast<int>(r))) {
      const bool take_op = k < v.offsets[r + 1] && (q == n_pieces || p[q].rank != static_cast<int>(r) || f.start[k] <= p[q].lo);
      g.lists[r].push_back(take_op ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(n_ops + q));
      if (take_op) k += v.ops[k].kind() == op_kind::overlap_f_b ? 2 : 1;
      else ++q;
    }
  }
  // Every stretched time is at most the sum of all lengths and a latency per node (a
  // path's edges): checked once.
  std::int64_t longest = 0;
  for (std::size_t u = 0; u < N; ++u) longest = rational::add(longest, g.dur[u]);
  for (const std::uint32_t j : rems) longest = rational::add(longest, left[j]);
  rational::add(longest, rational::mul(f.c, static_cast<std::int64_t>(N) + 1));

  {
    std::uint64_t work = 0;
    const std::uint64_t size = 2 * static_cast<std::uint64_t>(N) + g.from.size() + 3 * rems.size();
    for (const std::uint32_t j : rems) {
      work += 4 * (jobs[j].rank == any_rank ? static_cast<std::uint64_t>(f.P) : 1) * size;
      detail::require(work <= limits.work,
                      "ctpipe: stretch_fill would take more work than stretch_limits::work allows (remainders x ranks x 4 positions x graph size)");
    }
  }
  // The remainders in deadline order (no deadline last, by release), then greedy insertion.
  const auto deadline = [&](std::uint32_t j) {
    return jobs[j].before ? f.start[f.index.find(*jobs[j].before) - 1] : std::numeric_limits<std::int64_t>::max();
  };
  const auto release = [&](std::uint32_t j) { return jobs[j].after ? f.end[f.index.find(*jobs[j].after) - 1] : std::int64_t{-1}; };
  std::vector<std::uint32_t> order = rems;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return deadline(a) != deadline(b) ? deadline(a) < deadline(b) : release(a) != release(b) ? release(a) < release(b) : a < b;
  });
  stretch_result out;
  std::vector<std::int64_t> start, trial;
  std::int64_t makespan = 0;
  g.build();
  detail::require(g.run(g.next_on_rank(), start, makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
  std::vector<char> is_impossible(J, 0);
  for (const std::uint32_t j : order) {
    const fill_job& job = jobs[j];
    const std::uint32_t u = rem_node[j];
    const std::uint32_t A = job.after ? node_of(*job.after) : no_node, D = job.before ? node_of(*job.before) : no_node;
    const std::uint32_t L = last_piece[j];
    const std::vector<std::uint32_t> next = g.next_on_rank();
    std::vector<char> after_it(N, 0), before_it(N, 0);  // must follow D; must precede A or L
    if (D != no_node) after_it = g.reach_from(std::span<const std::uint32_t>(&D, 1), true, next);
    std::vector<std::uint32_t> seeds;
    if (A != no_node) seeds.push_back(A);
    if (L != no_node) seeds.push_back(L);
    if (!seeds.empty()) before_it = g.reach_from(seeds, false, next);
    if (A != no_node && after_it[A]) {  // its release op depends on its deadline op
      is_impossible[j] = 1;
      out.impossible.push_back(j);
      continue;
    }
    if (A != no_node) g.add(A, u, true);
    if (D != no_node) g.add(u, D, true);
    if (L != no_node) g.add(L, u, false);
    g.dur[u] = left[j];
    g.build();
    // Candidates on every rank the job may use; the least (makespan, end, rank, position).
    std::int64_t best_T = std::numeric_limits<std::int64_t>::max(), best_delay = 0, best_end = 0;
    int best_r = -1;
    std::size_t best_p = 0;
    for (int r = 0; r < f.P; ++r) {
      if (job.rank != any_rank && job.rank != r) continue;
      const std::vector<std::uint32_t>& list = g.lists[static_cast<std::size_t>(r)];
      std::size_t lo = 0, hi = list.size();
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (before_it[list[i]]) lo = i + 1;
      }
      for (std::size_t i = list.size(); i-- > 0;) {
        if (after_it[list[i]]) hi = i;
      }
      detail::require(lo <= hi, "ctpipe: stretch_fill found no place free of cycles (a bug)");
      std::int64_t ready = L != no_node ? start[L] + g.dur[L] : 0;
      if (A != no_node) ready = std::max(ready, start[A] + g.dur[A] + (r != g.rank[A] ? f.c : 0));
      std::size_t positions[4] = {lo, hi, hi, hi};
      std::int64_t longest_gap = 0;
      bool whole = false;
      for (std::size_t i = lo + 1; i < hi; ++i) {
        const std::int64_t gap = start[list[i]] - std::max(start[list[i - 1]] + g.dur[list[i - 1]], ready);
        if (gap > longest_gap) longest_gap = gap, positions[2] = i;
        if (!whole && gap >= left[j]) whole = true, positions[3] = i;
      }
      std::sort(positions, positions + 4);
      for (int k = 0; k < 4; ++k) {
        if (k > 0 && positions[k] == positions[k - 1]) continue;
        g.rank[u] = r;
        std::int64_t T = 0;
        detail::require(g.run(g.next_on_rank(u, r, positions[k]), trial, T), "ctpipe: stretch_fill's insertion made a cycle (a bug)");
        const std::int64_t end = trial[u] + left[j];
        std::int64_t delay = 0;  // the pipeline ops' starts summed (saturating: a tie-break only)
        for (std::size_t q = 0; q < n_ops; ++q) delay = trial[q] > std::numeric_limits<std::int64_t>::max() - delay ? std::numeric_limits<std::int64_t>::max() : delay + trial[q];
        const bool better = T != best_T ? T < best_T : delay != best_delay ? delay < best_delay : end < best_end;
        if (better) best_T = T, best_delay = delay, best_end = end, best_r = r, best_p = positions[k];
      }
    }
    g.rank[u] = best_r;
    std::vector<std::uint32_t>& list = g.lists[static_cast<std::size_t>(best_r)];
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(best_p), u);
    detail::require(g.run(g.next_on_rank(), start, makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
  }

  // The bound: ops and placed remainders only (the file comment's relaxation).
  detail::stretch_graph relaxed;
  relaxed.c = f.c;
  relaxed.dur.assign(N, 0), relaxed.rank = g.rank;
  for (std::size_t k = 0; k < n_ops; ++k) relaxed.dur[k] = g.dur[k];
  for (std::size_t e = 0; e < g.from.size(); ++e) {
    if (g.from[e] < n_ops && g.to[e] < n_ops) relaxed.add(g.from[e], g.to[e], true);
  }
  for (const std::uint32_t j : rems) {
    if (is_impossible[j]) continue;
    const std::uint32_t u = rem_node[j];
    const bool pinned = jobs[j].rank != any_rank;
    relaxed.dur[u] = left[j], relaxed.rank[u] = pinned ? jobs[j].rank : 0;
    if (jobs[j].after) relaxed.add(node_of(*jobs[j].after), u, pinned);
    if (jobs[j].before) relaxed.add(u, node_of(*jobs[j].before), pinned);
  }
  relaxed.lists.assign(static_cast<std::size_t>(f.P), {});
  for (std::size_t r = 0; r < relaxed.lists.size(); ++r) {
    for (const std::uint32_t u : g.lists[r]) {
      if (u < n_ops) relaxed.lists[r].push_back(u);
    }
  }
  relaxed.build();
  std::vector<std::int64_t> relaxed_start;
  std::int64_t bound = 0;
  detail::require(relaxed.run(relaxed.next_on_rank(), relaxed_start, bound), "ctpipe: stretch_fill's graph has a cycle (a bug)");
  std::vector<std::int64_t> load(static_cast<std::size_t>(f.P), 0);  // per rank: what must run on it
  for (std::size_t u = 0; u < n_ops + n_pieces; ++u) load[static_cast<std::size_t>(g.rank[u])] += g.dur[u];
  for (const std::uint32_t j : rems) {
    const int only = f.P == 1 ? 0 : jobs[j].rank;
    if (!is_impossible[j] && only != any_rank) load[static_cast<std::size_t>(only)] += left[j];
  }
  for (const std::int64_t x : load) bound = std::max(bound, x);
  detail::require(bound <= makespan && f.T <= makespan, "ctpipe: stretch_fill's bound exceeds its makespan (a bug)");

  std::sort(out.impossible.begin(), out.impossible.end());
  const auto time = [&](std::int64_t t) { return f.tick * rational{t}; };
  out.old_makespan = time(f.T), out.makespan = time(makespan), out.stretch = time(makespan - f.T);
  out.bound = time(bound), out.least = bound == makespan;
  for (const std::uint32_t j : rems) {
    const std::uint32_t u = rem_node[j];
    if (!is_impossible[j]) out.placed.push_back({j, g.rank[u], time(start[u]), time(start[u] + g.dur[u])});
  }
  out.pieces.resize(n_pieces);
  for (std::size_t q = 0; q < n_pieces; ++q) {
    const std::size_t u = n_ops + q;
    out.pieces[q] = {p[q].job, p[q].rank, time(start[u]), time(start[u] + g.dur[u])};
  }
  out.op_start.resize(n_ops), out.op_end.resize(n_ops);
  for (std::size_t k = 0; k < n_ops; ++k) {
    const std::size_t u = pair_b[k] ? k - 1 : k;
    out.op_start[k] = time(start[u]), out.op_end[k] = time(start[u] + g.dur[u]);
  }
  return out;
}

}  // namespace ctpipe
