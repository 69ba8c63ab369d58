// ctpipe/schedules/controllable_memory.hpp: V-Half and V-Min, the V-shape schedules of
// "Pipeline Parallelism with Controllable Memory" (Qi, Wan, Huang, Lin; NeurIPS 2024),
// as the Zero Bubble authors' generator builds them, and their closed forms.
//
// Source: sail-sg/zero-bubble-pipeline-parallelism,
// `megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py`, `PipelineGraph`
// with memory setup `half` or `min` (Megatron's `--zero-bubble-v-schedule-mem-setup`).
// Ranks hold two chunks on the V-shape, as ZB-V: chunk 0 is stage r, chunk 1 stage
// 2P-1-r; an op costs t_x / 2. Every backward is split into I and W.
//
// The generator, followed step by step (the authors' names in brackets):
// 1. [stable_pattern_v_half / _v_min] On a grid of unit slots, rank r puts F of chunk 0,
//    F of chunk 1, I of chunk 1 and I of chunk 0 of micro-batch j at four offsets of
//    its own plus 6j.
// 2. [put_w] Each W goes in the first free slot after its I (one queue of Ws).
// 3. [reorder, Ws explicit] Walking the grid in time order (ties: lower rank first),
//    every op of the warm-up (until rank 0's first I of chunk 0) and of the cool-down
//    (after the first F of the last micro-batch on chunk 0) moves to the first free
//    slot after its dependencies where its rank's peak memory (+1 per F, -1 per W, in
//    chunks) stays within the pattern's peak; then [eager_execution_time] every op
//    starts as early as its dependencies and its rank allow, in unit time (squeeze).
// 4. The Ws are dropped; the cool-down is reordered again with the Ws implicit (one
//    released in each free slot after its I), then put back and squeezed.
// 5. The Ws are dropped and put back with one queue per chunk (chunk 1's first); each
//    rank runs its ops in slot order.
//
// Inputs: P, m and the setup. The authors' generator also takes costs (f, b, w, c),
// but only to time the order it returns (its reorders run in unit time), so the order
// is the same at every cost; ctpipe's simulate() does the timing. It accepts every
// P >= 1 and m >= 1.
//
// Cost: the grid has T = 8m + 6P + 2 slots a rank; each step is one or two sweeps of
// the P*T slots, plus, for each op that moves, a scan of the free slots between its
// dependencies and its slot and a memory check over the slots whose memory the move
// changes (docs/compile-time.md gives the measured total). Memory: about 35 bytes a
// slot, so it grows with P^2 when m is small against P.
#pragma once

#include <cstddef>  // std::size_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe::detail {

/// Range add and range maximum over n values, O(log n) each: a segment tree whose
/// nodes keep what was added to their whole range (no pushing down).
class max_tree {
 public:
  constexpr max_tree() = default;
  /// The tree of `values` (n = values.size()).
  constexpr explicit max_tree(const buffer<int>& values) {
    while (leaves_ < values.size()) leaves_ *= 2;
    top_ = buffer<int>(2 * leaves_);
    added_ = buffer<int>(2 * leaves_);
    for (std::size_t k = 0; k < values.size(); ++k) top_[leaves_ + k] = values[k];
    for (std::size_t k = leaves_; --k > 0;) top_[k] = larger(top_[2 * k], top_[2 * k + 1]);
  }
  /// Adds d to the values at [lo, hi).
  constexpr void add(std::size_t lo, std::size_t hi, int d) { add(lo, hi, d, 1, 0, leaves_); }
  /// The largest value at [lo, hi) (lo < hi).
  constexpr int max(std::size_t lo, std::size_t hi) const { return max(lo, hi, 1, 0, leaves_); }

