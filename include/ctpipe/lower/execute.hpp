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
// has not arrived, a batched group not every op of which is matched, a compute op whose
// input has not arrived under `posted`); it parks there, and the rank that posts the
// missing partner wakes it. An op's times are final when it completes (they depend only
// on posted times, which never change), so the order in which ranks are run does not
// matter. Each op completes once and each rank parks at most once per op: linear in the
// number of ops plus P*V*m (one 16-byte record per message).
//
// Batched pairing needs no table: a rank has at most one group posted and not complete,
// and the sends (receives) of one rank pair that wait for a partner are, in list order,
// the tail of that pair's ops in that group, so a cursor per rank pair and side is the
// first-in first-out queue.
//
// Stream models: each stream is the chain of its transfer ops in list order (one link
// per op) and a head; an op is ready once it is issued and at its stream's head, which
// happens once, so each op is put on the matching stack once and each transfer completes
// once: still linear.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::int64_t, std::uint8_t
#include <span>     // stuck ops

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/walk.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/lower/transfer.hpp"
#include "ctpipe/lower/validate.hpp"

namespace ctpipe {

class execution;
namespace detail {
template <bool PerOp>
struct lowered_run;
template <bool PerOp>
constexpr execution execute_with(schedule_view v, const costs& c, runtime_model model, const cost_scale& scale);
}  // namespace detail

/// One stretch of time in which a rank stalls (execution::stall_intervals()): the part
/// of transfer op `op_index`'s wait [start, end) after every input of the rank's next
/// compute op has arrived and after the rank's earlier ops ended. Under a stream model
/// (is_stream_model()) the rank waits at a compute op instead, for a RECV that queued
/// on its streams: `op_index` is that RECV and [start, end) the part of the compute op's
/// wait after each of its inputs would have arrived had its transfer had its streams to
/// itself (docs/spec.md §7.1). In integer ticks of execution::tick(), as the raw
/// accessors.
struct stall_interval {
  int rank = 0;
  std::size_t op_index = 0;      ///< the transfer op, indexed like the flat op array
  std::int64_t start_ticks = 0;  ///< when the stall begins
  /// When the op returns: execution::end_ticks(op_index); under a stream model when the
  /// RECV's transfer completes, execution::transfer_end_ticks(op_index), which is when its
  /// consumer starts.
  std::int64_t end_ticks = 0;
  friend constexpr bool operator==(const stall_interval&, const stall_interval&) = default;
};

/// The result of execute(): every op's times, per-rank totals, and the stuck ops of a
/// run that hangs. Times are integer ticks of length tick() (in time units of `t_f`), as
/// in simulation; every accessor returns the exact rational. Per-op values are indexed
/// like the lowered schedule's flat op array; per-rank values by rank 0..P-1.
///
/// Per op: reached(k) is when the rank got to op k; start(k) when it began (a compute
/// op under `posted` may wait for its input in between); end(k) when it returned. A
/// transfer op's [start, end) is a transfer wait, drawn as an interval of its own. An
/// activation copy op (SEND_ACT, RECV_ACT) returns at once; its [start, end) is its
/// copy on the copy channels (docs/spec.md §8.3), the same for both ops of one copy, and
/// no part of the rank's idle, stall or makespan.
class execution {
 public:
  constexpr execution() = default;

  /// The runtime model the lists were run under.
  constexpr runtime_model model() const { return model_; }
  /// Whether every rank ran its whole list. When false, stuck() names why and the times
  /// of the ops that did not run are 0.
  constexpr bool completed() const { return stuck_count_ == 0; }
  /// The stuck ops of a run that hangs, named as validate_lowered() names them: first
  /// every wrong_pairing (batched), then the other ranks halted by a fault of their own
  /// (not_received, wrong_microbatch, send_before_compute), then one deadlock per rank
  /// waiting for a partner that never comes (`needs` = that partner). Under `posted` a
  /// rank waits at the compute op that consumes the message (its RECV returned at once),
  /// so that op is named, with the SEND it waits for. Empty when completed().
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
  /// next compute op has already arrived (the order, not the data, holds it back). Under
  /// a stream model: the time a compute op waits for a RECV after max(the post times of
  /// its SEND and RECV) + t_c, when the transfer queued behind other ops of its streams
  /// (head-of-line blocking).
  constexpr rational stall(int r) const { return time(stall_[idx(r)]); }
  /// Every stall of the run, one per transfer op that stalls, by rank and then in list
  /// order, which is time order: a rank's intervals do not overlap (the ops of a batched
  /// group wait together; their common time belongs to the first), though consecutive
  /// ones may touch. stall(r) is the sum of rank r's lengths. Empty when nothing stalls,
  /// or when the run hangs.
  constexpr std::span<const stall_interval> stall_intervals() const { return {stalls_.data(), stall_count_}; }
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
  /// got to op k. Only under `posted` can an op start later than that (a compute op
  /// waiting for its input): there it is 0 for a rank's first op, else the return of the
  /// op before it; under the other models it is the op's start (for an op after a
  /// batched group, the group's completion; for a transfer inside one, the group's post
  /// time). Not stored: O(log P).
  constexpr std::int64_t reached_ticks(std::size_t k) const {
    if (model_ != runtime_model::posted && !is_stream_model(model_)) return start_[k];
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

  /// Stream models (is_stream_model()): a transfer op returns when it is issued (start(k)
  /// = end(k)); its transfer runs on its stream from transfer_start(k), when it reached
  /// the stream's head (issued, every earlier op of the stream completed), to
  /// transfer_end(k), when both ends were at their heads + t_c. Under the other models
  /// they are start(k) and end(k). 0 for a transfer that did not complete in a run that
  /// hangs (transfer_start(k) is set once the op reached its head).
  constexpr rational transfer_start(std::size_t k) const { return time(transfer_start_ticks(k)); }
  constexpr rational transfer_end(std::size_t k) const { return time(transfer_end_ticks(k)); }
  constexpr std::int64_t transfer_start_ticks(std::size_t k) const {
    return tstart_.size() == 0 ? start_[k] : tstart_[k];
  }
  constexpr std::int64_t transfer_end_ticks(std::size_t k) const { return tend_.size() == 0 ? end_[k] : tend_[k]; }
  /// Stream models: the stream of transfer op k, numbered as stream_index() numbers them
  /// (streams_per_rank * rank + local); streams_per_rank * P for any other op or model.
  constexpr std::uint32_t stream_of(std::size_t k) const {
    return stream_of_.size() == 0 || stream_of_[k] == ~0u ? static_cast<std::uint32_t>(streams_per_rank * ranks_)
                                                          : stream_of_[k];
  }
  /// Stream models: the op at the head of stream s when the run ended (the first of its
  /// ops that did not complete), or size() when every op of the stream completed, or for
  /// another model.
  constexpr std::size_t stream_head(std::uint32_t s) const {
    return head_.size() <= s || head_[s] == ~0u ? size() : head_[s];
  }
  /// Stream models: the op on the other side of transfer op k's message, once both were
  /// issued; size() before that, for another op or under another model.
  constexpr std::size_t transfer_partner(std::size_t k) const {
    return partner_.size() == 0 || partner_[k] == ~0u ? size() : partner_[k];
  }

 private:
  template <bool PerOp>
  friend struct detail::lowered_run;
  template <bool PerOp>
  friend constexpr execution detail::execute_with(schedule_view v, const costs& c, runtime_model model,
                                                  const cost_scale& scale);
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
  detail::buffer<stall_interval> stalls_;  // room for at least stall_count_
  std::size_t stall_count_ = 0;
  // Stream models only (empty otherwise): per op its transfer's times, stream and
  // partner; per stream its head when the run ended (~0u: none).
  detail::buffer<std::int64_t> tstart_, tend_;
  detail::buffer<std::uint32_t> stream_of_, partner_, head_;
};

namespace detail {

/// execute()'s error when its checks of the ops found `faults` problems.
constexpr void require_well_formed(std::size_t faults) {
  require(faults == 0,
          "ctpipe: execute() takes a lowered schedule with well-formed ops and transfers (validate_lowered() names "
          "the problems)");
}

/// The engine of execute(): one run of lowered lists under a model, with durations in
/// ticks. Its parts are the phases of the run: the worklist (run_rank, with post() for a
/// transfer and run_group() for a batched group), the diagnosis of stuck ranks, the
/// stall sums; report_pairings() when batched pairing goes wrong. `PerOp`: the
/// durations are per op (under a cost_scale: `dur[k]`, a pair word's the whole pair's),
/// else per compute kind (`dur[kind]`, `pair`); one engine, instantiated twice, so that
/// the plain model's loop is unchanged.
template <bool PerOp>
struct lowered_run {
  schedule_view v;
  runtime_model model;
  const std::int64_t* dur;  // ticks per compute kind (F, B, I, W), or per op with PerOp
  std::int64_t latency;     // ticks of t_c
  std::int64_t pair = 0;    // ticks of an overlapped F&B pair (without PerOp)
  execution out;

