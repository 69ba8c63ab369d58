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
  /// (each edge's end plus its latency) allow, by graph.hpp's earliest_starts(): `start`
  /// per node (ticks) and the makespan (the latest end). False when a cycle leaves nodes
  /// unrun. Linear.
  bool run(const std::vector<std::uint32_t>& next, std::vector<std::int64_t>& start, std::int64_t& makespan) const;
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

/// A stretch_graph with each rank's order (`next`: the node after each node on its rank)
/// in the form graph.hpp's earliest_starts() takes: every node runs; a node's inputs are
/// its edges' sources and the node before it on its rank.
struct stretch_order {
  const stretch_graph& g;
  const std::vector<std::uint32_t>& next;

  std::size_t nodes() const { return g.dur.size(); }
  bool runs(std::size_t) const { return true; }
  void count_inputs(buffer<std::uint32_t>& pending) const {
    for (std::size_t u = 0; u < nodes(); ++u) pending[u] += g.in_first[u + 1] - g.in_first[u];
    for (std::size_t u = 0; u < nodes(); ++u) {
      if (next[u] != no_node) ++pending[next[u]];
    }
  }
  std::int64_t start_at(std::size_t, std::int64_t ready) const { return ready; }
  std::int64_t end_at(std::size_t u, std::int64_t start) const { return start + g.dur[u]; }
  template <class Reach>
  void outputs(std::size_t u, std::int64_t end, Reach& reach) const {
    for (std::uint32_t q = g.out_first[u]; q < g.out_first[u + 1]; ++q)
      reach(g.to[g.out_edge[q]], end + g.latency(g.out_edge[q]));
    if (next[u] != no_node) reach(next[u], end);
  }
};

inline bool stretch_graph::run(const std::vector<std::uint32_t>& next, std::vector<std::int64_t>& start,
                               std::int64_t& makespan) const {
  const std::size_t N = dur.size();
  std::vector<std::int64_t> ready(N, 0);
  start.assign(N, 0);
  const bool all = earliest_starts(stretch_order{*this, next}, start, ready) == N;
  makespan = 0;
  for (std::size_t u = 0; u < N; ++u) makespan = std::max(makespan, start[u] + dur[u]);
  return all;
}

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

/// A greedy pass of stretch_fill() over the remainders in `order`, on its own copy of the
/// graph: the start of every node (ticks) and the makespan after it, per job whether its
/// remainder was placed, the jobs found impossible and those blocked (in the order
/// tried), and the blocked jobs' time left (ticks).
struct stretch_pass {
  std::vector<std::uint32_t> order;
  stretch_graph g;
  std::vector<std::int64_t> start;
  std::int64_t makespan = 0;
  std::vector<char> placed;
  std::vector<std::uint32_t> impossible;
  std::vector<stretch_blocked> blocked;
  std::int64_t left_out = 0;
};

/// The best place found so far for a remainder (stretch_planner::try_rank()): the least
/// makespan, then the least sum of the pipeline ops' starts (`delay`), then the earliest
/// end of the remainder; its rank and position in that rank's list (-1: none yet).
struct stretch_choice {
  std::int64_t T = std::numeric_limits<std::int64_t>::max(), delay = 0, end = 0;
  int r = -1;
  std::size_t p = 0;
};

/// A remainder's place in a pass: its node `u`, its job's release op `A`, deadline op `D`
/// and latest placed piece `L` (nodes, no_node when absent), and per node whether it must
/// follow D (`after_it`) or precede A or L (`before_it`) in the graph as it stands.
struct stretch_slot {
  std::uint32_t j = 0, u = 0, A = no_node, D = no_node, L = no_node;
  std::vector<char> after_it, before_it;
};