 private:
  static constexpr int larger(int a, int b) { return a > b ? a : b; }
  static constexpr int lowest = -(1 << 30);
  constexpr void add(std::size_t lo, std::size_t hi, int d, std::size_t node, std::size_t from, std::size_t to) {
    if (hi <= from || to <= lo) return;
    if (lo <= from && to <= hi) {
      top_[node] += d;
      added_[node] += d;
      return;
    }
    const std::size_t mid = (from + to) / 2;
    add(lo, hi, d, 2 * node, from, mid);
    add(lo, hi, d, 2 * node + 1, mid, to);
    top_[node] = larger(top_[2 * node], top_[2 * node + 1]) + added_[node];
  }
  constexpr int max(std::size_t lo, std::size_t hi, std::size_t node, std::size_t from, std::size_t to) const {
    if (hi <= from || to <= lo) return lowest;
    if (lo <= from && to <= hi) return top_[node];
    const std::size_t mid = (from + to) / 2;
    return larger(max(lo, hi, 2 * node, from, mid), max(lo, hi, 2 * node + 1, mid, to)) + added_[node];
  }
  std::size_t leaves_ = 1;
  buffer<int> top_, added_;
};

/// The authors' generator on its unit grid. Op types as zbv_greedy.py numbers them on
/// rank r: 0 F of chunk 0, 1 F of chunk 1, 2 I of chunk 1, 3 I of chunk 0, then the
/// Ws: 4 all of them in one queue (2m), or 4 chunk 1's and 5 chunk 0's (m each). A
/// slot holds `1 + type * 2m + k` for op k of its type, 0 when free.
struct v_grid {
  int P = 0, m = 0, T = 0;  ///< ranks, micro-batches, slots a rank
  int used = 0;             ///< every op's slot is below this
  buffer<int> time;         ///< [(r * 6 + t) * 2m + k]: the slot of op k of type t
  buffer<int> slot;         ///< [r * T + i]: the op in slot i (see above)
  buffer<int> level;        ///< [r * T + i]: rank r's memory after slot i (chunks)
  buffer<int> pending;      ///< [r * T + i]: Ws not yet released after slot i (Ws implicit)
  buffer<bool> fixed;       ///< [r * T + i]: slot i holds an op the reorder has placed
  max_tree levels;          ///< `level` as a tree, while the Ws are explicit

  constexpr v_grid(int ranks, int microbatches)
      : P(ranks),
        m(microbatches),
        T(8 * microbatches + 6 * ranks + 2),
        time(static_cast<std::size_t>(ranks) * 12 * static_cast<std::size_t>(microbatches)),
        slot(cells()),
        level(cells()),
        pending(cells()) {}

  constexpr std::size_t cells() const { return static_cast<std::size_t>(P) * static_cast<std::size_t>(T); }
  constexpr int& at(int r, int t, int k) { return time[(static_cast<std::size_t>(r) * 6 + t) * 2 * m + k]; }
  constexpr int* row(int r) { return slot.data() + static_cast<std::size_t>(r) * T; }
  constexpr int code(int t, int k) const { return 1 + t * 2 * m + k; }
  constexpr int type_of(int c) const { return (c - 1) / (2 * m); }
  /// Puts op (t, k) of rank r in slot i (0 <= i < T: the pattern's slots are below
  /// 6(m+P), a W follows the last F or I by at most 2m slots, and the squeeze and the
  /// reorder only move ops earlier).
  constexpr void put(int r, int t, int k, int i) {
    slot[static_cast<std::size_t>(r) * T + i] = 1 + t * 2 * m + k;
    time[(static_cast<std::size_t>(r) * 6 + t) * 2 * m + k] = i;
    if (i >= used) used = i + 1;
  }

  /// Step 1: the stable pattern of the setup (`half`: true).
  constexpr void lay_pattern(bool half) {
    const int gap = half ? (P % 2 == 0 ? 3 : 0) : (P % 3 == 0 ? 2 : 0);
    for (int r = 0; r < P; ++r) {
      const int base[4] = {half ? 2 * r : r, half ? 3 * P - r - 2 : 2 * P - r - 1,
                           half ? 3 * P + gap + 2 * r - 1 : 2 * P + gap + r,
                           half ? 6 * P + gap - r - 2 : 4 * P + gap - r - 1};
      for (int t = 0; t < 4; ++t)
        for (int k = 0; k < m; ++k) put(r, t, k, base[t] + 6 * k);
    }
  }

