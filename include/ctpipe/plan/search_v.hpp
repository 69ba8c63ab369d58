// ctpipe/plan/search_v.hpp: the greedy construction of search() on the V-shape
// placement (two chunks per rank; docs/search.md, "The V-shape"): the Zero Bubble
// authors' automatic ZB-V scheduler, re-expressed in ctpipe's own terms, with ctpipe's
// rule-set additions.
//
// Source: sail-sg/zero-bubble-pipeline-parallelism, `megatron/core/pipeline_parallel/
// zerobubble/scheduler/zbv.py`, `PipelineGraph.try_v_schedule` and `create_schedule` (the
// scheduler Megatron runs for `--zero-bubble-v-schedule` with profiled costs). Read for
// its facts (op order, tie rules); the code here is ctpipe's.
//
// Rank r holds chunk 0 (stage r) and chunk 1 (stage 2P-1-r). Forwards of chunk 0 flow
// from rank 0 to rank P-1, then chunk 1's back to rank 0; the input gradients flow the
// other way: chunk 1's I from rank 0 to rank P-1, then chunk 0's back to rank 0. A chunk's
// op costs t/2. Memory in chunks: an F adds 1, an I frees 1 - gamma, a W frees gamma.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t
#include <span>

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/op.hpp"

namespace ctpipe {

/// The rule set of one V-shape greedy construction: the two switches of the Zero Bubble
/// authors' automatic ZB-V (`fill_b`, `fill_f` in their `try_v_schedule`) and ctpipe's
/// additions. Defaults are the authors' first set with no additions.
struct v_greedy_rules {
  /// A gap before a chunk-1 I that the worst bubble so far does not cover is filled with
  /// a pending W (the authors' `fill_b`; before a chunk-0 I they always fill).
  bool fill_before_i = true;
  /// The same before an F (`fill_f`).
  bool fill_before_f = true;
  /// ctpipe: chunks of memory the warmup may use beyond the authors' test (each rank r
  /// keeps 2 + 2r chunks free for the round that follows; may be negative).
  int warmup_offset = 0;
  /// ctpipe: Ws each rank keeps back from the gap filling while memory allows (0: the
  /// authors' rule).
  int w_reserve = 0;
};

namespace detail {

/// One V-shape greedy construction (v_greedy_rules), in integer ticks and memory units,
/// for one round of the authors' refinement: `approved` (P bubbles in ticks, or null for
/// the first round) is the previous round's per-rank bubble, which lets a rank fill more
/// of its gaps with Ws when it is below the worst rank.
///
/// The order, as the authors build it:
/// 1. Warmup: micro-batch 0's chunk-0 F on every rank; then from the last rank back, a
///    rank's chunk-1 F, and before it rounds of one more chunk-0 F on ranks 0..r while
///    rank r can still end one before its chunk-1 input arrives and keeps 2 + 2r chunks
///    free; then, rank by rank from rank 1, forwards from the last rank back to rank r,
///    alternating the chunks, until rank r holds at least as many as rank r-1 and more
///    chunk-1 Fs.
/// 2. 2m steps, each one I per rank (chunk 1's when it has no more than chunk 0's, else
///    chunk 0's when its input has run; the chunk-0 ranks from the last back, then the
///    chunk-1 ranks from the first), then one F per rank that can run one (chunk 0's when
///    chunk 1 has caught up, else chunk 1's when its input has run, else chunk 0's when
///    its input has run). Before each I or F, pending Ws (oldest first) go in the gap
///    until its input arrives, one more when the gap is wider than the room under the
///    worst bubble (before a chunk-1 I and an F only if the rules say so), and as many as
///    memory needs before an F.
/// 3. The Ws left, oldest first.
/// Each op ends at max(the rank's last end, its input's end + t_c) + its cost: the exact
/// simulation of the order written. Where the authors' code reads the end of "no input"
/// (Python's `end_time[-1]`: rank P-1's chunk-0 W of the last micro-batch), this reads
/// the same, so the order is theirs.
class zbv_greedy {
 public:
  /// Chunk op costs tf, ti, tw and the latency tc in ticks; an F adds mf memory units,
  /// an I mi and a W mw (mi, mw <= 0); rank r's limit is cap[r] units.
  constexpr zbv_greedy(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc,
                       std::int64_t mf, std::int64_t mi, std::int64_t mw, const std::int64_t* cap,
                       const v_greedy_rules& rules, const std::int64_t* approved)
      : P_(P),
        m_(m),
        cost_{tf, 0, ti, tw},
        tc_(tc),
        mem_{mf, 0, mi, mw},
        cap_(cap),
        approved_(approved),
        rules_(rules),
        ints_(static_cast<std::size_t>(7 * P + 2 * P * m)),
        times_(static_cast<std::size_t>(3 * P + 4 * P * m)),
        ops_(static_cast<std::size_t>(6 * P * m)) {
    // one block of ints and one of times, cut into the per-rank tables (indexing by raw
    // pointers keeps the constant evaluation's steps per op low)
    nf_ = ints_.data(), ni_ = nf_ + 2 * P, nw_ = ni_ + 2 * P, written_ = nw_ + P, chunk_ = written_ + P,
    queue_ = chunk_ + P;
    end_ = times_.data(), level_ = end_ + P, bubble_ = level_ + P, f_end_ = bubble_ + P, i_end_ = f_end_ + 2 * P * m;
    for (std::int64_t* t = f_end_; t != i_end_ + 2 * P * m; ++t) *t = -1;
    if (approved_ != nullptr) {
      for (int r = 0; r < P; ++r) top_approved_ = approved_[r] > top_approved_ ? approved_[r] : top_approved_;
    }
  }
  zbv_greedy(const zbv_greedy&) = delete;  // the tables point into its own storage
  zbv_greedy& operator=(const zbv_greedy&) = delete;

