// ctpipe/lower/transfer.hpp: the point-to-point transfer ops of a lowered schedule and
// the message each one belongs to.
//
// Conventions (PyTorch's `_add_send_recv`): an op's stage is the stage that executes it.
// The activation of F(s, j) travels as SEND_F(s, j) on rank_of(s) and RECV_F(s+1, j) on
// rank_of(s+1); the input gradient of B/I(s, j) travels as SEND_B(s, j) on rank_of(s) and
// RECV_B(s-1, j) on rank_of(s-1). A message is named by (stage edge, micro-batch,
// direction), never by peer alone: with P = 2 and V = 2 a rank's next and previous
// stages live on the same peer rank.
#pragma once

#include <cstdint>  // std::int64_t

#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// True for SEND_F, RECV_F, SEND_B, RECV_B.
constexpr bool is_transfer(op_kind k) { return k >= op_kind::send_f && k <= op_kind::recv_b; }

/// True for SEND_F and SEND_B.
constexpr bool is_send(op_kind k) { return k == op_kind::send_f || k == op_kind::send_b; }

/// True for SEND_ACT and RECV_ACT, the activation copies of rebalancing (docs/spec.md
/// §8.3): not transfers of the pipeline's messages (is_transfer() is false for them).
constexpr bool is_move(op_kind k) { return k == op_kind::send_act || k == op_kind::recv_act; }

/// One message of a training step.
/// - `edge`: the lower stage of the two it connects (edge e joins stages e and e+1);
/// - `microbatch`: its micro-batch;
/// - `forward`: true for an activation (stage e to e+1), false for a gradient (e+1 to e).
struct message_key {
  int edge = 0;
  int microbatch = 0;
  bool forward = true;
  friend constexpr bool operator==(const message_key&, const message_key&) = default;
};

/// The message a transfer op sends or receives: SEND_F(s) and RECV_F(s+1) are edge s
/// forward; SEND_B(s+1) and RECV_B(s) are edge s backward. `o` must be a transfer op
/// (is_transfer); for a compute op the result is meaningless. O(1).
constexpr message_key message_of(op o) {
  const op_kind k = o.kind();
  const bool forward = k == op_kind::send_f || k == op_kind::recv_f;
  const int edge = (k == op_kind::recv_f || k == op_kind::send_b) ? o.stage() - 1 : o.stage();
  return {edge, o.microbatch(), forward};
}

/// The op on the other side of `o`'s message: SEND_F(s, j) <-> RECV_F(s+1, j) and
/// SEND_B(s, j) <-> RECV_B(s-1, j). `o` must be a transfer op whose partner stage exists
/// (validate_lowered() reports the others as out of shape); a partner stage of -1 or
/// 4096 raises op's `ctpipe: op stage must lie in [0, 4096), ...`. O(1).
constexpr op matching_transfer(op o) {
  switch (o.kind()) {
    case op_kind::send_f: return op{op_kind::recv_f, o.stage() + 1, o.microbatch()};
    case op_kind::recv_f: return op{op_kind::send_f, o.stage() - 1, o.microbatch()};
    case op_kind::send_b: return op{op_kind::recv_b, o.stage() - 1, o.microbatch()};
    default: return op{op_kind::send_b, o.stage() + 1, o.microbatch()};
  }
}

/// The rank on the other side of transfer `o` in a pipeline of shape `shape`: the owner
/// of matching_transfer(o)'s stage. That stage must lie in [0, P*V) (else the result is
/// meaningless, possibly negative). O(1).
constexpr int peer_rank(const pipeline_shape& shape, op o) {
  const op_kind k = o.kind();
  const int s = o.stage();
  return shape.rank_of(k == op_kind::send_f || k == op_kind::recv_b ? s + 1 : s - 1);
}

/// A number that names `o`'s message uniquely within one training step, the same on the
/// sending and the receiving rank, in [0, 2 * (P*V - 1) * m): `2 * (edge * m + j)` for an
/// activation, plus 1 for a gradient. Usable as an MPI tag (MPI guarantees tags up to
/// 32767; larger shapes need MPI_TAG_UB or a per-edge communicator). O(1).
constexpr std::int64_t message_tag(const pipeline_shape& shape, op o) {
  const message_key key = message_of(o);
  return 2 * (static_cast<std::int64_t>(key.edge) * shape.m + key.microbatch) + (key.forward ? 0 : 1);
}

}  // namespace ctpipe
