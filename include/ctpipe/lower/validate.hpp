// ctpipe/lower/validate.hpp: does a lowered schedule (compute ops plus SEND/RECV) run to
// completion, under a given send semantics, without hanging?
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::uint8_t

#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/engine.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/transfer.hpp"

namespace ctpipe {

/// When a send returns.
/// - `rendezvous`: a SEND blocks until its RECV is posted, and a RECV until its SEND is
///   (MPI_Ssend, NCCL without buffering): both complete together.
/// - `buffered`: a SEND returns at once; a RECV blocks until its SEND has run
///   (MPI_Bsend, isend without a wait).
enum class send_semantics : std::uint8_t { rendezvous, buffered };

/// `rendezvous` or `buffered`, as the tool prints it.
constexpr const char* semantics_name(send_semantics s) {
  return s == send_semantics::rendezvous ? "rendezvous" : "buffered";
}

namespace detail {

/// check_transfers()'s last step: for each edge across ranks and micro-batch, the
/// SEND_F, RECV_F, SEND_B or RECV_B missing from `seen` ([kind - SEND_F][slot]); rank =
/// owner, step = -1. Calls `report` per op.
template <class Report>
constexpr void report_missing_transfers(const pipeline_shape& shape, const std::uint8_t* seen,
                                        const std::uint32_t* owner, Report& report) {
  const int S = shape.stages();
  const int m = shape.m;
  const std::size_t slots = 2 * static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  const bool both_ways = shape.layout == placement::bidirectional;
  for (int e = 0; e + 1 < S; ++e) {
    if (owner[e] == owner[e + 1]) continue;
    // The micro-batches whose pipeline crosses edge e (all, but on the bidirectional
    // placement the down ones below stage P, the up ones from it).
    const int j_first = both_ways && e >= shape.P ? (m + 1) / 2 : 0, j_end = both_ways && e < shape.P ? (m + 1) / 2 : m;
    for (int j = j_first; j < j_end; ++j) {
      const std::size_t activation = (2 * static_cast<std::size_t>(e)) * static_cast<std::size_t>(m) +
                                     static_cast<std::size_t>(j),
                        gradient = activation + static_cast<std::size_t>(m);
      if ((seen[activation] & seen[slots + activation] & seen[2 * slots + gradient] & seen[3 * slots + gradient]) != 0)
        continue;
      const op needed[4] = {op{op_kind::send_f, e, j}, op{op_kind::recv_f, e + 1, j}, op{op_kind::send_b, e + 1, j},
                            op{op_kind::recv_b, e, j}};
      const std::size_t where[4] = {activation, slots + activation, 2 * slots + gradient, 3 * slots + gradient};
      for (int n = 0; n < 4; ++n) {
        if (seen[where[n]] == 0)
          report(fault::missing, static_cast<int>(owner[needed[n].stage()]), -1, needed[n], needed[n]);
      }
    }
  }
}

/// On the bidirectional placement: reports each transfer on an edge outside its
/// micro-batch's pipeline as out_of_shape, in rank order. Linear; run only there.
template <class Report>
constexpr void report_transfers_outside_pipelines(schedule_view v, Report& report) {
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1];
         ++k) {
      const op o = v.ops[k];
      if (!is_transfer(o.kind()) || o.stage() >= v.shape.stages() || o.microbatch() >= v.shape.m) continue;
      const int partner = (o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b) ? o.stage() + 1 : o.stage() - 1;
      const int lo = v.shape.first_stage(o.microbatch()), hi = v.shape.last_stage(o.microbatch());
      if (o.stage() < lo || o.stage() > hi || partner < lo || partner > hi) {
        report(fault::out_of_shape, r, static_cast<int>(k - v.offsets[static_cast<std::size_t>(r)]), o, o);
      }
    }
  }
}

