// ctpipe/lower/execute.hpp: runs a lowered schedule's per-rank lists strictly in order,
// as a training runtime does, under one runtime model (ctpipe/lower/runtime.hpp), with
// exact times (docs/spec.md §7).
//
// simulate() starts every op as soon as its inputs exist. A runtime instead walks its
// list: where a RECV blocks, the rank stops there until the message arrives, even if a
// later compute op could already run. execute() is that runtime, so the makespan it
// gives is the one the lists really have; lower() makes lists on which the two agree.
//
// Algorithm: a worklist over ranks, as validate_lowered()'s. A rank runs its list until
// an op cannot complete yet (a RECV whose SEND is not posted, a rendezvous whose partner
// has not arrived, a group whose partners are not all posted, a compute op whose input
// has not arrived under `posted`); it parks there, and the rank that posts the missing
// partner wakes it. An op's times are final when it completes (they depend only on
// posted times, which never change), so the order in which ranks are run does not
// matter. Each op completes once and each rank parks at most once per op: linear in the
// number of ops plus P*V*m (per-message tables).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::int64_t, std::uint8_t
#include <span>     // stuck ops

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/lower/transfer.hpp"
#include "ctpipe/lower/validate.hpp"

namespace ctpipe {

namespace detail {
struct lowered_run;
}  // namespace detail

/// One stretch of time in which a rank stalls (execution::stall_intervals()): the part
/// of transfer op `op_index`'s wait [start, end) after every input of the rank's next
/// compute op has arrived and after the rank's earlier ops ended. In integer ticks of
/// execution::tick(), as the raw accessors.
struct stall_interval {
  int rank = 0;
  std::size_t op_index = 0;      ///< the transfer op, indexed like the flat op array
  std::int64_t start_ticks = 0;  ///< when the stall begins
  std::int64_t end_ticks = 0;    ///< when the op returns: execution::end_ticks(op_index)
  friend constexpr bool operator==(const stall_interval&, const stall_interval&) = default;
};

/// The result of execute(): every op's times, per-rank totals, and the stuck ops of a
/// run that hangs. Times are integer ticks of length tick() (in time units of `t_f`), as
/// in simulation; every accessor returns the exact rational. Per-op values are indexed
/// like the lowered schedule's flat op array; per-rank values by rank 0..P-1.
///
/// Per op: reached(k) is when the rank got to op k; start(k) when it began (a compute
/// op under `posted` may wait for its input in between); end(k) when it returned. A
/// transfer op's [start, end) is a transfer wait, drawn as an interval of its own.
class execution {
 public:
  constexpr execution() = default;

  /// The runtime model the lists were run under.
  constexpr runtime_model model() const { return model_; }
  /// Whether every rank ran its whole list. When false, stuck() names why and the times
  /// of the ops that did not run are 0.
  constexpr bool completed() const { return stuck_count_ == 0; }
  /// The stuck ops of a run that hangs, named as validate_lowered() names them: first
  /// the ranks halted by a fault of their own (not_received, wrong_microbatch,
  /// send_before_compute, wrong_pairing), then one deadlock per rank waiting for a
  /// partner that never comes (`needs` = that partner). Empty when completed().
  constexpr std::span<const validation_issue> stuck() const { return {stuck_.data(), stuck_count_}; }