  /// Runs the construction; false when it cannot stay within the limit or an op's input
  /// would not have run (the authors' code stops on an assertion there). O(P m): each op
  /// placed in O(1), each step O(P).
  constexpr bool run() {
    warmup();
    for (int step = 0; step < 2 * m_ && ok_; ++step) {
      backward_step();
      forward_step();
    }
    for (int r = 0; r < P_ && ok_; ++r) {
      while (ok_ && nw_[r] < ni_[2 * r] + ni_[2 * r + 1]) put_w(r);
    }
    for (int r = 0; r < P_ && ok_; ++r) ok_ = written_[r] == 6 * m_;
    return ok_;
  }

  /// Rank r's ops in the order written (6m of them after a run that fitted).
  constexpr std::span<const op> rank(int r) const {
    return ops_.span().subspan(static_cast<std::size_t>(6 * r * m_), static_cast<std::size_t>(written_[r]));
  }
  /// The largest per-rank span (ticks): the worst bubble plus a rank's work.
  constexpr std::int64_t span() const { return worst_ + 2 * m_ * (cost_[code_f] + cost_[code_i] + cost_[code_w]); }
  /// Every rank's bubble (P of them, ticks: its span minus its work), for the next
  /// round's `approved`.
  constexpr const std::int64_t* bubbles() const { return bubble_; }

 private:
  /// The room a rank has under the worst bubble (the authors' get_max_stage_bubble(r)
  /// minus the rank's bubble).
  constexpr std::int64_t room(int r) const {
    std::int64_t top = worst_;
    if (approved_ != nullptr && top_approved_ - approved_[r] > top) top = top_approved_ - approved_[r];
    return top - bubble_[r];
  }