  std::uint32_t P = 0, S = 0, m = 0, none = 0, keys = 0;
  std::size_t slots = 0;
  stage_table table;  // per (kind, stage): message channel, owner, peer
  // Per message slot, one 16-byte record (a message touches one cache line):
  // - `t`: when the data is at the receiver once `arrived` is set; before that, under
  //   rendezvous, the post time of the side that came first;
  // - `parked`: the rank + 1 parked on it: the receiver at its RECV (or its consumer
  //   under posted), or the sender at its SEND under rendezvous; never two at once, as
  //   the second side to come completes the message;
  // - `state`: the bits below.
  struct message {
    std::int64_t t = 0;
    std::uint32_t parked = 0, state = 0;
  };
  static constexpr std::uint32_t send_posted = 1, recv_posted = 2, arrived = 4, received = 8;
  buffer<message> msg_b;
  buffer<std::uint8_t> computed_b;
  buffer<std::uint32_t> pending_b;
  // Batched. A rank has at most one group posted and not complete (its current one),
  // so the group state is per rank; first-in first-out pairing is a cursor per ordered
  // rank pair and side: the first op of that side's current group, of that pair, not
  // yet matched (the later ones of the pair follow it in list order), or `nil`.
  static constexpr std::uint32_t nil = ~0u;
  buffer<std::uint32_t> pair_b;                     // per (kind - 4) * S + stage of a transfer: its ordered rank pair
  buffer<std::uint32_t> cursor_b;                   // per 2 * pair + side (0: the SENDs, 1: the RECVs)
  buffer<std::uint32_t> group_last_b, unmatched_b;  // per rank: its current group's last op, ops not yet matched
  buffer<std::int64_t> group_post_b, group_done_b;  // per rank: its current group's post time (-1: none), latest end
  bool mispaired = false;                           // a match of two ops of different messages
  rank_worklist work;                               // per rank its next op; the runnable ranks
  buffer<std::int64_t> clock_b;
  // Activation copies (SEND_ACT, RECV_ACT; docs/spec.md §8.3), set up by
  // prepare_copies() only when the lists hold some. A copy is a SEND_ACT and its
  // RECV_ACT on the other rank; roles per activation key: 0 the home's SEND_ACT, 1 the
  // host's RECV_ACT (the copy out), 2 the host's SEND_ACT, 3 the home's RECV_ACT (the
  // copy back). Each rank's SEND_ACTs run on its outgoing channel, its RECV_ACTs on its
  // incoming one, first in first out in list order.
  bool copies = false;
  std::int64_t move = 0;            // ticks of t_move
  buffer<std::uint32_t> site_b;     // per 4 * key + role: op index + 1, 0: none
  buffer<std::uint32_t> chain_b;    // per op: the op before it on its channel (same kind, same rank) + 1, 0: none
  buffer<std::uint32_t> next_b;     // per op: the op after it on its channel + 1, 0: none
  buffer<std::int64_t> posted_b;    // per op: when its rank reached it, -1: not yet
  buffer<std::uint8_t> done_b;      // per op: its copy has run (start_, end_ hold its transfer)
  buffer<std::uint32_t> waiting_b;  // per key: rank + 1 parked at its first backward for the copy back
  buffer<std::uint32_t> pending_copies_b;  // try_copy()'s worklist of op indices
  // Stream models (prepare_streams(), only then): per op the next op of its stream and
  // when it was issued (-1: not yet); per stream when its last op completed; per message
  // slot its SEND and RECV op (nil: not issued) and when it would have arrived on streams
  // of its own (max of the two issue times + t_c); the stack of ops made ready.
  bool streams = false;
  buffer<std::uint32_t> next_on_stream_b, send_op_b, recv_op_b, ready_stack_b;
  buffer<std::int64_t> issued_b, free_b, alone_b;

  constexpr lowered_run(schedule_view view, runtime_model mdl, const std::int64_t* durations, std::int64_t lat,
                        stage_table&& stages)
      : v(view),
        model(mdl),
        dur(durations),
        latency(lat),
        table(static_cast<stage_table&&>(stages)),
        work(static_cast<std::uint32_t>(view.shape.P), view.offsets.data()) {
    P = static_cast<std::uint32_t>(v.shape.P);
    S = static_cast<std::uint32_t>(v.shape.stages());
    m = static_cast<std::uint32_t>(v.shape.m);
    none = 2 * S;
    keys = S * m;
    slots = 2 * static_cast<std::size_t>(keys);
    const std::size_t n = v.size();
    out.model_ = mdl;
    out.ranks_ = v.shape.P;
    out.offsets_ = buffer<std::uint32_t>(P + 1);
    for (std::uint32_t r = 0; r <= P; ++r) out.offsets_[r] = v.offsets[r];
    out.start_ = buffer<std::int64_t>(n);
    out.end_ = buffer<std::int64_t>(n);
    out.busy_ = buffer<std::int64_t>(P);
    out.stall_ = buffer<std::int64_t>(P);
    out.stuck_ = buffer<validation_issue>(P);  // one per rank; report_pairings() makes room for its faults
    msg_b = buffer<message>(slots + m);  // + the records of channel `none`, never read: an op pointer stays in bounds
    computed_b = buffer<std::uint8_t>(2 * static_cast<std::size_t>(keys) + 1);  // [F | B or I | always]
    computed_b[2 * static_cast<std::size_t>(keys)] = 1;
    mark_pipeline_ends(v.shape, computed_b.data(), keys);  // the bidirectional placement's rule
    pending_b = buffer<std::uint32_t>(2 * static_cast<std::size_t>(S));
    clock_b = buffer<std::int64_t>(P);
    streams = is_stream_model(mdl);
  }

