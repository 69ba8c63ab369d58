// ctpipe/plan/fill_stretch.hpp: letting the pipeline grow to take what its bubbles
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

#include "ctpipe/core/error.hpp"
#include "ctpipe/plan/fill.hpp"

namespace ctpipe {

/// A job stretch_fill() left out although the schedule itself admits it: its release op
/// does not depend on its deadline op in the schedule with the fill's pieces, but does
/// once the remainders in `by` sit where the greedy inserted them.
struct stretch_blocked {
  std::uint32_t job = 0;          ///< the job (index into the jobs)
  std::vector<std::uint32_t> by;  ///< the jobs whose inserted remainders lie on the path from its deadline op to its
                                  ///< release op (sorted, at least one)
  /// Proved: no stretch (keeping every rank's pipeline ops in their order) inserts it
  /// beside all the remainders of stretch_result::placed: with their windows, its window
  /// closes a cycle of the schedule's dependencies (the bound's relaxation; stretch_fill()
  /// says). False: the greedy did not find a place, which does not mean there is none.
  bool proved = false;
};

/// What stretch_fill() did. Times are exact, in time units of `t_f`, and are those of the
/// stretched timeline unless said otherwise. Shapes: `placed` one entry per job with time
/// left that was inserted, in job order; `impossible` job indices, ascending; `blocked`
/// one entry per job left out by the greedy's own insertions, in job order; `pieces` the
/// fill's pieces in fill_result::pieces' order; `op_start`/`op_end` one entry per op of
/// the schedule, flat order. Every job with time left is in exactly one of `placed`,
/// `impossible` and `blocked`.
struct stretch_result {
  rational old_makespan{0};  ///< T, the schedule's makespan (the fill's, unchanged by it)
  rational makespan{0};      ///< T' of the stretched timeline: the end of its last op, piece or remainder
  rational stretch{0};       ///< T' - T (>= 0)
  /// A lower bound on T' for any stretch that keeps every rank's pipeline ops in their
  /// order and the fill's pieces on their ranks, and inserts the remainders of `placed`
  /// (stretch_fill() says how it is computed). With `blocked` empty those are the
  /// remainders of every job some order admits; else it bounds a smaller set than a
  /// stretch taking all of them, and says nothing about that one.
  rational bound{0};
  /// makespan == bound and `blocked` is empty: no stretch that inserts every job some
  /// order admits ends earlier (jobs in `impossible` fit none).
  bool least = false;
  /// The remainders: per job with time left, one piece {job, rank, start, end} of that
  /// length, after the job's placed pieces, within its window of the stretched timeline.
  std::vector<fill_piece> placed;
  /// Jobs with time left that no order of the lists admits: in the schedule with the
  /// fill's pieces (which stay), their release op depends on their deadline op (or is
  /// it), so it cannot end before that op starts. Not placed.
  std::vector<std::uint32_t> impossible;
  /// Jobs with time left that the schedule admits but the greedy could not insert, even
  /// after retrying them earlier in its order (stretch_blocked). Not placed.
  std::vector<stretch_blocked> blocked;
  std::vector<fill_piece> pieces;           ///< the fill's pieces, moved with the timeline (same rank and order)
  std::vector<rational> op_start, op_end;   ///< every pipeline op's new start and end (a pair's B word: its pair's)
  const char* method = "greedy insertion";  ///< how the remainders were placed
  int passes =
      0;  ///< greedy passes run (orders tried): 1, more when a job was blocked (stretch_fill()); 0 with nothing left
};

/// Limits of stretch_fill(). `work` bounds the steps of its re-simulations: one greedy
/// pass takes about remainders x ranks tried x 4 positions x (nodes + edges) of them
/// (about 2 s at the default on one core of a 2-core machine, measured); a first pass
/// over it is refused (stretch_limit_error), and the retries stop before their total
/// would pass it. `passes` bounds the greedy passes, the first one included (>= 1).
struct stretch_limits {
  std::uint64_t work = 500'000'000;
  int passes = 16;
};

/// What stretch_fill() raises when one greedy pass would take more than
/// stretch_limits::work: a ctpipe::error (catch it as one; what() is `ctpipe:
/// stretch_fill would take more work than stretch_limits::work allows (remainders x
/// ranks x 4 positions x graph size)`) that also carries the numbers, so that a caller
/// can say what to shrink.
class stretch_limit_error : public error {
 public:
  stretch_limit_error(std::size_t remainders_, std::uint64_t work_, std::uint64_t limit_) noexcept
      : error(
            "ctpipe: stretch_fill would take more work than stretch_limits::work allows (remainders x ranks x 4 "
            "positions x graph size)"),
        remainders(remainders_),
        work(work_),
        limit(limit_) {}
  std::size_t remainders = 0;  ///< the jobs with time left (remainders to insert)
  std::uint64_t work = 0;      ///< one pass's estimated steps
  std::uint64_t limit = 0;     ///< stretch_limits::work
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

