// ctpipe/plan/fill_optimal.hpp: the exact bubble fills, at run time only
// (docs/spec.md §8.1).
// - Divisible jobs: a maximum flow over time slots (Horn's construction for preemptive
//   jobs with release times and deadlines on parallel machines), then, inside each slot,
//   an open-shop decomposition (Birkhoff: repeated perfect matchings) so that no job runs
//   on two ranks at once and no rank runs two jobs at once. The flow value is the most
//   any placement can fill, so the placement is optimal.
// - Small sets of indivisible jobs: branch-and-bound over each idle interval's sequence
//   of jobs, left-justified (any placement can be shifted left within its interval
//   without breaking a window, so this is complete), pruned by the remaining work.
// Everything else: the greedy sweep, with the flow's value as its bound.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "ctpipe/plan/fill.hpp"

namespace ctpipe {

/// Limits of fill_bubbles_optimal(): beyond them it returns the greedy placement with
/// the best bound it could compute.
struct fill_limits {
  std::size_t flow_cells = 20'000'000;  ///< jobs x slots x ranks the flow may build
  std::size_t exact_jobs = 12;          ///< most indivisible jobs branch-and-bound takes
  std::size_t exact_nodes = 2'000'000;  ///< most search nodes branch-and-bound visits
};

namespace detail {

/// Dinic's maximum flow on 64-bit capacities.
class max_flow {
 public:
  explicit max_flow(std::size_t nodes) : head_(nodes, -1), level_(nodes), it_(nodes) {}
  std::size_t add_node() {
    head_.push_back(-1), level_.push_back(0), it_.push_back(0);
    return head_.size() - 1;
  }
  /// An edge a -> b of capacity `cap`; returns its index (flow() reads it back).
  std::size_t add(std::size_t a, std::size_t b, std::int64_t cap) {
    to_.push_back(b), cap_.push_back(cap), next_.push_back(head_[a]), head_[a] = static_cast<long>(to_.size() - 1);
    to_.push_back(a), cap_.push_back(0), next_.push_back(head_[b]), head_[b] = static_cast<long>(to_.size() - 1);
    return to_.size() - 2;
  }
  std::int64_t run(std::size_t s, std::size_t t) {
    std::int64_t total = 0;
    while (levels(s, t)) {
      for (std::size_t u = 0; u < head_.size(); ++u) it_[u] = head_[u];
      while (const std::int64_t pushed = push(s, t, std::numeric_limits<std::int64_t>::max())) total += pushed;
    }
    return total;
  }
  /// The flow on edge e (its reverse edge's capacity).
  std::int64_t flow(std::size_t e) const { return cap_[e ^ 1]; }