  /// Steps 2 and 5 [put_w]: drops the Ws and puts one in each free slot after an I,
  /// oldest first (chunk 1's first when `per_chunk`); the rest follow the last F or I.
  constexpr void put_w(bool per_chunk) {
    const int end = used;
    for (int r = 0; r < P; ++r) {
      int* const here = row(r);
      int waiting[2] = {0, 0}, placed[2] = {0, 0}, bound = 0;
      for (int i = 0; i < end; ++i) {  // the last F or I: Ws are free slots
        if (here[i] != 0 && type_of(here[i]) < 4) bound = i;
      }
      for (int i = 0; i < end; ++i) {
        const int t = here[i] == 0 ? 4 : type_of(here[i]);
        if (t < 4) {
          if (t >= 2) ++waiting[per_chunk ? t - 2 : 0];
          continue;
        }
        here[i] = 0;
        const int w = waiting[0] > 0 ? 0 : 1;
        if (i < bound && waiting[w] > 0) --waiting[w], put(r, 4 + w, placed[w]++, i);
      }
      require(bound + waiting[0] + waiting[1] < T, "ctpipe: internal error: the V-Half/V-Min grid overflowed");
      for (int w = 0, i = bound; w < 2; ++w)
        for (; waiting[w] > 0; --waiting[w]) put(r, 4 + w, placed[w]++, ++i);
    }
  }

  /// One slot's memory step: an op of type t (or a free slot, t = -1) after memory `lv`
  /// with `pd` Ws waiting; `implicit`: Ws are not ops, a free slot releases one.
  static constexpr void step(int t, bool implicit, int& lv, int& pd) {
    if (t < 0) {
      if (implicit && pd > 0) --lv, --pd;
      return;
    }
    lv += t < 2 ? 1 : t == 4 ? -1 : 0;
    if (implicit && (t == 2 || t == 3)) ++pd;
  }

  /// Rank r's memory after each slot [mem_of_stage]; returns its peak.
  constexpr int profile(int r, bool implicit) {
    int lv = 0, pd = 0, peak = 0;
    const int* here = row(r);
    const std::size_t base = static_cast<std::size_t>(r) * T;
    for (int i = 0; i < T; ++i) {
      step(here[i] == 0 ? -1 : type_of(here[i]), implicit, lv, pd);
      level[base + i] = lv;
      pending[base + i] = pd;
      peak = lv > peak ? lv : peak;
    }
    return peak;
  }

  /// Whether moving the op of type t on rank r from slot `from` to the earlier free
  /// slot `to` keeps the rank's memory within `cap`; with `commit`, records the new
  /// memory. The slots before `to` do not change and all are within `cap` already, so
  /// only the changed ones are checked: with Ws explicit, [to, from), by the tree
  /// (O(log T)); with Ws implicit, from `to` until the memory state meets the old one
  /// after `from`, slot by slot.
  constexpr bool move_fits(int r, int t, int to, int from, int cap, bool implicit, bool commit) {
    const std::size_t base = static_cast<std::size_t>(r) * T;
    if (!implicit) {
      const int delta = t < 2 ? 1 : t == 4 ? -1 : 0;  // an F holds one more chunk, a W one fewer
      if (commit && delta != 0) levels.add(base + to, base + from, delta);
      return delta <= 0 || levels.max(base + to, base + from) + 1 <= cap;
    }
    int lv = to > 0 ? level[base + to - 1] : 0, pd = to > 0 ? pending[base + to - 1] : 0;
    const int* here = row(r);
    for (int i = to; i < T; ++i) {
      const int c = i == to ? code(t, 0) : i == from ? 0 : here[i];
      step(c == 0 ? -1 : type_of(c), implicit, lv, pd);
      if (lv > cap) return false;
      if (i >= from && lv == level[base + i] && pd == pending[base + i]) return true;
      if (commit) level[base + i] = lv, pending[base + i] = pd;
    }
    return true;
  }

  /// The k-th (from 0) earliest of rank r's I slots, both chunks together.
  constexpr int kth_input_grad(int r, int k) {
    int lo = 0, hi = k + 1 < m ? k + 1 : m;
    while (lo < hi) {  // how many of chunk 1's Is are among the k+1 earliest
      const int a = (lo + hi) / 2;
      const bool among = k - a >= m || (k - a >= 0 && at(r, 2, a) < at(r, 3, k - a));
      if (among)
        lo = a + 1;
      else
        hi = a;
    }
    const int from_a = lo > 0 ? at(r, 2, lo - 1) : -1, from_b = k + 1 - lo > 0 ? at(r, 3, k - lo) : -1;
    return from_a > from_b ? from_a : from_b;
  }

