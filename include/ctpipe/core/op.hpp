// ctpipe/core/op.hpp: operation kinds and the compact op encoding.
#pragma once

#include <cstdint>  // std::uint32_t, std::uint8_t

#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// What an op does (docs/spec.md §2; letters as in the Zero Bubble paper and PyTorch).
/// - `F` forward; `B` full backward; `I` input-gradient backward (on the critical path);
///   `W` weight-gradient backward (nothing waits for it).
/// - `send_f`, `recv_f`, `send_b`, `recv_b`: point-to-point transfers of an activation
///   (forward direction) or a gradient (backward direction), PyTorch's `SEND_F`,
///   `RECV_F`, `SEND_B`, `RECV_B`. Reserved for lowered schedules: the generators and
///   analyses of compute schedules reject them.
/// - `overlap_f_b`: an overlapped forward-and-backward pair (PyTorch's `OVERLAP_F_B`,
///   DeepSeek's `_forward_backward_chunk`). It takes two words of a rank's list: this
///   one, which carries the pair's forward (its stage and micro-batch), and right after
///   it on the same rank the pair's backward, a plain `B` word. The two halves are one
///   op: under the fused rule (the default, docs/spec.md §2.1) it starts when the
///   inputs of both halves are there and lasts `t_fb` (costs::fb). For every count
///   (in-flight activations, messages) the pair word is its forward.
/// - `send_act`, `recv_act`: a copy of the saved activation of (stage, micro-batch)
///   between ranks on copy channels apart from compute (activation rebalancing,
///   docs/spec.md §8.3; ctpipe's own names, `SEND_ACT` and `RECV_ACT`). On the stage's
///   own rank (its home) SEND_ACT offloads the activation and RECV_ACT fetches it back; on
///   the host rank RECV_ACT takes it in and SEND_ACT returns it. Reserved for lowered
///   schedules, like the transfers.
enum class op_kind : std::uint8_t { F, B, I, W, send_f, recv_f, send_b, recv_b, overlap_f_b, send_act, recv_act };

/// How an overlapped F&B pair (op_kind::overlap_f_b and its B word) runs
/// (docs/spec.md §2.1).
/// - `fused` (the default; DeepSeek's runtime receives both inputs, then computes): one op
///   that starts when the inputs of both halves are there and lasts t_fb.
/// - `split`: its two halves are separate ops, the F then the B, each at its own cost
///   (PyTorch's runtime runs an OVERLAP_F_B's sub-actions one after the other); see
///   split_pairs() and schedule_spec::pairs.
enum class pair_model : std::uint8_t { fused, split };

/// Number of op kinds (the encoding has room for 16).
inline constexpr int op_kind_count = 11;

/// The action name of a kind: PyTorch's `F`, `B`, `I`, `W`, `SEND_F`, `RECV_F`,
/// `SEND_B`, `RECV_B`, `OVERLAP_F_B`, then ctpipe's `SEND_ACT`, `RECV_ACT`.
/// An op decoded from raw bits may carry an unused kind (11..15): its name is `?`.
constexpr const char* kind_name(op_kind k) {
  constexpr const char* names[] = {"F",      "B",      "I",           "W",        "SEND_F",  "RECV_F",
                                   "SEND_B", "RECV_B", "OVERLAP_F_B", "SEND_ACT", "RECV_ACT"};
  return static_cast<int>(k) < op_kind_count ? names[static_cast<int>(k)] : "?";
}

/// True for the compute kinds F, B, I, W and an overlapped pair's word.
constexpr bool is_compute(op_kind k) { return k <= op_kind::W || k == op_kind::overlap_f_b; }

/// One operation: (kind, stage, micro-batch), packed into 4 bytes.
///
/// Layout of `bits`: kind in bits 28..31, stage in bits 16..27 (so stage < 4096),
/// micro-batch in bits 0..15 (so micro-batch < 65536). The limits match check_shape().
/// A structural type; `op{}` is `F` of micro-batch 0 on stage 0.
/// Errors: a stage or micro-batch outside those limits, or a kind that is not one of the
/// eleven, raises `ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind
/// among the 11 kinds`.
struct op {
  std::uint32_t bits = 0;  ///< packed kind, stage, micro-batch (see above)

  constexpr op() = default;
  constexpr op(op_kind k, int stage, int microbatch) : bits(pack(k, stage, microbatch)) {}

  constexpr op_kind kind() const { return static_cast<op_kind>(bits >> 28); }
  constexpr int stage() const { return static_cast<int>((bits >> 16) & 0xFFFu); }
  constexpr int microbatch() const { return static_cast<int>(bits & 0xFFFFu); }

  friend constexpr bool operator==(op, op) = default;

 private:
  static constexpr std::uint32_t pack(op_kind k, int stage, int microbatch) {
    detail::require(stage >= 0 && stage < max_stages && microbatch >= 0 && microbatch < max_microbatches &&
                        static_cast<int>(k) < op_kind_count,
                    "ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind among the 11 kinds");
    return (static_cast<std::uint32_t>(k) << 28) | (static_cast<std::uint32_t>(stage) << 16) |
           static_cast<std::uint32_t>(microbatch);
  }
};

static_assert(sizeof(op) == 4, "ctpipe: an op is 4 bytes");

namespace detail {
/// An op built without the range check, for generators whose shape passed
/// check_shape() (stage < 4096, micro-batch < 65536 hold by construction): one
/// expression, so cheap in a constant evaluation.
constexpr op make_op(op_kind k, int stage, int microbatch) {
  op o;
  o.bits = (static_cast<std::uint32_t>(k) << 28) | (static_cast<std::uint32_t>(stage) << 16) |
           static_cast<std::uint32_t>(microbatch);
  return o;
}
}  // namespace detail

}  // namespace ctpipe
