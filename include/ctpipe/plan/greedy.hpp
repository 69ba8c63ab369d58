// ctpipe/plan/greedy.hpp: the greedy construction of search() on the loop placement (one
// stage per rank; docs/search.md): the Zero Bubble authors' heuristic (Qi et al., "Zero
// Bubble Pipeline Parallelism", ICLR 2024; `manual_order` in
// sail-sg/zero-bubble-pipeline-parallelism, `zb.py`), re-expressed in ctpipe's own terms,
// with its rule set (greedy_rules) and ctpipe's additions. The V-shape's is in
// search_v.hpp.
#pragma once

#include <algorithm>  // std::max, std::min
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int64_t, std::uint32_t
#include <span>

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/op.hpp"

namespace ctpipe {

/// The rule set of one greedy construction: the three switches of the Zero Bubble authors'
/// heuristic (`manual_order` in sail-sg/zero-bubble-pipeline-parallelism, `zb.py`) and
/// ctpipe's two additions. Defaults are the authors' first set with no additions.
struct greedy_rules {
  /// Warmup: a rank's extra forwards may end after its first I could start (the authors'
  /// `allow_bubble_before_first_b`), else they stop once that time is reached.
  bool warmup_past_first_i = true;
  /// Steady phase: a rank far ahead of the next may wait instead of running a forward,
  /// when the wait costs no more than the worst bubble so far (`prioritize_b`).
  bool prioritize_i = true;
  /// A gap shorter than a W, within the worst bubble so far, is still filled with a W
  /// (`no_bubble_greedy`).
  bool fill_short_gaps = true;
  /// ctpipe: extra warmup forwards per rank beyond the estimate (may be negative; each
  /// rank still keeps at least its first forward and stays within memory and m).
  int warmup_offset = 0;
  /// ctpipe: Ws each rank keeps back from the gap filling while memory allows, for the
  /// cooldown (0: the authors' rule).
  int w_reserve = 0;
};

namespace detail {

/// One greedy construction (greedy_rules), in integer ticks and memory units. The method
/// is the Zero Bubble authors' (zb.py, manual_order): it places ops micro-batch by
/// micro-batch, each rank's next F and next I when their inputs can have arrived, and
/// fills the gaps before them with pending Ws; a W also goes first whenever an F would
/// pass the memory limit. Each op ends at max(the rank's last end, its input's end + t_c)
/// + its cost: the exact simulation of the order it writes.
class zb_greedy {
 public:
  /// Rank r's limit is cap[r] memory units; an F adds mf units, an I mi and a W mw (mi,
  /// mw <= 0). Times in ticks.
  constexpr zb_greedy(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc, std::int64_t mf,
                      std::int64_t mi, std::int64_t mw, const std::int64_t* cap, const greedy_rules& rules)
      : P_(P),
        m_(m),
        cost_{tf, 0, ti, tw},
        tc_(tc),
        mem_{mf, 0, mi, mw},
        cap_(cap),
        rules_(rules),
        ints_(static_cast<std::size_t>(5 * P)),
        times_(static_cast<std::size_t>(3 * P + 2 * P * m)),
        ops_(static_cast<std::size_t>(3 * P * m)) {
    // one block of ints and one of times, cut into the per-rank tables (indexing by raw
    // pointers keeps the constant evaluation's steps per op low)
    f_ = ints_.data(), i_ = f_ + P, w_ = i_ + P, written_ = w_ + P, scratch_ = written_ + P;
    end_ = times_.data(), level_ = end_ + P, bubble_ = level_ + P, tf_end_ = bubble_ + P, ti_end_ = tf_end_ + P * m;
  }
  zb_greedy(const zb_greedy&) = delete;  // the tables point into its own storage
  zb_greedy& operator=(const zb_greedy&) = delete;

  /// Runs the construction; false when it cannot stay within the limit. O(P m): each op
  /// placed in O(1), each step O(P).
  constexpr bool run() {
    for (int j = 0; j < P_; ++j) put<code_f>(j);
    warmup();
    for (int j = P_ - 1; j >= 0; --j) put<code_i>(j);
    for (int mb = 1; mb < m_ && ok_; ++mb) step(mb);
    for (int j = 0; j < P_ && ok_; ++j) {
      while (w_[j] < m_) put<code_w>(j);
    }
    return ok_;
  }

  /// Rank r's ops in the order written (3m of them after a run that fitted).
  constexpr std::span<const op> rank(int r) const {
    return ops_.span().subspan(static_cast<std::size_t>(3 * r * m_), static_cast<std::size_t>(written_[r]));
  }
  /// The largest per-rank span (ticks).
  constexpr std::int64_t span() const {
    std::int64_t s = 0;
    for (int j = 0; j < P_; ++j) s = std::max(s, end_[j] - (tf_end_[j * m_] - cost_[code_f]));
    return s;
  }