  /// The last slot op (t, k) of rank r depends on (-1 if none): the previous stage's
  /// op of its type (from the lower rank for F of chunk 0 and I of chunk 1, from the
  /// higher for F of chunk 1 and I of chunk 0), its own F or I before it, the previous
  /// op of its type, and for an explicit W its I (the k-th of either chunk).
  constexpr int last_dependency(int r, int t, int k) {
    int dep = -1;
    const auto after = [&dep](int slot_of) { dep = slot_of > dep ? slot_of : dep; };
    if ((t == 0 || t == 2) && r > 0) after(at(r - 1, t, k));
    if ((t == 1 || t == 3) && r + 1 < P) after(at(r + 1, t, k));
    if (t > 0 && t < 4) after(at(r, t - 1, k));
    if (k > 0) after(at(r, t, k - 1));
    return dep;
  }

  constexpr void reorder(bool ws_explicit);
  constexpr bool place(int r, int t, int k, int from, int cap, bool implicit);
  constexpr void squeeze();
};

/// Steps 3 and 4 [reorder]: moves the warm-up's (Ws explicit only) and the cool-down's
/// ops to their first free slot that keeps the peak, in slot order (ties: lower rank
/// first); then puts the Ws back (Ws implicit) and squeezes.
constexpr void v_grid::reorder(bool ws_explicit) {
  if (ws_explicit) put_w(false);
  for (int r = 0; ws_explicit ? false : r < P; ++r)  // else the Ws are dropped
    for (int i = 0; i < used; ++i)
      if (row(r)[i] != 0 && type_of(row(r)[i]) >= 4) row(r)[i] = 0;
  int cap = 0;
  for (int r = 0; r < P; ++r) {
    const int peak = profile(r, !ws_explicit);
    cap = peak > cap ? peak : cap;
  }
  if (ws_explicit) levels = max_tree(level);
  fixed = buffer<bool>(cells());
  int phase = 0;  // 0 warm-up, 1 kept, 2 cool-down
  for (int i = 0, end = used; i < end; ++i)
    for (int r = 0; r < P; ++r) {
      const int c = row(r)[i];
      if (c == 0) continue;
      const int t = type_of(c), k = (c - 1) % (2 * m);
      if (t == 3 && r == 0 && phase == 0) phase = 1;
      const bool keep = phase == 1 || (phase == 0 && !ws_explicit);
      if (phase == 1 && t == 0 && k == m - 1) phase = 2;
      if (keep || !place(r, t, k, i, cap, !ws_explicit)) fixed[static_cast<std::size_t>(r) * T + i] = true;
    }
  if (!ws_explicit) put_w(false);
  squeeze();
}

/// Moves op (t, k) of rank r from slot `from` to its first free slot after its
/// dependencies that keeps the memory within `cap`; false if none does (it stays).
constexpr bool v_grid::place(int r, int t, int k, int from, int cap, bool implicit) {
  int first = last_dependency(r, t, k);
  if (t == 4) first = first > kth_input_grad(r, k) ? first : kth_input_grad(r, k);
  ++first;
  require(first <= from, "ctpipe: internal error: a V-Half/V-Min op is before its dependencies");
  const std::size_t base = static_cast<std::size_t>(r) * T;
  for (int to = first; to < from; ++to) {
    if (fixed[base + to] || !move_fits(r, t, to, from, cap, implicit, false)) continue;
    move_fits(r, t, to, from, cap, implicit, true);
    row(r)[from] = 0;
    put(r, t, k, to);
    fixed[base + to] = true;
    return true;
  }
  return false;
}