  /// Length of one tick, in time units.
  constexpr rational tick() const { return tick_; }
  /// Makespan: the end of the last op (transfers included) over all ranks; 0 when the
  /// run hangs.
  constexpr rational makespan() const { return time(makespan_); }
  /// When the rank got to op k (k indexes the flat op array; see reached_ticks()).
  constexpr rational reached(std::size_t k) const { return time(reached_ticks(k)); }
  /// When op k began: a compute op's start; a transfer's post time.
  constexpr rational start(std::size_t k) const { return time(start_[k]); }
  /// When op k returned: a compute op's end; a transfer's completion.
  constexpr rational end(std::size_t k) const { return time(end_[k]); }
  /// Busy time of rank r: the sum of its compute ops' costs.
  constexpr rational busy(int r) const { return time(busy_[idx(r)]); }
  /// Idle time of rank r: makespan - busy(r) = stall(r) + wait(r).
  constexpr rational idle(int r) const { return time(makespan_ - busy_[idx(r)]); }
  /// Stall of rank r: the time it is blocked in a transfer op while every input of its
  /// next compute op has already arrived (the order, not the data, holds it back).
  constexpr rational stall(int r) const { return time(stall_[idx(r)]); }
  /// Every stall of the run, one per transfer op that stalls, by rank and then in list
  /// order, which is time order: a rank's intervals do not overlap (the ops of a batched
  /// group wait together; their common time belongs to the first), though consecutive
  /// ones may touch. stall(r) is the sum of rank r's lengths. Empty when nothing stalls,
  /// or when the run hangs.
  constexpr std::span<const stall_interval> stall_intervals() const { return {stalls_.data(), stalls_.size()}; }
  /// Wait of rank r: idle(r) - stall(r), the time its next op's input is not there yet.
  constexpr rational wait(int r) const { return time(makespan_ - busy_[idx(r)] - stall_[idx(r)]); }
  /// Bubble fraction: total idle / (P * makespan); 0 for an empty schedule.
  constexpr rational bubble_fraction() const {
    if (makespan_ == 0) return rational{0};
    std::int64_t idle_total = 0;
    for (int r = 0; r < ranks_; ++r) idle_total = rational::add(idle_total, makespan_ - busy_[idx(r)]);
    return {idle_total, rational::mul(makespan_, ranks_)};
  }
  /// Raw ticks (multiply by tick()), for drawing code. reached_ticks(k): when the rank
  /// got to op k, 0 for its first op, else the return of the op before it (for a
  /// transfer inside a batched group, the group's post time, its start). Not stored:
  /// O(log P).
  constexpr std::int64_t reached_ticks(std::size_t k) const {
    std::size_t lo = 0, hi = offsets_.size() - 1;  // the rank r with offsets[r] <= k < offsets[r+1]
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      (offsets_[mid] <= k ? lo : hi) = mid;
    }
    if (k == offsets_[lo]) return 0;
    return start_[k] < end_[k - 1] ? start_[k] : end_[k - 1];
  }
  constexpr std::int64_t start_ticks(std::size_t k) const { return start_[k]; }
  constexpr std::int64_t end_ticks(std::size_t k) const { return end_[k]; }
  constexpr std::int64_t makespan_ticks() const { return makespan_; }
  /// Number of ranks.
  constexpr int ranks() const { return ranks_; }
  /// Number of ops: the lowered schedule's, transfers included.
  constexpr std::size_t size() const { return end_.size(); }

 private:
  friend struct detail::lowered_run;
  friend constexpr execution execute(schedule_view v, const costs& c, runtime_model model);
  static constexpr std::size_t idx(int r) { return static_cast<std::size_t>(r); }
  constexpr rational time(std::int64_t ticks) const { return tick_ * rational{ticks}; }

  runtime_model model_ = runtime_model::blocking;
  rational tick_{1};
  std::int64_t makespan_ = 0;
  int ranks_ = 0;
  std::size_t stuck_count_ = 0;
  detail::buffer<std::int64_t> start_, end_;
  detail::buffer<std::uint32_t> offsets_;
  detail::buffer<std::int64_t> busy_, stall_;
  detail::buffer<validation_issue> stuck_;
  detail::buffer<stall_interval> stalls_;
};

namespace detail {

/// The engine of execute(): one run of lowered lists under a model, with durations in
/// ticks. Its parts are the phases of the run: first-in first-out pairing and groups
/// (batched), the worklist, the diagnosis of stuck ranks, the stall sums.
struct lowered_run {
  schedule_view v;
  runtime_model model;
  const std::int64_t* dur;  // ticks per compute kind (F, B, I, W)
  std::int64_t latency;     // ticks of t_c
  execution out;