/// Step 3 of validate_lowered() on a view whose shape and offsets are sound: on the
/// bidirectional placement first each transfer on an edge outside its micro-batch's
/// pipeline (out_of_shape); each transfer op in rank order (out_of_shape, no_partner,
/// wrong_rank, local_transfer, duplicate), then missing messages. A common path of a few
/// statements per op, the diagnosis off it. Calls `report(fault, rank, step, at, needs)` per issue.
template <class Report>
constexpr void check_transfers(schedule_view v, const stage_table& table, Report& report) {
  const pipeline_shape& shape = v.shape;
  const int P = shape.P;
  const int S = shape.stages();
  const int m = shape.m;
  const std::uint32_t* off = v.offsets.data();
  // Messages are numbered by slot = ed * m + j (stage_table::channel).
  const std::uint32_t none = table.none;
  const std::uint32_t* link = table.channel.data();
  const std::uint32_t* owner = table.owner.data();
  const std::uint32_t um = static_cast<std::uint32_t>(m), uS = static_cast<std::uint32_t>(S);
  const op* ops = v.ops.data();
  const std::size_t slots = 2 * static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  detail::buffer<std::uint8_t> seen_b(4 * slots);  // [SEND_F, RECV_F, SEND_B, RECV_B][slot]
  std::uint8_t* seen = seen_b.data();
  // Per-op values outside the loops, assigned in one expression (core/engine.hpp).
  std::uint32_t bits = 0, kind = 0, s = 0, j = 0, ed = 0, mark = 0;
  if (shape.layout == placement::bidirectional) report_transfers_outside_pipelines(v, report);
  for (int r = 0; r < P; ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu,
      ed = kind >= 4 && kind <= 7 && s < uS ? link[kind * uS + s] : none,
      mark = ed != none && j < um ? (kind - 4) * static_cast<std::uint32_t>(slots) + ed * um + j : 0;
      if (kind < 4 || kind > 7) continue;  // compute ops, and unused kinds (step 2 named them)
      if (ed != none && j < um && owner[s] == static_cast<std::uint32_t>(r) && seen[mark] == 0) {  // the common case
        seen[mark] = 1;
        continue;
      }
      const op o = ops[k];
      const int step = static_cast<int>(k - off[r]);
      const int partner = (kind == 4 || kind == 7) ? static_cast<int>(s) + 1 : static_cast<int>(s) - 1;
      if (s >= uS || j >= um) {
        report(fault::out_of_shape, r, step, o, o);
        continue;
      }
      if (partner < 0 || partner >= S) {
        report(fault::no_partner, r, step, o, o);
        continue;
      }
      if (owner[s] != static_cast<std::uint32_t>(r)) report(fault::wrong_rank, r, step, o, o);
      if (ed == none) {
        report(fault::local_transfer, r, step, o, o);
        continue;
      }
      if (seen[mark] != 0) report(fault::duplicate, r, step, o, o);
      seen[mark] = 1;
    }
  }
  report_missing_transfers(shape, seen, owner, report);
}

/// Where the ops of each moved activation stand (check_moves()): per (stage,
/// micro-batch) key, op index + 1 (0: none) of its F (or pair word) and first backward
/// (B, a pair's B word, or I) on its stage's rank, of its SEND_ACT and RECV_ACT there
/// (home) and on another rank (host), and that host. Built only when `v` holds copies
/// (check_moves()).
struct move_sites {
  buffer<std::uint32_t> f, back, home_send, home_recv, host_send, host_recv, host;

  constexpr explicit move_sites(schedule_view v) {
    const std::size_t keys = static_cast<std::size_t>(v.shape.stages()) * static_cast<std::size_t>(v.shape.m);
    for (buffer<std::uint32_t>* b : {&f, &back, &home_send, &home_recv, &host_send, &host_recv, &host})
      *b = buffer<std::uint32_t>(keys);
  }
};

/// check_moves()'s per-activation step: missing copies, then their order.
template <class Report>
constexpr void report_move_order(schedule_view v, const stage_table& table, const move_sites& at, Report& report) {
  const std::uint32_t um = static_cast<std::uint32_t>(v.shape.m);
  for (std::size_t key = 0; key < at.f.size(); ++key) {
    const int s = static_cast<int>(key / um), j = static_cast<int>(key % um);
    if ((at.home_send[key] | at.home_recv[key] | at.host_send[key] | at.host_recv[key]) == 0) continue;
    const int home = static_cast<int>(table.owner[static_cast<std::size_t>(s)]),
              host = at.host[key] != 0 ? static_cast<int>(at.host[key]) - 1 : home;
    const std::uint32_t sites[4] = {at.home_send[key], at.host_recv[key], at.host_send[key], at.home_recv[key]};
    const op_kind kinds[4] = {op_kind::send_act, op_kind::recv_act, op_kind::send_act, op_kind::recv_act};
    bool whole = true;
    for (int n = 0; n < 4; ++n) {
      if (sites[n] != 0) continue;
      whole = false;
      report(fault::missing, n == 1 || n == 2 ? host : home, -1, op{kinds[n], s, j}, op{kinds[n], s, j});
    }
    if (!whole) continue;
    // (later op, earlier op it must follow): both on one rank, so list positions compare.
    const std::uint32_t order[4][3] = {{sites[0], at.f[key], static_cast<std::uint32_t>(home)},
                                       {sites[3], sites[0], static_cast<std::uint32_t>(home)},
                                       {at.back[key], sites[3], static_cast<std::uint32_t>(home)},
                                       {sites[2], sites[1], static_cast<std::uint32_t>(host)}};
    for (const auto& [later, earlier, r] : order) {
      if (later == 0 || earlier == 0 || later > earlier) continue;
      report(fault::out_of_order, static_cast<int>(r), static_cast<int>(later - 1 - v.offsets[r]), v.ops[later - 1],
             v.ops[earlier - 1]);
    }
  }
}