/// stretch_fill()'s state (its doc comment): the schedule's frame and the fill's pieces
/// in ticks; per job its time left and its remainder's node; the graph of the timeline
/// with the pieces (stretch_graph: ops, pieces, then one node per remainder, isolated and
/// of length 0 until its turn); each job's latest piece; one pass's estimated work; the
/// first pass's order; per job whether its release op depends on its deadline op without
/// any remainder (cached). Run time.
class stretch_planner {
 public:
  stretch_planner(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs, const buffer<tick_piece>& p,
                  const fill_result& fill)
      : v_(v), f_(f), jobs_(jobs), p_(p), pair_b_(pair_b_words(v)), n_ops_(v.size()), n_pieces_(p.size()) {
    const std::size_t J = jobs.size();
    left_.assign(J, 0), rem_node_.assign(J, no_node), base_depends_.assign(J, -1);
    for (std::size_t j = 0; j < J; ++j) left_[j] = f.dur[j] - f.ticks(fill.placed[j]);
    for (std::size_t j = 0; j < J; ++j) {
      if (left_[j] > 0)
        rem_node_[j] = static_cast<std::uint32_t>(n_ops_ + n_pieces_ + rems_.size()),
        rems_.push_back(static_cast<std::uint32_t>(j));
    }
    N_ = n_ops_ + n_pieces_ + rems_.size();
    build_graph();
    // Every stretched time is at most the sum of all lengths and a latency per node (a
    // path's edges): checked once.
    std::int64_t longest = 0;
    for (std::size_t u = 0; u < N_; ++u) longest = rational::add(longest, g_.dur[u]);
    for (const std::uint32_t j : rems_) longest = rational::add(longest, left_[j]);
    rational::add(longest, rational::mul(f.c, static_cast<std::int64_t>(N_) + 1));
  }