  /// Writes an op of kind code K (kind_code: code_f, code_i or code_w) of chunk c,
  /// micro-batch j on rank r: it ends at max(end + cost, ready + cost), ready being its
  /// input's arrival (its end plus t_c; -1 when it has no input on another rank).
  template <std::uint32_t K>
  constexpr void write(int r, int c, int j, std::int64_t ready) {
    const std::int64_t packed = end_[r] + cost_[K];
    const std::int64_t t = ready >= 0 && ready + cost_[K] > packed ? ready + cost_[K] : packed;
    if (nf_[2 * r] > 0) bubble_[r] += t - packed, worst_ = bubble_[r] > worst_ ? bubble_[r] : worst_;
    end_[r] = t;
    level_[r] += mem_[K];
    ok_ = ok_ && level_[r] <= cap_[r];
    ops_[static_cast<std::size_t>(6 * r * m_ + written_[r]++)] =
        make_op(static_cast<op_kind>(K), c == 0 ? r : 2 * P_ - 1 - r, j);
  }
  /// Rank r's oldest pending W.
  constexpr void put_w(int r) {
    if (nw_[r] >= ni_[2 * r] + ni_[2 * r + 1]) return static_cast<void>(ok_ = false);
    const int code = queue_[2 * r * m_ + nw_[r]++];
    const int c = code % 2, j = code / 2;
    write<code_w>(r, c, j, -1);
    if (r == P_ - 1 && c == 0 && j == m_ - 1) last_w_end_ = end_[r];
  }
  /// Rank r's next F of chunk c; its input (the previous stage's F, on rank r - 1 for
  /// chunk 0 and r + 1 for chunk 1) must have run.
  constexpr void put_f(int r, int c) {
    const int j = nf_[2 * r + c];
    const int from = c == 0 ? r - 1 : r + 1;  // the input's rank; none on rank 0 for chunk 0
    if (j >= m_ || (c == 1 && from == P_ && f_end_[(2 * r) * m_ + j] < 0))
      return static_cast<void>(ok_ = false);  // the turn
    const bool remote = from >= 0 && from < P_;
    const std::int64_t input = remote ? f_end_[(2 * from + c) * m_ + j] : 0;
    if (input < 0) return static_cast<void>(ok_ = false);
    write<code_f>(r, c, j, remote ? input + tc_ : -1);
    f_end_[(2 * r + c) * m_ + j] = end_[r];
    ++nf_[2 * r + c];
  }
  /// Rank r's next I of chunk c; its F and its input (the next stage's I, on rank r - 1
  /// for chunk 1 and r + 1 for chunk 0) must have run.
  constexpr void put_i(int r, int c) {
    const int j = ni_[2 * r + c];
    const int from = c == 1 ? r - 1 : r + 1;
    if (j >= m_ || f_end_[(2 * r + c) * m_ + j] < 0 || (c == 0 && from == P_ && i_end_[(2 * r + 1) * m_ + j] < 0)) {
      return static_cast<void>(ok_ = false);  // the turn on rank P-1: its own chunk-1 I first
    }
    const bool remote = from >= 0 && from < P_;
    const std::int64_t input = remote ? i_end_[(2 * from + c) * m_ + j] : 0;
    if (input < 0) return static_cast<void>(ok_ = false);
    write<code_i>(r, c, j, remote ? input + tc_ : -1);
    i_end_[(2 * r + c) * m_ + j] = end_[r];
    queue_[2 * r * m_ + ni_[2 * r] + ni_[2 * r + 1]] = 2 * j + c;
    ++ni_[2 * r + c];
  }
  /// Pending Ws of rank r before an op whose input ends at `input_end` (-1: not run;
  /// `has_input`: it has one on another rank): while one ends before the input arrives;
  /// then one more when the wait passes the rank's room under the worst bubble and
  /// `fill` (the rules' switch for this op) holds. ctpipe's w_reserve keeps that many
  /// pending.
  constexpr void fill_gap(int r, bool has_input, std::int64_t input_end, bool fill) {
    int pending = ni_[2 * r] + ni_[2 * r + 1] - nw_[r];
    if (has_input) {
      for (; ok_ && pending > rules_.w_reserve && pending > 0 && input_end + tc_ >= end_[r] + cost_[code_w]; --pending)
        put_w(r);
    }
    const std::int64_t seen = has_input ? input_end : last_w_end_;  // the authors' end_time[-1] when there is no input
    if (ok_ && fill && pending > rules_.w_reserve && pending > 0 && seen + tc_ - end_[r] > room(r)) put_w(r);
  }