/// Step 3b of validate_lowered(), on a view whose compute part and transfers passed:
/// the activation copies (SEND_ACT, RECV_ACT; docs/spec.md §8.3). Per copy in rank
/// order: out_of_shape, duplicate (a second copy of one role), two_hosts; then per
/// moved activation by (stage, micro-batch): missing (rank = its home, or for the host's
/// ops the host), out_of_order (the home's SEND_ACT before its F, the home's RECV_ACT
/// before its SEND_ACT, its first backward before the home's RECV_ACT, the host's
/// SEND_ACT before its RECV_ACT; `needs` = the op it must follow). `copies`: whether `v`
/// holds any (nothing to do otherwise). Linear in the ops plus P*V*m.
template <class Report>
constexpr void check_moves(schedule_view v, const stage_table& table, Report& report, bool copies) {
  if (!copies) return;
  move_sites at(v);
  const std::uint32_t um = static_cast<std::uint32_t>(v.shape.m), uS = table.S;
  for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(v.shape.P); ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const op o = v.ops[k];
      const std::uint32_t kind = o.bits >> 28, s = static_cast<std::uint32_t>(o.stage()),
                          j = static_cast<std::uint32_t>(o.microbatch());
      if (s >= uS || j >= um) {
        if (kind == 9 || kind == 10)
          report(fault::out_of_shape, static_cast<int>(r), static_cast<int>(k - v.offsets[r]), o, o);
        continue;
      }
      const std::size_t key = static_cast<std::size_t>(s) * um + j;
      const bool home = table.owner[s] == r;
      if (home && (kind == 0 || kind == 8) && at.f[key] == 0) at.f[key] = k + 1;
      if (home && (kind == 1 || kind == 2) && at.back[key] == 0) at.back[key] = k + 1;
      if (kind != 9 && kind != 10) continue;
      buffer<std::uint32_t>& site =
          home ? (kind == 9 ? at.home_send : at.home_recv) : (kind == 9 ? at.host_send : at.host_recv);
      const int step = static_cast<int>(k - v.offsets[r]);
      if (!home && at.host[key] != 0 && at.host[key] != r + 1) {
        const buffer<std::uint32_t>& first = at.host_recv[key] != 0 ? at.host_recv : at.host_send;
        report(fault::two_hosts, static_cast<int>(r), step, o, v.ops[first[key] - 1]);
        continue;
      }
      if (site[key] != 0) report(fault::duplicate, static_cast<int>(r), step, o, o);
      if (!home) at.host[key] = r + 1;
      if (site[key] == 0) site[key] = k + 1;
    }
  }
  report_move_order(v, table, at, report);
}

