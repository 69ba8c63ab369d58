// ctpipe/analysis/communication.hpp: point-to-point message counts (docs/spec.md §3).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "ctpipe/core/engine.hpp"
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
  // sends[code * S + s]: 1 when an op of that code on stage s sends a message; a row for
  // each of the 16 codes, so a transfer or unused code reads a 0.
  const detail::stage_table stages(v.shape);
  const std::uint32_t* table = stages.sends.data();
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
  const detail::stage_table stages(v.shape);
  const std::uint32_t S = stages.S;
  message_count count;
  for (const op o : v.ops) {
    const std::uint32_t code = o.bits >> detail::kind_shift, s = (o.bits >> detail::stage_shift) & detail::stage_mask;
    // An op that sends (stage_table::sends: F up, B/I down, across ranks) from `from` to `to`.
    if (s >= S || stages.sends[code * S + s] == 0) continue;
    if (stages.owner[s] != static_cast<std::uint32_t>(from) ||
        stages.peer[code * S + s] != static_cast<std::uint32_t>(to))
      continue;
    ++(code == detail::code_f ? count.activations : count.gradients);
  }
  return count;
}

}  // namespace ctpipe
