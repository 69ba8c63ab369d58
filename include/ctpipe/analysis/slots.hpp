// ctpipe/analysis/slots.hpp: the activation slots and receive buffers each pipeline rank
// needs under a timeline, assigned by interval-graph colouring (docs/memory.md, "Slots").
//
// The liveness rule is PyTorch's planned schedule analysis (`analyze_pipeline_activation_
// liveness`, pytorch/pytorch PR #196464, with PR #196463 allocating receive buffers just in
// time and PR #196465 reusing them; issue #136380): a forward starts an activation's
// lifetime, a full backward ends it, an input-gradient backward (I) does not and a
// weight-gradient backward (W) does; endpoints are inclusive; each lifetime gets the
// lowest slot no live lifetime holds. Inclusive endpoints are on the rank's action list,
// as PyTorch's analysis reads it: two lifetimes conflict when some op of the rank's list
// lies in both (the op that ends one and the next op, which starts another, share none,
// whatever their times). The timeline gives each lifetime its times, for reading; a
// rank's ops never overlap in time, so list order is time order.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint32_t, std::uint8_t
#include <span>     // the lifetimes

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

/// What a lifetime holds: a saved activation of one (stage, micro-batch), or the buffer
/// one RECV (RECV_F: an activation, RECV_B: a gradient) writes into.
enum class slot_kind : std::uint8_t { activation, receive };

/// The tool's and the JSON's name of a slot_kind: `activation`, `receive`.
constexpr const char* slot_kind_name(slot_kind k) { return k == slot_kind::activation ? "activation" : "receive"; }

/// One lifetime on one pipeline rank: the ops [first_op, last_op] of its rank's list
/// (inclusive), their times [start, end] in ticks of slot_plan::tick(), and the slot it
/// was given (0-based, within its rank and kind).
/// - activation: `first_op` is the (stage, micro-batch)'s F (or its overlapped pair's
///   word) and `start` its start; `last_op` the B or W that ends it, `end` that op's end.
/// - receive: `first_op` is the RECV and `start` its start (its post time); `last_op` the
///   compute op that consumes it (an F or pair word for RECV_F, a B or I for RECV_B) and
///   `end` that op's end.
/// Op indices are positions in the flat op array of the view given to plan_slots().
struct slot_lifetime {
  int rank = 0;
  int stage = 0;
  int microbatch = 0;
  slot_kind kind = slot_kind::activation;
  std::size_t first_op = 0;
  std::size_t last_op = 0;
  std::int64_t start_ticks = 0;
  std::int64_t end_ticks = 0;
  int slot = 0;
};

/// plan_slots()'s result: every lifetime with its slot, and per (rank, kind) the number
/// of slots and the largest overlap (the most lifetimes that hold one op of the rank's list). The
/// colouring is minimal: count(r, k) == largest_overlap(r, k) always (plan_slots()).
class slot_plan {
 public:
  constexpr slot_plan() = default;

  /// Length of one tick, in time units (the timeline's tick()).
  constexpr rational tick() const { return tick_; }
  /// Number of pipeline ranks.
  constexpr int ranks() const { return ranks_; }
  /// Every lifetime: rank 0's activations in the list order of their F, then its
  /// receives in the list order of their RECV, then rank 1's, and so on.
  constexpr std::span<const slot_lifetime> lifetimes() const { return lives_.span(); }
  /// Rank r's lifetimes of kind k, in list order of the op that starts them.
  constexpr std::span<const slot_lifetime> of(int r, slot_kind k) const {
    const std::size_t at = cell(r, k);
    return lives_.span().subspan(offsets_[at], offsets_[at + 1] - offsets_[at]);
  }
  /// The exact start and end of lifetime i (lifetimes() index), in time units.
  constexpr rational start(std::size_t i) const { return tick_ * rational{lives_[i].start_ticks}; }
  constexpr rational end(std::size_t i) const { return tick_ * rational{lives_[i].end_ticks}; }
  /// Slots of kind k rank r needs: one more than the highest slot given there (0 when
  /// it has no lifetime of that kind).
  constexpr int count(int r, slot_kind k) const { return count_[cell(r, k)]; }
  /// The most lifetimes of kind k on rank r that hold one op of its list (endpoints count).
  constexpr int largest_overlap(int r, slot_kind k) const { return overlap_[cell(r, k)]; }