/// [eager_execution_time] in unit time, in place: in slot order, every op starts when
/// its dependencies (last_dependency(); a W after the previous W only) and its rank's
/// previous op have ended. No op starts later than its slot, so each moves to an
/// earlier slot of its rank that the sweep has passed.
constexpr void v_grid::squeeze() {
  buffer<int> rank_free(static_cast<std::size_t>(P));
  const int end = used;
  used = 0;
  for (int i = 0; i < end; ++i)
    for (int r = 0; r < P; ++r) {
      int& here = slot[static_cast<std::size_t>(r) * T + i];
      if (here == 0) continue;
      const int t = (here - 1) / (2 * m), k = (here - 1) % (2 * m);
      int start = last_dependency(r, t, k) + 1;
      if (start < rank_free[static_cast<std::size_t>(r)]) start = rank_free[static_cast<std::size_t>(r)];
      here = 0;
      put(r, t, k, start);
      rank_free[static_cast<std::size_t>(r)] = start + 1;
    }
}

}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// V-Half (`half` true) or V-Min: the Zero Bubble authors' greedy (file comment) for P
/// ranks and m micro-batches. Calls `out(r, op)` for every op, rank 0's in execution
/// order first, then rank 1's, ...: 6m ops a rank (F, I, W of both chunks). Its
/// chunk-0 stage is r and its chunk-1 stage 2P-1-r (the V-shape placement).
template <class Out>
constexpr void v_schedule(int P, int m, bool half, Out&& out) {
  detail::v_grid g(P, m);
  g.lay_pattern(half);
  g.reorder(true);
  g.reorder(false);  // reorder() sweeps the Ws with the other ops; they are dropped here
  g.put_w(true);
  constexpr op_kind kinds[6] = {op_kind::F, op_kind::F, op_kind::I, op_kind::I, op_kind::W, op_kind::W};
  for (int r = 0; r < P; ++r) {
    const int stage[2] = {r, 2 * P - 1 - r};
    const int* here = g.row(r);
    for (int i = 0; i < g.used; ++i) {
      if (here[i] == 0) continue;
      const int t = g.type_of(here[i]), k = (here[i] - 1) % (2 * m);
      const bool chunk1 = t == 1 || t == 2 || t == 4;
      out(r, detail::make_op(kinds[t], stage[chunk1 ? 1 : 0], k));
    }
  }
}

}  // namespace ctpipe::schedules

namespace ctpipe::detail {
/// Where ctpipe's V-Half / V-Min timing forms hold (proved on a grid,
/// tests/static/proofs_controllable_memory.cpp): the authors' unit case t_f = t_i = t_w,
/// t_c = 0, and m >= P + 2 (below it the idle varies with m); else the reason, for
/// no_formula(). t_b plays no part (every backward is split).
constexpr const char* v_memory_exception(const schedule_spec& s, const costs& c) {
  if (c.c != rational{0} && s.shape.P > 1) return "needs t_c = 0";
  if (c.f != c.i || c.i != c.w) return "needs t_f = t_i = t_w (the generator's unit case)";
  if (s.shape.m < s.shape.P + 2) return "needs m >= P+2 (below it the idle varies with m)";
  return nullptr;
}
/// Each rank's idle in chunk-op times t_f/2, the same on every rank (where
/// v_memory_exception() is null): V-Half 3P-7 for P even, 3P-4 for P odd (P >= 3; 1 at
/// P = 2); V-Min 4P-7 when 3 divides P, else 4P-5 (P >= 2); 0 at P = 1.
constexpr int v_memory_idle_slots(const schedule_spec& s) {
  const int P = s.shape.P;
  if (P == 1) return 0;
  if (s.family == schedule_family::v_half) return P == 2 ? 1 : P % 2 == 0 ? 3 * P - 7 : 3 * P - 4;
  return P % 3 == 0 ? 4 * P - 7 : 4 * P - 5;
}
/// The cases of v_memory_idle_slots() as text: {makespan, bubble fraction} each.
inline constexpr const char* v_memory_texts[6][2] = {
    {"m(t_f+t_i+t_w) (P = 1)", "0 (P = 1)"},
    {"m(t_f+t_i+t_w) + t_f/2 (P = 2)", "t_f/2 / T (P = 2)"},
    {"m(t_f+t_i+t_w) + (3P-7) t_f/2 (P even)", "(3P-7) t_f/2 / T (P even)"},
    {"m(t_f+t_i+t_w) + (3P-4) t_f/2 (P odd)", "(3P-4) t_f/2 / T (P odd)"},
    {"m(t_f+t_i+t_w) + (4P-7) t_f/2 (3 divides P)", "(4P-7) t_f/2 / T (3 divides P)"},
    {"m(t_f+t_i+t_w) + (4P-5) t_f/2 (3 does not divide P)", "(4P-5) t_f/2 / T (3 does not divide P)"},
};
/// The case of v_memory_texts that applies to s.
constexpr const char* const* v_memory_text(const schedule_spec& s) {
  const int P = s.shape.P;
  if (P == 1) return v_memory_texts[0];
  if (s.family == schedule_family::v_half) return v_memory_texts[P == 2 ? 1 : P % 2 == 0 ? 2 : 3];
  return v_memory_texts[P % 3 == 0 ? 4 : 5];
}
}  // namespace ctpipe::detail