  void add(std::uint32_t a, std::uint32_t b, bool crosses) {
    from.push_back(a), to.push_back(b), cross.push_back(crosses ? 1 : 0);
  }
  /// The CSR of the edges in both directions. Linear.
  void build() {
    const std::size_t N = dur.size(), E = from.size();
    out_first.assign(N + 1, 0), in_first.assign(N + 1, 0), out_edge.assign(E, 0), in_edge.assign(E, 0);
    for (std::size_t e = 0; e < E; ++e) ++out_first[from[e] + 1], ++in_first[to[e] + 1];
    for (std::size_t u = 0; u < N; ++u) out_first[u + 1] += out_first[u], in_first[u + 1] += in_first[u];
    std::vector<std::uint32_t> o(out_first.begin(), out_first.end() - 1), i(in_first.begin(), in_first.end() - 1);
    for (std::size_t e = 0; e < E; ++e)
      out_edge[o[from[e]]++] = static_cast<std::uint32_t>(e), in_edge[i[to[e]]++] = static_cast<std::uint32_t>(e);
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
      for (std::uint32_t q = out_first[u]; q < out_first[u + 1]; ++q)
        reach(to[out_edge[q]], end + latency(out_edge[q]));
      if (next[u] != no_node) reach(next[u], end);
    }
    return queue.size() == N;
  }