/// Steps 2 and 3 of validate_lowered() on a view whose shape and offsets are sound:
/// the compute part as validate() checks it, then each transfer op (check_transfers()).
/// Calls `report(fault, rank, step, at, needs)` per issue; counts the overlapped pairs in
/// `*pairs` and the activation copies in `*copy_ops` when given.
template <class Report>
constexpr void check_lowered_ops(schedule_view v, const stage_table& table, Report&& report,
                                 std::size_t* pairs = nullptr, std::size_t* copy_ops = nullptr) {
  const std::uint32_t* off = v.offsets.data();
  const op* ops = v.ops.data();

  // 2. The compute part, its positions mapped back to the lowered lists.
  const schedule compute = compute_part(v);
  detail::buffer<std::uint32_t> position(compute.size());
  std::size_t copies = 0;
  for (std::uint32_t k = 0, c = 0, n = static_cast<std::uint32_t>(v.size()); k < n; ++k) {
    const std::uint32_t kind = ops[k].bits >> 28;
    if (kind <= 3 || kind == 8 || kind >= 11)
      position[c++] = k;  // what compute_part keeps: all but transfers and copies
    else if (kind >= 9)
      ++copies;
  }
  if (copy_ops != nullptr) *copy_ops = copies;
  const schedule_view cv = compute.view();
  std::size_t found = 0;
  validate_counting_pairs(
      cv,
      [&](validation_issue issue) {
        if (issue.step >= 0) {
          const std::size_t c = cv.offsets[static_cast<std::size_t>(issue.rank)] + static_cast<std::size_t>(issue.step);
          issue.step = static_cast<int>(position[c] - off[issue.rank]);
        }
        report(issue.what, issue.rank, issue.step, issue.at, issue.needs);
      },
      &found);
  if (pairs != nullptr) *pairs = found;
  // An overlapped pair's halves stand next to each other in the lowered lists too: a
  // transfer between them is a broken pair (the compute part, without it, is not).
  for (int r = 0; found != 0 && r < v.shape.P; ++r) {
    for (std::uint32_t k = off[r]; k + 1 < off[r + 1]; ++k) {
      if (ops[k].kind() == op_kind::overlap_f_b && (is_transfer(ops[k + 1].kind()) || is_move(ops[k + 1].kind()))) {
        report(fault::broken_pair, r, static_cast<int>(k - off[r]), ops[k], ops[k]);
      }
    }
  }
  // 3. Each transfer op, then the activation copies.
  check_transfers(v, table, report);
  check_moves(v, table, report, copies != 0);
}

/// The last step of validate_lowered()'s run: names the op each rank stopped at
/// (`pos[r]`, its end when it finished), the ranks halted by a fault of their own first,
/// then the ranks waiting for a partner. `pending` and `computed` are the run's tables.
template <class Report>
constexpr void diagnose_lowered(schedule_view v, const stage_table& table, const std::uint32_t* pos,
                                const std::uint32_t* pending, const std::uint8_t* computed, Report&& report) {
  const int P = v.shape.P;
  const std::uint32_t* off = v.offsets.data();
  const op* ops = v.ops.data();
  const std::uint32_t um = static_cast<std::uint32_t>(v.shape.m), uS = static_cast<std::uint32_t>(v.shape.stages());
  const std::uint32_t keys = uS * um;
  detail::buffer<validation_issue> halted(static_cast<std::size_t>(P));
  detail::buffer<std::uint8_t> is_halted(static_cast<std::size_t>(P));
  detail::buffer<std::uint8_t> split;  // split_backwards(v), made when a SEND_B needs it
  // Diagnose each rank that stopped at an op it can never run by itself.
  for (int r = 0; r < P; ++r) {
    const std::uint32_t k = pos[r];
    if (k == off[r + 1]) continue;
    const op o = ops[k];
    const int step = static_cast<int>(k - off[r]);
    const int st = o.stage(), mb = o.microbatch();
    const std::uint32_t in_ed =
        table.channel[static_cast<std::uint32_t>(o.kind()) * uS + static_cast<std::uint32_t>(st)];
    if (!is_transfer(o.kind())) {
      const op recv{o.kind() == op_kind::B || o.kind() == op_kind::I ? op_kind::recv_b : op_kind::recv_f, st, mb};
      halted[static_cast<std::size_t>(r)] =
          validation_issue{pending[in_ed] != 0 ? fault::wrong_microbatch : fault::not_received, r, step, o, recv};
      is_halted[static_cast<std::size_t>(r)] = 1;
    } else if (is_send(o.kind()) &&
               computed[(o.kind() == op_kind::send_f ? 0 : keys) + static_cast<std::uint32_t>(st) * um +
                        static_cast<std::uint32_t>(mb)] == 0) {
      if (split.size() == 0) split = split_backwards(v);  // once, on the first halted SEND_B
      const op_kind producer = o.kind() == op_kind::send_f ? op_kind::F : backward_kind(split, v.shape, st, mb);
      halted[static_cast<std::size_t>(r)] =
          validation_issue{fault::send_before_compute, r, step, o, op{producer, st, mb}};
      is_halted[static_cast<std::size_t>(r)] = 1;
    }
  }
  // What is left is stuck: first the ranks halted by a fault of their own (the causes),
  // then the ranks waiting at a SEND or RECV whose partner never comes.
  for (int r = 0; r < P; ++r) {
    if (is_halted[static_cast<std::size_t>(r)] == 0) continue;
    const validation_issue& h = halted[static_cast<std::size_t>(r)];
    report(h.what, h.rank, h.step, h.at, h.needs);
  }
  for (int r = 0; r < P; ++r) {
    const std::uint32_t k = pos[r];
    if (k == off[r + 1] || is_halted[static_cast<std::size_t>(r)] != 0) continue;
    const op o = ops[k];
    report(fault::deadlock, r, static_cast<int>(k - off[r]), o, matching_transfer(o));
  }
}