  /// Stream models: each transfer op's stream (stream_index()), the chain of each stream
  /// in list order and its head, and the per-op and per-message state. O(ops + P*V*m).
  constexpr void prepare_streams() {
    const std::size_t n = v.size();
    const op* ops = v.ops.data();
    const std::size_t count = static_cast<std::size_t>(streams_per_rank) * P;
    out.stream_of_ = buffer<std::uint32_t>(n, nil), out.partner_ = buffer<std::uint32_t>(n, nil);
    out.head_ = buffer<std::uint32_t>(count, nil);
    out.tstart_ = buffer<std::int64_t>(n), out.tend_ = buffer<std::int64_t>(n);
    next_on_stream_b = buffer<std::uint32_t>(n, nil), ready_stack_b = buffer<std::uint32_t>(n + 1);
    issued_b = buffer<std::int64_t>(n, -1), free_b = buffer<std::int64_t>(count);
    send_op_b = buffer<std::uint32_t>(slots + m, nil), recv_op_b = buffer<std::uint32_t>(slots + m, nil);
    alone_b = buffer<std::int64_t>(slots + m);
    buffer<std::uint32_t> last(count, nil);
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
        const std::uint32_t bits = ops[k].bits, kind = bits >> 28;
        if (kind - 4u >= 4u) continue;  // not a transfer
        const auto s = static_cast<std::uint32_t>(
            stream_index(model, static_cast<int>(r), static_cast<int>(table.peer[kind * S + ((bits >> 16) & 0xFFFu)]),
                         kind == 4 || kind == 6, kind == 4 || kind == 5, static_cast<int>(P)));
        out.stream_of_[k] = s;
        (last[s] == nil ? out.head_[s] : next_on_stream_b[last[s]]) = k;
        last[s] = k;
      }
    }
  }

  /// Stream models: rank r issues transfer op k at `clock` and goes on: its message's
  /// side is posted (a RECV also counts as received: its consumer may wait for it), and
  /// when k heads its stream it is ready (advance()). Returns true: the rank goes on.
  constexpr bool issue(std::uint32_t k, std::int64_t clock) {
    const std::uint32_t bits = v.ops.data()[k].bits, kind = bits >> 28;
    const std::size_t slot = slot_of(bits);
    message& x = msg_b[slot];
    out.start_[k] = out.end_[k] = issued_b[k] = clock;
    const bool send = kind == 4 || kind == 6;
    (send ? send_op_b[slot] : recv_op_b[slot]) = k;
    x.state |= send ? send_posted : recv_posted | received;
    if (!send) ++pending_b[table.channel[kind * S + ((bits >> 16) & 0xFFFu)]];
    const std::uint32_t y = send ? recv_op_b[slot] : send_op_b[slot];
    if (y != nil) out.partner_[k] = y, out.partner_[y] = k;
    const std::uint32_t s = out.stream_of_[k];
    if (out.head_[s] != k) return true;
    out.tstart_[k] = clock > free_b[s] ? clock : free_b[s];
    advance(k);
    return true;
  }

  /// Stream models: runs the transfers that op `first` (issued, now at its stream's head,
  /// its start on the stream set) makes possible. A ready op starts on its stream at
  /// max(its issue, its stream's last completion), set when it becomes ready (before it
  /// is stacked: its partner may find it at its head first); when its partner is ready
  /// too, both complete at the later start + t_c, the message arrives (waking a consumer
  /// parked on it), and each stream's next op, if issued, is ready in turn.
  constexpr void advance(std::uint32_t first) {
    std::uint32_t* stack = ready_stack_b.data();
    std::size_t top = 0;
    stack[top++] = first;
    while (top > 0) {
      const std::uint32_t x = stack[--top], y = out.partner_[x];
      // The partner is not at its head yet, or x completed already (with its partner,
      // which found it ready on the stack).
      if (y == nil || out.head_[out.stream_of_[y]] != y || out.head_[out.stream_of_[x]] != x) continue;
      const std::int64_t t = (out.tstart_[x] > out.tstart_[y] ? out.tstart_[x] : out.tstart_[y]) + latency;
      const std::size_t slot = slot_of(v.ops.data()[x].bits);
      out.tend_[x] = out.tend_[y] = t;
      alone_b[slot] = (issued_b[x] > issued_b[y] ? issued_b[x] : issued_b[y]) + latency;
      msg_b[slot].t = t, msg_b[slot].state |= arrived;
      wake(msg_b[slot].parked);
      msg_b[slot].parked = 0;
      for (const std::uint32_t z : {x, y}) {
        const std::uint32_t s = out.stream_of_[z], next = next_on_stream_b[z];
        free_b[s] = t, out.head_[s] = next;
        if (next != nil && issued_b[next] >= 0) {
          out.tstart_[next] = issued_b[next] > t ? issued_b[next] : t;
          stack[top++] = next;
        }
      }
    }
  }

  /// The ordered rank pair (a, b) of a transfer, as one of 2P pair numbers: every
  /// placement puts neighbouring stages on ranks a +- 1 (mod P), or on one rank.
  constexpr std::uint32_t pair_id(std::uint32_t a, std::uint32_t b) const { return 2 * a + (b == (a + 1) % P ? 0 : 1); }

  /// The slot of message `(ed, j)`'s record, for an op's bits.
  constexpr std::size_t slot_of(std::uint32_t bits) const {
    return static_cast<std::size_t>(table.channel[(bits >> 28) * S + ((bits >> 16) & 0xFFFu)]) * m + (bits & 0xFFFFu);
  }

  /// Batched: the ordered rank pair of each transfer kind on each stage, and the
  /// per-rank and per-pair state. O(P*V + P).
  constexpr void prepare_batches() {
    pair_b = buffer<std::uint32_t>(4 * static_cast<std::size_t>(S));
    for (std::uint32_t kind = 4; kind < 8; ++kind) {
      for (std::uint32_t st = 0; st < S; ++st) {
        const int peer_stage = kind == 4 || kind == 7 ? static_cast<int>(st) + 1 : static_cast<int>(st) - 1;
        if (peer_stage < 0 || peer_stage >= static_cast<int>(S)) continue;
        const std::uint32_t own = table.owner[st], peer = table.peer[kind * S + st];
        pair_b[(kind - 4) * S + st] = kind == 4 || kind == 6 ? pair_id(own, peer) : pair_id(peer, own);
      }
    }
    cursor_b = buffer<std::uint32_t>(4 * static_cast<std::size_t>(P), nil);
    group_last_b = buffer<std::uint32_t>(P);
    unmatched_b = buffer<std::uint32_t>(P);
    group_post_b = buffer<std::int64_t>(P, -1);
    group_done_b = buffer<std::int64_t>(P);
  }

  /// The rank on `side` (0: sender, 1: receiver) of ordered rank pair `p` (pair_id()).
  constexpr std::uint32_t pair_rank(std::uint32_t p, std::uint32_t side) const {
    const std::uint32_t a = p / 2;
    return side == 0 ? a : (p % 2 == 0 ? (a + 1) % P : (a + P - 1) % P);
  }

  /// The index into cursor_b of transfer op `bits`: its pair and side.
  constexpr std::uint32_t cursor_of(std::uint32_t bits) const {
    return 2 * pair_b[((bits >> 28) - 4) * S + ((bits >> 16) & 0xFFFu)] +
           ((bits >> 28) == 4 || (bits >> 28) == 6 ? 0 : 1);
  }

