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
enum class op_kind : std::uint8_t { F, B, I, W, send_f, recv_f, send_b, recv_b };

/// Number of op kinds (the encoding has room for 16).
inline constexpr int op_kind_count = 8;

/// PyTorch's action name of a kind: `F`, `B`, `I`, `W`, `SEND_F`, `RECV_F`, `SEND_B`,
/// `RECV_B`.
/// An op decoded from raw bits may carry an unused kind (8..15): its name is `?`.
constexpr const char* kind_name(op_kind k) {
  constexpr const char* names[] = {"F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B"};
  return static_cast<int>(k) < op_kind_count ? names[static_cast<int>(k)] : "?";
}

/// True for the compute kinds F, B, I, W.
constexpr bool is_compute(op_kind k) { return k <= op_kind::W; }

/// One operation: (kind, stage, micro-batch), packed into 4 bytes.
///
/// Layout of `bits`: kind in bits 28..31, stage in bits 16..27 (so stage < 4096),
/// micro-batch in bits 0..15 (so micro-batch < 65536). The limits match check_shape().
/// A structural type; `op{}` is `F` of micro-batch 0 on stage 0.
/// Errors: a stage or micro-batch outside those limits, or a kind that is not one of the
/// eight, raises `ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind
/// among the 8 kinds`.
struct op {
  std::uint32_t bits = 0;  ///< packed kind, stage, micro-batch (see above)

  constexpr op() = default;
  constexpr op(op_kind k, int stage, int microbatch)
      : bits(pack(k, stage, microbatch)) {}

  constexpr op_kind kind() const { return static_cast<op_kind>(bits >> 28); }
  constexpr int stage() const { return static_cast<int>((bits >> 16) & 0xFFFu); }
  constexpr int microbatch() const { return static_cast<int>(bits & 0xFFFFu); }

  friend constexpr bool operator==(op, op) = default;

 private:
  static constexpr std::uint32_t pack(op_kind k, int stage, int microbatch) {
    detail::require(stage >= 0 && stage < max_stages && microbatch >= 0 && microbatch < max_microbatches &&
                        static_cast<int>(k) < op_kind_count,
                    "ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind among the 8 kinds");
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