 private:
  template <class Timeline>
  friend constexpr slot_plan plan_slots(schedule_view v, const Timeline& t);
  static constexpr std::size_t cell(int r, slot_kind k) {
    return 2 * static_cast<std::size_t>(r) + static_cast<std::size_t>(k);
  }

  rational tick_{1};
  int ranks_ = 0;
  detail::buffer<slot_lifetime> lives_;
  detail::buffer<std::size_t> offsets_;  // 2P + 1: (rank, kind) cell c holds lives_[offsets_[c], offsets_[c+1])
  detail::buffer<int> count_, overlap_;  // per cell
};

namespace detail {

/// A binary min-heap of (key, value) pairs on the free store, room for `n`: plan_slots()'s
/// live lifetimes (key: last op, value: slot) and free slots (key: slot).
struct slot_heap {
  buffer<std::int64_t> key;
  buffer<int> value;
  std::size_t size = 0;

  constexpr explicit slot_heap(std::size_t n) : key(n), value(n) {}
  constexpr void swap_at(std::size_t a, std::size_t b) {
    const std::int64_t k = key[a];
    const int v = value[a];
    key[a] = key[b], value[a] = value[b], key[b] = k, value[b] = v;
  }
  constexpr void push(std::int64_t k, int v) {
    std::size_t at = size++;
    key[at] = k, value[at] = v;
    for (; at > 0 && key[(at - 1) / 2] > key[at]; at = (at - 1) / 2) swap_at(at, (at - 1) / 2);
  }
  /// Removes the least key's entry and returns its value (the heap is not empty).
  constexpr int pop() {
    const int out = value[0];
    key[0] = key[--size], value[0] = value[size];
    for (std::size_t at = 0;;) {
      const std::size_t l = 2 * at + 1, r = l + 1;
      std::size_t least = at;
      if (l < size && key[l] < key[least]) least = l;
      if (r < size && key[r] < key[least]) least = r;
      if (least == at) break;
      swap_at(at, least);
      at = least;
    }
    return out;
  }
};

/// Colours `lives` (one rank's lifetimes of one kind, in list order of their first ops)
/// greedily: each takes the lowest slot whose last holder's last op comes before its
/// first op in the rank's list. Sets each slot; returns {slots used, largest overlap},
/// the latter the most lifetimes that hold one op of the list (a largest clique of
/// intervals holds the latest first op among them). Equal by construction: a lifetime
/// given slot c found slots 0..c-1 held by lifetimes that hold its first op. O(n log n).
struct colouring {
  int slots = 0;
  int overlap = 0;
};
constexpr colouring colour(std::span<slot_lifetime> lives) {
  slot_heap live(lives.size()), free(lives.size());
  colouring out;
  for (slot_lifetime& l : lives) {
    while (live.size > 0 && live.key[0] < static_cast<std::int64_t>(l.first_op)) {
      const int s = live.pop();
      free.push(s, s);
    }
    l.slot = free.size > 0 ? free.pop() : out.slots++;
    live.push(static_cast<std::int64_t>(l.last_op), l.slot);
    out.overlap = static_cast<int>(live.size) > out.overlap ? static_cast<int>(live.size) : out.overlap;
  }
  return out;
}

/// The table slot of (stage, micro-batch) for plan_slots(): stage * m + micro-batch.
constexpr std::size_t slot_cell(const pipeline_shape& shape, op o) {
  require(o.stage() < shape.stages() && o.microbatch() < shape.m,
          "ctpipe: plan_slots takes ops with stage < P*V and micro-batch < m");
  return static_cast<std::size_t>(o.stage()) * static_cast<std::size_t>(shape.m) +
         static_cast<std::size_t>(o.microbatch());
}

/// The kind codes plan_slots() reads (core/engine.hpp's kind_code): what starts an
/// activation's lifetime (F, an overlapped pair's word), ends it (B, W), starts a receive
/// (RECV_F, RECV_B) and consumes one (F or pair word: RECV_F's; B or I: RECV_B's).
constexpr bool starts_activation(std::uint32_t code) { return code == 0 || code == 8; }
constexpr bool ends_activation(std::uint32_t code) { return code == 1 || code == 3; }
constexpr bool is_receive(std::uint32_t code) { return code == 5 || code == 7; }

/// plan_slots()'s offsets of the (rank, kind) cells: 2P + 1 positions, cell 2r + k
/// holding rank r's lifetimes of kind k. Linear.
constexpr buffer<std::size_t> count_lifetimes(schedule_view v) {
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  buffer<std::size_t> offsets(2 * P + 1);
  for (std::size_t r = 0; r < P; ++r) {
    std::size_t act = 0, recv = 0;
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const std::uint32_t code = v.ops[k].bits >> 28;
      act += starts_activation(code) ? 1 : 0;
      recv += is_receive(code) ? 1 : 0;
    }
    offsets[2 * r + 1] = offsets[2 * r] + act;
    offsets[2 * r + 2] = offsets[2 * r + 1] + recv;
  }
  return offsets;
}