  /// Batched: op x of rank r (its group posted) meets op y, the first unmatched op of the
  /// other side of its pair, on rank q: both end at the later post + t_c; a RECV's data
  /// is then at its rank. Wakes q when that completes its parked group.
  constexpr void match(std::uint32_t r, std::uint32_t x, std::uint32_t q, std::uint32_t y) {
    const op* ops = v.ops.data();
    const std::int64_t t = (group_post_b[r] > group_post_b[q] ? group_post_b[r] : group_post_b[q]) + latency;
    out.end_[x] = out.end_[y] = t;
    const std::uint32_t recv = is_send(ops[x].kind()) ? y : x;
    mispaired = mispaired || !(message_of(ops[x]) == message_of(ops[y]));
    msg_b[slot_of(ops[recv].bits)] = message{t, 0, arrived | received};
    ++pending_b[table.channel[(ops[recv].bits >> 28) * S + ((ops[recv].bits >> 16) & 0xFFFu)]];
    group_done_b[r] = t > group_done_b[r] ? t : group_done_b[r];
    group_done_b[q] = t > group_done_b[q] ? t : group_done_b[q];
    --unmatched_b[r];
    if (--unmatched_b[q] == 0) wake(q + 1);  // q is parked at its group
  }

  /// Batched: the next op after y in its rank's current group with y's pair and side,
  /// or nil. Each op is passed over at most once per pair of its group.
  constexpr std::uint32_t next_of_pair(std::uint32_t y, std::uint32_t q) const {
    const op* ops = v.ops.data();
    const std::uint32_t c = cursor_of(ops[y].bits);
    for (std::uint32_t z = y + 1; z <= group_last_b[q]; ++z) {
      if ((ops[z].bits >> 28) - 9u >= 2u && cursor_of(ops[z].bits) == c) return z;  // not an activation copy
    }
    return nil;
  }