  /// The nodes reachable from `seeds` (themselves included) along the edges and the
  /// ranks' orders, forward or backward. Linear.
  std::vector<char> reach_from(std::span<const std::uint32_t> seeds, bool forward,
                               const std::vector<std::uint32_t>& next) const {
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
inline buffer<tick_piece> stretch_input(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs,
                                        const fill_result& fill) {
  constexpr const char* message =
      "ctpipe: stretch_fill takes a one-iteration fill of these jobs on this schedule (fill_bubbles() or "
      "fill_bubbles_optimal() without "
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
/// Method (a heuristic, "greedy insertion"): a pass takes the remainders one by one, at
/// first by their deadline op's start (those without a deadline last, by their release
/// op's end, then job index); for each rank the job may use, the positions next to its
/// window in that rank's list as it stands: just after the last node that must precede
/// its release op or its job's last piece (on the release op's rank: just after the
/// release op; with no release: the rank's start), just before the first node that must
/// follow its deadline op (on the deadline op's rank: just before it; with no deadline:
/// the rank's end), and, between the two, the first idle interval that holds it whole
/// and the longest one. Every position between those two is free of cycles, and no other
/// is. Each is tried by a full re-simulation; the one with the least makespan is kept
/// (then the least sum of the pipeline ops' starts, then the earliest end of the
/// remainder, then the lower rank and position). It is not proved to give the least
/// makespan.
///
/// Jobs left out. A job whose release op depends on its deadline op (or is it) in the
/// schedule with the fill's pieces fits no order: `impossible`. A job whose release op
/// depends on its deadline op only through remainders inserted before it in the pass is
/// blocked, not impossible: the greedy runs another pass, from scratch and re-simulated
/// exactly as the first, with that job moved just before the earliest of those
/// remainders in the order, and keeps the pass that leaves out the least time (then the
/// fewest jobs, then the least makespan). It tries each blocked job of the best pass so
/// far in turn, each order once, and stops when a pass leaves nothing blocked, when no
/// untried order is left, after `limits.passes` passes, or before the passes' work would
/// pass `limits.work`. The jobs still blocked are reported in `blocked` with the jobs
/// whose remainders block them.
///
/// Bound: the larger of two. (1) The longest path of the schedule's ops (their
/// dependencies with t_c, each rank's order) with each placed remainder as a node after
/// its release op and before its deadline op (t_c charged only when the job cannot run
/// on that op's rank), the fill's pieces and the ranks' sharing left out. (2) Per rank,
/// its ops, its pieces and the placed remainders that can run nowhere else (pinned to
/// it, or P = 1), one after another. Every stretch that keeps each rank's op order and
/// the fill's pieces on their ranks, and places the same remainders, meets both, so none
/// ends before the bound; `least` when the makespan reaches it and no job is blocked. A
/// blocked job is `proved` when (1) with its remainder added to the placed ones has a
/// cycle: then no such stretch places it beside them.
///
/// Cost: with N nodes (ops + pieces + remainders), E edges (at most 3 per op, piece or
/// remainder, besides the ranks' orders) and R remainders: O(R x P x (N + E)) a pass (at
/// most 4 positions per rank, each one re-simulation), at most `limits.passes` passes
/// within `limits.work`; plus O(N + E) for the check of `fill`, the bound, the result,
/// and per job checked for impossibility or blocked. Memory O(N + E) per pass kept (two
/// at once). A first pass whose R x (ranks the jobs may use) x 4 x (2N + E + 3R) exceeds
/// `limits.work` is refused up front.
///
/// Returns a stretch_result: the stretched makespan and the stretch, the bound, where
/// each remainder went, the jobs no order admits, the jobs blocked, the new times of the
/// fill's pieces and of every pipeline op, the passes run. A fill with nothing left
/// gives stretch 0.
///
/// Errors: simulate()'s and check_jobs()' messages, rational overflow (the stretched
/// times are checked once against the sum of every length and latency),
/// `ctpipe: stretch_fill takes a one-iteration fill of these jobs on this schedule
/// (fill_bubbles() or fill_bubbles_optimal() without steady_state)` when `fill` is not
/// one (stretch_input()), `ctpipe: stretch_limits::passes must be >= 1`, and
/// stretch_limit_error (`ctpipe: stretch_fill would take more work than
/// stretch_limits::work allows (remainders x ranks x 4 positions x graph size)`, with the
/// numbers).
inline stretch_result stretch_fill(schedule_view v, const costs& c, std::span<const fill_job> jobs,
                                   const fill_result& fill, const cost_scale& scale = {}, stretch_limits limits = {}) {
  using detail::no_node;
  detail::require(limits.passes >= 1, "ctpipe: stretch_limits::passes must be >= 1");
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
    if (left[j] > 0)
      rem_node[j] = static_cast<std::uint32_t>(n_ops + n_pieces + rems.size()),
      rems.push_back(static_cast<std::uint32_t>(j));
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
      const bool take_op =
          k < v.offsets[r + 1] && (q == n_pieces || p[q].rank != static_cast<int>(r) || f.start[k] <= p[q].lo);
      g.lists[r].push_back(take_op ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(n_ops + q));
      if (take_op)
        k += v.ops[k].kind() == op_kind::overlap_f_b ? 2 : 1;
      else
        ++q;
    }
  }
  // Every stretched time is at most the sum of all lengths and a latency per node (a
  // path's edges): checked once.
  std::int64_t longest = 0;
  for (std::size_t u = 0; u < N; ++u) longest = rational::add(longest, g.dur[u]);
  for (const std::uint32_t j : rems) longest = rational::add(longest, left[j]);
  rational::add(longest, rational::mul(f.c, static_cast<std::int64_t>(N) + 1));

  // One pass's work (saturating), refused up front over the limit.
  std::uint64_t pass_work = 0;
  {
    const std::uint64_t size = 2 * static_cast<std::uint64_t>(N) + g.from.size() + 3 * rems.size();
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    for (const std::uint32_t j : rems) {
      const std::uint64_t ranks = jobs[j].rank == any_rank ? static_cast<std::uint64_t>(f.P) : 1;
      const std::uint64_t one = size > most / (4 * ranks) ? most : 4 * ranks * size;
      pass_work = one > most - pass_work ? most : pass_work + one;
    }
    if (pass_work > limits.work) throw stretch_limit_error(rems.size(), pass_work, limits.work);
  }
  // The remainders in deadline order (no deadline last, by release): the first pass's order.
  const auto deadline = [&](std::uint32_t j) {
    return jobs[j].before ? f.start[f.index.find(*jobs[j].before) - 1] : std::numeric_limits<std::int64_t>::max();
  };
  const auto release = [&](std::uint32_t j) {
    return jobs[j].after ? f.end[f.index.find(*jobs[j].after) - 1] : std::int64_t{-1};
  };
  std::vector<std::uint32_t> first_order = rems;
  std::sort(first_order.begin(), first_order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return deadline(a) != deadline(b) ? deadline(a) < deadline(b)
           : release(a) != release(b) ? release(a) < release(b)
                                      : a < b;
  });
  g.build();
  {
    std::vector<std::int64_t> start;
    std::int64_t makespan = 0;
    detail::require(g.run(g.next_on_rank(), start, makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
  }
  // Whether job j's release op depends on its deadline op in the schedule with the
  // fill's pieces (no remainder inserted): impossible in every order. Cached.
  const std::vector<std::uint32_t> base_next = g.next_on_rank();
  std::vector<signed char> base_depends(J, -1);
  const auto impossible_job = [&](std::uint32_t j) {
    if (base_depends[j] < 0) {
      const std::uint32_t D = node_of(*jobs[j].before);
      base_depends[j] =
          g.reach_from(std::span<const std::uint32_t>(&D, 1), true, base_next)[node_of(*jobs[j].after)] ? 1 : 0;
    }
    return base_depends[j] == 1;
  };

  // A greedy pass over the remainders in `order`, on a copy of the graph.
  struct pass {
    std::vector<std::uint32_t> order;
    detail::stretch_graph g;
    std::vector<std::int64_t> start;
    std::int64_t makespan = 0;
    std::vector<char> placed;  // per job
    std::vector<std::uint32_t> impossible;
    std::vector<stretch_blocked> blocked;  // in the order tried
    std::int64_t left_out = 0;             // the blocked jobs' time left (ticks)
  };
  const auto run_pass = [&](std::vector<std::uint32_t> order) {
    pass out;
    out.order = std::move(order), out.g = g, out.placed.assign(J, 0);
    detail::stretch_graph& h = out.g;
    std::vector<std::int64_t>& start = out.start;
    std::vector<std::int64_t> trial;
    detail::require(h.run(h.next_on_rank(), start, out.makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
    for (const std::uint32_t j : out.order) {
      const fill_job& job = jobs[j];
      const std::uint32_t u = rem_node[j];
      const std::uint32_t A = job.after ? node_of(*job.after) : no_node,
                          D = job.before ? node_of(*job.before) : no_node;
      const std::uint32_t L = last_piece[j];
      const std::vector<std::uint32_t> next = h.next_on_rank();
      std::vector<char> after_it(N, 0), before_it(N, 0);  // must follow D; must precede A or L
      if (D != no_node) after_it = h.reach_from(std::span<const std::uint32_t>(&D, 1), true, next);
      std::vector<std::uint32_t> seeds;
      if (A != no_node) seeds.push_back(A);
      if (L != no_node) seeds.push_back(L);
      if (!seeds.empty()) before_it = h.reach_from(seeds, false, next);
      if (A != no_node && after_it[A]) {  // its release op depends on its deadline op
        if (impossible_job(j)) {
          out.impossible.push_back(j);
          continue;
        }
        // Blocked: a path from D to A runs through remainders inserted before it.
        const std::vector<char> to_A = h.reach_from(std::span<const std::uint32_t>(&A, 1), false, next);
        stretch_blocked b{j, {}, false};
        for (const std::uint32_t k : rems) {
          if (out.placed[k] && after_it[rem_node[k]] && to_A[rem_node[k]]) b.by.push_back(k);
        }
        detail::require(!b.by.empty(), "ctpipe: stretch_fill found a job blocked by no remainder (a bug)");
        out.left_out += left[j];
        out.blocked.push_back(std::move(b));
        continue;
      }
      if (A != no_node) h.add(A, u, true);
      if (D != no_node) h.add(u, D, true);
      if (L != no_node) h.add(L, u, false);
      h.dur[u] = left[j];
      h.build();
      // Candidates on every rank the job may use; the least (makespan, delay, end, rank, position).
      std::int64_t best_T = std::numeric_limits<std::int64_t>::max(), best_delay = 0, best_end = 0;
      int best_r = -1;
      std::size_t best_p = 0;
      for (int r = 0; r < f.P; ++r) {
        if (job.rank != any_rank && job.rank != r) continue;
        const std::vector<std::uint32_t>& list = h.lists[static_cast<std::size_t>(r)];
        std::size_t lo = 0, hi = list.size();
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (before_it[list[i]]) lo = i + 1;
        }
        for (std::size_t i = list.size(); i-- > 0;) {
          if (after_it[list[i]]) hi = i;
        }
        detail::require(lo <= hi, "ctpipe: stretch_fill found no place free of cycles (a bug)");
        std::int64_t ready = L != no_node ? start[L] + h.dur[L] : 0;
        if (A != no_node) ready = std::max(ready, start[A] + h.dur[A] + (r != h.rank[A] ? f.c : 0));
        std::size_t positions[4] = {lo, hi, hi, hi};
        std::int64_t longest_gap = 0;
        bool whole = false;
        for (std::size_t i = lo + 1; i < hi; ++i) {
          const std::int64_t gap = start[list[i]] - std::max(start[list[i - 1]] + h.dur[list[i - 1]], ready);
          if (gap > longest_gap) longest_gap = gap, positions[2] = i;
          if (!whole && gap >= left[j]) whole = true, positions[3] = i;
        }
        std::sort(positions, positions + 4);
        for (int k = 0; k < 4; ++k) {
          if (k > 0 && positions[k] == positions[k - 1]) continue;
          h.rank[u] = r;
          std::int64_t T = 0;
          detail::require(h.run(h.next_on_rank(u, r, positions[k]), trial, T),
                          "ctpipe: stretch_fill's insertion made a cycle (a bug)");
          const std::int64_t end = trial[u] + left[j];
          std::int64_t delay = 0;  // the pipeline ops' starts summed (saturating: a tie-break only)
          for (std::size_t q = 0; q < n_ops; ++q)
            delay = trial[q] > std::numeric_limits<std::int64_t>::max() - delay
                        ? std::numeric_limits<std::int64_t>::max()
                        : delay + trial[q];
          const bool better = T != best_T ? T < best_T : delay != best_delay ? delay < best_delay : end < best_end;
          if (better) best_T = T, best_delay = delay, best_end = end, best_r = r, best_p = positions[k];
        }
      }
      h.rank[u] = best_r;
      std::vector<std::uint32_t>& list = h.lists[static_cast<std::size_t>(best_r)];
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(best_p), u);
      detail::require(h.run(h.next_on_rank(), start, out.makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
      out.placed[j] = 1;
    }
    return out;
  };

  // The first pass; while jobs are blocked, passes with one of them moved before its
  // blockers, the best kept (least time left out, fewest jobs, least makespan).
  pass best = run_pass(first_order);
  int passes = 1;
  std::uint64_t spent = pass_work;
  std::vector<std::vector<std::uint32_t>> tried{best.order};
  while (!best.blocked.empty() && passes < limits.passes && spent <= limits.work - pass_work) {
    std::vector<std::uint32_t> retry;
    std::vector<std::ptrdiff_t> at(J, 0);  // per job: its place in the best pass's order
    for (std::size_t i = 0; i < best.order.size(); ++i) at[best.order[i]] = static_cast<std::ptrdiff_t>(i);
    for (const stretch_blocked& b : best.blocked) {
      std::ptrdiff_t first = at[b.job];
      for (const std::uint32_t k : b.by) first = std::min(first, at[k]);
      std::vector<std::uint32_t> order = best.order;
      order.erase(order.begin() + at[b.job]);
      order.insert(order.begin() + first, b.job);
      if (std::find(tried.begin(), tried.end(), order) == tried.end()) {
        retry = std::move(order);
        break;
      }
    }
    if (retry.empty()) break;
    tried.push_back(retry);
    pass next = run_pass(std::move(retry));
    ++passes, spent += pass_work;
    const bool better = next.left_out != best.left_out               ? next.left_out < best.left_out
                        : next.blocked.size() != best.blocked.size() ? next.blocked.size() < best.blocked.size()
                                                                     : next.makespan < best.makespan;
    if (better) best = std::move(next);
  }
  const detail::stretch_graph& h = best.g;
  const std::vector<std::int64_t>& start = best.start;
  const std::int64_t makespan = best.makespan;

  // The bound: ops and placed remainders only (the file comment's relaxation).
  detail::stretch_graph relaxed;
  relaxed.c = f.c;
  relaxed.dur.assign(N, 0), relaxed.rank = h.rank;
  for (std::size_t k = 0; k < n_ops; ++k) relaxed.dur[k] = h.dur[k];
  for (std::size_t e = 0; e < h.from.size(); ++e) {
    if (h.from[e] < n_ops && h.to[e] < n_ops) relaxed.add(h.from[e], h.to[e], true);
  }
  const auto add_relaxed = [&](detail::stretch_graph& x, std::uint32_t j) {
    const std::uint32_t u = rem_node[j];
    const bool pinned = jobs[j].rank != any_rank;
    x.dur[u] = left[j], x.rank[u] = pinned ? jobs[j].rank : 0;
    if (jobs[j].after) x.add(node_of(*jobs[j].after), u, pinned);
    if (jobs[j].before) x.add(u, node_of(*jobs[j].before), pinned);
  };
  for (const std::uint32_t j : rems) {
    if (best.placed[j]) add_relaxed(relaxed, j);
  }
  relaxed.lists.assign(static_cast<std::size_t>(f.P), {});
  for (std::size_t r = 0; r < relaxed.lists.size(); ++r) {
    for (const std::uint32_t u : h.lists[r]) {
      if (u < n_ops) relaxed.lists[r].push_back(u);
    }
  }
  // A blocked job is proved left out when its window closes a cycle with the placed ones'.
  std::vector<std::int64_t> relaxed_start;
  std::int64_t bound = 0;
  for (stretch_blocked& b : best.blocked) {
    detail::stretch_graph with = relaxed;
    add_relaxed(with, b.job);
    with.build();
    b.proved = !with.run(with.next_on_rank(), relaxed_start, bound);
  }
  relaxed.build();
  detail::require(relaxed.run(relaxed.next_on_rank(), relaxed_start, bound),
                  "ctpipe: stretch_fill's graph has a cycle (a bug)");
  std::vector<std::int64_t> load(static_cast<std::size_t>(f.P), 0);  // per rank: what must run on it
  for (std::size_t u = 0; u < n_ops + n_pieces; ++u) load[static_cast<std::size_t>(h.rank[u])] += h.dur[u];
  for (const std::uint32_t j : rems) {
    const int only = f.P == 1 ? 0 : jobs[j].rank;
    if (best.placed[j] && only != any_rank) load[static_cast<std::size_t>(only)] += left[j];
  }
  for (const std::int64_t x : load) bound = std::max(bound, x);
  detail::require(bound <= makespan && f.T <= makespan, "ctpipe: stretch_fill's bound exceeds its makespan (a bug)");

  stretch_result out;
  out.impossible = std::move(best.impossible);
  std::sort(out.impossible.begin(), out.impossible.end());
  out.blocked = std::move(best.blocked);
  std::sort(out.blocked.begin(), out.blocked.end(),
            [](const stretch_blocked& a, const stretch_blocked& b) { return a.job < b.job; });
  out.passes = rems.empty() ? 0 : passes;
  const auto time = [&](std::int64_t t) { return f.tick * rational{t}; };
  out.old_makespan = time(f.T), out.makespan = time(makespan), out.stretch = time(makespan - f.T);
  out.bound = time(bound), out.least = bound == makespan && out.blocked.empty();
  for (const std::uint32_t j : rems) {
    const std::uint32_t u = rem_node[j];
    if (best.placed[j]) out.placed.push_back({j, h.rank[u], time(start[u]), time(start[u] + h.dur[u])});
  }
  out.pieces.resize(n_pieces);
  for (std::size_t q = 0; q < n_pieces; ++q) {
    const std::size_t u = n_ops + q;
    out.pieces[q] = {p[q].job, p[q].rank, time(start[u]), time(start[u] + h.dur[u])};
  }
  out.op_start.resize(n_ops), out.op_end.resize(n_ops);
  for (std::size_t k = 0; k < n_ops; ++k) {
    const std::size_t u = pair_b[k] ? k - 1 : k;
    out.op_start[k] = time(start[u]), out.op_end[k] = time(start[u] + h.dur[u]);
  }
  return out;
}

}  // namespace ctpipe