/// Step 4 of validate_lowered(): a run of the lists, its tables and its loop. Per slot
/// its state (SEND reached, RECV done) and the rank + 1 parked at its SEND or RECV; per F
/// and per B or I whether it ran; per ed messages not yet consumed; per rank where it
/// stopped (diagnose_lowered() reads them after the run).
struct lowered_lists_run {
  buffer<std::uint8_t> state_b, computed_b;   // [slots], [F | B or I]
  buffer<std::uint32_t> parked_b, pending_b;  // [at SEND | at RECV], [ed]
  rank_worklist work;

  /// The tables of a run of `v` (`table`: its stage table), every rank at its start.
  constexpr lowered_lists_run(schedule_view v, const stage_table& table)
      : state_b(slots(v, table)),
        computed_b(slots(v, table)),
        parked_b(2 * slots(v, table)),
        pending_b(2 * static_cast<std::size_t>(table.S)),
        work(static_cast<std::uint32_t>(v.shape.P), v.offsets.data()) {}

  /// The message slots of `v`: 2 * S * m.
  static constexpr std::size_t slots(schedule_view v, const stage_table& table) {
    return 2 * static_cast<std::size_t>(table.S * static_cast<std::uint32_t>(v.shape.m));
  }

  /// Runs the lists of `v` under `sem`: every rank until it finishes, halts or parks for
  /// good.
  constexpr void run(schedule_view v, send_semantics sem, const stage_table& table) {
    const std::uint32_t uS = table.S, um = static_cast<std::uint32_t>(v.shape.m), none = table.none, keys = uS * um;
    const std::uint32_t *off = v.offsets.data(), *link = table.channel.data();
    const op* ops = v.ops.data();
    // Per-op values outside the loops, assigned in one expression (core/engine.hpp).
    std::uint32_t bits = 0, kind = 0, s = 0, j = 0, ed = 0, slot = 0, key = 0;
    constexpr std::uint8_t posted = 1, arrived = 2;
    std::uint8_t *state = state_b.data(), *computed = computed_b.data();
    std::uint32_t *parked = parked_b.data(), *pending = pending_b.data(), *pos = work.pos.data(),
                  *stack = work.stack.data();
    std::uint32_t top = work.top;  // the pop loop of rank_worklist (core/engine.hpp)
    const std::uint32_t at_recv = static_cast<std::uint32_t>(slots(v, table));
    const bool rendezvous = sem == send_semantics::rendezvous;
    while (top > 0) {
      const std::uint32_t r = stack[--top];
      std::uint32_t k = pos[r];
      for (const std::uint32_t end = off[r + 1]; k < end; ++k) {
        // `slot`: the message it sends, receives or consumes (ed != none); `key`: (s, j).
        bits = ops[k].bits, kind = bits >> 28, s = (bits >> 16) & 0xFFFu, j = bits & 0xFFFFu, ed = link[kind * uS + s],
        slot = ed * um + j, key = s * um + j;
        if (kind <= 3) {  // compute: its remote input must have arrived
          if (ed != none) {
            if ((state[slot] & arrived) == 0) break;  // halted (diagnosed after the run)
            --pending[ed];
          }
          if (kind != 3) computed[(kind == 0 ? 0 : keys) + key] = 1;
          continue;
        }
        if (kind == 4 || kind == 6) {                              // SEND: its data must exist; posting wakes the RECV
          if (computed[(kind == 4 ? 0 : keys) + key] == 0) break;  // halted (diagnosed after the run)
          if ((state[slot] & posted) == 0) {
            state[slot] |= posted;
            if (parked[at_recv + slot] != 0) stack[top++] = parked[at_recv + slot] - 1;
          }
          if (rendezvous && (state[slot] & arrived) == 0) {  // wait for the RECV
            parked[slot] = r + 1;
            break;
          }
          continue;
        }
        // RECV: under rendezvous the SEND waits at its rank's head, under buffered it ran.
        if ((state[slot] & posted) == 0) {
          parked[at_recv + slot] = r + 1;
          break;
        }
        state[slot] |= arrived;
        if (parked[slot] != 0) stack[top++] = parked[slot] - 1;
        parked[slot] = 0;
        ++pending[ed];
      }
      pos[r] = k;
    }
  }
};