  /// One pass's work (saturating), refused over `limits.work` (stretch_limit_error);
  /// then the first pass's order and the graph checked free of cycles.
  void check_work(const stretch_limits& limits) {
    const std::uint64_t size = 2 * static_cast<std::uint64_t>(N_) + g_.from.size() + 3 * rems_.size();
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    for (const std::uint32_t j : rems_) {
      const std::uint64_t ranks = jobs_[j].rank == any_rank ? static_cast<std::uint64_t>(f_.P) : 1;
      const std::uint64_t one = size > most / (4 * ranks) ? most : 4 * ranks * size;
      pass_work_ = one > most - pass_work_ ? most : pass_work_ + one;
    }
    if (pass_work_ > limits.work) throw stretch_limit_error(rems_.size(), pass_work_, limits.work);
    order_by_deadline();
    g_.build();
    std::vector<std::int64_t> start;
    std::int64_t makespan = 0;
    require(g_.run(g_.next_on_rank(), start, makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
    base_next_ = g_.next_on_rank();
  }

  /// The first pass; while jobs are blocked, passes with one of them moved before its
  /// blockers, the best kept (least time left out, fewest jobs, least makespan).
  /// `spent`: the passes' estimated work; `passes`: how many ran.
  stretch_pass best_pass(const stretch_limits& limits, std::uint64_t& spent, int& passes) {
    stretch_pass best = run_pass(first_order_);
    passes = 1, spent = pass_work_;
    std::vector<std::vector<std::uint32_t>> tried{best.order};
    while (!best.blocked.empty() && passes < limits.passes && spent <= limits.work - pass_work_) {
      std::vector<std::uint32_t> retry = retry_order(best, tried);
      if (retry.empty()) break;
      tried.push_back(retry);
      stretch_pass next = run_pass(std::move(retry));
      ++passes, spent += pass_work_;
      const bool better = next.left_out != best.left_out               ? next.left_out < best.left_out
                          : next.blocked.size() != best.blocked.size() ? next.blocked.size() < best.blocked.size()
                                                                       : next.makespan < best.makespan;
      if (better) best = std::move(next);
    }
    return best;
  }

  /// The bound of pass `best` (stretch_fill()'s doc comment), and whether each of its
  /// blocked jobs is proved left out.
  std::int64_t bound(stretch_pass& best) const {
    const stretch_graph& h = best.g;
    const stretch_graph relaxed = relaxed_graph(best);
    // A blocked job is proved left out when its window closes a cycle with the placed ones'.
    std::vector<std::int64_t> relaxed_start;
    std::int64_t bound = 0;
    for (stretch_blocked& b : best.blocked) {
      stretch_graph with = relaxed;
      add_relaxed(with, b.job);
      with.build();
      b.proved = !with.run(with.next_on_rank(), relaxed_start, bound);
    }
    require(relaxed.run(relaxed.next_on_rank(), relaxed_start, bound),
            "ctpipe: stretch_fill's graph has a cycle (a bug)");
    std::vector<std::int64_t> load(static_cast<std::size_t>(f_.P), 0);  // per rank: what must run on it
    for (std::size_t u = 0; u < n_ops_ + n_pieces_; ++u) load[static_cast<std::size_t>(h.rank[u])] += h.dur[u];
    for (const std::uint32_t j : rems_) {
      const int only = f_.P == 1 ? 0 : jobs_[j].rank;
      if (best.placed[j] && only != any_rank) load[static_cast<std::size_t>(only)] += left_[j];
    }
    for (const std::int64_t x : load) bound = std::max(bound, x);
    require(bound <= best.makespan && f_.T <= best.makespan,
            "ctpipe: stretch_fill's bound exceeds its makespan (a bug)");
    return bound;
  }

  /// stretch_fill()'s result from pass `best`, its bound and the passes run.
  stretch_result result(stretch_pass best, std::int64_t bound, int passes) const {
    const stretch_graph& h = best.g;
    const std::vector<std::int64_t>& start = best.start;
    stretch_result out;
    out.impossible = std::move(best.impossible);
    std::sort(out.impossible.begin(), out.impossible.end());
    out.blocked = std::move(best.blocked);
    std::sort(out.blocked.begin(), out.blocked.end(),
              [](const stretch_blocked& a, const stretch_blocked& b) { return a.job < b.job; });
    out.passes = rems_.empty() ? 0 : passes;
    const auto time = [&](std::int64_t t) { return f_.tick * rational{t}; };
    out.old_makespan = time(f_.T), out.makespan = time(best.makespan), out.stretch = time(best.makespan - f_.T);
    out.bound = time(bound), out.least = bound == best.makespan && out.blocked.empty();
    for (const std::uint32_t j : rems_) {
      const std::uint32_t u = rem_node_[j];
      if (best.placed[j]) out.placed.push_back({j, h.rank[u], time(start[u]), time(start[u] + h.dur[u])});
    }
    out.pieces.resize(n_pieces_);
    for (std::size_t q = 0; q < n_pieces_; ++q) {
      const std::size_t u = n_ops_ + q;
      out.pieces[q] = {p_[q].job, p_[q].rank, time(start[u]), time(start[u] + h.dur[u])};
    }
    out.op_start.resize(n_ops_), out.op_end.resize(n_ops_);
    for (std::size_t k = 0; k < n_ops_; ++k) {
      const std::size_t u = op_node(pair_b_, static_cast<std::uint32_t>(k));
      out.op_start[k] = time(start[u]), out.op_end[k] = time(start[u] + h.dur[u]);
    }
    return out;
  }

 private:
  /// The node of a compute op of the schedule.
  std::uint32_t node_of(op o) const { return op_node(pair_b_, f_.index.find(o) - 1); }

  /// The graph: ops, pieces (as resimulate_unchanged() inserts them, fill.hpp), the
  /// remainders isolated and of length 0 until their turn; each job's latest piece.
  void build_graph() {
    stretch_graph& g = g_;
    g.c = f_.c;
    g.dur.assign(N_, 0), g.rank.assign(N_, 0);
    for (std::size_t k = 0; k < n_ops_; ++k)
      g.dur[k] = pair_b_[k] ? 0 : f_.end[k] - f_.start[k], g.rank[k] = f_.ranks[k];
    for (std::size_t q = 0; q < n_pieces_; ++q)
      g.dur[n_ops_ + q] = p_[q].hi - p_[q].lo, g.rank[n_ops_ + q] = p_[q].rank;
    {
      op_edges deps(4 * n_ops_ + 1);
      add_dependency_edges(v_, f_.index, f_.ranks, pair_b_, 0, deps);
      for (std::size_t e = 0; e < deps.edges; ++e) g.add(deps.from[e], deps.to[e], true);
    }
    last_piece_.assign(jobs_.size(), no_node);  // per job: its latest piece by time (node)
    add_piece_edges(n_ops_, f_.index, pair_b_, jobs_, p_.span(),
                    [&](std::uint32_t a, std::uint32_t b, bool cross) { g.add(a, b, cross); });
    for (std::size_t q = 0; q < n_pieces_; ++q) {
      std::uint32_t& last = last_piece_[p_[q].job];
      if (last == no_node || p_[last - n_ops_].lo < p_[q].lo) last = static_cast<std::uint32_t>(n_ops_ + q);
    }
    g.lists.assign(static_cast<std::size_t>(f_.P), {});
    merge_rank_lists(v_, f_.start, p_.span(),
                     [&](int r, std::uint32_t node, bool) { g.lists[static_cast<std::size_t>(r)].push_back(node); });
  }

  /// The first pass's order: the remainders by their deadline op's start (no deadline
  /// last), then their release op's end, then job index.
  void order_by_deadline() {
    const auto deadline = [&](std::uint32_t j) {
      return jobs_[j].before ? f_.start[f_.index.find(*jobs_[j].before) - 1] : std::numeric_limits<std::int64_t>::max();
    };
    const auto release = [&](std::uint32_t j) {
      return jobs_[j].after ? f_.end[f_.index.find(*jobs_[j].after) - 1] : std::int64_t{-1};
    };
    first_order_ = rems_;
    std::sort(first_order_.begin(), first_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return deadline(a) != deadline(b) ? deadline(a) < deadline(b)
             : release(a) != release(b) ? release(a) < release(b)
                                        : a < b;
    });
  }

  /// Whether job j's release op depends on its deadline op in the schedule with the
  /// fill's pieces (no remainder inserted): impossible in every order. Cached.
  bool impossible_job(std::uint32_t j) {
    if (base_depends_[j] < 0) {
      const std::uint32_t D = node_of(*jobs_[j].before);
      base_depends_[j] =
          g_.reach_from(std::span<const std::uint32_t>(&D, 1), true, base_next_)[node_of(*jobs_[j].after)] ? 1 : 0;
    }
    return base_depends_[j] == 1;
  }

  /// The next order to try after pass `best`: for the first blocked job whose move puts
  /// an untried order, that job moved just before the earliest of its blockers; empty
  /// when every such order was tried.
  std::vector<std::uint32_t> retry_order(const stretch_pass& best,
                                         const std::vector<std::vector<std::uint32_t>>& tried) const {
    std::vector<std::ptrdiff_t> at(jobs_.size(), 0);  // per job: its place in the best pass's order
    for (std::size_t i = 0; i < best.order.size(); ++i) at[best.order[i]] = static_cast<std::ptrdiff_t>(i);
    for (const stretch_blocked& b : best.blocked) {
      std::ptrdiff_t first = at[b.job];
      for (const std::uint32_t k : b.by) first = std::min(first, at[k]);
      std::vector<std::uint32_t> order = best.order;
      order.erase(order.begin() + at[b.job]);
      order.insert(order.begin() + first, b.job);
      if (std::find(tried.begin(), tried.end(), order) == tried.end()) return order;
    }
    return {};
  }

  /// A greedy pass over the remainders in `order`, on a copy of the graph.
  stretch_pass run_pass(std::vector<std::uint32_t> order) {
    stretch_pass out;
    out.order = std::move(order), out.g = g_, out.placed.assign(jobs_.size(), 0);
    require(out.g.run(out.g.next_on_rank(), out.start, out.makespan),
            "ctpipe: stretch_fill's graph has a cycle (a bug)");
    for (const std::uint32_t j : out.order) {
      stretch_slot s = slot_of(out.g, j);
      if (s.A != no_node && s.after_it[s.A]) {  // its release op depends on its deadline op
        left_out(out, s);
        continue;
      }
      insert(out, s);
      out.placed[j] = 1;
    }
    return out;
  }

  /// Job j's remainder's slot in graph h as it stands.
  stretch_slot slot_of(const stretch_graph& h, std::uint32_t j) const {
    const fill_job& job = jobs_[j];
    stretch_slot s;
    s.j = j, s.u = rem_node_[j], s.L = last_piece_[j];
    s.A = job.after ? node_of(*job.after) : no_node, s.D = job.before ? node_of(*job.before) : no_node;
    const std::vector<std::uint32_t> next = h.next_on_rank();
    s.after_it.assign(N_, 0), s.before_it.assign(N_, 0);
    if (s.D != no_node) s.after_it = h.reach_from(std::span<const std::uint32_t>(&s.D, 1), true, next);
    std::vector<std::uint32_t> seeds;
    if (s.A != no_node) seeds.push_back(s.A);
    if (s.L != no_node) seeds.push_back(s.L);
    if (!seeds.empty()) s.before_it = h.reach_from(seeds, false, next);
    return s;
  }

  /// A job whose release op depends on its deadline op: impossible (without any
  /// remainder), or blocked by the remainders inserted before it on the path from its
  /// deadline op to its release op.
  void left_out(stretch_pass& out, const stretch_slot& s) {
    if (impossible_job(s.j)) return out.impossible.push_back(s.j);
    const std::vector<char> to_A =
        out.g.reach_from(std::span<const std::uint32_t>(&s.A, 1), false, out.g.next_on_rank());
    stretch_blocked b{s.j, {}, false};
    for (const std::uint32_t k : rems_) {
      if (out.placed[k] && s.after_it[rem_node_[k]] && to_A[rem_node_[k]]) b.by.push_back(k);
    }
    require(!b.by.empty(), "ctpipe: stretch_fill found a job blocked by no remainder (a bug)");
    out.left_out += left_[s.j];
    out.blocked.push_back(std::move(b));
  }

  /// Inserts the remainder of slot s at the best candidate on every rank its job may use,
  /// and re-simulates.
  void insert(stretch_pass& out, const stretch_slot& s) {
    stretch_graph& h = out.g;
    if (s.A != no_node) h.add(s.A, s.u, true);
    if (s.D != no_node) h.add(s.u, s.D, true);
    if (s.L != no_node) h.add(s.L, s.u, false);
    h.dur[s.u] = left_[s.j];
    h.build();
    stretch_choice best;
    std::vector<std::int64_t> trial;
    for (int r = 0; r < f_.P; ++r) {
      if (jobs_[s.j].rank == any_rank || jobs_[s.j].rank == r) try_rank(h, out.start, s, r, best, trial);
    }
    h.rank[s.u] = best.r;
    std::vector<std::uint32_t>& list = h.lists[static_cast<std::size_t>(best.r)];
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(best.p), s.u);
    require(h.run(h.next_on_rank(), out.start, out.makespan), "ctpipe: stretch_fill's graph has a cycle (a bug)");
  }