  std::uint32_t P = 0, S = 0, m = 0, none = 0, keys = 0;
  std::size_t slots = 0;
  buffer<std::uint32_t> link_b;
  // Per message slot: when its SEND / RECV was posted (-1: not yet), when its data is
  // at the receiver, whether its RECV is done, the rank + 1 parked at its SEND or at its
  // RECV (or its consumer, under posted).
  buffer<std::int64_t> send_at_b, recv_at_b, arrive_b;
  buffer<std::uint8_t> received_b, computed_b;
  buffer<std::uint32_t> parked_b, pending_b;
  // Batched: per transfer op its group and its partner op; per group its first and
  // last op, its rank, post time, missing partner groups, whether its rank is parked there.
  buffer<std::uint32_t> group_of_b, partner_b, group_first_b, group_last_b, group_rank_b, missing_b;
  buffer<std::int64_t> group_post_b;
  buffer<std::uint8_t> group_parked_b;
  buffer<std::uint32_t> pos_b, stack_b;
  buffer<std::int64_t> clock_b;
  std::uint32_t top = 0;

  constexpr lowered_run(schedule_view view, runtime_model mdl, const std::int64_t* durations, std::int64_t lat)
      : v(view), model(mdl), dur(durations), latency(lat) {
    P = static_cast<std::uint32_t>(v.shape.P);
    S = static_cast<std::uint32_t>(v.shape.stages());
    m = static_cast<std::uint32_t>(v.shape.m);
    none = 2 * S;
    keys = S * m;
    slots = 2 * static_cast<std::size_t>(keys);
    link_b = message_channels(v.shape);
    const std::size_t n = v.size();
    out.model_ = mdl;
    out.ranks_ = v.shape.P;
    out.offsets_ = buffer<std::uint32_t>(P + 1);
    for (std::uint32_t r = 0; r <= P; ++r) out.offsets_[r] = v.offsets[r];
    out.start_ = buffer<std::int64_t>(n);
    out.end_ = buffer<std::int64_t>(n);
    out.busy_ = buffer<std::int64_t>(P);
    out.stall_ = buffer<std::int64_t>(P);
    out.stuck_ = buffer<validation_issue>(mdl == runtime_model::batched ? n + P : P);  // wrong_pairing: one per receive
    // Each model allocates the tables it reads (batched pairs by group, not by slot).
    if (mdl != runtime_model::batched) send_at_b = buffer<std::int64_t>(slots, -1);
    if (mdl == runtime_model::rendezvous) recv_at_b = buffer<std::int64_t>(slots, -1);  // read under rendezvous only
    arrive_b = buffer<std::int64_t>(slots, -1);
    received_b = buffer<std::uint8_t>(slots);
    computed_b = buffer<std::uint8_t>(2 * static_cast<std::size_t>(keys));  // [F | B or I]
    if (mdl != runtime_model::batched) parked_b = buffer<std::uint32_t>(2 * slots);  // [at SEND | at RECV]
    pending_b = buffer<std::uint32_t>(2 * static_cast<std::size_t>(S));
    pos_b = buffer<std::uint32_t>(P);
    stack_b = buffer<std::uint32_t>(P);
    clock_b = buffer<std::int64_t>(P);
  }

  /// The ordered rank pair (a, b) of a transfer, as one of 2P pair numbers: every
  /// placement puts neighbouring stages on ranks a +- 1 (mod P), or on one rank.
  constexpr std::uint32_t pair_id(std::uint32_t a, std::uint32_t b) const { return 2 * a + (b == (a + 1) % P ? 0 : 1); }