  /// Batched, when first-in first-out pairing goes wrong: pairs the sends and receives
  /// of each ordered rank pair in list order and reports each pairing whose messages
  /// differ as wrong_pairing (one per receive at most; out.stuck_ grows to hold them).
  /// Reads prepare_batches()'s pair table. Off the common path.
  template <class Report>
  constexpr void report_pairings(Report& report) {
    const std::size_t n = v.size();
    const op* ops = v.ops.data();
    const std::uint32_t* off = v.offsets.data();
    buffer<std::uint32_t> count_b(2 * static_cast<std::size_t>(P) + 1), seen_b(2 * static_cast<std::size_t>(P));
    std::uint32_t* count = count_b.data();
    std::uint32_t* seen = seen_b.data();
    for (std::uint32_t k = 0; k < n; ++k) {
      if (is_send(ops[k].kind())) ++count[cursor_of(ops[k].bits) / 2 + 1];
    }
    for (std::uint32_t p = 1; p <= 2 * P; ++p) count[p] += count[p - 1];
    buffer<std::uint32_t> sends_b(count[2 * P]);
    for (std::uint32_t k = 0; k < n; ++k) {  // ranks in order, each in list order
      if (is_send(ops[k].kind())) sends_b[count[cursor_of(ops[k].bits) / 2] + seen[cursor_of(ops[k].bits) / 2]++] = k;
    }
    out.stuck_ = buffer<validation_issue>(count[2 * P] + P);
    for (std::uint32_t p = 0; p < 2 * P; ++p) seen[p] = 0;
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if (!is_transfer(ops[k].kind()) || is_send(ops[k].kind())) continue;
        const std::uint32_t p = cursor_of(ops[k].bits) / 2;
        const std::uint32_t send = sends_b[count[p] + seen[p]++];  // as many sends as receives per pair
        if (!(message_of(ops[send]) == message_of(ops[k]))) {
          report(fault::wrong_pairing, static_cast<int>(r), static_cast<int>(k - off[r]), ops[k], ops[send]);
        }
      }
    }
  }

  constexpr void wake(std::uint32_t parked_rank_plus_one) {
    if (parked_rank_plus_one != 0) work.stack[work.top++] = parked_rank_plus_one - 1;
  }

  /// Batched: runs the group of rank r that starts at op k, the rank at `clock` (its
  /// position and clock, stored): posts it (once), pairing each of its ops with the first
  /// unmatched op of the other side of its rank pair (first in, first out), and completes
  /// it when every op is matched (the rank's clock then the group's end). Returns false
  /// when the rank must park there (it is woken when the last op is matched), or halts at
  /// a SEND whose compute op has not run.
  constexpr bool run_group(std::uint32_t r, std::uint32_t k, std::int64_t clock) {
    const op* ops = v.ops.data();
    std::uint32_t* cursor = cursor_b.data();
    const std::uint32_t first = k;
    work.pos[r] = k, clock_b[r] = clock;
    std::uint32_t bits = 0, c = 0, y = 0;
    if (group_post_b[r] < 0) {
      // The group: the run of transfers from `first`; activation copies inside it do not
      // split it (they are posted with it, on their own channels).
      std::uint32_t last = first, transfers = 1;
      for (std::uint32_t z = first + 1; z < v.offsets[r + 1]; ++z) {
        const std::uint32_t kz = ops[z].bits >> 28;
        if (kz - 4u < 4u)
          last = z, ++transfers;
        else if (kz - 9u >= 2u)
          break;
      }
      for (std::uint32_t x = first; x <= last; ++x) {  // every SEND's compute op has run
        bits = ops[x].bits;
        if (((bits >> 28) == 4 || (bits >> 28) == 6) &&
            computed_b[((bits >> 28) == 4 ? 0 : keys) + ((bits >> 16) & 0xFFFu) * m + (bits & 0xFFFFu)] == 0) {
          work.pos[r] = x;  // halted there: diagnose() names it
          return false;
        }
      }
      group_post_b[r] = group_done_b[r] = clock_b[r], group_last_b[r] = last, unmatched_b[r] = transfers;
      for (std::uint32_t x = first; x <= last; ++x) {
        if ((ops[x].bits >> 28) - 9u < 2u) {  // an activation copy inside the group
          if (posted_b[x] < 0) posted_b[x] = out.start_[x] = out.end_[x] = clock_b[r], try_copies(x);
          continue;
        }
        out.start_[x] = clock_b[r], c = cursor_of(ops[x].bits), y = cursor[c ^ 1u];
        if (y != nil) {  // the other side waits: the first of its queue meets x
          match(r, x, pair_rank(c / 2, (c & 1u) ^ 1u), y);
          cursor[c ^ 1u] = next_of_pair(y, pair_rank(c / 2, (c & 1u) ^ 1u));
        } else if (cursor[c] == nil) {
          cursor[c] = x;  // x heads its side's queue
        }
      }
    }
    if (unmatched_b[r] != 0) return false;  // parked: match() wakes it
    clock_b[r] = group_done_b[r], group_post_b[r] = -1;
    return true;
  }

  /// The activation copies' tables (the fields above), for lists that hold copies
  /// (execute_with() calls it only then), validated by check_moves() (each moved
  /// activation has its four ops, one host, in order). Linear in the ops plus P*V*m.
  constexpr void prepare_copies(std::int64_t move_ticks) {
    const std::size_t n = v.size();
    const op* ops = v.ops.data();
    copies = true, move = move_ticks;
    site_b = buffer<std::uint32_t>(4 * static_cast<std::size_t>(keys));
    chain_b = buffer<std::uint32_t>(n), next_b = buffer<std::uint32_t>(n), posted_b = buffer<std::int64_t>(n, -1);
    done_b = buffer<std::uint8_t>(n), waiting_b = buffer<std::uint32_t>(keys),
    pending_copies_b = buffer<std::uint32_t>(4 * n + 4);
    for (std::uint32_t r = 0; r < P; ++r) {
      std::uint32_t last[2] = {0, 0};  // the last SEND_ACT, RECV_ACT so far + 1
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
        const std::uint32_t bits = ops[k].bits, kind = bits >> 28;
        if (kind != 9 && kind != 10) continue;
        const std::uint32_t key = ((bits >> 16) & 0xFFFu) * m + (bits & 0xFFFFu),
                            home = table.owner[(bits >> 16) & 0xFFFu] == r;
        site_b[4 * static_cast<std::size_t>(key) + (home ? (kind == 9 ? 0 : 3) : (kind == 10 ? 1 : 2))] = k + 1;
        chain_b[k] = last[kind - 9];
        if (last[kind - 9] != 0) next_b[last[kind - 9] - 1] = k + 1;
        last[kind - 9] = k + 1;
      }
    }
  }

  /// The copy op k belongs to, as (key, direction 0 out / 1 back): its sender's role is
  /// 2 * direction.
  constexpr std::uint32_t copy_of(std::uint32_t k, std::uint32_t& key) const {
    const std::uint32_t bits = v.ops[k].bits;
    key = ((bits >> 16) & 0xFFFu) * m + (bits & 0xFFFFu);
    const std::uint32_t* site = site_b.data() + 4 * static_cast<std::size_t>(key);
    return site[2] == k + 1 || site[3] == k + 1 ? 1 : 0;
  }

  /// Runs every copy that op k's post or completion may have made ready: a copy starts
  /// when both its ops are posted, the copy before each of them on its channel has
  /// arrived, and (a copy back) the copy out has arrived; it lasts t_move. Its arrival
  /// readies the next copies on its two channels, the copy back after a copy out, and
  /// wakes the home rank waiting for a copy back. Each copy runs once: linear overall.
  constexpr void try_copies(std::uint32_t first) {
    std::uint32_t* stack = pending_copies_b.data();
    std::size_t top = 0;
    stack[top++] = first;
    std::int64_t *start = out.start_.data(), *end = out.end_.data();
    while (top > 0) {
      const std::uint32_t k = stack[--top];
      std::uint32_t key = 0;
      const std::uint32_t dir = copy_of(k, key);
      const std::uint32_t* site = site_b.data() + 4 * static_cast<std::size_t>(key);
      const std::uint32_t x = site[2 * dir] - 1, y = site[2 * dir + 1] - 1;  // sender, receiver
      if (done_b[x] != 0 || posted_b[x] < 0 || posted_b[y] < 0) continue;
      std::int64_t t = posted_b[x] > posted_b[y] ? posted_b[x] : posted_b[y];
      bool ready = true;
      for (const std::uint32_t before : {chain_b[x], chain_b[y], dir == 1 ? site[0] : 0u}) {
        if (before == 0) continue;
        ready = ready && done_b[before - 1] != 0;
        t = end[before - 1] > t ? end[before - 1] : t;
      }
      if (!ready) continue;
      start[x] = start[y] = t, end[x] = end[y] = t + move, done_b[x] = done_b[y] = 1;
      for (const std::uint32_t after : {next_b[x], next_b[y], dir == 0 ? site[2] : 0u}) {
        if (after != 0) stack[top++] = after - 1;
      }
      if (dir == 1) wake(waiting_b[key]), waiting_b[key] = 0;
    }
  }

  /// Whether the backward `bits` (B, I or a pair's B word) of its rank may start: its
  /// activation was not moved, or its copy back has arrived (`at`: then the arrival).
  /// Else the rank parks on it (woken by try_copies()).
  constexpr bool fetched(std::uint32_t r, std::uint32_t bits, std::int64_t& at) {
    const std::uint32_t key = ((bits >> 16) & 0xFFFu) * m + (bits & 0xFFFFu);
    const std::uint32_t back = site_b[4 * static_cast<std::size_t>(key) + 3];
    if (back == 0) return true;
    if (done_b[back - 1] == 0) return waiting_b[key] = r + 1, false;
    at = out.end_[back - 1] > at ? out.end_[back - 1] : at;
    return true;
  }

  /// Runs rank r from its position until it finishes or parks.
  constexpr void run_rank(std::uint32_t r) {
    const op* ops = v.ops.data();
    const std::uint32_t *link = table.channel.data(), *off = v.offsets.data();
    message* msg = msg_b.data();
    std::uint8_t* computed = computed_b.data();
    std::int64_t *start = out.start_.data(), *end = out.end_.data();
    std::int64_t clock = clock_b[r], busy = 0;
    std::uint32_t k = work.pos[r];
    // Per-op values outside the loop, assigned in one expression (core/engine.hpp).
    std::uint32_t bits = 0, kind = 0, s = 0, j = 0, ed = 0, key = 0, a = 0, b = 0;
    message* x = nullptr;  // the op's message
    for (const std::uint32_t last = off[r + 1]; k < last; ++k) {
      bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu, ed = link[kind * S + s],
      x = msg + (static_cast<std::size_t>(ed) * m + j), key = s * m + j;
      if (kind <= 3) {  // compute: its input from another rank must have been received
        // ... and its inputs on this rank computed (`a`, `b`: their entries of
        // `computed`, as dependency_walk's): else the compute part is not a schedule.
        a = kind == 0   ? (s > 0 && ed == none ? key - m : 2 * keys)
            : kind == 3 ? keys + key
                        : key,
        b = (kind == 1 || kind == 2) && s + 1 < S && ed == none ? keys + key + m : 2 * keys;
        if ((computed[a] & computed[b]) == 0) break;  // execute() then runs validate_lowered_ops()
        std::int64_t at = clock;                      // a moved activation's backward: after its copy back
        if (copies && (kind == 1 || kind == 2) && !fetched(r, bits, at)) break;
        if (ed != none) {
          if ((x->state & (received | arrived)) != (received | arrived)) {
            if ((x->state & received) != 0) x->parked = r + 1;  // posted: the data is not there yet
            break;                                              // (not received: halted, diagnose() names it)
          }
          at = x->t > at ? x->t : at, --pending_b[ed];
        }
        start[k] = at, end[k] = clock = at + dur[PerOp ? k : kind], busy += dur[PerOp ? k : kind];
        if (kind != 3) computed[(kind == 0 ? 0 : keys) + key] = 1;
        continue;
      }
      if (kind >= 8 && run_pair_or_copy(r, k, clock, busy)) continue;  // a pair: k moves to its B word
      if (kind >= 8) break;
      if ((kind == 4 || kind == 6) && computed[(kind == 4 ? 0 : keys) + key] == 0)
        break;  // halted: send before compute
      if (streams && issue(k, clock)) continue;
      if (model == runtime_model::batched) {
        if (!run_group(r, k, clock)) {
          out.busy_[r] += busy;
          return;
        }
        k = group_last_b[r], clock = clock_b[r];
        continue;
      }
      start[k] = end[k] = clock;
      if (!post(r, x, kind == 4 || kind == 6 ? send_posted : recv_posted, clock)) break;
      if (kind == 4 || kind == 6) {  // SEND: returns at once, or with its RECV (rendezvous)
        if (model == runtime_model::rendezvous) end[k] = clock = x->t;
        continue;
      }
      // RECV: returns when the data is there (under posted, at once: the consumer waits)
      if (model != runtime_model::posted) end[k] = clock = x->t > clock ? x->t : clock;
      x->state |= received, ++pending_b[ed];
    }
    work.pos[r] = k, clock_b[r] = clock, out.busy_[r] += busy;
  }

  /// run_rank()'s step for rank r's op k of kind 8 to 10, off the per-op path
  /// (core/engine.hpp): an overlapped pair, run by run_pair() (k moves to its B word), or
  /// an activation copy, posted on its channel at `clock` (once: a woken rank comes back
  /// to it) with the copies that makes ready, the rank going on. Returns false when the
  /// rank halts or parks at a pair.
  constexpr bool run_pair_or_copy(std::uint32_t r, std::uint32_t& k, std::int64_t& clock, std::int64_t& busy) {
    if ((v.ops[k].bits >> 28) == 8) return run_pair(r, k, clock, busy);
    if (posted_b[k] < 0) posted_b[k] = clock, out.start_[k] = out.end_[k] = clock, try_copies(k);
    return true;
  }

  /// Rank r runs the overlapped pair at k (its word, the forward) and k + 1 (its B word:
  /// execute()'s precondition) as one op, fused: it starts when the rank is free and the
  /// inputs of both halves are there (computed on this rank, or received and arrived
  /// from another), and both words end t_fb/V later. Returns false when the rank halts
  /// (an input not received: diagnose() names it) or parks (posted: data not there yet);
  /// when it ran, moves `k` to the B word.
  constexpr bool run_pair(std::uint32_t r, std::uint32_t& k, std::int64_t& clock, std::int64_t& busy) {
    const op* ops = v.ops.data();
    const std::uint32_t f = ops[k].bits, b = ops[k + 1].bits;
    const std::uint32_t sf = (f >> 16) & 0xFFFu, sb = (b >> 16) & 0xFFFu, key_f = sf * m + (f & 0xFFFFu),
                        key_b = sb * m + (b & 0xFFFFu);
    const std::uint32_t ed[2] = {table.channel[code_overlap_f_b * S + sf], table.channel[code_b * S + sb]};
    const std::uint32_t j[2] = {f & 0xFFFFu, b & 0xFFFFu};
    const std::uint32_t local_f = sf > 0 && ed[0] == none ? key_f - m : 2 * keys;
    const std::uint32_t local_b = sb + 1 < S && ed[1] == none ? keys + key_b + m : 2 * keys;
    if ((computed_b[local_f] & computed_b[key_b] & computed_b[local_b]) == 0) return false;
    std::int64_t at = clock;
    if (copies && !fetched(r, b, at)) return false;
    for (int h = 0; h < 2; ++h) {
      if (ed[h] == none) continue;
      message* x = msg_b.data() + (static_cast<std::size_t>(ed[h]) * m + j[h]);
      if ((x->state & received) == 0) return false;  // halted: diagnose() names it
      if ((x->state & arrived) == 0) {               // posted: the data is not there yet
        x->parked = r + 1;
        return false;
      }
      at = x->t > at ? x->t : at;
    }
    for (int h = 0; h < 2; ++h) {
      if (ed[h] != none) --pending_b[ed[h]];
    }
    const std::int64_t length = PerOp ? dur[k] : pair;
    out.start_[k] = out.start_[k + 1] = at;
    out.end_[k] = out.end_[k + 1] = clock = at + length;
    busy += length;
    computed_b[key_f] = computed_b[keys + key_b] = 1;
    ++k;
    return true;
  }

  /// The op of a stuck rank at k to name: k itself, or for an overlapped pair's word the
  /// half whose input is missing (its forward's when both are).
  constexpr std::uint32_t stuck_half(std::uint32_t k) const {
    const op* ops = v.ops.data();
    if (ops[k].kind() != op_kind::overlap_f_b) return k;
    const std::uint32_t ed_f = table.channel[code_overlap_f_b * S + (ops[k].bits >> 16 & 0xFFFu)];
    const std::uint32_t ed_b = table.channel[code_b * S + (ops[k + 1].bits >> 16 & 0xFFFu)];
    const std::uint32_t state_f =
        ed_f == none ? received | arrived : msg_b[static_cast<std::size_t>(ed_f) * m + (ops[k].bits & 0xFFFFu)].state;
    const std::uint32_t state_b = ed_b == none
                                      ? received | arrived
                                      : msg_b[static_cast<std::size_t>(ed_b) * m + (ops[k + 1].bits & 0xFFFFu)].state;
    if ((state_f & received) == 0) return k;
    if ((state_b & received) == 0) return k + 1;
    return (state_f & arrived) == 0 ? k : k + 1;
  }

  /// Rank r posts one side (`side`: send_posted or recv_posted) of message x at `clock`
  /// (once: a woken rank comes back to the same op). Returns false when the rank must
  /// park there: a RECV whose SEND has not come (blocking), either side before the other
  /// (rendezvous). The message arrives at SEND + t_c, or under rendezvous at the later
  /// post + t_c, when the second side comes; it wakes a rank parked on it.
  constexpr bool post(std::uint32_t r, message* x, std::uint32_t side, std::int64_t clock) {
    if ((x->state & side) == 0) {
      x->state |= side;
      if (model != runtime_model::rendezvous
              ? side == send_posted
              : (x->state & (send_posted | recv_posted)) == (send_posted | recv_posted)) {
        x->t = (model == runtime_model::rendezvous && x->t > clock ? x->t : clock) + latency, x->state |= arrived;
        wake(x->parked);
        x->parked = 0;
      } else if (model == runtime_model::rendezvous) {
        x->t = clock;  // the first side's post time
      }
    }
    if ((x->state & arrived) != 0 || (model == runtime_model::posted && side == recv_posted)) return true;
    x->parked = r + 1;
    return false;
  }

  /// Runs every rank until each finishes or parks for good.
  constexpr void run() {
    while (work.top > 0) run_rank(work.stack[--work.top]);
  }

  /// Whether every rank ran its whole list.
  constexpr bool finished() const { return work.finished(v.offsets.data()); }

  /// Whether every activation copy ran (true without copies).
  constexpr bool copies_done() const {
    for (std::size_t k = 0; copies && k < v.size(); ++k) {
      if (((v.ops[k].bits >> 28) == 9 || (v.ops[k].bits >> 28) == 10) && done_b[k] == 0) return false;
    }
    return true;
  }

  /// A run whose ranks all finished while a copy never ran (no backward waits for it:
  /// check_moves() makes every copy lead to one, so only as a guard): names the copy's
  /// first op as a deadlock, its partner as `needs`.
  template <class Report>
  constexpr void report_lost_copies(Report& report) {
    if (!finished() || copies_done() || out.stuck_count_ != 0) return;
    for (std::uint32_t r = 0; r < P; ++r) {
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
        const op o = v.ops[k];
        if (!is_move(o.kind()) || done_b[k] != 0) continue;
        report(fault::deadlock, static_cast<int>(r), static_cast<int>(k - v.offsets[r]), o,
               op{o.kind() == op_kind::send_act ? op_kind::recv_act : op_kind::send_act, o.stage(), o.microbatch()});
        return;
      }
    }
  }

  /// Batched: ranks with a wrong pairing (named by report_pairings(); diagnose() skips
  /// them). Empty otherwise.
  buffer<std::uint8_t> mispaired_rank_b;

  /// Names the stuck op of every rank that did not finish (execution::stuck()'s order),
  /// on lists whose compute part is a schedule (a rank halted at an op whose input on its
  /// own rank has not run would be named wrongly: execute() rejects those lists first).
  template <class Report>
  constexpr void diagnose(Report& report) {
    const std::uint32_t* off = v.offsets.data();
    if (finished()) return;
    const op* ops = v.ops.data();
    const std::uint32_t* link = table.channel.data();
    const buffer<std::uint8_t> split = split_backwards(v);  // which backward produces each gradient
    buffer<std::uint8_t> halted(P);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint32_t r = 0; r < P; ++r) {
        if (work.pos[r] == off[r + 1] || (mispaired_rank_b.size() != 0 && mispaired_rank_b[r] != 0)) continue;
        const std::uint32_t k = stuck_half(work.pos[r]);
        const op o = ops[k];
        const int step = static_cast<int>(k - off[r]), st = o.stage(), mb = o.microbatch();
        const std::uint32_t ed = link[static_cast<std::uint32_t>(o.kind()) * S + static_cast<std::uint32_t>(st)];
        const std::size_t slot = static_cast<std::size_t>(ed) * m + static_cast<std::size_t>(mb);
        const std::size_t key = static_cast<std::size_t>(st) * m + static_cast<std::size_t>(mb);
        if (copies && (o.kind() == op_kind::B || o.kind() == op_kind::I) && site_b[4 * key + 3] != 0 &&
            done_b[site_b[4 * key + 3] - 1] == 0) {
          // Waiting for its activation's copy back, which never runs (the channels'
          // orders wait on each other, or a partner's rank stopped before its copy op).
          if (pass == 1) report(fault::deadlock, static_cast<int>(r), step, o, op{op_kind::recv_act, st, mb});
          continue;
        }
        if (pass == 0) {
          if (!is_transfer(o.kind()) && (msg_b[slot].state & received) == 0) {
            const op recv{o.kind() == op_kind::B || o.kind() == op_kind::I ? op_kind::recv_b : op_kind::recv_f, st, mb};
            report(pending_b[ed] != 0 ? fault::wrong_microbatch : fault::not_received, static_cast<int>(r), step, o,
                   recv);
            halted[r] = 1;
          } else if (is_send(o.kind()) && computed_b[(o.kind() == op_kind::send_f ? 0 : keys) + key] == 0) {
            const op_kind producer = o.kind() == op_kind::send_f ? op_kind::F : backward_kind(split, v.shape, st, mb);
            report(fault::send_before_compute, static_cast<int>(r), step, o, op{producer, st, mb});
            halted[r] = 1;
          }
          continue;
        }
        if (halted[r] != 0) continue;
        if (!is_transfer(o.kind())) {  // posted: received, but the SEND never comes
          const op recv{o.kind() == op_kind::B || o.kind() == op_kind::I ? op_kind::recv_b : op_kind::recv_f, st, mb};
          report(fault::deadlock, static_cast<int>(r), step, o, stream_blocker(slot, matching_transfer(recv)));
        } else if (model == runtime_model::batched) {  // the first partner whose group is not posted
          std::uint32_t x = k;                         // from the group's first op to the first not matched
          while (x < group_last_b[r] && ((ops[x].bits >> 28) - 9u < 2u || cursor_b[cursor_of(ops[x].bits)] == nil ||
                                         cursor_b[cursor_of(ops[x].bits)] > x)) {
            ++x;
          }
          report(fault::deadlock, static_cast<int>(r), static_cast<int>(x - off[r]), ops[x], matching_transfer(ops[x]));
        } else {
          report(fault::deadlock, static_cast<int>(r), step, o, matching_transfer(o));
        }
      }
    }
  }

  /// What a compute op stuck on the RECV of message `slot` waits for: under a stream
  /// model whose RECV is queued behind another op of its stream, the partner of that
  /// stream's head (the op that holds the stream: a fresh tester's finding, the rank it
  /// names is the one the chain waits on); else `partner`, the RECV's own SEND.
  constexpr op stream_blocker(std::size_t slot, op partner) const {
    if (!streams || recv_op_b.size() == 0) return partner;
    const std::uint32_t rk = recv_op_b[slot];
    if (rk == nil) return partner;
    const std::uint32_t h = out.head_[out.stream_of_[rk]];
    return h == nil || h == rk ? partner : matching_transfer(v.ops[h]);
  }

  /// A run that did not complete (a wrong pairing, a rank that did not finish, a copy that
  /// never ran): the second part of execute()'s precondition, the checks of the compute
  /// part with its dependency walk (check_lowered_ops()), then the stuck ops in `out`.
  constexpr void report_stuck() {
    std::size_t faults = 0;
    check_lowered_ops(v, table, [&faults](fault, int, int, op, op) { ++faults; });
    require_well_formed(faults);
    auto stuck = [this](fault f, int r, int step, op at, op needs) {
      out.stuck_[out.stuck_count_++] = validation_issue{f, r, step, at, needs};
    };
    // Batched: a wrong pairing is a fault of its rank, named first; then no op counts
    // as run, and the other ranks are diagnosed as the run left them.
    if (model == runtime_model::batched) report_pairings(stuck);
    if (out.stuck_count_ != 0) {
      mispaired_rank_b = buffer<std::uint8_t>(P);
      for (std::size_t i = 0; i < out.stuck_count_; ++i)
        mispaired_rank_b[static_cast<std::size_t>(out.stuck_[i].rank)] = 1;
      for (std::size_t k = 0; k < v.size(); ++k) out.start_[k] = out.end_[k] = 0;
      for (std::uint32_t r = 0; r < P; ++r) out.busy_[r] = 0;
    }
    diagnose(stuck);
    report_lost_copies(stuck);
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
    const std::uint32_t* link = table.channel.data();
    std::uint32_t bits = 0, ed = 0;
    for (std::uint32_t r = 0; r < P; ++r) {
      std::uint32_t next = off[r];           // the compute op after k's run of transfer ops
      std::int64_t inputs_at = 0, done = 0;  // when next's inputs arrive; the latest end before k
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        if ((ops[k].bits >> 28) > 3 && (ops[k].bits >> 28) < 8) {  // a transfer
          if (next < k + 1) {
            next = k + 1;
            while (next < off[r + 1] && (is_transfer(ops[next].kind()) || is_move(ops[next].kind()))) ++next;
            if (next < off[r + 1]) {
              bits = ops[next].bits, ed = link[(bits >> 28) * S + ((bits >> 16) & 0xFFFu)];
              inputs_at = ed != none ? msg_b[static_cast<std::size_t>(ed) * m + (bits & 0xFFFFu)].t : 0;
              if ((bits >> 28) == code_overlap_f_b) {  // a pair: its B word's input too
                bits = ops[next + 1].bits, ed = link[code_b * S + ((bits >> 16) & 0xFFFu)];
                const std::int64_t b_at = ed != none ? msg_b[static_cast<std::size_t>(ed) * m + (bits & 0xFFFFu)].t : 0;
                inputs_at = b_at > inputs_at ? b_at : inputs_at;
              }
            }
          }
          if (next == off[r + 1]) break;  // no compute op follows: nothing to stall
          std::int64_t from = out.start_[k] > inputs_at ? out.start_[k] : inputs_at;
          from = done > from ? done : from;
          if (out.end_[k] > from) f(r, k, from);
        }
        if (!is_move(ops[k].kind())) done = out.end_[k] > done ? out.end_[k] : done;  // a copy runs apart
      }
    }
  }

  /// Stream models: calls f(r, k, from, to) for each compute op of rank r that waits for
  /// a RECV k beyond its inputs' own arrival: `from` the latest of when the rank reached
  /// the op (the end of its compute op before), its activation's copy back, and each
  /// input's arrival had its transfer had its streams to itself (alone_b); `to` its
  /// start, the completion of its latest RECV k. Ranks in order, each in list order.
  template <class F>
  constexpr void for_each_stream_stall(F&& f) const {
    const std::uint32_t* off = v.offsets.data();
    const op* ops = v.ops.data();
    for (std::uint32_t r = 0; r < P; ++r) {
      std::int64_t clock = 0;  // the end of the rank's last compute op
      for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
        const std::uint32_t kind = ops[k].bits >> 28;
        if ((kind > 3 && kind != 8) || (k > off[r] && (ops[k - 1].bits >> 28) == 8)) continue;
        std::int64_t from = clock, latest = -1;
        std::uint32_t recv = nil;
        for (std::uint32_t h = 0; h < (kind == 8 ? 2u : 1u); ++h) {  // a pair: its B word's input too
          const std::uint32_t bits = ops[k + h].bits, code = h == 0 ? kind : code_b;
          const std::uint32_t ed = table.channel[code * S + ((bits >> 16) & 0xFFFu)];
          const std::uint32_t back =
              copies && (code == 1 || code == 2)
                  ? site_b[4 * static_cast<std::size_t>(((bits >> 16) & 0xFFFu) * m + (bits & 0xFFFFu)) + 3]
                  : 0;
          if (back != 0) from = out.end_[back - 1] > from ? out.end_[back - 1] : from;
          if (ed == none) continue;
          const std::size_t slot = static_cast<std::size_t>(ed) * m + (bits & 0xFFFFu);
          from = alone_b[slot] > from ? alone_b[slot] : from;
          if (msg_b[slot].t > latest) latest = msg_b[slot].t, recv = recv_op_b[slot];
        }
        if (recv != nil && out.start_[k] > from) f(r, recv, from, out.start_[k]);
        clock = out.end_[k];
      }
    }
  }

  /// Sums each rank's stall and records its intervals (execution::stall_intervals()),
  /// in one pass (the buffer doubles as it fills), and the makespan.
  constexpr void sum_stalls() {
    auto record = [this](std::uint32_t r, std::uint32_t k, std::int64_t from, std::int64_t to) {
      out.stall_[r] += to - from;
      if (out.stall_count_ == out.stalls_.size()) {
        buffer<stall_interval> more(2 * out.stalls_.size() + 16);
        for (std::size_t n = 0; n < out.stall_count_; ++n) more[n] = out.stalls_[n];
        out.stalls_ = static_cast<buffer<stall_interval>&&>(more);
      }
      out.stalls_[out.stall_count_++] = stall_interval{static_cast<int>(r), k, from, to};
    };
    if (streams) {
      for_each_stream_stall(record);
    } else {
      for_each_stall(
          [this, &record](std::uint32_t r, std::uint32_t k, std::int64_t from) { record(r, k, from, out.end_[k]); });
    }
    for (std::uint32_t r = 0; r < P; ++r) out.makespan_ = clock_b[r] > out.makespan_ ? clock_b[r] : out.makespan_;
  }
};

}  // namespace detail

