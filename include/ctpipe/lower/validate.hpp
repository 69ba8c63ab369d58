// ctpipe/lower/validate.hpp: does a lowered schedule (compute ops plus SEND/RECV) run to
// completion, under a given send semantics, without hanging?
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::uint8_t

#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/buffer.hpp"
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

/// Validates lowered schedule `v` (compute and transfer ops, as lower() makes or a
/// framework writes) under send semantics `sem`, calling `on_issue(validation_issue)`
/// for each problem, in this order, and returns their number:
/// 1. the shape and the offsets (bad_shape, bad_offsets; then it stops);
/// 2. the compute ops, exactly as validate() checks the compute part (steps count
///    positions in the lowered lists);
/// 3. each transfer op in rank order: out_of_shape (no partner stage, or micro-batch
///    >= m), wrong_rank (its stage lives elsewhere), local_transfer (both stages on one
///    rank: no message is needed), duplicate; then missing (a message that crosses ranks
///    without its SEND or its RECV; rank = owner, step = -1). Any issue so far stops it;
/// 4. a run of the lists under `sem`, one issue per rank that does not finish, naming
///    the first op it cannot run: first, in rank order, the ranks halted by a fault of
///    their own: send_before_compute (`needs` = the producing op), not_received
///    (`needs` = the RECV that should precede it), wrong_microbatch (`needs` = the RECV
///    of the other micro-batch waiting on that edge); then, in rank order, deadlock (a
///    SEND or RECV whose partner never comes; `needs` = that partner).
/// Never hangs: the run is a worklist over ranks, linear in the number of ops.
template <class OnIssue>
constexpr std::size_t validate_lowered(schedule_view v, send_semantics sem, OnIssue&& on_issue) {
  std::size_t count = 0;
  auto report = [&](fault f, int r, int step, op at, op needs) {
    ++count;
    on_issue(validation_issue{f, r, step, at, needs});
  };
  if (shape_error(v.shape) != nullptr) {
    report(fault::bad_shape, -1, -1, op{}, op{});
    return count;
  }
  if (!detail::layout_ok(v)) {
    report(fault::bad_offsets, -1, -1, op{}, op{});
    return count;
  }
  const pipeline_shape& shape = v.shape;
  const int P = shape.P;
  const int S = shape.stages();
  const int m = shape.m;
  const std::uint32_t* off = v.offsets.data();

  // 2. The compute part, its positions mapped back to the lowered lists.
  const schedule compute = compute_part(v);
  detail::buffer<std::uint32_t> position(compute.size());
  for (std::size_t k = 0, c = 0; k < v.size(); ++k) {
    if (!is_transfer(v.ops[k].kind())) position[c++] = static_cast<std::uint32_t>(k);
  }
  const schedule_view cv = compute.view();
  bool split = false;
  for (const op o : cv.ops) split = split || o.kind() == op_kind::I || o.kind() == op_kind::W;
  validate(cv, [&](validation_issue issue) {
    if (issue.step >= 0) {
      const std::size_t c = cv.offsets[static_cast<std::size_t>(issue.rank)] + static_cast<std::size_t>(issue.step);
      issue.step = static_cast<int>(position[c] - off[issue.rank]);
    }
    report(issue.what, issue.rank, issue.step, issue.at, issue.needs);
  });

  // 3. Transfers. Message slot of (edge e, micro-batch j, direction d): 2 * (e*m + j) + d.
  const std::size_t slots = 2 * static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  detail::buffer<std::uint8_t> seen(4 * slots);  // [kind - send_f][slot]
  for (int r = 0; r < P; ++r) {
    for (std::uint32_t k = off[r]; k < off[r + 1]; ++k) {
      const op o = v.ops[k];
      if (!is_transfer(o.kind())) continue;
      const int step = static_cast<int>(k - off[r]);
      const int s = o.stage();
      const int partner = (o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b) ? s + 1 : s - 1;
      if (s >= S || partner < 0 || partner >= S || o.microbatch() >= m) {
        report(fault::out_of_shape, r, step, o, o);
        continue;
      }
      if (shape.rank_of(s) != r) report(fault::wrong_rank, r, step, o, o);
      if (shape.rank_of(partner) == shape.rank_of(s)) {
        report(fault::local_transfer, r, step, o, o);
        continue;
      }
      const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
      std::uint8_t& mark = seen[static_cast<std::size_t>(static_cast<int>(o.kind()) - static_cast<int>(op_kind::send_f)) * slots + slot];
      if (mark != 0) report(fault::duplicate, r, step, o, o);
      mark = 1;
    }
  }
  for (int e = 0; e + 1 < S; ++e) {
    if (shape.rank_of(e) == shape.rank_of(e + 1)) continue;
    for (int j = 0; j < m; ++j) {
      const op needed[4] = {op{op_kind::send_f, e, j}, op{op_kind::recv_f, e + 1, j}, op{op_kind::send_b, e + 1, j},
                            op{op_kind::recv_b, e, j}};
      for (const op o : needed) {
        const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
        if (seen[static_cast<std::size_t>(static_cast<int>(o.kind()) - static_cast<int>(op_kind::send_f)) * slots + slot] == 0) {
          report(fault::missing, shape.rank_of(o.stage()), -1, o, o);
        }
      }
    }
  }
  if (count != 0) return count;

  // 4. Run the lists. Per message slot: who is parked on it (rank + 1) at its SEND or
  // its RECV, and its state. Per (edge, direction): received messages not yet consumed
  // and the micro-batch of the last one.
  constexpr std::uint8_t posted = 1, arrived = 2;  // state bits: SEND reached; RECV done
  detail::buffer<std::uint8_t> state(slots);
  detail::buffer<std::uint32_t> parked_send(slots), parked_recv(slots);
  detail::buffer<std::uint32_t> pending(2 * static_cast<std::size_t>(S)), last_received(2 * static_cast<std::size_t>(S));
  const std::size_t keys = static_cast<std::size_t>(S) * static_cast<std::size_t>(m);
  detail::buffer<std::uint8_t> computed(2 * keys);  // [F | B or I][s*m + j]
  detail::buffer<std::uint32_t> pos(static_cast<std::size_t>(P)), stack(static_cast<std::size_t>(P));
  detail::buffer<validation_issue> halted(static_cast<std::size_t>(P));
  detail::buffer<std::uint8_t> is_halted(static_cast<std::size_t>(P));
  std::uint32_t top = 0;
  for (int r = P - 1; r >= 0; --r) {
    pos[static_cast<std::size_t>(r)] = off[r];
    stack[top++] = static_cast<std::uint32_t>(r);
  }
  const bool rendezvous = sem == send_semantics::rendezvous;
  auto wake = [&](std::uint32_t& parked) {
    if (parked != 0) stack[top++] = parked - 1;
    parked = 0;
  };
  while (top > 0) {
    const int r = static_cast<int>(stack[--top]);
    std::uint32_t k = pos[static_cast<std::size_t>(r)];
    const std::uint32_t end = off[r + 1];
    for (; k < end; ++k) {
      const op o = v.ops[k];
      const int s = o.stage(), j = o.microbatch();
      const std::size_t key = static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j);
      const int step = static_cast<int>(k - off[r]);
      if (!is_transfer(o.kind())) {
        // Input from another rank: F needs edge s-1 forward, B/I edge s backward.
        const bool f = o.kind() == op_kind::F;
        const bool remote = f ? (s > 0 && shape.rank_of(s - 1) != r)
                              : (o.kind() != op_kind::W && s + 1 < S && shape.rank_of(s + 1) != r);
        if (remote) {
          const op recv{f ? op_kind::recv_f : op_kind::recv_b, s, j};
          const std::size_t slot = static_cast<std::size_t>(message_tag(shape, recv));
          const std::size_t edge = 2 * static_cast<std::size_t>(f ? s - 1 : s) + (f ? 0 : 1);
          if ((state[slot] & arrived) == 0) {
            halted[static_cast<std::size_t>(r)] =
                pending[edge] != 0
                    ? validation_issue{fault::wrong_microbatch, r, step, o,
                                       op{recv.kind(), s, static_cast<int>(last_received[edge])}}
                    : validation_issue{fault::not_received, r, step, o, recv};
            is_halted[static_cast<std::size_t>(r)] = 1;
            break;
          }
          --pending[edge];
        }
        if (o.kind() != op_kind::W) computed[(f ? 0 : keys) + key] = 1;
        continue;
      }
      const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
      if (is_send(o.kind())) {
        if (computed[(o.kind() == op_kind::send_f ? 0 : keys) + key] == 0) {
          const op_kind producer = o.kind() == op_kind::send_f ? op_kind::F : split ? op_kind::I : op_kind::B;
          halted[static_cast<std::size_t>(r)] = validation_issue{fault::send_before_compute, r, step, o, op{producer, s, j}};
          is_halted[static_cast<std::size_t>(r)] = 1;
          break;
        }
        if ((state[slot] & posted) == 0) {
          state[slot] |= posted;
          wake(parked_recv[slot]);
        }
        if (rendezvous && (state[slot] & arrived) == 0) {  // wait for the RECV
          parked_send[slot] = static_cast<std::uint32_t>(r) + 1;
          break;
        }
        continue;
      }
      // A RECV: under rendezvous, the SEND must be waiting at its rank's head; under
      // buffered, it must have run.
      if ((state[slot] & posted) == 0) {
        parked_recv[slot] = static_cast<std::uint32_t>(r) + 1;
        break;
      }
      state[slot] |= arrived;
      wake(parked_send[slot]);
      const message_key msg = message_of(o);
      const std::size_t edge = 2 * static_cast<std::size_t>(msg.edge) + (msg.forward ? 0 : 1);
      ++pending[edge];
      last_received[edge] = static_cast<std::uint32_t>(j);
    }
    pos[static_cast<std::size_t>(r)] = k;
  }
  // What is left is stuck: first the ranks halted by a fault of their own (the causes),
  // then the ranks waiting at a SEND or RECV whose partner never comes.
  for (int r = 0; r < P; ++r) {
    if (is_halted[static_cast<std::size_t>(r)] == 0) continue;
    const validation_issue& h = halted[static_cast<std::size_t>(r)];
    report(h.what, h.rank, h.step, h.at, h.needs);
  }
  for (int r = 0; r < P; ++r) {
    const std::uint32_t k = pos[static_cast<std::size_t>(r)];
    if (k == off[r + 1] || is_halted[static_cast<std::size_t>(r)] != 0) continue;
    const op o = v.ops[k];
    report(fault::deadlock, r, static_cast<int>(k - off[r]), o, matching_transfer(o));
  }
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
/// guarantees it. `v` must pass validate_lowered() (else the result is false or
/// meaningless). Linear in the number of ops plus P.
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
      const std::size_t slot = static_cast<std::size_t>(message_tag(shape, o));
      if (slot >= slots) return false;
      const std::uint32_t index = ++counter[static_cast<std::size_t>(peer_rank(shape, o))];
      (is_send(o.kind()) ? sender_index : receiver_index)[slot] = index;
    }
    for (const op o : ops) {
      if (is_transfer(o.kind())) counter[static_cast<std::size_t>(peer_rank(shape, o))] = 0;
    }
  }
  for (std::size_t slot = 0; slot < slots; ++slot) {
    if (sender_index[slot] != receiver_index[slot]) return false;
  }
  return true;
}

}  // namespace ctpipe