  /// Batched: numbers the groups (maximal runs of transfer ops) and pairs every SEND
  /// from a to b with the RECV on b from a of the same rank in first-in first-out order.
  /// Reports each pairing whose messages differ as wrong_pairing (then the run is not
  /// made). Linear.
  template <class Report>
  constexpr bool pair_batches(Report& report) {
    const std::size_t n = v.size();
    const op* ops = v.ops.data();
    const std::uint32_t* off = v.offsets.data();
    group_of_b = buffer<std::uint32_t>(n);
    partner_b = buffer<std::uint32_t>(n);
    std::uint32_t groups = 0;
    buffer<std::uint32_t> count_b(2 * static_cast<std::size_t>(P) + 1), seen_b(2 * static_cast<std::size_t>(P));
    std::uint32_t* count = count_b.data();
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if (!is_transfer(ops[k].kind())) continue;
        if (k == off[r] || !is_transfer(ops[k - 1].kind())) ++groups;
        group_of_b[k] = groups - 1;
        if (is_send(ops[k].kind())) ++count[pair_id(r, static_cast<std::uint32_t>(peer_rank(v.shape, ops[k]))) + 1];
      }
    }
    for (std::uint32_t p = 1; p <= 2 * P; ++p) count[p] += count[p - 1];
    buffer<std::uint32_t> sends_b(count[2 * P]);
    std::uint32_t* seen = seen_b.data();
    group_first_b = buffer<std::uint32_t>(groups);
    group_last_b = buffer<std::uint32_t>(groups);
    group_rank_b = buffer<std::uint32_t>(groups);
    missing_b = buffer<std::uint32_t>(groups);
    group_post_b = buffer<std::int64_t>(groups, -1);
    group_parked_b = buffer<std::uint8_t>(groups);
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if (!is_transfer(ops[k].kind())) continue;
        const std::uint32_t g = group_of_b[k];
        if (k == off[r] || !is_transfer(ops[k - 1].kind())) group_first_b[g] = k, group_rank_b[g] = r;
        group_last_b[g] = k;
        if (is_send(ops[k].kind())) {
          const std::uint32_t p = pair_id(r, static_cast<std::uint32_t>(peer_rank(v.shape, ops[k])));
          sends_b[count[p] + seen[p]++] = k;
        }
      }
    }
    for (std::uint32_t p = 0; p < 2 * P; ++p) seen[p] = 0;
    bool ok = true;
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if (!is_transfer(ops[k].kind()) || is_send(ops[k].kind())) continue;
        const std::uint32_t p = pair_id(static_cast<std::uint32_t>(peer_rank(v.shape, ops[k])), r);
        const std::uint32_t send = sends_b[count[p] + seen[p]++];  // as many sends as receives per pair
        partner_b[k] = send;
        partner_b[send] = k;
        if (!(message_of(ops[send]) == message_of(ops[k]))) {
          report(fault::wrong_pairing, static_cast<int>(r), static_cast<int>(k - off[r]), ops[k], ops[send]);
          ok = false;
        }
      }
    }
    return ok;
  }

  constexpr void wake(std::uint32_t parked_rank_plus_one) {
    if (parked_rank_plus_one != 0) stack_b[top++] = parked_rank_plus_one - 1;
  }

  /// Batched: runs group g of rank r when the rank reaches it: posts it (once), and
  /// completes it when every partner group is posted. Returns false when the rank must
  /// park there.
  constexpr bool run_group(std::uint32_t r, std::uint32_t g) {
    const op* ops = v.ops.data();
    const std::uint32_t* link = link_b.data();
    std::uint32_t* group_of = group_of_b.data();
    std::uint32_t* partner = partner_b.data();
    std::int64_t* group_post = group_post_b.data();
    std::uint32_t* missing = missing_b.data();
    const std::uint32_t first = group_first_b[g], last = group_last_b[g];
    if (group_post[g] < 0) {
      group_post[g] = clock_b[r];
      for (std::uint32_t x = first; x <= last; ++x) {
        const std::uint32_t h = group_of[partner[x]];
        if (group_post[h] < 0) {
          ++missing[g];
        } else if (--missing[h] == 0 && group_parked_b[h] != 0) {
          group_parked_b[h] = 0;
          wake(group_rank_b[h] + 1);
        }
      }
    }
    if (missing[g] != 0) {
      group_parked_b[g] = 1;
      return false;
    }
    std::int64_t done = group_post[g];
    for (std::uint32_t x = first; x <= last; ++x) {
      const std::int64_t other = group_post[group_of[partner[x]]];
      const std::int64_t t = (other > group_post[g] ? other : group_post[g]) + latency;
      out.start_[x] = group_post[g];
      out.end_[x] = t;
      done = t > done ? t : done;
      if (!is_send(ops[x].kind())) {
        const std::uint32_t bits = ops[x].bits, ed = link[(bits >> 28) * S + ((bits >> 16) & 0xFFFu)];
        const std::size_t slot = static_cast<std::size_t>(ed) * m + (bits & 0xFFFFu);
        received_b[slot] = 1;
        arrive_b[slot] = t;
        ++pending_b[ed];
      }
    }
    clock_b[r] = done;
    return true;
  }

  /// Runs rank r from its position until it finishes or parks.
  constexpr void run_rank(std::uint32_t r) {
    const op* ops = v.ops.data();
    const std::uint32_t* link = link_b.data();
    const std::uint32_t* off = v.offsets.data();
    std::int64_t* send_at = send_at_b.data();
    std::int64_t* recv_at = recv_at_b.data();
    std::int64_t* arrive = arrive_b.data();
    std::uint8_t* received = received_b.data();
    std::uint8_t* computed = computed_b.data();
    std::uint32_t* parked = parked_b.data();
    std::int64_t* start = out.start_.data();
    std::int64_t* end = out.end_.data();
    std::int64_t clock = clock_b[r], busy = 0;
    std::uint32_t k = pos_b[r];
    // Per-op values outside the loop, assigned in one expression (docs/compile-time.md).
    std::uint32_t bits = 0, kind = 0, s = 0, j = 0, ed = 0, key = 0;
    std::size_t slot = 0;
    std::int64_t t = 0;
    for (const std::uint32_t last = off[r + 1]; k < last; ++k) {
      bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu, ed = link[kind * S + s],
      slot = static_cast<std::size_t>(ed) * m + j, key = s * m + j;
      if (kind <= 3) {  // compute: its input from another rank must have been received
        t = clock;
        if (ed != none) {
          if (received[slot] == 0) break;  // halted: diagnosed by diagnose()
          if (model == runtime_model::posted) {
            if (arrive[slot] < 0) {
              parked[slots + slot] = r + 1;
              break;
            }
            t = arrive[slot] > t ? arrive[slot] : t;
          }
          --pending_b[ed];
        }
        start[k] = t, end[k] = clock = t + dur[kind], busy += dur[kind];
        if (kind != 3) computed[(kind == 0 ? 0 : keys) + key] = 1;
        continue;
      }
      if ((kind == 4 || kind == 6) && computed[(kind == 4 ? 0 : keys) + key] == 0) break;  // halted: send before compute
      if (model == runtime_model::batched) {
        pos_b[r] = k, clock_b[r] = clock;
        if (!run_group(r, group_of_b[k])) {
          out.busy_[r] += busy;
          return;
        }
        k = group_last_b[group_of_b[k]], clock = clock_b[r];
        continue;
      }
      if (kind == 4 || kind == 6) {  // SEND
        if (send_at[slot] < 0) {
          send_at[slot] = clock;
          if (model != runtime_model::rendezvous) arrive[slot] = clock + latency;
          wake(parked[slots + slot]);
          parked[slots + slot] = 0;
        }
        start[k] = end[k] = clock;
        if (model != runtime_model::rendezvous) continue;
        if (recv_at[slot] < 0) {
          parked[slot] = r + 1;
          break;
        }
        end[k] = clock = (send_at[slot] > recv_at[slot] ? send_at[slot] : recv_at[slot]) + latency;
        continue;
      }
      // RECV
      start[k] = end[k] = clock;
      if (model == runtime_model::posted) {
        received[slot] = 1, ++pending_b[ed];
        continue;
      }
      if (model == runtime_model::rendezvous && recv_at[slot] < 0) {
        recv_at[slot] = clock;
        wake(parked[slot]);
        parked[slot] = 0;
      }
      if (send_at[slot] < 0) {
        parked[slots + slot] = r + 1;
        break;
      }
      if (model == runtime_model::rendezvous) arrive[slot] = (send_at[slot] > recv_at[slot] ? send_at[slot] : recv_at[slot]) + latency;
      end[k] = clock = arrive[slot] > clock ? arrive[slot] : clock, received[slot] = 1, ++pending_b[ed];
    }
    pos_b[r] = k, clock_b[r] = clock, out.busy_[r] += busy;
  }

  /// Runs every rank until each finishes or parks for good.
  constexpr void run() {
    for (std::uint32_t r = P; r-- > 0;) {
      pos_b[r] = v.offsets[r];
      stack_b[top++] = r;
    }
    while (top > 0) run_rank(stack_b[--top]);
  }

  /// Names the stuck op of every rank that did not finish (execution::stuck()'s order).
  template <class Report>
  constexpr void diagnose(Report& report) {
    const std::uint32_t* off = v.offsets.data();
    bool finished = true;
    for (std::uint32_t r = 0; r < P; ++r) finished = finished && pos_b[r] == off[r + 1];
    if (finished) return;
    const op* ops = v.ops.data();
    const std::uint32_t* link = link_b.data();
    bool split = false;
    for (const op o : v.ops) split = split || o.kind() == op_kind::I || o.kind() == op_kind::W;
    buffer<std::uint8_t> halted(P);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint32_t r = 0; r < P; ++r) {
        const std::uint32_t k = pos_b[r];
        if (k == off[r + 1]) continue;
        const op o = ops[k];
        const int step = static_cast<int>(k - off[r]), st = o.stage(), mb = o.microbatch();
        const std::uint32_t ed = link[static_cast<std::uint32_t>(o.kind()) * S + static_cast<std::uint32_t>(st)];
        const std::size_t slot = static_cast<std::size_t>(ed) * m + static_cast<std::size_t>(mb);
        const std::size_t key = static_cast<std::size_t>(st) * m + static_cast<std::size_t>(mb);
        if (pass == 0) {
          if (!is_transfer(o.kind()) && received_b[slot] == 0) {
            const op recv{o.kind() == op_kind::F ? op_kind::recv_f : op_kind::recv_b, st, mb};
            report(pending_b[ed] != 0 ? fault::wrong_microbatch : fault::not_received, static_cast<int>(r), step, o, recv);
            halted[r] = 1;
          } else if (is_send(o.kind()) && computed_b[(o.kind() == op_kind::send_f ? 0 : keys) + key] == 0) {
            const op_kind producer = o.kind() == op_kind::send_f ? op_kind::F : split ? op_kind::I : op_kind::B;
            report(fault::send_before_compute, static_cast<int>(r), step, o, op{producer, st, mb});
            halted[r] = 1;
          }
          continue;
        }
        if (halted[r] != 0) continue;
        if (!is_transfer(o.kind())) {  // posted: received, but the SEND never comes
          const op recv{o.kind() == op_kind::F ? op_kind::recv_f : op_kind::recv_b, st, mb};
          report(fault::deadlock, static_cast<int>(r), step, o, matching_transfer(recv));
        } else if (model == runtime_model::batched) {  // the first partner whose group is not posted
          const std::uint32_t g = group_of_b[k];
          std::uint32_t x = group_first_b[g];
          while (x < group_last_b[g] && group_post_b[group_of_b[partner_b[x]]] >= 0) ++x;
          report(fault::deadlock, static_cast<int>(r), static_cast<int>(x - off[r]), ops[x], ops[partner_b[x]]);
        } else {
          report(fault::deadlock, static_cast<int>(r), step, o, matching_transfer(o));
        }
      }
    }
  }

  /// Calls f(r, k, from) for each transfer op k of rank r that stalls, from `from` to its
  /// end: the part of its [start, end) after every input of the rank's next compute op
  /// has arrived (docs/spec.md §7.1) and after the rank's earlier ops ended (the ops of a
  /// batched group wait together: their common time counts once). Ranks in order, each
  /// rank's ops in list order; linear (`next` only moves forward).
  template <class F>
  constexpr void for_each_stall(F&& f) const {
    const std::uint32_t* off = v.offsets.data();
    const op* ops = v.ops.data();
    const std::uint32_t* link = link_b.data();
    std::uint32_t bits = 0, ed = 0;
    for (std::uint32_t r = 0; r < P; ++r) {
      std::uint32_t next = off[r];           // the compute op after k's run of transfer ops
      std::int64_t inputs_at = 0, done = 0;  // when next's inputs arrive; the latest end before k
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if ((ops[k].bits >> 28) > 3) {
          if (next < k + 1) {
            next = k + 1;
            while (next < off[r + 1] && (ops[next].bits >> 28) > 3) ++next;
            if (next < off[r + 1]) {
              bits = ops[next].bits, ed = link[(bits >> 28) * S + ((bits >> 16) & 0xFFFu)];
              inputs_at = ed != none ? arrive_b[static_cast<std::size_t>(ed) * m + (bits & 0xFFFFu)] : 0;
            }
          }
          if (next == off[r + 1]) break;  // no compute op follows: nothing to stall
          std::int64_t from = out.start_[k] > inputs_at ? out.start_[k] : inputs_at;
          from = done > from ? done : from;
          if (out.end_[k] > from) f(r, k, from);
        }
        done = out.end_[k] > done ? out.end_[k] : done;
      }
    }
  }

  /// Sums each rank's stall and records its intervals (execution::stall_intervals()),
  /// and the makespan.
  constexpr void sum_stalls() {
    std::size_t count = 0;
    for_each_stall([this, &count](std::uint32_t r, std::uint32_t k, std::int64_t from) {
      out.stall_[r] += out.end_[k] - from;
      ++count;
    });
    if (count != 0) {
      out.stalls_ = buffer<stall_interval>(count);
      count = 0;
      for_each_stall([this, &count](std::uint32_t r, std::uint32_t k, std::int64_t from) {
        out.stalls_[count++] = stall_interval{static_cast<int>(r), k, from, out.end_[k]};
      });
    }
    for (std::uint32_t r = 0; r < P; ++r) out.makespan_ = clock_b[r] > out.makespan_ ? clock_b[r] : out.makespan_;
  }
};

}  // namespace detail