/// The tables of plan_slots(): per (stage, micro-batch) cell, 1 + the index of its
/// activation lifetime (`started`), of its RECV_F's receive (`received[cell]`) and of its
/// RECV_B's (`received[cells + cell]`); 0: none.
struct lifetime_tables {
  std::size_t cells = 0;
  buffer<std::size_t> started, received;
  constexpr explicit lifetime_tables(const pipeline_shape& shape)
      : cells(static_cast<std::size_t>(shape.stages()) * static_cast<std::size_t>(shape.m)),
        started(cells),
        received(2 * cells) {}
};

/// The one message of a timeline plan_slots() cannot read.
inline constexpr const char* slots_incomplete =
    "ctpipe: plan_slots takes a complete schedule: each (stage, micro-batch) one F and a B or W after it on the "
    "same rank, each RECV one consumer after it";

/// plan_slots()'s first pass: every lifetime's start (op and time), rank by rank, each
/// kind in list order, into `lives` at the cells' `offsets`; fills `tab`. Linear.
template <class Timeline>
constexpr void start_lifetimes(schedule_view v, const Timeline& t, std::span<slot_lifetime> lives,
                               const buffer<std::size_t>& offsets, lifetime_tables& tab) {
  const std::size_t none = v.size();
  for (int r = 0; r < v.shape.P; ++r) {
    std::size_t act = offsets[2 * static_cast<std::size_t>(r)], recv = offsets[2 * static_cast<std::size_t>(r) + 1];
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const op o = v.ops[k];
      const std::uint32_t code = o.bits >> 28;
      if (!starts_activation(code) && !is_receive(code)) continue;
      const std::size_t cell = slot_cell(v.shape, o);
      const bool a = starts_activation(code);
      std::size_t& entry = a ? tab.started[cell] : tab.received[(code == 7 ? tab.cells : 0) + cell];
      require(entry == 0, slots_incomplete);  // a second F (or RECV) of one (stage, micro-batch)
      std::size_t& at = a ? act : recv;
      lives[at] = slot_lifetime{.rank = r,
                                .stage = o.stage(),
                                .microbatch = o.microbatch(),
                                .kind = a ? slot_kind::activation : slot_kind::receive,
                                .first_op = k,
                                .last_op = none,
                                .start_ticks = t.start_ticks(k)};
      entry = ++at;
    }
  }
}

/// plan_slots()'s second pass: each lifetime's end, the end of the op that ends it (an
/// activation's B or W, the later one if both; a receive's consumer), on the rank that
/// started it and after the op that did. Raises slots_incomplete where one is missing.
/// Linear.
template <class Timeline>
constexpr void end_lifetimes(schedule_view v, const Timeline& t, std::span<slot_lifetime> lives,
                             const lifetime_tables& tab) {
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const op o = v.ops[k];
      const std::uint32_t code = o.bits >> 28;
      const bool ends = ends_activation(code), consumes_f = starts_activation(code),
                 consumes_b = code <= 2 && code >= 1;
      if (!ends && !consumes_f && !consumes_b) continue;
      const std::size_t cell = slot_cell(v.shape, o);
      std::size_t found[2] = {ends ? tab.started[cell] : 0, consumes_f   ? tab.received[cell]
                                                            : consumes_b ? tab.received[tab.cells + cell]
                                                                         : 0};
      require(!ends || found[0] != 0, slots_incomplete);  // a B or W without its F
      for (const std::size_t f : found) {
        if (f == 0) continue;
        slot_lifetime& l = lives[f - 1];
        require(l.rank == r && l.first_op < k, slots_incomplete);
        l.last_op = k;
        l.end_ticks = t.end_ticks(k) > l.end_ticks ? t.end_ticks(k) : l.end_ticks;
      }
    }
  }
  for (const slot_lifetime& l : lives) require(l.last_op != v.size(), slots_incomplete);
}

}  // namespace detail