  /// The candidate positions of slot s in rank r's list (stretch_fill()'s doc comment),
  /// each tried by a re-simulation into `trial`; `best` keeps the least.
  void try_rank(stretch_graph& h, const std::vector<std::int64_t>& start, const stretch_slot& s, int r,
                stretch_choice& best, std::vector<std::int64_t>& trial) const {
    std::size_t positions[4] = {};
    candidate_positions(h, start, s, r, positions);
    for (int k = 0; k < 4; ++k) {
      if (k > 0 && positions[k] == positions[k - 1]) continue;
      h.rank[s.u] = r;
      std::int64_t T = 0;
      require(h.run(h.next_on_rank(s.u, r, positions[k]), trial, T),
              "ctpipe: stretch_fill's insertion made a cycle (a bug)");
      const std::int64_t end = trial[s.u] + left_[s.j];
      std::int64_t delay = 0;  // the pipeline ops' starts summed (saturating: a tie-break only)
      for (std::size_t q = 0; q < n_ops_; ++q)
        delay = trial[q] > std::numeric_limits<std::int64_t>::max() - delay ? std::numeric_limits<std::int64_t>::max()
                                                                            : delay + trial[q];
      const bool better = T != best.T ? T < best.T : delay != best.delay ? delay < best.delay : end < best.end;
      if (better) best = {T, delay, end, r, positions[k]};
    }
  }