 private:
  bool levels(std::size_t s, std::size_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<std::size_t> queue{s};
    level_[s] = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      for (long e = head_[queue[q]]; e >= 0; e = next_[static_cast<std::size_t>(e)]) {
        const std::size_t w = to_[static_cast<std::size_t>(e)];
        if (cap_[static_cast<std::size_t>(e)] > 0 && level_[w] < 0)
          level_[w] = level_[queue[q]] + 1, queue.push_back(w);
      }
    }
    return level_[t] >= 0;
  }
  std::int64_t push(std::size_t u, std::size_t t, std::int64_t limit) {
    if (u == t) return limit;
    for (long& e = it_[u]; e >= 0; e = next_[static_cast<std::size_t>(e)]) {
      const std::size_t k = static_cast<std::size_t>(e), w = to_[k];
      if (cap_[k] <= 0 || level_[w] != level_[u] + 1) continue;
      if (const std::int64_t got = push(w, t, std::min(limit, cap_[k]))) {
        cap_[k] -= got, cap_[k ^ 1] += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<long> head_, level_, it_, next_;
  std::vector<std::size_t> to_;
  std::vector<std::int64_t> cap_;
};

/// One slot's share of a flow: x[j][r] ticks of job `jobs[j]` on rank `ranks[r]` in a
/// slot [lo, lo + length). decompose() turns it into pieces.
struct slot_share {
  std::int64_t lo = 0, length = 0;
  std::vector<std::uint32_t> jobs;
  std::vector<int> ranks;
  std::vector<std::vector<std::int64_t>> x;
};

/// Kuhn's augmenting path for row u of square matrix `m` (positive entries are edges).
inline bool augment(const std::vector<std::vector<std::int64_t>>& m, std::size_t u, std::vector<char>& seen,
                    std::vector<long>& row_of) {
  for (std::size_t c = 0; c < m.size(); ++c) {
    if (m[u][c] <= 0 || seen[c]) continue;
    seen[c] = 1;
    if (row_of[c] < 0 || augment(m, static_cast<std::size_t>(row_of[c]), seen, row_of)) {
      row_of[c] = static_cast<long>(u);
      return true;
    }
  }
  return false;
}

/// Birkhoff's decomposition of one slot (the file comment): the share padded to a square
/// matrix whose rows and columns all sum to the slot length, then perfect matchings on
/// its positive entries, each run for the least matched entry. Appends the pieces.
inline void decompose(const slot_share& s, std::vector<tick_piece>& out) {
  const std::size_t n = s.jobs.size(), k = s.ranks.size(), N = n + k;
  std::vector<std::vector<std::int64_t>> m(N, std::vector<std::int64_t>(N, 0));
  for (std::size_t j = 0; j < n; ++j) {
    std::int64_t row = 0;
    for (std::size_t r = 0; r < k; ++r) m[j][r] = m[n + r][k + j] = s.x[j][r], row += s.x[j][r];
    m[j][k + j] = s.length - row;  // the job's idle part of the slot
  }
  for (std::size_t r = 0; r < k; ++r) {
    std::int64_t col = 0;
    for (std::size_t j = 0; j < n; ++j) col += s.x[j][r];
    m[n + r][r] = s.length - col;  // the rank's idle part
  }
  std::int64_t at = s.lo;
  while (at < s.lo + s.length) {
    std::vector<long> row_of(N, -1);
    for (std::size_t u = 0; u < N; ++u) {
      std::vector<char> seen(N, 0);
      require(augment(m, u, seen, row_of), "ctpipe: fill's slot decomposition found no perfect matching (a bug)");
    }
    std::int64_t step = s.lo + s.length - at;
    for (std::size_t c = 0; c < N; ++c) step = std::min(step, m[static_cast<std::size_t>(row_of[c])][c]);
    for (std::size_t c = 0; c < N; ++c) {
      const std::size_t u = static_cast<std::size_t>(row_of[c]);
      if (u < n && c < k) out.push_back({s.jobs[u], s.ranks[c], at, at + step});
      m[u][c] -= step;
    }
    at += step;
  }
}

/// The breakpoints of a fill's time slots: 0, T, every gap's ends, every window's ends.
inline std::vector<std::int64_t> slot_bounds(const fill_frame& f) {
  std::vector<std::int64_t> b{0, f.T};
  for (std::size_t g = 0; g < f.gaps; ++g) b.push_back(f.gap_lo[g]), b.push_back(f.gap_hi[g]);
  for (std::size_t j = 0; j < f.dur.size(); ++j) {
    for (int r = 0; r < f.P; ++r) {
      window_part w[2] = {};
      const int n = job_window(f, j, r, w);
      for (int q = 0; q < n; ++q) b.push_back(w[q].lo), b.push_back(w[q].hi);
    }
  }
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

/// Whether job j may run on rank r throughout the slot starting at `lo` (slot bounds
/// include every window end, so testing its start is enough).
inline bool in_window(const fill_frame& f, std::size_t j, int r, std::int64_t lo) {
  window_part w[2] = {};
  const int n = job_allowed(f, j, r) ? job_window(f, j, r, w) : 0;
  for (int q = 0; q < n; ++q) {
    if (w[q].lo <= lo && lo < w[q].hi) return true;
  }
  return false;
}

/// The flow of the file comment over slots `b`: its value, and (when `pieces` is given)
/// the decomposed placement.
inline std::int64_t flow_fill(const fill_frame& f, const std::vector<std::int64_t>& b,
                              std::vector<tick_piece>* pieces) {
  const std::size_t J = f.dur.size();
  max_flow net(2 + J);
  for (std::size_t j = 0; j < J; ++j) net.add(0, 2 + j, f.dur[j]);
  struct cell {
    std::uint32_t job;
    int rank;
    std::size_t edge;
  };
  std::vector<std::vector<cell>> cells(b.size());
  std::vector<std::size_t> next_gap(static_cast<std::size_t>(f.P));
  for (int r = 0; r < f.P; ++r) next_gap[static_cast<std::size_t>(r)] = f.gap_off[r];
  for (std::size_t q = 0; q + 1 < b.size(); ++q) {
    const std::int64_t lo = b[q], len = b[q + 1] - b[q];
    std::vector<long> rank_node(static_cast<std::size_t>(f.P), -1);
    for (int r = 0; r < f.P; ++r) {
      std::size_t& g = next_gap[static_cast<std::size_t>(r)];
      while (g < f.gap_off[r + 1] && f.gap_hi[g] <= lo) ++g;
      if (g < f.gap_off[r + 1] && f.gap_lo[g] <= lo) {
        rank_node[static_cast<std::size_t>(r)] = static_cast<long>(net.add_node());
        net.add(static_cast<std::size_t>(rank_node[static_cast<std::size_t>(r)]), 1, len);
      }
    }
    for (std::size_t j = 0; j < J; ++j) {
      long job_node = -1;
      for (int r = 0; r < f.P; ++r) {
        if (rank_node[static_cast<std::size_t>(r)] < 0 || !in_window(f, j, r, lo)) continue;
        if (job_node < 0)
          job_node = static_cast<long>(net.add_node()), net.add(2 + j, static_cast<std::size_t>(job_node), len);
        const std::size_t e = net.add(static_cast<std::size_t>(job_node),
                                      static_cast<std::size_t>(rank_node[static_cast<std::size_t>(r)]), len);
        cells[q].push_back({static_cast<std::uint32_t>(j), r, e});
      }
    }
  }
  const std::int64_t value = net.run(0, 1);
  if (pieces == nullptr) return value;
  for (std::size_t q = 0; q + 1 < b.size(); ++q) {
    slot_share share{b[q], b[q + 1] - b[q], {}, {}, {}};
    for (const cell& c : cells[q]) {
      const std::int64_t x = net.flow(c.edge);
      if (x == 0) continue;
      auto jt = std::find(share.jobs.begin(), share.jobs.end(), c.job);
      auto rt = std::find(share.ranks.begin(), share.ranks.end(), c.rank);
      if (jt == share.jobs.end()) share.jobs.push_back(c.job), share.x.emplace_back(), jt = share.jobs.end() - 1;
      if (rt == share.ranks.end()) share.ranks.push_back(c.rank), rt = share.ranks.end() - 1;
      for (auto& row : share.x) row.resize(share.ranks.size(), 0);
      share.x[static_cast<std::size_t>(jt - share.jobs.begin())][static_cast<std::size_t>(rt - share.ranks.begin())] +=
          x;
    }
    if (!share.jobs.empty()) decompose(share, *pieces);
  }
  return value;
}

/// Whether [lo, hi) lies in one idle interval of rank r and in one part of job j's
/// window there (two touching pieces may lie on either side of a zero-length op, or of
/// a steady-state window's deadline, which is also its release).
inline bool one_stretch(const fill_frame& f, std::size_t j, int r, std::int64_t lo, std::int64_t hi) {
  bool gap = false;
  for (std::uint32_t g = f.gap_off[r]; g < f.gap_off[r + 1] && !gap; ++g) gap = f.gap_lo[g] <= lo && hi <= f.gap_hi[g];
  window_part w[2] = {};
  const int n = job_window(f, j, r, w);
  bool part = false;
  for (int q = 0; q < n; ++q) part = part || (w[q].lo <= lo && hi <= w[q].hi);
  return gap && part;
}

/// Joins a job's pieces that touch on one rank within one stretch (one_stretch()), and
/// drops divisible pieces shorter than their job's minimum piece, unless the piece is
/// all of its job. Returns whether it dropped any.
inline bool tidy_pieces(const fill_frame& f, std::vector<tick_piece>& p) {
  std::sort(p.begin(), p.end(), [](const tick_piece& a, const tick_piece& b) {
    return a.job != b.job ? a.job < b.job : a.rank != b.rank ? a.rank < b.rank : a.lo < b.lo;
  });
  std::vector<tick_piece> out;
  for (const tick_piece& x : p) {
    if (!out.empty() && out.back().job == x.job && out.back().rank == x.rank && out.back().hi == x.lo &&
        one_stretch(f, x.job, x.rank, out.back().lo, x.hi)) {
      out.back().hi = x.hi;
    } else {
      out.push_back(x);
    }
  }
  const auto before = out.size();
  std::erase_if(out,
                [&](const tick_piece& x) { return x.hi - x.lo < f.min_piece[x.job] && x.hi - x.lo < f.dur[x.job]; });
  p = std::move(out);
  return p.size() != before;
}

/// Branch-and-bound over the gaps' sequences of indivisible jobs (the file comment).
struct exact_fill {
  const fill_frame& f;
  std::vector<std::uint32_t> gaps;  // by start, then rank
  std::vector<int> gap_rank;
  std::vector<tick_piece> current, best;
  std::int64_t best_total = -1;
  std::vector<char> used;
  std::size_t nodes = 0, node_limit;
  std::vector<char> same_as_previous;  // per job: the same duration, rank and window as the job before it
  bool stopped = false;

  std::int64_t open_work(std::int64_t from) const {  // jobs not placed whose window can still come
    std::int64_t w = 0;
    for (std::size_t j = 0; j < used.size(); ++j) {
      if (used[j]) continue;
      for (int r = 0; r < f.P; ++r) {
        window_part part[2] = {};
        const int n = job_allowed(f, j, r) ? job_window(f, j, r, part) : 0;
        if (n > 0 && part[n - 1].hi > from) {
          w = rational::add(w, f.dur[j]);  // overflow-checked: durations may be huge
          break;
        }
      }
    }
    return w;
  }
  void search(std::size_t q, std::int64_t t, std::int64_t total) {
    if (++nodes > node_limit) {
      stopped = true;
      return;
    }
    if (total > best_total) best_total = total, best = current;
    if (q == gaps.size() || total + open_work(f.gap_lo[gaps[q]]) <= best_total) return;
    const std::uint32_t g = gaps[q];
    const int r = gap_rank[q];
    for (std::size_t j = 0; j < used.size() && !stopped; ++j) {
      if (used[j] || (j > 0 && same_as_previous[j] && !used[j - 1])) continue;  // identical jobs go in index order
      window_part w[2] = {};
      const int n = job_allowed(f, j, r) ? job_window(f, j, r, w) : 0;
      for (int p = 0; p < n; ++p) {
        const std::int64_t lo = std::max(t, w[p].lo), hi = std::min(f.gap_hi[g], w[p].hi);
        if (hi - lo < f.dur[j]) continue;
        used[j] = 1, current.push_back({static_cast<std::uint32_t>(j), r, lo, lo + f.dur[j]});
        search(q, lo + f.dur[j], total + f.dur[j]);
        used[j] = 0, current.pop_back();
      }
    }
    if (!stopped && q + 1 < gaps.size()) search(q + 1, f.gap_lo[gaps[q + 1]], total);
  }
};

/// fill_bubbles_optimal()'s branch-and-bound (exact_fill) over `f`'s idle intervals.
inline fill_result branch_and_bound(schedule_view v, const fill_frame& f, std::span<const fill_job> jobs,
                                    const fill_limits& limits) {
  exact_fill bb{f,
                {},
                {},
                {},
                {},
                -1,
                std::vector<char>(jobs.size(), 0),
                0,
                limits.exact_nodes,
                std::vector<char>(jobs.size(), 0)};
  for (std::size_t j = 1; j < jobs.size(); ++j) {  // symmetry: identical jobs are interchangeable
    bb.same_as_previous[j] = f.dur[j] == f.dur[j - 1] && f.rank[j] == f.rank[j - 1] &&
                             jobs[j].after == jobs[j - 1].after && jobs[j].before == jobs[j - 1].before;
  }
  std::vector<int> rank_of(f.gaps);
  for (int r = 0; r < f.P; ++r) {
    for (std::uint32_t g = f.gap_off[r]; g < f.gap_off[r + 1]; ++g) rank_of[g] = r, bb.gaps.push_back(g);
  }
  std::sort(bb.gaps.begin(), bb.gaps.end(), [&](std::uint32_t a, std::uint32_t b) {
    return f.gap_lo[a] != f.gap_lo[b] ? f.gap_lo[a] < f.gap_lo[b] : a < b;
  });
  for (const std::uint32_t g : bb.gaps) bb.gap_rank.push_back(rank_of[g]);
  if (!bb.gaps.empty()) bb.search(0, f.gap_lo[bb.gaps[0]], 0);
  buffer<tick_piece> p(bb.best.size());
  std::copy(bb.best.begin(), bb.best.end(), p.data());
  fill_result out = finish_fill(v, f, jobs, p, bb.best.size());
  out.exact_method = !bb.stopped;
  out.optimal = out.optimal || !bb.stopped;
  if (!bb.stopped) out.bound = out.total;  // the optimum, proved by the search
  out.method = bb.stopped ? "branch-and-bound, stopped at its node limit" : "branch-and-bound";
  return out;
}

/// fill_bubbles_optimal() for one kind of window (one iteration, or the steady state).
inline fill_result fill_optimal_once(schedule_view v, const costs& c, std::span<const fill_job> jobs,
                                     fill_options options, const cost_scale& scale, fill_limits limits) {
  const detail::fill_frame f = detail::make_fill_frame(v, c, scale, jobs, options.steady_state);
  const bool all_divisible = std::all_of(jobs.begin(), jobs.end(), [](const fill_job& j) { return j.divisible; });
  const bool none_divisible = std::none_of(jobs.begin(), jobs.end(), [](const fill_job& j) { return j.divisible; });
  if (none_divisible && !jobs.empty() && jobs.size() <= limits.exact_jobs) return branch_and_bound(v, f, jobs, limits);
  const std::vector<std::int64_t> bounds = detail::slot_bounds(f);
  const bool flow_fits = jobs.size() * bounds.size() * static_cast<std::size_t>(f.P) <= limits.flow_cells;
  if (all_divisible && flow_fits) {
    std::vector<detail::tick_piece> pieces;
    const std::int64_t value = detail::flow_fill(f, bounds, &pieces);
    const bool dropped = detail::tidy_pieces(f, pieces);
    detail::buffer<detail::tick_piece> p(pieces.size());
    std::copy(pieces.begin(), pieces.end(), p.data());
    fill_result out = detail::finish_fill(v, f, jobs, p, pieces.size());
    out.bound = std::min(out.bound, f.tick * rational{value});
    out.optimal = out.total == out.bound;
    out.exact_method = !dropped;
    out.method = dropped ? "max-flow, short pieces dropped" : "max-flow";
    if (dropped) {  // the greedy keeps minimum pieces as it goes: it may do better
      fill_result greedy = fill_bubbles(v, c, jobs, options, scale);
      if (greedy.total > out.total) {
        greedy.bound = out.bound, greedy.optimal = greedy.total == greedy.bound,
        greedy.method = "greedy, bound by max-flow";
        return greedy;
      }
    }
    return out;
  }
  fill_result out = fill_bubbles(v, c, jobs, options, scale);
  if (flow_fits) {
    out.bound = std::min(out.bound, f.tick * rational{detail::flow_fill(f, bounds, nullptr)});
    out.optimal = out.total == out.bound;
    out.method = "greedy, bound by max-flow";
  }
  return out;
}
}  // namespace detail

/// The best fill this library can prove, at run time (the file comment):
/// - every job divisible: the maximum flow, decomposed (method "max-flow"; optimal). A
///   minimum piece above 0 can cost pieces: those shorter (and not a whole job) are
///   dropped (method "max-flow, short pieces dropped"), and then the greedy placement,
///   which keeps minimum pieces as it goes, is returned when it fills more.
/// - at most `limits.exact_jobs` jobs, all indivisible: branch-and-bound (method
///   "branch-and-bound"; optimal unless it stopped at `limits.exact_nodes`).
/// - otherwise: fill_bubbles()' greedy placement, with the flow's value over the jobs
///   taken as divisible as its bound (method "greedy, bound by max-flow").
/// The flow is skipped (the greedy result returned with its own bound) when it would
/// exceed `limits.flow_cells` cells. Cost: Dinic's flow on O(jobs x slots x P) edges,
/// slots O(ops + jobs P); each slot's decomposition O(cells^2) matchings. Same checks
/// and proof as fill_bubbles(). Errors: fill_bubbles()'.
/// With `options.steady_state` it also places for one iteration (those windows lie
/// inside the steady state's) and keeps the better, with the steady state's bound.
inline fill_result fill_bubbles_optimal(schedule_view v, const costs& c, std::span<const fill_job> jobs,
                                        fill_options options = {}, const cost_scale& scale = {},
                                        fill_limits limits = {}) {
  fill_result out = detail::fill_optimal_once(v, c, jobs, options, scale, limits);
  if (!options.steady_state || out.optimal) return out;
  fill_result once = detail::fill_optimal_once(v, c, jobs, {false}, scale, limits);
  if (once.total <= out.total) return out;
  once.bound = out.bound, once.optimal = once.total == once.bound, once.exact_method = false;
  once.method = "one iteration's placement (the steady state's search found less)";
  return once;
}

}  // namespace ctpipe