/// The activation slots and receive buffers of schedule `v` under timeline `t`, per
/// pipeline rank (docs/memory.md, "Slots"). `t` is simulate(v, ...) (a compute schedule:
/// activations only) or execute(v, ...) of lowered lists (activations and receives); any
/// type with tick(), size(), start_ticks(k) and end_ticks(k) over `v`'s flat op array.
///
/// Lifetimes (PyTorch's liveness rule, pytorch/pytorch PR #196464): an activation of
/// (stage, micro-batch) lives on the rank of its F over the ops from its F (or overlapped
/// pair) to its B or W, both included: an I does not end it, a W does, so a split
/// backward keeps the activation until its W. A receive buffer (PRs #196463, #196465)
/// lives from its RECV to the compute op that consumes it, both included. Activation
/// copies (SEND_ACT, RECV_ACT) are not modelled: an activation keeps its slot on its
/// rank. Each rank's lifetimes of one kind are coloured in list order, each taking the
/// lowest slot whose holder's last op comes before its first: the op that ends one
/// lifetime and a later op that starts another share no slot conflict, as in PyTorch's
/// action lists. The count is minimal: count(r, k) == largest_overlap(r, k), a clique of
/// that many lifetimes holding one op (the greedy's argument, detail::colour());
/// tests/static/proofs_slots.cpp proves it on a grid, tests/runtime/slots_test.cpp
/// against a brute-force count and in_flight()'s peak.
///
/// Errors: check_view()'s; `ctpipe: plan_slots needs a timeline of the view's ops` when
/// t.size() differs from v.size(); `ctpipe: plan_slots needs a run that completed (the
/// lists hang: execution::stuck() names why)` for an execution that hangs;
/// `ctpipe: plan_slots takes ops with stage < P*V and micro-batch < m`;
/// detail::slots_incomplete's message for a missing or repeated F, B/W, RECV or consumer;
/// `ctpipe: plan_slots needs each rank's ops to start in list order` for a timeline that
/// is not a run of the lists. Time O(n log n) in the ops, memory linear plus 3 P V m.
template <class Timeline>
constexpr slot_plan plan_slots(schedule_view v, const Timeline& t) {
  check_view(v);
  detail::require(t.size() == v.size(), "ctpipe: plan_slots needs a timeline of the view's ops");
  if constexpr (requires { t.completed(); }) {
    detail::require(t.completed(),
                    "ctpipe: plan_slots needs a run that completed (the lists hang: "
                    "execution::stuck() names why)");
  }
  slot_plan out;
  out.tick_ = t.tick();
  out.ranks_ = v.shape.P;
  out.offsets_ = detail::count_lifetimes(v);
  out.lives_ = detail::buffer<slot_lifetime>(out.offsets_[out.offsets_.size() - 1]);
  detail::lifetime_tables tab(v.shape);
  detail::start_lifetimes(v, t, out.lives_.span(), out.offsets_, tab);
  detail::end_lifetimes(v, t, out.lives_.span(), tab);
  const std::size_t cells = out.offsets_.size() - 1;
  out.count_ = detail::buffer<int>(cells);
  out.overlap_ = detail::buffer<int>(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    const std::span<slot_lifetime> lives =
        out.lives_.span().subspan(out.offsets_[c], out.offsets_[c + 1] - out.offsets_[c]);
    for (std::size_t i = 1; i < lives.size(); ++i)
      detail::require(lives[i - 1].start_ticks <= lives[i].start_ticks,
                      "ctpipe: plan_slots needs each rank's ops to start in list order");
    const detail::colouring got = detail::colour(lives);
    out.count_[c] = got.slots;
    out.overlap_[c] = got.overlap;
  }
  return out;
}

}  // namespace ctpipe