  /// Step 1.
  constexpr void warmup() {
    for (int r = 0; r < P_ && ok_; ++r) put_f(r, 0);
    for (int r = P_ - 1; r >= 0 && ok_; --r) {
      if (r + 1 < P_) {
        const std::int64_t arrives = f_end_[(2 * (r + 1) + 1) * m_] + tc_;
        const std::int64_t keep_free = mem_[code_f] * (2 + 2 * static_cast<std::int64_t>(r) - rules_.warmup_offset);
        while (ok_ && level_[r] + keep_free <= cap_[r] && end_[r] + cost_[code_f] <= arrives && nf_[2 * r] < m_) {
          for (int q = 0; q <= r && ok_; ++q) {
            if (nf_[2 * q] < m_) put_f(q, 0);
          }
        }
      }
      put_f(r, 1);
    }
    int chunk = 0;
    for (int r = 1; r < P_ && ok_; ++r) {
      const int* here = nf_ + 2 * r;
      const int* before = here - 2;
      while (ok_ && (here[0] + here[1] < before[0] + before[1] || (here[1] <= before[1] && before[1] < m_))) {
        for (int q = P_ - 1; q >= r && ok_; --q) {
          if (nf_[2 * q + chunk] < m_) put_f(q, chunk);
        }
        chunk = 1 - chunk;
      }
    }
  }
  /// Step 2's Is: which chunk each rank runs (decided for every rank first: chunk 1 while
  /// its chunk-1 Is are no more than its chunk-0 ones; else chunk 0 on the last rank, or
  /// when the next rank's chunk-0 I has run or chunk 1's are done), then the chunk-0
  /// ranks from the last back and the chunk-1 ranks from the first.
  constexpr void backward_step() {
    for (int r = 0; r < P_; ++r) {
      const int i0 = ni_[2 * r], i1 = ni_[2 * r + 1];
      chunk_[r] = i0 >= i1 ? 1 : r == P_ - 1 || i1 >= m_ || i_end_[(2 * (r + 1)) * m_ + i0] >= 0 ? 0 : 1;
    }
    for (int n = 0; n < 2 * P_ && ok_; ++n) {
      const int c = n < P_ ? 0 : 1, r = n < P_ ? P_ - 1 - n : n - P_;
      if (chunk_[r] != c) continue;
      const int j = ni_[2 * r + c];
      if (j >= m_) return static_cast<void>(ok_ = false);
      const int from = c == 1 ? r - 1 : r + 1;
      const bool has_input = from >= 0 && from < P_;
      fill_gap(r, has_input, has_input ? i_end_[(2 * from + c) * m_ + j] : -1, c == 0 || rules_.fill_before_i);
      if (ok_) put_i(r, c);
    }
  }
  /// Step 2's Fs, rank by rank from the first.
  constexpr void forward_step() {
    for (int r = 0; r < P_ && ok_; ++r) {
      const int f0 = nf_[2 * r], f1 = nf_[2 * r + 1];
      if (f1 >= m_) continue;
      int c = -1;
      if (f1 >= f0) {
        c = 0;
      } else if (r == P_ - 1 || f_end_[(2 * (r + 1) + 1) * m_ + f1] >= 0) {
        c = 1;
      } else if (f0 < m_ && (r == 0 || f_end_[(2 * (r - 1)) * m_ + f0] >= 0)) {
        c = 0;
      }
      if (c < 0) continue;
      while (ok_ && level_[r] + mem_[code_f] > cap_[r]) put_w(r);
      const int from = c == 0 ? r - 1 : r + 1;
      const bool has_input = from >= 0 && from < P_;
      fill_gap(r, has_input, has_input ? f_end_[(2 * from + c) * m_ + nf_[2 * r + c]] : -1, rules_.fill_before_f);
      if (ok_) put_f(r, c);
    }
  }