namespace detail {

/// The first part of execute()'s precondition: the checks of each op (linear, no walk:
/// check_compute_ops(), check_transfers(), check_moves()). Returns whether the lists
/// hold activation copies (kinds 9, 10).
constexpr bool check_ops_to_execute(schedule_view v, const stage_table& table) {
  std::size_t faults = 0;
  auto count = [&faults](fault, int, int, op, op) { ++faults; };
  check_compute_ops<true>(v, count);
  check_transfers(v, table, count);
  bool any_copy = false;
  for (const op o : v.ops) any_copy = any_copy || (o.bits >> 28) - 9u < 2u;
  check_moves(v, table, count, any_copy);
  require_well_formed(faults);
  return any_copy;
}

/// execute()'s body for either engine: the plain cost model (per-kind durations) or a
/// cost_scale (per-op durations, `scale` checked by the caller).
template <bool PerOp>
constexpr execution execute_with(schedule_view v, const costs& c, runtime_model model, const cost_scale& scale) {
  // The precondition in two parts: the checks of each op now (linear, no walk); the
  // dependency walk of the compute part only when the run does not complete. A run that
  // completes has run every compute op after its inputs (run_rank() checks the local
  // ones), so the compute part cannot deadlock.
  stage_table table(v.shape);
  const bool any_copy = check_ops_to_execute(v, table);  // activation copies (kinds 9, 10)
  ticked_costs t{};
  scaled_ticks per_op{};  // holds the per-op durations the run reads
  if constexpr (PerOp) {
    per_op = to_ticks(v, c, scale);
  } else {
    t = to_ticks(c, v.shape.cost_chunks(), v.size());
  }
  // With activation copies the tick also divides t_move: every duration in finer ticks.
  rational tick = PerOp ? per_op.tick : t.tick;
  if (any_copy) {
    const std::int64_t factor = lcm(tick.den, c.move.den) / tick.den;
    tick = rational{1, rational::mul(tick.den, factor)};
    if constexpr (PerOp) {
      for (std::size_t k = 0; k < per_op.dur.size(); ++k) per_op.dur[k] = rational::mul(per_op.dur[k], factor);
      per_op.latency = rational::mul(per_op.latency, factor);
    } else {
      for (std::int64_t& d : t.dur) d = rational::mul(d, factor);
      t.latency = rational::mul(t.latency, factor), t.pair = rational::mul(t.pair, factor);
    }
  }
  lowered_run<PerOp> run(v, model, PerOp ? per_op.dur.data() : t.dur, PerOp ? per_op.latency : t.latency,
                         static_cast<stage_table&&>(table));
  run.pair = t.pair;
  run.out.tick_ = tick;
  if (any_copy) run.prepare_copies((c.move / tick).num);
  if (model == runtime_model::batched) run.prepare_batches();
  if (is_stream_model(model)) run.prepare_streams();
  run.run();
  if (run.mispaired || !run.finished() || !run.copies_done()) run.report_stuck();
  if (run.out.stuck_count_ == 0) run.sum_stalls();
  return static_cast<execution&&>(run.out);
}

}  // namespace detail