  /// Slot s's four candidate positions in rank r's list of graph h, sorted: just after
  /// the last node that must precede it, just before the first that must follow it, and
  /// between the two the longest idle interval and the first that holds it whole.
  void candidate_positions(const stretch_graph& h, const std::vector<std::int64_t>& start, const stretch_slot& s, int r,
                           std::size_t positions[4]) const {
    const std::vector<std::uint32_t>& list = h.lists[static_cast<std::size_t>(r)];
    std::size_t lo = 0, hi = list.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (s.before_it[list[i]]) lo = i + 1;
    }
    for (std::size_t i = list.size(); i-- > 0;) {
      if (s.after_it[list[i]]) hi = i;
    }
    require(lo <= hi, "ctpipe: stretch_fill found no place free of cycles (a bug)");
    std::int64_t ready = s.L != no_node ? start[s.L] + h.dur[s.L] : 0;
    if (s.A != no_node) ready = std::max(ready, start[s.A] + h.dur[s.A] + (r != h.rank[s.A] ? f_.c : 0));
    positions[0] = lo, positions[1] = positions[2] = positions[3] = hi;
    std::int64_t longest_gap = 0;
    bool whole = false;
    for (std::size_t i = lo + 1; i < hi; ++i) {
      const std::int64_t gap = start[list[i]] - std::max(start[list[i - 1]] + h.dur[list[i - 1]], ready);
      if (gap > longest_gap) longest_gap = gap, positions[2] = i;
      if (!whole && gap >= left_[s.j]) whole = true, positions[3] = i;
    }
    std::sort(positions, positions + 4);
  }

  /// Job j's remainder in a relaxed graph `x` (the bound's): after its release op and
  /// before its deadline op, t_c charged only when it is pinned to a rank.
  void add_relaxed(stretch_graph& x, std::uint32_t j) const {
    const std::uint32_t u = rem_node_[j];
    const bool pinned = jobs_[j].rank != any_rank;
    x.dur[u] = left_[j], x.rank[u] = pinned ? jobs_[j].rank : 0;
    if (jobs_[j].after) x.add(node_of(*jobs_[j].after), u, pinned);
    if (jobs_[j].before) x.add(u, node_of(*jobs_[j].before), pinned);
  }

  /// The bound's graph (stretch_fill()'s relaxation): pass `best`'s ops, each rank's
  /// order of them, and its placed remainders; built.
  stretch_graph relaxed_graph(const stretch_pass& best) const {
    const stretch_graph& h = best.g;
    stretch_graph relaxed;
    relaxed.c = f_.c;
    relaxed.dur.assign(N_, 0), relaxed.rank = h.rank;
    for (std::size_t k = 0; k < n_ops_; ++k) relaxed.dur[k] = h.dur[k];
    for (std::size_t e = 0; e < h.from.size(); ++e) {
      if (h.from[e] < n_ops_ && h.to[e] < n_ops_) relaxed.add(h.from[e], h.to[e], true);
    }
    for (const std::uint32_t j : rems_) {
      if (best.placed[j]) add_relaxed(relaxed, j);
    }
    relaxed.lists.assign(static_cast<std::size_t>(f_.P), {});
    for (std::size_t r = 0; r < relaxed.lists.size(); ++r) {
      for (const std::uint32_t u : h.lists[r]) {
        if (u < n_ops_) relaxed.lists[r].push_back(u);
      }
    }
    relaxed.build();
    return relaxed;
  }

  schedule_view v_;
  const fill_frame& f_;
  std::span<const fill_job> jobs_;
  const buffer<tick_piece>& p_;
  buffer<std::uint8_t> pair_b_;
  std::size_t n_ops_ = 0, n_pieces_ = 0, N_ = 0;
  std::vector<std::int64_t> left_;                      // per job: time left (ticks)
  std::vector<std::uint32_t> rem_node_, rems_;          // per job: its remainder's node; the jobs with time left
  std::vector<std::uint32_t> last_piece_;               // per job: its latest piece by time (node)
  stretch_graph g_;                                     // the graph without remainders
  std::uint64_t pass_work_ = 0;                         // one pass's estimated work
  std::vector<std::uint32_t> first_order_, base_next_;  // the first pass's order; g_'s ranks' orders
  std::vector<signed char> base_depends_;               // per job: impossible (1), not (0), unknown (-1)
};

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
  detail::require(limits.passes >= 1, "ctpipe: stretch_limits::passes must be >= 1");
  const detail::fill_frame f = detail::make_fill_frame(v, c, scale, jobs, false);
  const detail::buffer<detail::tick_piece> p = detail::stretch_input(v, f, jobs, fill);
  detail::stretch_planner planner(v, f, jobs, p, fill);
  planner.check_work(limits);
  std::uint64_t spent = 0;
  int passes = 0;
  detail::stretch_pass best = planner.best_pass(limits, spent, passes);
  const std::int64_t bound = planner.bound(best);
  return planner.result(std::move(best), bound, passes);
}

}  // namespace ctpipe