  int P_, m_;
  std::int64_t cost_[4];  // per kind code (code_b unused)
  std::int64_t tc_;
  std::int64_t mem_[4];           // per kind code (code_b unused)
  const std::int64_t* cap_;       // per rank
  const std::int64_t* approved_;  // per rank, or null
  std::int64_t top_approved_ = -1;
  v_greedy_rules rules_;
  buffer<int> ints_;
  buffer<std::int64_t> times_;
  buffer<op> ops_;  // rank r's at r * 6m
  // per rank r (and chunk c at 2r + c): Fs, Is, Ws and ops written, the step's I chunk;
  // the queue of Is at 2m r (as 2 j + c, in the order written)
  int *nf_ = nullptr, *ni_ = nullptr, *nw_ = nullptr, *written_ = nullptr, *chunk_ = nullptr, *queue_ = nullptr;
  // per rank: its last end, level and bubble; per (r, c) row of m: each F's and I's end
  // (-1 before it runs)
  std::int64_t *end_ = nullptr, *level_ = nullptr, *bubble_ = nullptr, *f_end_ = nullptr, *i_end_ = nullptr;
  std::int64_t worst_ = 0;        // the largest bubble_ so far
  std::int64_t last_w_end_ = -1;  // rank P-1's chunk-0 W of micro-batch m-1
  bool ok_ = true;
};

/// ctpipe's memory-aware list scheduling on the V-shape (for low limits, where the
/// authors' construction does not fit, and high ones, where it leaves a bubble): each
/// rank, when it falls free (ranks in time order), runs the first of its next ops whose
/// input has arrived in the order of `priority` (0: chunk-0 I, chunk-1 I, chunk-1 F,
/// chunk-0 F; 1: chunk-1 F, chunk-0 F, chunk-0 I, chunk-1 I; 2: chunk-1 I, chunk-0 I,
/// chunk-1 F, chunk-0 F), a
/// chunk-0 F only while its level plus one chunk for it and one for each started
/// micro-batch's chunk-1 F (its own included) stays within the limit, so every started
/// micro-batch can finish its forwards; else a pending W (oldest first; with
/// `wait_for_input`, only when it ends by the next input's arrival); else it waits for
/// the next input. The earliest micro-batch whose forwards are not done can always go on
/// once the backwards before it have freed memory, so the order never deadlocks. Ranks
/// are taken from a binary heap of their free times: O(ops log P).
class v_list_scheduler {
 public:
  /// As zbv_greedy's (chunk costs, latency, memory units, per-rank limits).
  constexpr v_list_scheduler(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc,
                             std::int64_t mf, std::int64_t mi, std::int64_t mw, const std::int64_t* cap, int priority,
                             bool wait_for_input)
      : P_(P),
        m_(m),
        cost_{tf, 0, ti, tw},
        tc_(tc),
        mem_{mf, 0, mi, mw},
        cap_(cap),
        priority_(priority),
        wait_(wait_for_input),
        ints_(static_cast<std::size_t>(8 * P + 2 * P * m)),
        times_(static_cast<std::size_t>(2 * P + 4 * P * m)),
        heap_(static_cast<std::size_t>(18 * P * m + 2 * P + 2)),
        ops_(static_cast<std::size_t>(6 * P * m)) {
    nf_ = ints_.data(), ni_ = nf_ + 2 * P, nw_ = ni_ + 2 * P, written_ = nw_ + P, blocked_ = written_ + P,
    queue_ = blocked_ + P;
    free_ = times_.data(), level_ = free_ + P, f_end_ = level_ + P, i_end_ = f_end_ + 2 * P * m;
    for (std::int64_t* t = f_end_; t != i_end_ + 2 * P * m; ++t) *t = -1;
  }
  v_list_scheduler(const v_list_scheduler&) = delete;  // the tables point into its own storage
  v_list_scheduler& operator=(const v_list_scheduler&) = delete;

