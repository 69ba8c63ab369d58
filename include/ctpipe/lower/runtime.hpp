// ctpipe/lower/runtime.hpp: how a training runtime runs the SEND and RECV ops of a
// lowered schedule (docs/spec.md §7). execute() times a lowered schedule under one of
// these models; lower() orders the lists for one.
#pragma once

#include <cstdint>      // std::uint8_t
#include <string_view>  // model names

#include "ctpipe/core/error.hpp"

namespace ctpipe {

/// A runtime model: when a transfer op returns and when a compute op may start. Every
/// model runs each rank's lowered list strictly in order, one op at a time; `t_c` is the
/// latency of one message (docs/spec.md §7 has the exact rules and their sources).
/// - `blocking`: a SEND returns at once (buffered); its message is at the receiver at
///   post time + t_c; a RECV returns when its message is there. MPI_Bsend + MPI_Recv.
/// - `rendezvous`: a SEND and its RECV both complete at max(their post times) + t_c.
///   MPI_Ssend + MPI_Recv.
/// - `posted`: SEND and RECV post and return at once; a compute op waits until each of
///   its inputs from another rank has arrived (post time of the SEND + t_c), and the RECV
///   of that input must come earlier in its list. PyTorch's `_PipelineScheduleRuntime`
///   (irecv posted, the wait at the consumer).
/// - `batched`: each maximal run of consecutive transfer ops of a list is one group,
///   posted together; the rank goes on when every transfer of the group has completed, a
///   transfer at max(the two sides' group post times) + t_c. Partners are paired per
///   ordered rank pair, first in first out, without tags: NCCL's `batch_isend_irecv` as
///   Megatron-LM's p2p layer and DeepSeek's DualPipe use it.
enum class runtime_model : std::uint8_t { blocking, rendezvous, posted, batched };

/// Every runtime model, in the order the tool lists them.
inline constexpr runtime_model all_runtime_models[] = {runtime_model::blocking, runtime_model::rendezvous,
                                                       runtime_model::posted, runtime_model::batched};

/// `blocking`, `rendezvous`, `posted` or `batched`, as the tool and the JSON spell it;
/// `?` for a value cast from another number.
constexpr const char* runtime_model_name(runtime_model m) {
  constexpr const char* names[] = {"blocking", "rendezvous", "posted", "batched"};
  return static_cast<int>(m) < 4 ? names[static_cast<int>(m)] : "?";
}

/// The gate of lower() and execute() on a model: raises `ctpipe: unknown runtime model`
/// for a value cast from another number.
constexpr void check_runtime_model(runtime_model m) {
  detail::require(static_cast<int>(m) < 4, "ctpipe: unknown runtime model");
}

/// The model called `name`, or false when there is none (then `out` is unchanged).
constexpr bool runtime_model_from_name(std::string_view name, runtime_model& out) {
  for (runtime_model m : all_runtime_models) {
    if (name == runtime_model_name(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

}  // namespace ctpipe