/// Step 4 of validate_lowered(): runs the lists under `sem`, reports each stuck rank.
template <class Report>
constexpr void run_lowered(schedule_view v, send_semantics sem, const stage_table& table, Report&& report) {
  lowered_lists_run lists(v, table);
  lists.run(v, sem, table);
  diagnose_lowered(v, table, lists.work.pos.data(), lists.pending_b.data(), lists.computed_b.data(), report);
}

}  // namespace detail

namespace detail {
/// validate_lowered_ops(v, on_issue), counting the overlapped pairs in `*pairs` and the
/// activation copies in `*copy_ops` when given.
template <class OnIssue>
constexpr std::size_t validate_lowered_ops_counting(schedule_view v, OnIssue&& on_issue, std::size_t* pairs,
                                                    std::size_t* copy_ops = nullptr) {
  std::size_t count = 0;
  auto report = detail::counting_report(count, on_issue);
  if (fault broken{}; detail::structure_broken(v, broken)) {
    report(broken, -1, -1, op{}, op{});
    return count;
  }
  detail::check_lowered_ops(v, detail::stage_table(v.shape), report, pairs, copy_ops);
  return count;
}
}  // namespace detail

namespace detail {
/// Step 4 of validate_lowered() on lists without activation copies: the run under `sem`
/// (`pairs`: the overlapped pairs step 2 counted).
template <class Report>
constexpr void run_lowered_lists(schedule_view v, send_semantics sem, std::size_t pairs, Report&& report) {
  if (pairs == 0) {
    detail::run_lowered(v, sem, detail::stage_table(v.shape), report);
    return;
  }
  // With overlapped pairs the run reads each pair's word as its F (its B word runs right
  // after it, and nothing stands between them: step 2 checked that), so the per-op loop
  // pays nothing for pairs; a stuck op is then named as the lists hold it.
  const schedule plain = split_pairs(v);
  detail::run_lowered(plain.view(), sem, detail::stage_table(v.shape), [&](fault f, int r, int step, op at, op needs) {
    report(f, r, step, step >= 0 ? v.ops[v.offsets[static_cast<std::size_t>(r)] + static_cast<std::size_t>(step)] : at,
           needs);
  });
}

/// Lowered lists `v` without their activation copies (SEND_ACT, RECV_ACT), and for each
/// op kept its index in `v` (`position`). Linear.
struct without_moves {
  schedule lists;
  buffer<std::uint32_t> position;

  constexpr explicit without_moves(schedule_view v) : lists(v.shape, count(v)), position(lists.size()) {
    std::size_t w = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(v.shape.P); ++r) {
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
        if (!is_move(v.ops[k].kind())) position[w] = k, lists.ops()[w++] = v.ops[k];
      }
      lists.offsets()[r + 1] = static_cast<std::uint32_t>(w);
    }
  }
  static constexpr std::size_t count(schedule_view v) {
    std::size_t n = 0;
    for (const op o : v.ops) n += is_move(o.kind()) ? 0 : 1;
    return n;
  }
};
}  // namespace detail

/// validate_lowered()'s checks of the ops themselves, without running the lists (its
/// steps 1 to 3: shape and offsets, the compute part, each transfer op): what execute()
/// requires. Calls `on_issue(validation_issue)` per problem; returns their number.
template <class OnIssue>
constexpr std::size_t validate_lowered_ops(schedule_view v, OnIssue&& on_issue) {
  return detail::validate_lowered_ops_counting(v, on_issue, nullptr);
}

