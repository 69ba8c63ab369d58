// ctpipe/analysis/search_v.hpp: the greedy construction of search() on the V-shape
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
  constexpr zbv_greedy(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc, std::int64_t mf, std::int64_t mi,
                       std::int64_t mw, const std::int64_t* cap, const v_greedy_rules& rules, const std::int64_t* approved)
      : P_(P), m_(m), cost_{tf, ti, tw}, tc_(tc), mem_{mf, mi, mw}, cap_(cap), approved_(approved), rules_(rules), nf_(idx(P) * 2),
        ni_(idx(P) * 2), nw_(idx(P)), written_(idx(P)), chunk_(idx(P)), end_(idx(P)), level_(idx(P)), bubble_(idx(P)), f_end_(idx(P) * 2 * idx(m)),
        i_end_(idx(P) * 2 * idx(m)), queue_(idx(P) * 2 * idx(m)), ops_(idx(P) * 6 * idx(m)) {
    for (std::size_t k = 0; k < f_end_.size(); ++k) f_end_[k] = i_end_[k] = -1;
    if (approved_ != nullptr) {
      top_approved_ = approved_[0];
      for (std::size_t r = 1; r < idx(P); ++r) top_approved_ = approved_[r] > top_approved_ ? approved_[r] : top_approved_;
    }
  }

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
      while (ok_ && nw_[idx(r)] < ni(r, 0) + ni(r, 1)) put_w(r);
    }
    return ok_ && complete();
  }

  /// Rank r's ops in the order written (6m of them after a run that fitted).
  constexpr std::span<const op> rank(int r) const { return ops_.span().subspan(idx(r) * 6 * idx(m_), idx(written_[idx(r)])); }
  /// The largest per-rank span (ticks): the worst bubble plus a rank's work.
  constexpr std::int64_t span() const { return worst_ + 2 * m_ * (cost_[0] + cost_[1] + cost_[2]); }
  /// Every rank's bubble (ticks: its span minus its work), for the next round's `approved`.
  constexpr const buffer<std::int64_t>& bubbles() const { return bubble_; }

 private:
  static constexpr std::size_t idx(int x) { return static_cast<std::size_t>(x); }
  constexpr int& nf(int r, int c) { return nf_[idx(r) * 2 + idx(c)]; }
  constexpr int& ni(int r, int c) { return ni_[idx(r) * 2 + idx(c)]; }
  constexpr std::int64_t& f_end(int r, int c, int j) { return f_end_[(idx(r) * 2 + idx(c)) * idx(m_) + idx(j)]; }
  constexpr std::int64_t& i_end(int r, int c, int j) { return i_end_[(idx(r) * 2 + idx(c)) * idx(m_) + idx(j)]; }
  constexpr int ni(int r, int c) const { return ni_[idx(r) * 2 + idx(c)]; }
  constexpr std::int64_t i_end(int r, int c, int j) const { return i_end_[(idx(r) * 2 + idx(c)) * idx(m_) + idx(j)]; }
  constexpr int stage(int r, int c) const { return c == 0 ? r : 2 * P_ - 1 - r; }
  constexpr bool complete() const {
    for (int r = 0; r < P_; ++r) {
      if (written_[idx(r)] != 6 * m_) return false;
    }
    return true;
  }
  /// The room a rank has under the worst bubble (the authors' get_max_stage_bubble(r)
  /// minus the rank's bubble).
  constexpr std::int64_t room(int r) const {
    std::int64_t top = worst_;
    if (approved_ != nullptr && top_approved_ - approved_[idx(r)] > top) top = top_approved_ - approved_[idx(r)];
    return top - bubble_[idx(r)];
  }

  /// Writes op o on rank r: it ends at max(end + cost, ready + cost), ready being its
  /// input's end plus t_c (or -1 when it has no input on another rank).
  constexpr void write(int r, op_kind kind, int c, int j, std::int64_t ready) {
    const std::size_t x = idx(r);
    const int k = kind == op_kind::F ? 0 : kind == op_kind::I ? 1 : 2;
    const std::int64_t packed = end_[x] + cost_[k];
    std::int64_t t = packed;
    if (ready >= 0 && ready + cost_[k] > t) t = ready + cost_[k];
    if (nf(r, 0) > 0) bubble_[x] += t - packed, worst_ = bubble_[x] > worst_ ? bubble_[x] : worst_;
    end_[x] = t;
    level_[x] += mem_[k];
    if (level_[x] > cap_[x]) ok_ = false;
    ops_[x * 6 * idx(m_) + idx(written_[x]++)] = make_op(kind, stage(r, c), j);
  }
  /// Rank r's oldest pending W.
  constexpr void put_w(int r) {
    const std::size_t x = idx(r);
    if (nw_[x] >= ni(r, 0) + ni(r, 1)) return static_cast<void>(ok_ = false);
    const int code = queue_[x * 2 * idx(m_) + idx(nw_[x]++)];
    const int c = code % 2, j = code / 2;
    write(r, op_kind::W, c, j, -1);
    if (r == P_ - 1 && c == 0 && j == m_ - 1) last_w_end_ = end_[x];
  }
  /// Rank r's next F of chunk c.
  constexpr void put_f(int r, int c) {
    const int j = nf(r, c);
    if (j >= m_) return static_cast<void>(ok_ = false);
    std::int64_t ready = -1;
    if (c == 0 && r > 0) ready = input(f_end(r - 1, 0, j));
    if (c == 1 && r + 1 < P_) ready = input(f_end(r + 1, 1, j));
    if (c == 1 && r + 1 == P_ && f_end(r, 0, j) < 0) ok_ = false;  // the turn: rank P-1's own chunk-0 F
    if (!ok_) return;
    write(r, op_kind::F, c, j, ready);
    f_end(r, c, j) = end_[idx(r)];
    ++nf(r, c);
  }
  /// Rank r's next I of chunk c.
  constexpr void put_i(int r, int c) {
    const int j = ni(r, c);
    if (j >= m_ || f_end(r, c, j) < 0) return static_cast<void>(ok_ = false);
    std::int64_t ready = -1;
    if (c == 1 && r > 0) ready = input(i_end(r - 1, 1, j));
    if (c == 0 && r + 1 < P_) ready = input(i_end(r + 1, 0, j));
    if (c == 0 && r + 1 == P_ && i_end(r, 1, j) < 0) ok_ = false;  // the turn: rank P-1's own chunk-1 I
    if (!ok_) return;
    write(r, op_kind::I, c, j, ready);
    i_end(r, c, j) = end_[idx(r)];
    queue_[idx(r) * 2 * idx(m_) + idx(ni(r, 0) + ni(r, 1))] = 2 * j + c;
    ++ni(r, c);
  }
  /// An input's arrival: its end plus t_c, or a failed run when it has not run.
  constexpr std::int64_t input(std::int64_t end) {
    if (end < 0) ok_ = false;
    return end + tc_;
  }
  /// Pending Ws of rank r before an op whose input ends at `input_end` (-1: not run;
  /// `has_input`: it has one on another rank): while one ends before the input arrives;
  /// then one more when the wait passes the rank's room under the worst bubble and
  /// `fill` (the rules' switch for this op) holds. ctpipe's w_reserve keeps that many
  /// pending.
  constexpr void fill_gap(int r, bool has_input, std::int64_t input_end, bool fill) {
    const std::size_t x = idx(r);
    const auto pending = [&] { return ni(r, 0) + ni(r, 1) - nw_[x]; };
    const auto keep = [&] { return pending() > rules_.w_reserve; };
    while (ok_ && pending() > 0 && keep() && has_input && input_end + tc_ >= end_[x] + cost_[2]) put_w(r);
    const std::int64_t seen = has_input ? input_end : last_w_end_;  // the authors' end_time[-1] when there is no input
    if (ok_ && pending() > 0 && keep() && fill && seen + tc_ - end_[x] > room(r)) put_w(r);
  }

  /// Step 1.
  constexpr void warmup() {
    for (int r = 0; r < P_ && ok_; ++r) put_f(r, 0);
    for (int r = P_ - 1; r >= 0 && ok_; --r) {
      if (r + 1 < P_) {
        const std::int64_t arrives = f_end(r + 1, 1, 0) + tc_;
        const std::int64_t keep_free = mem_[0] * (2 + 2 * static_cast<std::int64_t>(r) - rules_.warmup_offset);
        while (ok_ && level_[idx(r)] + keep_free <= cap_[idx(r)] && end_[idx(r)] + cost_[0] <= arrives && nf(r, 0) < m_) {
          for (int q = 0; q <= r && ok_; ++q) {
            if (nf(q, 0) < m_) put_f(q, 0);
          }
        }
      }
      put_f(r, 1);
    }
    int chunk = 0;
    for (int r = 1; r < P_ && ok_; ++r) {
      while (ok_ && (nf(r, 0) + nf(r, 1) < nf(r - 1, 0) + nf(r - 1, 1) || (nf(r, 1) <= nf(r - 1, 1) && nf(r - 1, 1) < m_))) {
        for (int q = P_ - 1; q >= r && ok_; --q) {
          if (nf(q, chunk) < m_) put_f(q, chunk);
        }
        chunk = 1 - chunk;
      }
    }
  }
  /// Step 2's Is: which chunk each rank runs (decided for every rank first), then the
  /// chunk-0 ranks from the last back and the chunk-1 ranks from the first.
  constexpr void backward_step() {
    for (int r = 0; r < P_; ++r) chunk_[idx(r)] = next_i_chunk(r);
    for (int pass = 0; pass < 2 && ok_; ++pass) {
      for (int n = 0; n < P_ && ok_; ++n) {
        const int r = pass == 0 ? P_ - 1 - n : n;
        const int c = chunk_[idx(r)];
        if (c != (pass == 0 ? 0 : 1)) continue;
        if (ni(r, c) >= m_) return static_cast<void>(ok_ = false);
        const bool has_input = c == 1 ? r > 0 : r + 1 < P_;
        const std::int64_t input_end = !has_input ? -1 : c == 1 ? i_end(r - 1, 1, ni(r, 1)) : i_end(r + 1, 0, ni(r, 0));
        fill_gap(r, has_input, input_end, c == 0 || rules_.fill_before_i);
        if (ok_) put_i(r, c);
      }
    }
  }
  /// The chunk of rank r's next I: 1 while chunk 1 has no more Is than chunk 0; else 0 on
  /// the last rank, or when the next rank's chunk-0 I has run or chunk 1's are done.
  constexpr int next_i_chunk(int r) const {
    if (ni(r, 0) >= ni(r, 1)) return 1;
    if (r == P_ - 1) return 0;
    return ni(r, 1) >= m_ || i_end(r + 1, 0, ni(r, 0)) >= 0 ? 0 : 1;
  }
  /// Step 2's Fs, rank by rank from the first.
  constexpr void forward_step() {
    for (int r = 0; r < P_ && ok_; ++r) {
      if (nf(r, 1) >= m_) continue;
      int c = -1;
      if (nf(r, 1) >= nf(r, 0)) {
        c = 0;
      } else if (r == P_ - 1 || f_end(r + 1, 1, nf(r, 1)) >= 0) {
        c = 1;
      } else if (nf(r, 0) < m_ && (r == 0 || f_end(r - 1, 0, nf(r, 0)) >= 0)) {
        c = 0;
      }
      if (c < 0) continue;
      while (ok_ && level_[idx(r)] + mem_[0] > cap_[idx(r)]) put_w(r);
      const bool has_input = c == 0 ? r > 0 : r + 1 < P_;
      const std::int64_t input_end = !has_input ? -1 : c == 0 ? f_end(r - 1, 0, nf(r, 0)) : f_end(r + 1, 1, nf(r, 1));
      fill_gap(r, has_input, input_end, rules_.fill_before_f);
      if (ok_) put_f(r, c);
    }
  }

  int P_, m_;
  std::int64_t cost_[3];
  std::int64_t tc_;
  std::int64_t mem_[3];
  const std::int64_t* cap_;       // per rank
  const std::int64_t* approved_;  // per rank, or null
  std::int64_t top_approved_ = -1;
  v_greedy_rules rules_;
  buffer<int> nf_, ni_, nw_, written_, chunk_;  // per rank (and chunk): Fs, Is, Ws, ops written; the step's I chunk
  buffer<std::int64_t> end_, level_, bubble_;
  buffer<std::int64_t> f_end_, i_end_;  // [(r * 2 + c) * m + j]: end, -1 before it runs
  buffer<int> queue_;                   // [r * 2m + k]: the k-th I of rank r as 2 j + c
  buffer<op> ops_;                      // rank r's at r * 6m
  std::int64_t worst_ = 0;              // the largest bubble_ so far
  std::int64_t last_w_end_ = -1;        // rank P-1's chunk-0 W of micro-batch m-1
  bool ok_ = true;
};

}  // namespace detail
}  // namespace ctpipe