/// Runs lowered schedule `v` (compute and transfer ops, as lower() makes them or a
/// framework writes them) under runtime model `model` with costs `c`: each rank walks
/// its list strictly in order, a compute op lasting its cost (`t/V` on a chunk), a
/// transfer op as the model says (ctpipe/lower/runtime.hpp, docs/spec.md §7), an
/// activation copy (SEND_ACT, RECV_ACT: lower_moves()) posted on the copy channels for
/// `c.move` by the rule of docs/spec.md §8.3, a moved activation's first backward
/// waiting for its copy back. Exact.
/// Returns every op's times, the makespan, per-rank idle split into stall and wait, the
/// stall intervals, and, when the lists hang under this model, the stuck ops (execution::stuck()).
///
/// Errors: check_view(), check_costs() and check_runtime_model() messages; `ctpipe: execute() takes a lowered
/// schedule with well-formed ops and transfers (validate_lowered() names the problems)`
/// when validate_lowered()'s checks of the ops themselves fail (a hang is not an error:
/// it is reported in the result); rational overflow when the times do not fit 64 bits.
/// Time and memory linear in the number of ops plus P*V*m.
constexpr execution execute(schedule_view v, const costs& c, runtime_model model) {
  check_view(v);
  check_costs(c);
  check_runtime_model(model);
  return detail::execute_with<false>(v, c, model, cost_scale{});
}

/// execute(v, c, model) with costs scaled per stage and per micro-batch by `scale`
/// (cost_scale, docs/spec.md §2.2): each compute op lasts its scaled cost, an
/// overlapped pair its scaled pair cost; t_c is not scaled. A uniform scale is
/// execute(v, c, model). Errors: execute(v, c, model)'s and the check_scale() messages.
constexpr execution execute(schedule_view v, const costs& c, runtime_model model, const cost_scale& scale) {
  check_view(v);
  check_costs(c);
  check_runtime_model(model);
  check_scale(scale, v.shape);
  if (scale.uniform()) return execute(v, c, model);
  return detail::execute_with<true>(v, c, model, scale);
}

}  // namespace ctpipe