namespace ctpipe::schedules {

/// V-Half's and V-Min's makespan, t_f = t_i = t_w, t_c = 0, m >= P+2: every rank is
/// busy m(t_f+t_i+t_w) and idles k t_f/2, with k = 3P-7 (P even) or 3P-4 (P odd, P >= 3)
/// for V-Half (1 at P = 2), k = 4P-7 (3 | P) or 4P-5 for V-Min, 0 at P = 1. These are
/// ctpipe's, read off the authors' generator and proved on a grid (P <= 8 at compile
/// time, tests/static/proofs_controllable_memory.cpp; P <= 16, m <= 6P at run time); the
/// paper gives only the asymptotic
/// rates (about 1/2 and 2/3 of 1F1B's bubble, whose idle is 6(P-1) t_f/2 here).
constexpr closed_form v_memory_makespan(const schedule_spec& s, const costs& c) {
  if (const char* why = detail::v_memory_exception(s, c)) return detail::no_formula(why);
  return {true, rational{s.shape.m} * (c.f + c.i + c.w) + rational{detail::v_memory_idle_slots(s)} * c.f / rational{2},
          detail::v_memory_text(s)[0], "ctpipe, from the Zero Bubble authors' zbv_greedy.py (proved on a grid)",
          "t_f = t_i = t_w, t_c = 0, m >= P+2"};
}
/// Their bubble fraction: the idle k t_f/2 over the makespan (every rank idles the same).
constexpr closed_form v_memory_bubble_fraction(const schedule_spec& s, const costs& c) {
  const closed_form T = v_memory_makespan(s, c);
  if (!T.holds) return T;  // the idle is computed only where the formula holds
  return detail::idle_fraction(T, rational{detail::v_memory_idle_slots(s)} * c.f / rational{2},
                               detail::v_memory_text(s)[1]);
}
/// Their span bubble: none claimed (simulate() gives it).
constexpr closed_form v_memory_span_bubble(const schedule_spec&, const costs&) {
  return detail::no_formula("none claimed (simulate() gives it)");
}
/// Their peak in-flight chunks per rank: none claimed (the ranks differ);
/// v_memory_peak_bound() gives the largest, which bounds every rank.
constexpr closed_form v_memory_peak_in_flight(const schedule_spec& s, rational, int) {
  return detail::no_formula(s.family == schedule_family::v_half
                                ? "none per rank; every rank holds at most 2 min(m, floor((P+2)/2))"
                                : "none per rank; every rank holds at most 2 min(m, floor((P+4)/3))");
}
/// The largest peak in-flight over the ranks, in chunks, gamma = 1: `2 min(m,
/// floor((P+2)/2))` for V-Half, `2 min(m, floor((P+4)/3))` for V-Min, that is the paper's
/// bounds of floor((P+2)/2) and floor((P+4)/3) full activations (two chunks each),
/// reached once m is large enough (ctpipe's proof: every rank at most this, one rank
/// exactly this, P <= 8, m <= 4P at compile time; P <= 16, m <= 6P at run time).
constexpr closed_form v_memory_peak_bound(const schedule_spec& s, rational gamma) {
  if (s.family != schedule_family::v_half && s.family != schedule_family::v_min)
    return detail::no_formula("v-half and v-min only");
  if (gamma != rational{1}) return detail::no_formula("needs gamma = 1 (the paper's count)");
  const bool half = s.family == schedule_family::v_half;
  const int full = half ? (s.shape.P + 2) / 2 : (s.shape.P + 4) / 3;
  return {true, rational{2 * (s.shape.m < full ? s.shape.m : full)},
          half ? "2 min(m, floor((P+2)/2))" : "2 min(m, floor((P+4)/3))",
          "Qi et al., Pipeline Parallelism with Controllable Memory (NeurIPS 2024); proved by ctpipe on a grid",
          "gamma = 1, any costs"};
}

}  // namespace ctpipe::schedules
