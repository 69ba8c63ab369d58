// ctpipe/analysis/communication.hpp: point-to-point message counts (docs/spec.md §3).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

/// Point-to-point transfers of the whole step: one per F whose next stage lives on
/// another rank (its activation), one per B or I whose previous stage lives on another
/// rank (its input gradient). Neighbouring stages on one rank (the V-shape turn) send
/// nothing; W sends nothing; ops outside the shape count nothing (validate() reports
/// them). Linear in the number of ops. Raises the check_view() messages.
constexpr std::size_t messages(schedule_view v) {
  check_view(v);
  const int S = v.shape.stages();
  // sends[kind * S + s]: 1 when an op of that kind on stage s sends a message; room for
  // all 16 kind codes, so a transfer or unused code reads a 0.
  detail::buffer<std::uint8_t> sends(16 * static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) {
    const bool up = s + 1 < S && v.shape.rank_of(s + 1) != v.shape.rank_of(s);
    const bool down = s > 0 && v.shape.rank_of(s - 1) != v.shape.rank_of(s);
    sends[static_cast<std::size_t>(s)] = up;                                             // F
    sends[static_cast<std::size_t>(S + s)] = sends[static_cast<std::size_t>(2 * S + s)] = down;  // B, I
  }
  const std::uint8_t* table = sends.data();
  const op* ops = v.ops.data();
  std::size_t count = 0;
  for (std::size_t k = 0, n = v.size(); k < n; ++k) {
    const std::uint32_t s = (ops[k].bits >> 16) & 0xFFFu;  // a stage outside the shape sends nothing
    count += s < static_cast<std::uint32_t>(S) ? table[(ops[k].bits >> 28) * static_cast<std::uint32_t>(S) + s] : 0;
  }
  return count;
}

/// Transfers from one rank to another over the whole step, by direction.
struct message_count {
  std::size_t activations = 0;  ///< forward direction: an F's output to the next stage
  std::size_t gradients = 0;    ///< backward direction: a B/I's input gradient to the previous stage
  friend constexpr bool operator==(const message_count&, const message_count&) = default;
};

/// Messages sent by rank `from` to rank `to` (0 <= from, to < P), split into activations
/// and gradients. On the loop placement each micro-batch crosses from rank r to r+1
/// `V` times forward (r < P-1) and the wrap from P-1 to 0 `V-1` times; gradients go the
/// other way as often. Keyed by direction, never by peer alone: with P = 2 both of a
/// rank's neighbours are the same rank. Linear in the number of ops; ops outside the
/// shape count nothing. Raises the check_view() messages.
constexpr message_count messages_between(schedule_view v, int from, int to) {
  check_view(v);
  const int S = v.shape.stages();
  message_count count;
  for (const op o : v.ops) {
    const int s = o.stage();
    if (s >= S) continue;
    if (v.shape.rank_of(s) != from) continue;
    if (o.kind() == op_kind::F && s + 1 < S && v.shape.rank_of(s + 1) == to && to != from) ++count.activations;
    if ((o.kind() == op_kind::B || o.kind() == op_kind::I) && s > 0 && v.shape.rank_of(s - 1) == to && to != from) {
      ++count.gradients;
    }
  }
  return count;
}

}  // namespace ctpipe
