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
/// - the stream models `stream_rank`, `stream_peer`, `stream_direction`, `stream_edge`:
///   a rank issues each transfer op onto one of its streams and returns at once; the ops
///   of one stream run first in first out, each starting when it is issued and every
///   earlier op of its stream has completed (it is then at the stream's head); a transfer
///   completes when both its ops are at the heads of their streams, at max(the two head
///   times) + t_c; a compute op waits for the transfers it consumes (its RECVs), as under
///   `posted`. NCCL's semantics: one CUDA stream per communicator, operations in issue
///   order, a point-to-point operation complete when its peer reaches the matching one.
///   The models differ in the channel policy (stream_index()): one stream per rank (one
///   process group for all its P2P), per peer rank (a communicator per rank pair), per
///   direction of data (activations, gradients: PyTorch's per-direction communicators,
///   pytorch/pytorch#186173), per directed rank pair (PyTorch's `pipeline_per_edge_p2p`,
///   pytorch/pytorch#195760, #196666).
enum class runtime_model : std::uint8_t {
  blocking,
  rendezvous,
  posted,
  batched,
  stream_rank,
  stream_peer,
  stream_direction,
  stream_edge
};

/// Number of runtime models.
inline constexpr int runtime_model_count = 8;

/// Every runtime model, in the order the tool lists them.
inline constexpr runtime_model all_runtime_models[] = {runtime_model::blocking,         runtime_model::rendezvous,
                                                       runtime_model::posted,           runtime_model::batched,
                                                       runtime_model::stream_rank,      runtime_model::stream_peer,
                                                       runtime_model::stream_direction, runtime_model::stream_edge};

/// The models that take each transfer on its own (not the stream models), in the order
/// the tool lists them.
inline constexpr runtime_model transfer_models[] = {runtime_model::blocking, runtime_model::rendezvous,
                                                    runtime_model::posted, runtime_model::batched};

/// The stream models, in the order the tool lists them.
inline constexpr runtime_model stream_models[] = {runtime_model::stream_rank, runtime_model::stream_peer,
                                                  runtime_model::stream_direction, runtime_model::stream_edge};

/// `blocking`, `rendezvous`, `posted`, `batched`, `stream-rank`, `stream-peer`,
/// `stream-direction` or `stream-edge`, as the tool, the JSON and the Python package
/// spell it; `?` for a value cast from another number.
constexpr const char* runtime_model_name(runtime_model m) {
  constexpr const char* names[] = {"blocking",    "rendezvous",  "posted",           "batched",
                                   "stream-rank", "stream-peer", "stream-direction", "stream-edge"};
  return static_cast<int>(m) < runtime_model_count ? names[static_cast<int>(m)] : "?";
}

/// Whether `m` is a stream model (a channel policy over FIFO streams).
constexpr bool is_stream_model(runtime_model m) {
  return static_cast<int>(m) >= static_cast<int>(runtime_model::stream_rank) &&
         static_cast<int>(m) < runtime_model_count;
}

/// The gate of lower() and execute() on a model: raises `ctpipe: unknown runtime model`
/// for a value cast from another number.
constexpr void check_runtime_model(runtime_model m) {
  detail::require(static_cast<int>(m) < runtime_model_count, "ctpipe: unknown runtime model");
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

/// Streams per rank in the numbering of stream_index().
inline constexpr int streams_per_rank = 4;

/// The stream that a transfer op runs on under stream model `m` (is_stream_model()), as
/// `streams_per_rank * rank + local`, for the op on rank `rank` whose partner is on rank
/// `peer` (another rank), `send` for SEND_F/SEND_B, `forward` for SEND_F/RECV_F (an
/// activation; a gradient otherwise), in a pipeline of `P` ranks. The local number:
/// - `stream_rank`: 0, one stream for all of the rank's transfers;
/// - `stream_peer`: 0 for the peer `rank + 1 (mod P)`, 1 for `rank - 1`: one per peer;
/// - `stream_direction`: 0 for activations, 1 for gradients;
/// - `stream_edge`: 0 sends to `rank + 1`, 1 sends to `rank - 1`, 2 receives from
///   `rank + 1`, 3 receives from `rank - 1` (mod P): one per directed rank pair, both
///   ends of a message on the stream of its (sender, receiver) pair.
/// Every placement puts a transfer's partner on rank `rank +- 1 (mod P)`; with P = 2 both
/// are the same rank and count as `rank + 1`. O(1).
constexpr int stream_index(runtime_model m, int rank, int peer, bool send, bool forward, int P) {
  const int next = peer == (rank + 1) % P ? 0 : 1;
  int local = 0;
  if (m == runtime_model::stream_peer) local = next;
  if (m == runtime_model::stream_direction) local = forward ? 0 : 1;
  if (m == runtime_model::stream_edge) local = (send ? 0 : 2) + next;
  return streams_per_rank * rank + local;
}

}  // namespace ctpipe