/// Validates lowered schedule `v` (compute and transfer ops, as lower() makes or a
/// framework writes) under send semantics `sem`, calling `on_issue(validation_issue)`
/// for each problem, in this order, and returns their number:
/// 1. the shape and the offsets (bad_shape, bad_offsets; then it stops);
/// 2. the compute ops, exactly as validate() checks the compute part (steps count
///    positions in the lowered lists);
/// 3. each transfer op in rank order: out_of_shape (stage >= P*V or micro-batch >= m),
///    no_partner (SEND_F or RECV_B on the last stage, RECV_F or SEND_B on stage 0),
///    wrong_rank (its stage lives elsewhere), local_transfer (both stages on one
///    rank: no message is needed), duplicate; then missing (a message that crosses ranks
///    without its SEND or its RECV; rank = owner, step = -1); then the activation
///    copies SEND_ACT / RECV_ACT (check_moves(): out_of_shape, duplicate, two_hosts,
///    missing, out_of_order). Any issue so far stops it;
/// 4. a run of the lists under `sem` (the copies left out: they run on copy channels of
///    their own, whose order execute() runs), one issue per rank that does not finish, naming
///    the first op it cannot run: first, in rank order, the ranks halted by a fault of
///    their own: send_before_compute (`needs` = the producing op), not_received
///    (`needs` = the RECV that should precede it), wrong_microbatch (the same, while a
///    message of another micro-batch on that edge was received and not consumed: a
///    runtime matching messages by order rather than by tag would feed it that one;
///    `needs` = its own RECV); then, in rank order, deadlock (a
///    SEND or RECV whose partner never comes; `needs` = that partner).
/// Never hangs: the run is a worklist over ranks. Time and memory linear in the number
/// of ops plus P*V*m (its tables are indexed by (stage, micro-batch)).
template <class OnIssue>
constexpr std::size_t validate_lowered(schedule_view v, send_semantics sem, OnIssue&& on_issue) {
  std::size_t pairs = 0, copies = 0;
  std::size_t count = detail::validate_lowered_ops_counting(v, on_issue, &pairs, &copies);
  if (count != 0) return count;
  auto report = detail::counting_report(count, on_issue);
  if (copies == 0) {
    detail::run_lowered_lists(v, sem, pairs, report);
    return count;
  }
  const detail::without_moves plain(v);  // the run without the copies, steps mapped back
  const schedule_view pv = plain.lists.view();
  detail::run_lowered_lists(pv, sem, pairs, [&](fault f, int r, int step, op at, op needs) {
    const std::size_t ur = static_cast<std::size_t>(r);
    report(f, r,
           step >= 0 ? static_cast<int>(plain.position[pv.offsets[ur] + static_cast<std::size_t>(step)] - v.offsets[ur])
                     : step,
           at, needs);
  });
  return count;
}

/// Validates lowered schedule `v` under `sem`; returns the number of issues and the
/// first one. `validate_lowered(v, sem).ok()` is the check to static_assert.
constexpr validation_result validate_lowered(schedule_view v, send_semantics sem) {
  validation_result result;
  validate_lowered(v, sem, [&result](const validation_issue& issue) {
    if (result.count++ == 0) result.first = issue;
  });
  return result;
}

/// Whether the transfers between every two ranks come in the same order on both: for
/// each pair of ranks (a, b), the k-th transfer in a's list whose peer is b and the k-th
/// in b's list whose peer is a belong to the same message. Runtimes that match messages
/// by order rather than by tag (NCCL's batched point-to-point calls) need this; lower()
/// guarantees it. Meant for a view that passes validate_lowered(); on any other view the
/// answer may be either, but a transfer without a partner stage or outside the shape
/// gives false, and nothing is read or written out of bounds. Time and memory linear in
/// the number of ops plus P*V*m (a table indexed by message).
constexpr bool peer_order_consistent(schedule_view v) {
  check_view(v);
  const pipeline_shape& shape = v.shape;
  const std::size_t slots = 2 * static_cast<std::size_t>(shape.stages()) * static_cast<std::size_t>(shape.m);
  detail::buffer<std::uint32_t> sender_index(slots), receiver_index(slots);
  detail::buffer<std::uint32_t> counter(static_cast<std::size_t>(shape.P));
  for (int r = 0; r < shape.P; ++r) {
    const std::span<const op> ops = v.rank(r);
    for (const op o : ops) {
      if (!is_transfer(o.kind())) continue;
      // A transfer without a partner stage, or outside the shape, has no order to keep.
      const int partner = (o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b) ? o.stage() + 1 : o.stage() - 1;
      if (o.stage() >= shape.stages() || partner < 0 || partner >= shape.stages() || o.microbatch() >= shape.m) {
        return false;
      }
      const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
      const std::uint32_t index = ++counter[static_cast<std::size_t>(peer_rank(shape, o))];
      (is_send(o.kind()) ? sender_index : receiver_index)[slot] = index;
    }
    for (const op o : ops) {  // every transfer of this rank passed the checks above
      if (is_transfer(o.kind())) counter[static_cast<std::size_t>(peer_rank(shape, o))] = 0;
    }
  }
  for (std::size_t slot = 0; slot < slots; ++slot) {
    if (sender_index[slot] != receiver_index[slot]) return false;
  }
  return true;
}