/// Runs lowered schedule `v` (compute and transfer ops, as lower() makes them or a
/// framework writes them) under runtime model `model` with costs `c`: each rank walks
/// its list strictly in order, a compute op lasting its cost (`t/V` on a chunk), a
/// transfer op as the model says (ctpipe/lower/runtime.hpp, docs/spec.md §7). Exact.
/// Returns every op's times, the makespan, per-rank idle split into stall and wait, the
/// stall intervals, and, when the lists hang under this model, the stuck ops (execution::stuck()).
///
/// Errors: check_view() and check_costs() messages; `ctpipe: execute() takes a lowered
/// schedule with well-formed ops and transfers (validate_lowered() names the problems)`
/// when validate_lowered()'s checks of the ops themselves fail (a hang is not an error:
/// it is reported in the result); rational overflow when the times do not fit 64 bits.
/// Time and memory linear in the number of ops plus P*V*m.
constexpr execution execute(schedule_view v, const costs& c, runtime_model model) {
  check_view(v);
  check_costs(c);
  {
    std::size_t faults = 0;
    const detail::buffer<std::uint32_t> link = detail::message_channels(v.shape);
    detail::check_lowered_ops(v, link.data(), [&faults](fault, int, int, op, op) { ++faults; });
    detail::require(faults == 0,
                    "ctpipe: execute() takes a lowered schedule with well-formed ops and transfers (validate_lowered() names the problems)");
  }
  const detail::ticked_costs t = detail::to_ticks(c, v.shape.V, v.size());
  detail::lowered_run run(v, model, t.dur, t.latency);
  run.out.tick_ = t.tick;
  auto stuck = [&run](fault f, int r, int step, op at, op needs) {
    run.out.stuck_[run.out.stuck_count_++] = validation_issue{f, r, step, at, needs};
  };
  if (model != runtime_model::batched || run.pair_batches(stuck)) {
    run.run();
    run.diagnose(stuck);
  }
  if (run.out.stuck_count_ == 0) run.sum_stalls();
  return static_cast<execution&&>(run.out);
}

}  // namespace ctpipe