  /// Runs the scheduling; false when a rank passes its limit or the ranks stall (not
  /// expected: a check). O(ops log P).
  constexpr bool run() {
    for (int r = 0; r < P_; ++r) push(0, r);
    std::int64_t placed = 0;
    while (size_ > 0 && ok_) {
      const std::int64_t t = heap_[0].time;
      const int r = heap_[0].rank;
      pop();
      if (t != free_[r] || blocked_[r] != 0) continue;  // a stale entry
      placed += decide(r);
    }
    return ok_ && placed == 6 * static_cast<std::int64_t>(P_) * m_;
  }

  /// Rank r's ops in the order run (6m of them after a run that fitted).
  constexpr std::span<const op> rank(int r) const {
    return ops_.span().subspan(static_cast<std::size_t>(6 * r * m_), static_cast<std::size_t>(written_[r]));
  }

 private:
  struct entry {
    std::int64_t time;
    int rank;
  };
  static constexpr bool before(const entry& a, const entry& b) {
    return a.time < b.time || (a.time == b.time && a.rank < b.rank);
  }
  constexpr void push(std::int64_t time, int r) {
    if (static_cast<std::size_t>(size_) == heap_.size()) return static_cast<void>(ok_ = false);
    int k = size_++;
    heap_[static_cast<std::size_t>(k)] = {time, r};
    while (k > 0 && before(heap_[static_cast<std::size_t>(k)], heap_[static_cast<std::size_t>((k - 1) / 2)])) {
      const entry x = heap_[static_cast<std::size_t>(k)];
      heap_[static_cast<std::size_t>(k)] = heap_[static_cast<std::size_t>((k - 1) / 2)],
      heap_[static_cast<std::size_t>((k - 1) / 2)] = x;
      k = (k - 1) / 2;
    }
  }
  constexpr void pop() {
    heap_[0] = heap_[static_cast<std::size_t>(--size_)];
    for (int k = 0;;) {
      const int a = 2 * k + 1, b = a + 1;
      int best = k;
      if (a < size_ && before(heap_[static_cast<std::size_t>(a)], heap_[static_cast<std::size_t>(best)])) best = a;
      if (b < size_ && before(heap_[static_cast<std::size_t>(b)], heap_[static_cast<std::size_t>(best)])) best = b;
      if (best == k) return;
      const entry x = heap_[static_cast<std::size_t>(k)];
      heap_[static_cast<std::size_t>(k)] = heap_[static_cast<std::size_t>(best)],
      heap_[static_cast<std::size_t>(best)] = x;
      k = best;
    }
  }

  /// When rank r's next op of kind code k (code_f or code_i) of chunk c can start as far as its input
  /// goes: the input's arrival, 0 when it has none on another rank and its own input has
  /// run, -1 when that input has not run (or nothing is left).
  constexpr std::int64_t arrival(int r, std::uint32_t k, int c) const {
    if (k == code_f) {
      const int j = nf_[2 * r + c];
      if (j >= m_ || (c == 1 && j >= nf_[2 * r])) return -1;
      const int from = c == 0 ? r - 1 : r + 1;
      if (from < 0) return 0;
      if (from == P_) return 0;  // the turn: rank P-1's own chunk-0 F has run (j < nf0)
      const std::int64_t e = f_end_[(2 * from + c) * m_ + j];
      return e < 0 ? -1 : e + tc_;
    }
    const int j = ni_[2 * r + c];
    if (j >= m_ || j >= nf_[2 * r + c]) return -1;  // its own F first
    const int from = c == 1 ? r - 1 : r + 1;
    if (from < 0) return 0;
    if (from == P_) return j < ni_[2 * r + 1] ? 0 : -1;  // the turn: its own chunk-1 I first
    const std::int64_t e = i_end_[(2 * from + c) * m_ + j];
    return e < 0 ? -1 : e + tc_;
  }