 private:
  /// Places rank j's next op of kind code K (kind_code: code_f, code_i or code_w).
  template <std::uint32_t K>
  constexpr void put(int j) {
    int* count = K == code_f ? f_ : K == code_i ? i_ : w_;
    const int mb = count[j];
    const std::int64_t packed = end_[j] + cost_[K];
    std::int64_t t = packed;
    if constexpr (K == code_f) {
      if (j > 0) t = std::max(t, tf_end_[(j - 1) * m_ + mb] + tc_ + cost_[K]);
    } else if constexpr (K == code_i) {
      if (j + 1 < P_) t = std::max(t, ti_end_[(j + 1) * m_ + mb] + tc_ + cost_[K]);
    }
    if (f_[j] > 0) bubble_[j] += t - packed, worst_ = std::max(worst_, bubble_[j]);  // bubbles only grow
    end_[j] = t;
    level_[j] += mem_[K];
    if constexpr (K == code_f) tf_end_[j * m_ + mb] = t;
    if constexpr (K == code_i) ti_end_[j * m_ + mb] = t;
    ++count[j];
    ops_[static_cast<std::size_t>(3 * j * m_ + written_[j]++)] = make_op(static_cast<op_kind>(K), j, mb);
  }
  /// Ws before rank j's next op of kind code K (code_f or code_i): first as many as
  /// memory needs, then those that end by the time its input arrives (`ready`), then one
  /// more for a gap shorter than a W when the rules take it.
  template <std::uint32_t K>
  constexpr void fill(int j, std::int64_t ready) {
    while (level_[j] + mem_[K] > cap_[j]) {
      if (w_[j] >= i_[j]) return static_cast<void>(ok_ = false);
      put<code_w>(j);
    }
    if (ready < 0) return;
    // keeps w_reserve pending
    while (w_[j] < i_[j] && end_[j] + cost_[code_w] <= ready && i_[j] - w_[j] > rules_.w_reserve) put<code_w>(j);
    if (w_[j] < i_[j] && end_[j] < ready && i_[j] - w_[j] > rules_.w_reserve) {
      if (ready - end_[j] > worst_ - bubble_[j] || rules_.fill_short_gaps) put<code_w>(j);
    }
  }
  /// The warmup: every rank's extra forwards before its first I (from the last rank
  /// back, each stops when its first I's input can have arrived), made to decrease
  /// towards the last rank, then micro-batch 0's Is from the last rank back.
  constexpr void warmup() {
    int* extra = scratch_;
    std::int64_t last = tf_end_[(P_ - 1) * m_] + cost_[code_i];
    for (int j = P_ - 2; j >= 0; --j) {
      std::int64_t level = level_[j], t = end_[j];
      while (f_[j] + extra[j] < m_ && level + mem_[code_f] <= cap_[j]) {
        if (rules_.warmup_past_first_i ? t + cost_[code_f] > last + tc_ : t >= last + tc_) break;
        level += mem_[code_f], t += cost_[code_f], ++extra[j];
      }
      last = std::max(t, last + tc_) + cost_[code_i];
    }
    for (int j = 1; j < P_; ++j) {
      while (extra[j] > 0 && extra[j] >= extra[j - 1] && f_[j] + extra[j] < m_) --extra[j];
    }
    for (int j = 0; j < P_; ++j) {
      int n = extra[j] + (j + 1 < P_ ? rules_.warmup_offset : 0);
      n = std::max(0, std::min(n, m_ - f_[j]));
      for (int x = 0; x < n && level_[j] + mem_[code_f] <= cap_[j]; ++x) put<code_f>(j);
    }
  }
  /// Micro-batch mb's step after the warmup: the forwards that run (each rank's next F,
  /// unless the rules hold it back; a rank runs one only if the next rank does), then
  /// micro-batch mb's Is from the last rank back.
  constexpr void step(int mb) {
    int* run = scratch_;
    for (int j = 0; j < P_; ++j) {
      run[j] = 0;
      if (f_[j] >= m_) continue;
      run[j] = 1;
      if (!rules_.prioritize_i || j + 1 >= P_ || f_[j] < f_[j + 1] + 2) continue;
      const std::int64_t next = end_[j + 1] + cost_[code_f] + cost_[code_i] + tc_;
      if (end_[j] >= next) {
        run[j] = 0;
        continue;
      }
      std::int64_t w_cost = 0, level = level_[j] + mem_[code_f];
      for (int n = 0; level > cap_[j] && w_[j] + n < i_[j]; ++n) w_cost += cost_[code_w], level += mem_[code_w];
      if (end_[j] + cost_[code_f] + w_cost <= next) continue;
      if (next - end_[j] <= worst_ - bubble_[j]) run[j] = 0;
    }
    for (int j = P_ - 2; j >= 0; --j) run[j] = std::min(run[j], run[j + 1]);
    for (int j = 0; j < P_ && ok_; ++j) {
      if (!run[j]) continue;
      fill<code_f>(j, j > 0 ? tf_end_[(j - 1) * m_ + f_[j]] + tc_ : -1);
      if (ok_) put<code_f>(j);
    }
    for (int j = P_ - 1; j >= 0 && ok_; --j) {
      fill<code_i>(j, j + 1 < P_ ? ti_end_[(j + 1) * m_ + mb] + tc_ : -1);
      if (j == 0 && f_[j] == m_) {
        while (w_[j] < i_[j]) put<code_w>(j);
      }
      if (ok_) put<code_i>(j);
    }
  }

  int P_, m_;
  std::int64_t cost_[4];  // per kind code (code_b unused)
  std::int64_t tc_;
  std::int64_t mem_[4];      // per kind code (code_b unused)
  const std::int64_t* cap_;  // per rank
  greedy_rules rules_;
  buffer<int> ints_;
  buffer<std::int64_t> times_;
  buffer<op> ops_;  // rank r's at r * 3m
  // per rank: Fs, Is, Ws and ops written, a scratch value
  int *f_ = nullptr, *i_ = nullptr, *w_ = nullptr, *written_ = nullptr, *scratch_ = nullptr;
  // per rank: its last end, level and bubble; per rank row of m: each F's and I's end
  std::int64_t *end_ = nullptr, *level_ = nullptr, *bubble_ = nullptr, *tf_end_ = nullptr, *ti_end_ = nullptr;
  std::int64_t worst_ = 0;  // the largest bubble_ so far
  bool ok_ = true;
};

}  // namespace detail

}  // namespace ctpipe