/// Whether every rank receives each peer's messages in the order that peer sends them:
/// for each directed pair of ranks (a, b), the k-th SEND in a's list whose peer is b and
/// the k-th RECV in b's list whose peer is a belong to the same message. Runtimes that
/// post receives and pair each direction's messages in posting order, without tags, need
/// this: PyTorch's `_PipelineScheduleRuntime` (an irecv per RECV) over gloo or NCCL.
/// lower() guarantees it for `posted`; peer_order_consistent() (one order for both
/// directions together) implies it. Meant for a view that passes validate_lowered(); on
/// any other view the answer may be either, but a transfer without a partner stage or
/// outside the shape gives false, and nothing is read or written out of bounds. Time and
/// memory linear in the number of ops plus P*V*m.
constexpr bool directed_order_consistent(schedule_view v) {
  check_view(v);
  const pipeline_shape& shape = v.shape;
  const std::size_t slots = 2 * static_cast<std::size_t>(shape.stages()) * static_cast<std::size_t>(shape.m);
  detail::buffer<std::uint32_t> sender_index(slots), receiver_index(slots);
  // Per peer: this rank's sends to it (even entries) and receives from it (odd ones).
  detail::buffer<std::uint32_t> counter(2 * static_cast<std::size_t>(shape.P));
  for (int r = 0; r < shape.P; ++r) {
    const std::span<const op> ops = v.rank(r);
    for (const op o : ops) {
      if (!is_transfer(o.kind())) continue;
      const int partner = (o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b) ? o.stage() + 1 : o.stage() - 1;
      if (o.stage() >= shape.stages() || partner < 0 || partner >= shape.stages() || o.microbatch() >= shape.m) {
        return false;
      }
      const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
      const std::size_t side = 2 * static_cast<std::size_t>(peer_rank(shape, o)) + (is_send(o.kind()) ? 0 : 1);
      (is_send(o.kind()) ? sender_index : receiver_index)[slot] = ++counter[side];
    }
    for (const op o : ops) {  // every transfer of this rank passed the checks above
      if (is_transfer(o.kind()))
        counter[2 * static_cast<std::size_t>(peer_rank(shape, o)) + (is_send(o.kind()) ? 0 : 1)] = 0;
    }
  }
  for (std::size_t slot = 0; slot < slots; ++slot) {
    if (sender_index[slot] != receiver_index[slot]) return false;
  }
  return true;
}

/// Whether, under stream model `model` (is_stream_model()), every stream pairs its
/// messages in one order on both of its ends: for each rank a, each of its streams
/// (stream_index()) and each peer b, the k-th transfer of that stream with peer b and
/// the k-th transfer with peer a on b's stream that carries the same messages belong to
/// one message. NCCL pairs a communicator's point-to-point operations in issue order,
/// without tags; the stream models pair by message (docs/spec.md §7), so lists that
/// hold this mean the same on both. lower() guarantees it for the stream models. Meant
/// for a view that passes validate_lowered(); a transfer outside the shape gives false.
/// Errors: check_view()'s, `ctpipe: stream_order_consistent() takes a stream model`.
/// Time and memory linear in the number of ops plus P*V*m.
constexpr bool stream_order_consistent(schedule_view v, runtime_model model) {
  check_view(v);
  detail::require(is_stream_model(model), "ctpipe: stream_order_consistent() takes a stream model");
  const pipeline_shape& shape = v.shape;
  const std::size_t slots = 2 * static_cast<std::size_t>(shape.stages()) * static_cast<std::size_t>(shape.m);
  detail::buffer<std::uint32_t> sender_index(slots), receiver_index(slots);
  // Per stream and neighbour (rank + 1, or rank - 1): the transfers seen so far.
  detail::buffer<std::uint32_t> counter(2 * streams_per_rank * static_cast<std::size_t>(shape.P));
  for (int r = 0; r < shape.P; ++r) {
    for (const op o : v.rank(r)) {
      if (!is_transfer(o.kind())) continue;
      const int partner = (o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b) ? o.stage() + 1 : o.stage() - 1;
      if (o.stage() >= shape.stages() || partner < 0 || partner >= shape.stages() || o.microbatch() >= shape.m) {
        return false;
      }
      const int peer = peer_rank(shape, o);
      const bool send = is_send(o.kind());
      const int stream =
          stream_index(model, r, peer, send, o.kind() == op_kind::send_f || o.kind() == op_kind::recv_f, shape.P);
      const std::size_t side = 2 * static_cast<std::size_t>(stream) + (peer == (r + 1) % shape.P ? 0 : 1);
      (send ? sender_index : receiver_index)[static_cast<std::size_t>(message_tag(shape, o))] = ++counter[side];
    }
  }
  for (std::size_t slot = 0; slot < slots; ++slot) {
    if (sender_index[slot] != receiver_index[slot]) return false;
  }
  return true;
}

}  // namespace ctpipe