  /// Rank r falls free: runs one op (returns 1), or waits (returns 0).
  constexpr int decide(int r) {
    const std::int64_t t = free_[r];
    // candidates in priority order: (kind code, chunk)
    constexpr std::uint32_t orders[3][4][2] = {{{code_i, 0}, {code_i, 1}, {code_f, 1}, {code_f, 0}},
                                               {{code_f, 1}, {code_f, 0}, {code_i, 0}, {code_i, 1}},
                                               {{code_i, 1}, {code_i, 0}, {code_f, 1}, {code_f, 0}}};
    std::int64_t next = -1;  // the earliest known arrival after t
    for (const auto& kc : orders[priority_]) {
      const int c = static_cast<int>(kc[1]);
      const std::int64_t a = arrival(r, kc[0], c);
      if (a < 0) continue;
      const bool room =
          kc[0] != code_f || c != 0 || level_[r] + mem_[code_f] * (2 + nf_[2 * r] - nf_[2 * r + 1]) <= cap_[r];
      if (!room) continue;
      if (a <= t) return run_op(r, kc[0], c, t), 1;
      next = next < 0 || a < next ? a : next;
    }
    const bool pending = nw_[r] < ni_[2 * r] + ni_[2 * r + 1];
    if (pending && (!wait_ || next < 0 || t + cost_[code_w] <= next)) return run_op(r, code_w, 0, t), 1;
    if (next >= 0) {
      free_[r] = next;
      push(next, r);
    } else {
      blocked_[r] = 1;  // until a neighbour's op gives it an input
    }
    return 0;
  }
  /// Runs rank r's next op of kind code k (code_f, code_i, or code_w: the oldest pending) of chunk c at
  /// time `at` or when its input arrives, then wakes the ranks it feeds.
  constexpr void run_op(int r, std::uint32_t k, int c, std::int64_t at) {
    int j = 0;
    if (k == code_w) {
      const int code = queue_[2 * r * m_ + nw_[r]++];
      c = code % 2, j = code / 2;
    } else {
      j = k == code_f ? nf_[2 * r + c]++ : ni_[2 * r + c]++;
    }
    const std::int64_t end = at + cost_[k];
    free_[r] = end;
    level_[r] += mem_[k];
    ok_ = ok_ && level_[r] <= cap_[r];
    if (k == code_f) f_end_[(2 * r + c) * m_ + j] = end;
    if (k == code_i)
      i_end_[(2 * r + c) * m_ + j] = end, queue_[2 * r * m_ + ni_[2 * r] + ni_[2 * r + 1] - 1] = 2 * j + c;
    ops_[static_cast<std::size_t>(6 * r * m_ + written_[r]++)] =
        make_op(static_cast<op_kind>(k), c == 0 ? r : 2 * P_ - 1 - r, j);
    push(end, r);
    // the ranks this op feeds (F: the next stage's rank; I: the previous stage's)
    const int to = k == code_f ? (c == 0 ? r + 1 : r - 1) : k == code_i ? (c == 1 ? r + 1 : r - 1) : -1;
    if (to >= 0 && to < P_ && blocked_[to] != 0) {
      blocked_[to] = 0;
      free_[to] = free_[to] > end + tc_ ? free_[to] : end + tc_;
      push(free_[to], to);
    }
  }

  int P_, m_;
  std::int64_t cost_[4];  // per kind code (code_b unused)
  std::int64_t tc_;
  std::int64_t mem_[4];  // per kind code (code_b unused)
  const std::int64_t* cap_;
  int priority_;
  bool wait_;
  buffer<int> ints_;
  buffer<std::int64_t> times_;
  buffer<entry> heap_;
  buffer<op> ops_;
  int size_ = 0;
  int *nf_ = nullptr, *ni_ = nullptr, *nw_ = nullptr, *written_ = nullptr, *blocked_ = nullptr, *queue_ = nullptr;
  std::int64_t *free_ = nullptr, *level_ = nullptr, *f_end_ = nullptr, *i_end_ = nullptr;
  bool ok_ = true;
};

}  // namespace detail
}  // namespace ctpipe
