// A training step of a small MLP, pipelined over MPI processes: each process executes
// its rank's lowered op list (compute F, B, I, W and SEND_F, RECV_F, SEND_B, RECV_B)
// with real math (Eigen), and rank 0 checks the weight gradients against the same model
// run in one process without a pipeline. Every schedule family, in five send modes.
// It also checks ctpipe's runtime models against this engine: it measures the machine
// first (each op kind's compute time, one message's latency), lowers every schedule at
// run time for those exact costs and the send mode's model, and prints the measured step
// time next to the makespan execute() predicts for the same lists.
//
// Run with P processes, P in {1, 2, 3, 4} (the pipeline shape follows the world size),
// from the build directory:
//   mpirun -np 4 examples/mpi_pipeline [--frozen] [steps]
// As root, or with more processes than cores, Open MPI needs to be told:
//   mpirun --allow-run-as-root --oversubscribe -np 4 examples/mpi_pipeline
// CTest runs it with 4 and with 2 processes (`ctest -R mpi_pipeline`, examples/CMakeLists.txt).
// `steps` (default 5): training steps per schedule and mode, all checked; the step time
// and bubble are the fastest step's. `--frozen`: run the lists frozen at compile time for
// the default costs (`lowered_v<S, costs{}, model>`) instead of the lists lowered for the
// measured costs; the prediction is still execute() of the lists that ran, under the
// measured costs.
//
// The model: S = P*V stages (the pipeline's stages), stage s one dense layer
// y = tanh(x W_s + b_s) of width 64; a micro-batch has 32 rows; the loss is the squared
// error 1/2 sum ||y - target||^2 at the last stage, summed over the m micro-batches.
// Inputs, targets and weights are fixed formulas, so every run computes the same numbers.
// (Why 64 x 32 rather than a toy 16 x 4: such a layer computes in about a microsecond,
// the time of one message, and the measured bubble would measure nothing but MPI's
// latency. At 64 x 32 an op takes tens of microseconds and a message a few.)
// - F(s, j) computes stage s's output for micro-batch j and keeps it (tanh' needs it);
// - I(s, j) computes the input gradient dx = (dy * (1 - y^2)) W_s^T and stashes
//   dz = dy * (1 - y^2) for W;
// - W(s, j) adds the weight gradient x^T dz (and the bias gradient, the column sums of
//   dz) to stage s's accumulators;
// - B(s, j) is I then W.
// The last stage's B or I first forms dy = y - target (the loss gradient). Stage 0's I
// computes dx too, the gradient of the data, which nothing reads: a model would skip it,
// but the dx product is nearly all of I (here about 15 of 16 us), so stage 0's I would
// cost a twentieth and its B half of every other stage's, and ctpipe's costs give one
// time per op kind to every stage. With it every stage's kernels cost the same (the
// loss gradient adds about half a microsecond), and a prediction error is the runtime
// model's, not a stage the cost model cannot describe.
//
// Send modes, each with the lists lowered for the runtime model that describes it
// (ctpipe/lower/runtime.hpp), `lower(generate(spec).view(), measured, model)`:
// - rendezvous: SEND as MPI_Ssend (blocks until the receive is posted), RECV as
//   MPI_Recv, op by op; model `rendezvous`;
// - buffered: SEND as MPI_Bsend into a buffer attached before the step (returns at
//   once), RECV as MPI_Recv, op by op; model `blocking`;
// - batched: each run of consecutive transfer ops (for_each_batch) posted as
//   MPI_Isend/MPI_Irecv, then one MPI_Waitall; model `batched`;
// - one-comm: every SEND and RECV posted at once (MPI_Isend/MPI_Irecv) on one
//   communicator (MPI_COMM_WORLD), untagged, a compute op waiting for the receive it
//   consumes, as NCCL runs one process group's point-to-point ops; model `stream-rank`;
// - pair-comms: the same on a communicator per neighbouring rank pair; model
//   `stream-peer`.
// In the first three modes each message's tag is message_tag() (edge, micro-batch,
// direction), its peer peer_rank(): two messages between the same ranks never match each
// other's receive. The last two send every message with tag 0, as NCCL pairs
// untagged: MPI then matches a rank pair's messages on a communicator in posting order
// (its non-overtaking rule), so they run only on lists whose streams pair in one order
// on both ends (stream_order_consistent(), which lower() gives the stream models); a
// list that did not would put a message into another micro-batch's buffer, and the
// gradient check would fail.
//
// Tolerance: relative 1e-12 in the max norm, per stage (max |g - g_ref| / max |g_ref|
// over the stage's weight and bias gradients). Each micro-batch's contribution is
// computed by the same kernels on the same inputs in both runs, so only the order in
// which a stage adds its m contributions may differ (looped BFS runs a stage's backwards
// in reverse micro-batch order: about 3e-16 here; the other schedules match exactly).
// Reordering a sum of m doubles changes it by at most 2(m-1)u sum|terms|
// <= 2(m-1)m u max|term| (u = 2^-53), about 1.2e-14 of the largest term for m = 8;
// 1e-12 leaves a wide margin for cancellation and still catches any wrong or missing
// micro-batch (one W skipped: error 0.6). Buffers start as NaN, so data read before it
// arrived fails the check too (error nan).
//
// Measurement, before any schedule runs (measure_machine()):
// - compute: every rank times the kernels of the middle stage of a scratch 3-stage model
//   (F, B = I then W, I, W; the last stage's I and B also form the loss gradient),
//   kernel_samples times each, interleaved and rotating over 4 micro-batches, after a
//   warm-up; each rank takes the median per kind and the ranks agree on the maximum
//   (MPI_Allreduce MAX);
// - latency t_c: ranks 0 and 1 ping-pong one message of the pipeline's size (a 32 x 64
//   block of doubles, 16 KiB) with MPI_Send/MPI_Recv, pingpong_samples round trips after
//   a warm-up; t_c is half the median round trip, broadcast from rank 0 (0 when P = 1).
// Exact costs (exact_costs()): ctpipe's costs are per whole rank (all V chunks), a chunk
// op costing t/V, so the unit of time is a rank's forward, V * tau_F (tau_F the measured
// per-stage forward): f = 1, and b, i, w, c are tau_B / tau_F, tau_I / tau_F,
// tau_W / tau_F and tau_c / (V * tau_F), each rounded to the nearest multiple of 1/1000.
// A chunk op then costs its measured kernel time, up to that rounding. DualPipe's chunk
// is a whole stage of one of its two model copies (pipeline_shape::cost_chunks() is 1):
// its costs are those of V = 1, and its gradients are checked per layer, the two copies'
// summed.
//
// Timing: each rank adds up the wall-clock time of its compute ops (busy); rank 0
// gathers them with the step's start (the earliest, after a barrier) and end (the
// latest). Of the fastest step it prints the wall time next to the predicted makespan,
// execute(lowered, measured, model).makespan() * V * tau_F seconds, and the prediction
// error (predicted - measured) / measured; and the measured bubble
// 1 - sum(busy) / (P * wall) next to execute()'s. The measured step also pays whatever
// else the machine runs; with more processes than cores (4 on 2) the ranks take turns
// on the cores, at most `cores` of them compute at any time, and the prediction, which
// gives every rank its own processor, is too short (docs/mpi.md has the errors seen on a
// 2-core machine, and why `buffered` runs slower than its model). On one machine the
// processes share MPI_Wtime's clock; across machines it need not be synchronised (see
// MPI_WTIME_IS_GLOBAL), and the wall time is approximate.
//
// Exit status: 0 when every schedule and mode matches the reference, 1 on a mismatch,
// 2 on a bad world size or argument.

#define EIGEN_RUNTIME_NO_MALLOC  // with assertions on (Debug), any Eigen allocation in the step aborts
#include <Eigen/Core>
#include <mpi.h>

#include <ctpipe/ctpipe.hpp>
#include <ctpipe/lower/lower.hpp>

#include <algorithm>     // std::fill, std::sort (medians)
#include <array>         // the table of schedules per world size
#include <cmath>         // std::sin, std::cos, std::sqrt, std::fmax, std::llround
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint32_t, std::int64_t
#include <charconv>      // std::from_chars: the steps argument
#include <cstdio>        // std::printf, std::snprintf
#include <limits>        // quiet NaN
#include <span>          // rank op lists
#include <string_view>   // the arguments
#include <system_error>  // std::errc
#include <utility>       // std::index_sequence
#include <vector>        // buffers, allocated once per schedule before the steps

using namespace ctpipe;

namespace {

// --- the model ------------------------------------------------------------------------

constexpr int width = 64;  // features per row: every stage is a width x width layer
constexpr int rows = 32;   // rows (samples) per micro-batch

/// Activations or gradients of one micro-batch at one stage boundary.
using block = Eigen::Matrix<double, rows, width, Eigen::RowMajor>;
using weight_matrix = Eigen::Matrix<double, width, width, Eigen::RowMajor>;
using bias_vector = Eigen::Matrix<double, 1, width>;

/// Relative tolerance on the weight gradients (see the file comment for why).
constexpr double tolerance = 1e-12;

/// Everything one step reads and writes, for S stages and m micro-batches, indexed by
/// (stage, micro-batch) with plain arithmetic. Every process allocates the whole model,
/// its own stages and the others' (under 4 MiB here), so an op's buffers are at
/// `stage * m + microbatch` with no translation to rank-local indices.
struct step_state {
  pipeline_shape shape;  // which stages a micro-batch runs through (first_stage, last_stage)
  int S = 0;
  int m = 0;
  std::vector<weight_matrix> weight;           // S: W_s
  std::vector<bias_vector> bias;               // S: b_s
  std::vector<weight_matrix> d_weight;         // S: dL/dW_s, summed over micro-batches
  std::vector<bias_vector> d_bias;             // S: dL/db_s
  std::vector<block> activation;               // (S+1)*m: [s*m + j] is stage s's input for micro-batch j;
                                               // [S*m + j] the model's output
  std::vector<block> gradient;                 // (S+1)*m: dL/d activation, same indices
  std::vector<block> pre_activation_gradient;  // S*m: dz of stage s, stashed by I for W
  std::vector<block> target;                   // m

  explicit step_state(const pipeline_shape& pipeline)
      : shape(pipeline),
        S(pipeline.stages()),
        m(pipeline.m),
        weight(sz(S)),
        bias(sz(S)),
        d_weight(sz(S)),
        d_bias(sz(S)),
        activation(sz((S + 1) * m)),
        gradient(sz((S + 1) * m)),
        pre_activation_gradient(sz(S * m)),
        target(sz(m)) {}

  static std::size_t sz(int n) { return static_cast<std::size_t>(n); }
  block& act(int s, int j) { return activation[sz(s * m + j)]; }
  block& grad(int s, int j) { return gradient[sz(s * m + j)]; }
  block& dz(int s, int j) { return pre_activation_gradient[sz(s * m + j)]; }

  /// The layer stage s runs: s, or on the bidirectional placement (DualPipe's two
  /// copies) s mod P, the up pipeline's stage P+i being a copy of the down one's stage i.
  int layer(int s) const { return shape.layout == placement::bidirectional ? s % shape.P : s; }

  /// The fixed inputs, targets and weights; NaN in every buffer a step must write, so a
  /// value read before it arrived poisons the gradients instead of passing unnoticed.
  /// Micro-batch j enters at its first stage (0, or P for DualPipe's up pipeline).
  void reset() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int s = 0; s < S; ++s) {
      for (int i = 0; i < width; ++i) {
        for (int k = 0; k < width; ++k)
          weight[sz(s)](i, k) = 0.9 / std::sqrt(double{width}) * std::sin(1.0 + 0.37 * layer(s) + 0.71 * i + 1.13 * k);
        bias[sz(s)](i) = 0.1 * std::cos(0.5 * layer(s) + 0.3 * i);
      }
      d_weight[sz(s)].setZero();
      d_bias[sz(s)].setZero();
    }
    for (block& b : activation) b.setConstant(nan);
    for (block& b : gradient) b.setConstant(nan);
    for (block& b : pre_activation_gradient) b.setConstant(nan);
    for (int j = 0; j < m; ++j) {
      for (int i = 0; i < rows; ++i) {
        for (int k = 0; k < width; ++k) {
          const int sample = j * rows + i;
          act(shape.first_stage(j), j)(i, k) = std::sin(0.11 * sample + 0.23 * k + 0.5);
          target[sz(j)](i, k) = 0.5 * std::cos(0.07 * sample - 0.19 * k);
        }
      }
    }
  }

  /// F(s, j): y = tanh(x W_s + b_s), kept for the backward.
  void forward(int s, int j) {
    block& y = act(s + 1, j);
    y.noalias() = act(s, j) * weight[sz(s)];
    y.rowwise() += bias[sz(s)];
    y = y.array().tanh().matrix();
  }
  /// I(s, j): dz = dy * (1 - y^2), stashed for W; dx = dz W_s^T (at stage 0 too, which
  /// keeps the stages' costs equal: file comment). The micro-batch's last stage starts
  /// from the loss gradient dy = y - target.
  void backward_input(int s, int j) {
    if (s == shape.last_stage(j)) grad(s + 1, j) = act(s + 1, j) - target[sz(j)];
    dz(s, j).array() = grad(s + 1, j).array() * (1.0 - act(s + 1, j).array().square());
    grad(s, j).noalias() = dz(s, j) * weight[sz(s)].transpose();
  }
  /// W(s, j): dW_s += x^T dz, db_s += column sums of dz.
  void backward_weight(int s, int j) {
    d_weight[sz(s)].noalias() += act(s, j).transpose() * dz(s, j);
    d_bias[sz(s)] += dz(s, j).colwise().sum();
  }

  /// The buffer a transfer op sends or receives: the activation (forward) or gradient
  /// (backward) at the boundary above the message's edge. SEND_F(s) and RECV_F(s+1)
  /// share act(s+1); SEND_B(s+1) and RECV_B(s) share grad(s+1).
  double* message_buffer(op o) {
    const message_key key = message_of(o);
    return key.forward ? act(key.edge + 1, key.microbatch).data() : grad(key.edge + 1, key.microbatch).data();
  }
};

/// The reference: the same model in one process, no pipeline, micro-batch after
/// micro-batch (every stage of its pipeline forward, then backward).
void run_reference(step_state& st) {
  st.reset();
  for (int j = 0; j < st.m; ++j) {
    for (int s = st.shape.first_stage(j); s <= st.shape.last_stage(j); ++s) st.forward(s, j);
    for (int s = st.shape.last_stage(j); s >= st.shape.first_stage(j); --s) {
      st.backward_input(s, j);
      st.backward_weight(s, j);
    }
  }
}

// --- the schedules -------------------------------------------------------------------

/// The shape each family runs with on P ranks: m = 2P micro-batches (valid for every
/// family: ZB-V needs m >= 2P-1, DualPipeV m >= 2P, interleaved and combined 1F1B a
/// group of P dividing m; combined 1F1B at P = 1 needs V = 1 and is skipped there); the
/// family's default V (2 for the families with model chunks) and its
/// placement (the V-shape for ZB-V and DualPipeV).
constexpr schedule_spec spec_for(int P, schedule_family f) {
  return {f, {.P = P, .m = 2 * P, .V = family_of(f).default_V, .layout = natural_placement(f)}};
}

/// One schedule as a process runs it: its spec and, for `--frozen`, its lists lowered
/// at compile time for the default costs, indexed by send_mode (static storage).
/// `runs` is false for a family that does not take P ranks (DualPipe at an odd P,
/// combined 1F1B with its default V = 2 at P = 1).
struct pipeline_case {
  schedule_spec spec;
  schedule_view frozen[5];
  bool runs = true;
};

template <schedule_spec S>
constexpr pipeline_case make_case() {
  if constexpr (spec_error(S) != nullptr) {
    return {S, {}, false};
  } else {
    static_assert(2 * (S.shape.stages() - 1) * S.shape.m <= 32767,
                  "ctpipe: message_tag() must fit the MPI tags every MPI accepts (up to 32767)");
    return {
        S,
        {lowered_v<S, costs{}, runtime_model::rendezvous>.view(), lowered_v<S>.view(),
         lowered_v<S, costs{}, runtime_model::batched>.view(), lowered_v<S, costs{}, runtime_model::stream_rank>.view(),
         lowered_v<S, costs{}, runtime_model::stream_peer>.view()}};
  }
}

template <int P, std::size_t... f>
constexpr auto make_cases(std::index_sequence<f...>) {
  return std::array<pipeline_case, sizeof...(f)>{make_case<spec_for(P, all_families[f])>()...};
}

/// Every family at P ranks.
template <int P>
inline constexpr auto cases_v = make_cases<P>(std::make_index_sequence<std::size(all_families)>{});

std::span<const pipeline_case> cases_for(int P) {
  switch (P) {
    case 1: return cases_v<1>;
    case 2: return cases_v<2>;
    case 3: return cases_v<3>;
    case 4: return cases_v<4>;
    default: return {};
  }
}

// --- one rank's step -------------------------------------------------------------------

enum class send_mode { rendezvous, buffered, batched, one_comm, pair_comms };

/// Every send mode, in the order they run and print.
constexpr send_mode all_modes[] = {send_mode::rendezvous, send_mode::buffered, send_mode::batched, send_mode::one_comm,
                                   send_mode::pair_comms};

constexpr const char* mode_name(send_mode mode) {
  switch (mode) {
    case send_mode::rendezvous: return "rendezvous";
    case send_mode::buffered: return "buffered";
    case send_mode::batched: return "batched";
    case send_mode::one_comm: return "one-comm";
    case send_mode::pair_comms: return "pair-comms";
  }
  return "?";
}

/// Whether `mode` posts every transfer at once on streams of communicators (one-comm,
/// pair-comms).
constexpr bool streamed(send_mode mode) { return mode == send_mode::one_comm || mode == send_mode::pair_comms; }

/// The runtime model that describes a send mode (ctpipe/lower/runtime.hpp).
constexpr runtime_model model_of(send_mode mode) {
  switch (mode) {
    case send_mode::rendezvous: return runtime_model::rendezvous;
    case send_mode::buffered: return runtime_model::blocking;
    case send_mode::batched: return runtime_model::batched;
    case send_mode::one_comm: return runtime_model::stream_rank;
    case send_mode::pair_comms: return runtime_model::stream_peer;
  }
  return runtime_model::blocking;
}

/// The communicators of the streamed modes: MPI_COMM_WORLD for one-comm, and for
/// pair-comms one per neighbouring rank pair (ranks e and e + 1 mod P: pair e; P = 2 has
/// one pair), made by MPI_Comm_split on every rank. In a pair's communicator the lower
/// world rank is rank 0.
class stream_comms {
 public:
  stream_comms(int rank, int P) : rank_(rank), P_(P) {
    const int pairs = P == 1 ? 0 : P == 2 ? 1 : P;
    pair_.assign(static_cast<std::size_t>(pairs), MPI_COMM_NULL);
    for (int e = 0; e < pairs; ++e) {
      const bool member = rank == e || rank == (e + 1) % P;
      MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &pair_[static_cast<std::size_t>(e)]);
    }
  }
  stream_comms(const stream_comms&) = delete;
  stream_comms& operator=(const stream_comms&) = delete;
  ~stream_comms() {
    for (MPI_Comm& c : pair_) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
  }
  /// The communicator of the transfers with world rank `peer` in `mode`.
  MPI_Comm comm(send_mode mode, int peer) const {
    if (mode == send_mode::one_comm) return MPI_COMM_WORLD;
    const int e = P_ == 2 ? 0 : peer == (rank_ + 1) % P_ ? rank_ : peer;
    return pair_[static_cast<std::size_t>(e)];
  }
  /// `peer`'s rank in comm(mode, peer).
  int rank_in(send_mode mode, int peer) const { return mode == send_mode::one_comm ? peer : peer < rank_ ? 0 : 1; }

 private:
  int rank_ = 0, P_ = 1;
  std::vector<MPI_Comm> pair_;
};

/// The request slots of the streamed modes, allocated once per case: each RECV's
/// request by message_tag() (MPI_REQUEST_NULL when none is pending), the step's SENDs.
struct stream_requests {
  std::vector<MPI_Request> receive, send;
  std::size_t sends = 0;
};

constexpr int message_size = rows * width;  // doubles per message: one block

// --- measuring the machine -------------------------------------------------------------

constexpr int kernel_samples = 51;               // timings per compute kind and rank
constexpr int pingpong_samples = 51;             // round trips of the latency measurement
constexpr int warmup_samples = 5;                // untimed rounds before either
constexpr std::int64_t cost_denominator = 1000;  // costs are multiples of 1/1000

/// The median of `v` (reordered); v is not empty.
double median(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// What measure_machine() found, in seconds: one stage's compute kernels and the
/// latency of one message.
struct machine_times {
  double f = 0, b = 0, i = 0, w = 0;  // tau_F, tau_B, tau_I, tau_W
  double c = 0;                       // tau_c
};

/// Measures the compute kernels on every rank (median per kind, the maximum over ranks)
/// and the message latency between ranks 0 and 1 (half the median round trip); every
/// rank returns the same values (the file comment has the method).
machine_times measure_machine(int rank, int P) {
  constexpr int m = 4;
  step_state st(pipeline_shape{3, m});
  st.reset();
  for (int j = 0; j < m; ++j) {
    for (int s = 0; s < 3; ++s) st.forward(s, j);
    st.backward_input(2, j);
    st.backward_input(1, j);
  }
  // Each kernel of stage 1 reads only what the passes above wrote, so it can run again
  // and again (W adds to the accumulators, which nothing reads here).
  std::vector<double> samples[4];
  for (std::vector<double>& v : samples) v.reserve(kernel_samples);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = -warmup_samples; k < kernel_samples; ++k) {
    const int j = (k + warmup_samples) % m;
    double t[5];
    t[0] = MPI_Wtime();
    st.forward(1, j);
    t[1] = MPI_Wtime();
    st.backward_input(1, j);
    st.backward_weight(1, j);
    t[2] = MPI_Wtime();
    st.backward_input(1, j);
    t[3] = MPI_Wtime();
    st.backward_weight(1, j);
    t[4] = MPI_Wtime();
    if (k < 0) continue;
    for (int q = 0; q < 4; ++q) samples[q].push_back(t[q + 1] - t[q]);
  }
  double kernels[4];
  for (int q = 0; q < 4; ++q) kernels[q] = median(samples[q]);
  MPI_Allreduce(MPI_IN_PLACE, kernels, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  double latency = 0;
  if (P > 1) {
    std::vector<double> message(message_size, 0.0);
    std::vector<double> round_trips;
    round_trips.reserve(pingpong_samples);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = -warmup_samples; k < pingpong_samples && rank < 2; ++k) {
      if (rank == 0) {
        const double begin = MPI_Wtime();
        MPI_Send(message.data(), message_size, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(message.data(), message_size, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (k >= 0) round_trips.push_back(MPI_Wtime() - begin);
      } else {
        MPI_Recv(message.data(), message_size, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(message.data(), message_size, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) latency = 0.5 * median(round_trips);
    MPI_Bcast(&latency, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  return {kernels[0], kernels[1], kernels[2], kernels[3], latency};
}

/// `x` rounded to the nearest multiple of 1/cost_denominator, exactly.
rational to_exact(double x) {
  return rational{static_cast<std::int64_t>(std::llround(x * static_cast<double>(cost_denominator))), cost_denominator};
}

/// The measured times as exact costs for a shape with V chunks per rank, in units of a
/// rank's forward V * tau_F: a chunk op then costs its measured kernel (file comment).
costs exact_costs(const machine_times& t, int V) {
  return {.f = rational{1},
          .b = to_exact(t.b / t.f),
          .i = to_exact(t.i / t.f),
          .w = to_exact(t.w / t.f),
          .c = to_exact(t.c / (V * t.f))};
}

/// `r` as `n` or `n/d`, into `out`.
const char* rational_text(rational r, char (&out)[48]) {
  if (r.den == 1)
    std::snprintf(out, sizeof out, "%lld", static_cast<long long>(r.num));
  else
    std::snprintf(out, sizeof out, "%lld/%lld", static_cast<long long>(r.num), static_cast<long long>(r.den));
  return out;
}

/// What a rank's run of the step measured.
struct rank_timing {
  double start = 0;  // MPI_Wtime when the rank began its list
  double end = 0;    // when its list and its sends were done
  double busy = 0;   // sum of its compute ops' durations
};

/// Streamed modes: waits for the receive that compute op `o` consumes, if one is pending
/// (an input from a stage on another rank; MPI_Wait returns at once on MPI_REQUEST_NULL).
void wait_for_input(op o, const pipeline_shape& shape, stream_requests& posted) {
  const int s = o.stage(), j = o.microbatch();
  const bool forward = o.kind() == op_kind::F || o.kind() == op_kind::overlap_f_b;
  if (forward ? s == 0 : s == shape.stages() - 1 || o.kind() == op_kind::W) return;
  const op input = forward ? detail::make_op(op_kind::recv_f, s, j) : detail::make_op(op_kind::recv_b, s, j);
  MPI_Wait(&posted.receive[static_cast<std::size_t>(message_tag(shape, input))], MPI_STATUS_IGNORE);
}

/// Runs one rank's lowered list `ops` once. `batch_end[k]` is the end of the batch
/// starting at position k (batched mode); `requests` has room for the longest batch.
/// Streamed modes post on `comms` into `posted`. Everything it touches is allocated by
/// the caller.
template <send_mode Mode>
rank_timing run_rank(std::span<const op> ops, const pipeline_shape& shape, step_state& st,
                     std::span<const std::uint32_t> batch_end, std::span<MPI_Request> requests,
                     const stream_comms& comms, stream_requests& posted) {
  rank_timing t;
  t.start = MPI_Wtime();
  posted.sends = 0;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const op o = ops[k];
    const int s = o.stage();
    const int j = o.microbatch();
    if (is_transfer(o.kind())) {
      if constexpr (streamed(Mode)) {
        const int peer = peer_rank(shape, o);
        const MPI_Comm comm = comms.comm(Mode, peer);
        if (is_send(o.kind()))
          MPI_Isend(st.message_buffer(o), message_size, MPI_DOUBLE, comms.rank_in(Mode, peer), 0, comm,
                    &posted.send[posted.sends++]);
        else
          MPI_Irecv(st.message_buffer(o), message_size, MPI_DOUBLE, comms.rank_in(Mode, peer), 0, comm,
                    &posted.receive[static_cast<std::size_t>(message_tag(shape, o))]);
      } else if constexpr (Mode == send_mode::batched) {
        const std::size_t last = batch_end[k];
        for (std::size_t q = k; q < last; ++q) {
          const op x = ops[q];
          const int tag = static_cast<int>(message_tag(shape, x));
          if (is_send(x.kind()))
            MPI_Isend(st.message_buffer(x), message_size, MPI_DOUBLE, peer_rank(shape, x), tag, MPI_COMM_WORLD,
                      &requests[q - k]);
          else
            MPI_Irecv(st.message_buffer(x), message_size, MPI_DOUBLE, peer_rank(shape, x), tag, MPI_COMM_WORLD,
                      &requests[q - k]);
        }
        MPI_Waitall(static_cast<int>(last - k), requests.data(), MPI_STATUSES_IGNORE);
        k = last - 1;
      } else {
        const int tag = static_cast<int>(message_tag(shape, o));
        if (!is_send(o.kind()))
          MPI_Recv(st.message_buffer(o), message_size, MPI_DOUBLE, peer_rank(shape, o), tag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        else if constexpr (Mode == send_mode::rendezvous)
          MPI_Ssend(st.message_buffer(o), message_size, MPI_DOUBLE, peer_rank(shape, o), tag, MPI_COMM_WORLD);
        else
          MPI_Bsend(st.message_buffer(o), message_size, MPI_DOUBLE, peer_rank(shape, o), tag, MPI_COMM_WORLD);
      }
      continue;
    }
    if constexpr (streamed(Mode)) wait_for_input(o, shape, posted);
    const double begin = MPI_Wtime();
    switch (o.kind()) {
      case op_kind::F: st.forward(s, j); break;
      // An overlapped pair (DualPipeV, DualPipe, combined 1F1B): its word is the forward, its B word comes next.
      // Both inputs were received before it (lower() keeps the pair whole); this CPU
      // runtime runs the two halves one after the other.
      case op_kind::overlap_f_b: st.forward(s, j); break;
      case op_kind::B:
        st.backward_input(s, j);
        st.backward_weight(s, j);
        break;
      case op_kind::I: st.backward_input(s, j); break;
      case op_kind::W: st.backward_weight(s, j); break;
      default: break;  // transfers handled above
    }
    t.busy += MPI_Wtime() - begin;
  }
  if constexpr (streamed(Mode)) MPI_Waitall(static_cast<int>(posted.sends), posted.send.data(), MPI_STATUSES_IGNORE);
  if constexpr (Mode == send_mode::buffered) {
    void* buffer = nullptr;
    int size = 0;
    MPI_Buffer_detach(&buffer, &size);  // waits until every buffered send has left
  }
  t.end = MPI_Wtime();
  return t;
}

/// Outcome of one schedule in one mode over its steps, on rank 0.
struct case_result {
  double max_relative_error = 0;  // worst over the steps
  double measured_bubble = 1;     // of the fastest step
  double step_seconds = 0;        // wall time of the fastest step
};

/// Max over layers of max |g - g_ref| / max |g_ref| (weights and biases together).
/// `gathered` holds every stage's dW_s then db_s, back to back. A layer's gradient is its
/// stage's, or on the bidirectional placement the sum over its two copies (stages i and
/// P+i), as DeepSeek's DualPipe example sums them.
double max_relative_error(const std::vector<double>& gathered, const step_state& ref) {
  const int layers = ref.shape.layout == placement::bidirectional ? ref.shape.P : ref.S;
  std::vector<weight_matrix> dw(static_cast<std::size_t>(layers), weight_matrix::Zero()), dw_ref = dw;
  std::vector<bias_vector> db(static_cast<std::size_t>(layers), bias_vector::Zero()), db_ref = db;
  const double* g = gathered.data();
  for (int s = 0; s < ref.S; ++s) {
    const std::size_t l = static_cast<std::size_t>(ref.layer(s)), i = static_cast<std::size_t>(s);
    dw[l] += Eigen::Map<const weight_matrix>(g);
    db[l] += Eigen::Map<const bias_vector>(g + width * width);
    dw_ref[l] += ref.d_weight[i];
    db_ref[l] += ref.d_bias[i];
    g += width * width + width;
  }
  double worst = 0;
  for (std::size_t l = 0; l < dw.size(); ++l) {
    const double scale = std::fmax(dw_ref[l].cwiseAbs().maxCoeff(), db_ref[l].cwiseAbs().maxCoeff());
    const double diff = std::fmax((dw[l] - dw_ref[l]).cwiseAbs().maxCoeff(), (db[l] - db_ref[l]).cwiseAbs().maxCoeff());
    const double error = diff / scale;
    worst = !(error <= worst) ? error : worst;  // a NaN (a value read before it arrived) stays
  }
  return worst;
}

/// Runs `steps` training steps of lowered lists `lowered` in one mode on this process's rank (each
/// from the same weights, so each must give the reference's gradients); rank 0 returns
/// the comparison with the reference and the bubble of the fastest step (the one least
/// disturbed by other processes on the machine).
case_result run_case(schedule_view lowered, send_mode mode, int rank, int steps, const step_state& reference,
                     const stream_comms& comms) {
  const pipeline_shape& shape = lowered.shape;
  const std::span<const op> ops = lowered.rank(rank);

  // Allocated once, before any step: the step's buffers, the batch ends and requests
  // (batched), the Bsend buffer (buffered), the gathered gradients.
  step_state st(shape);
  std::vector<std::uint32_t> batch_end(ops.size(), 0);
  std::size_t longest_batch = 0;
  for_each_batch(ops, [&](std::size_t first, std::size_t last) {
    batch_end[first] = static_cast<std::uint32_t>(last);
    longest_batch = last - first > longest_batch ? last - first : longest_batch;
  });
  std::vector<MPI_Request> requests(longest_batch > 0 ? longest_batch : 1, MPI_REQUEST_NULL);
  std::size_t sends = 0;
  for (const op o : ops) sends += is_send(o.kind()) ? 1 : 0;
  stream_requests posted;
  posted.receive.assign(static_cast<std::size_t>(2 * shape.stages() * shape.m), MPI_REQUEST_NULL);
  posted.send.assign(sends > 0 ? sends : 1, MPI_REQUEST_NULL);
  std::vector<char> bsend_buffer(sends * (sizeof(block) + MPI_BSEND_OVERHEAD) + MPI_BSEND_OVERHEAD);
  const std::size_t per_stage = width * width + width;
  std::vector<double> local(per_stage * static_cast<std::size_t>(shape.stages()));
  std::vector<double> gathered(rank == 0 ? local.size() : 0);

  case_result result;
  for (int step = 0; step < steps; ++step) {
    st.reset();
    if (mode == send_mode::buffered) MPI_Buffer_attach(bsend_buffer.data(), static_cast<int>(bsend_buffer.size()));
    MPI_Barrier(MPI_COMM_WORLD);
    Eigen::internal::set_is_malloc_allowed(false);
    rank_timing t;
    switch (mode) {
      case send_mode::rendezvous:
        t = run_rank<send_mode::rendezvous>(ops, shape, st, batch_end, requests, comms, posted);
        break;
      case send_mode::buffered:
        t = run_rank<send_mode::buffered>(ops, shape, st, batch_end, requests, comms, posted);
        break;
      case send_mode::batched:
        t = run_rank<send_mode::batched>(ops, shape, st, batch_end, requests, comms, posted);
        break;
      case send_mode::one_comm:
        t = run_rank<send_mode::one_comm>(ops, shape, st, batch_end, requests, comms, posted);
        break;
      case send_mode::pair_comms:
        t = run_rank<send_mode::pair_comms>(ops, shape, st, batch_end, requests, comms, posted);
        break;
    }
    Eigen::internal::set_is_malloc_allowed(true);

    // Every stage's gradients to rank 0: each rank writes its own stages, zeros
    // elsewhere, and a sum gathers them exactly (x + 0 == x).
    std::fill(local.begin(), local.end(), 0.0);
    for (int s = 0; s < shape.stages(); ++s) {
      if (shape.rank_of(s) != rank) continue;
      double* out = local.data() + per_stage * static_cast<std::size_t>(s);
      Eigen::Map<weight_matrix> dw(out);
      Eigen::Map<bias_vector> db(out + width * width);
      dw = st.d_weight[static_cast<std::size_t>(s)];
      db = st.d_bias[static_cast<std::size_t>(s)];
    }
    MPI_Reduce(local.data(), gathered.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double start = 0;
    double end = 0;
    double busy = 0;
    MPI_Reduce(&t.start, &start, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.end, &end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.busy, &busy, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) continue;
    const double error = max_relative_error(gathered, reference);
    result.max_relative_error = !(error <= result.max_relative_error) ? error : result.max_relative_error;
    if (step == 0 || end - start < result.step_seconds) {
      result.step_seconds = end - start;
      result.measured_bubble = 1.0 - busy / (shape.P * (end - start));
    }
  }
  return result;
}

/// The prediction errors of one send mode over the schedules, on rank 0.
struct error_range {
  double low = 0, high = 0, sum_abs = 0;
  int count = 0;
  void add(double e) {
    low = count == 0 || e < low ? e : low;
    high = count == 0 || e > high ? e : high;
    sum_abs += e < 0 ? -e : e;
    ++count;
  }
};

/// Runs every case in every send mode on this rank (`steps` steps each, the lists lowered
/// at run time for the measured costs `t`, or frozen): rank 0 prints a line per case and
/// mode, adds each prediction error to `errors` (by mode) and returns the number of
/// cases whose gradients do not match; the other ranks return 0.
int run_cases(std::span<const pipeline_case> cases, int rank, int P, int steps, bool frozen, const machine_times& t,
              std::span<error_range> errors) {
  int failures = 0;
  const stream_comms comms(rank, P);  // freed on return, before MPI_Finalize
  for (const pipeline_case& c : cases) {
    if (!c.runs) continue;
    const pipeline_shape& shape = c.spec.shape;
    const costs measured = exact_costs(t, shape.cost_chunks());  // DualPipe: a chunk is a whole stage
    const schedule compute = generate(c.spec);
    step_state reference(shape);
    if (rank == 0) run_reference(reference);
    for (send_mode mode : all_modes) {
      const int index = static_cast<int>(mode);
      const schedule lowered = frozen ? schedule{} : lower(compute.view(), measured, model_of(mode));
      const schedule_view lists = frozen ? c.frozen[index] : lowered.view();
      const case_result r = run_case(lists, mode, rank, steps, reference, comms);
      if (rank != 0) continue;
      const bool ok = r.max_relative_error <= tolerance;
      failures += ok ? 0 : 1;
      const execution predicted = execute(lists, measured, model_of(mode));
      if (!predicted.completed()) {
        std::printf("%-16s P=%d m=%d V=%d  %-10s  max rel error %.1e %-4s  step %6.3f ms  predicted: a hang\n",
                    family_name(c.spec.family), shape.P, shape.m, shape.V, mode_name(mode), r.max_relative_error,
                    ok ? "OK" : "FAIL", 1e3 * r.step_seconds);
        continue;
      }
      const double predicted_seconds = predicted.makespan().to_double() * shape.cost_chunks() * t.f;
      const double error = 100.0 * (predicted_seconds - r.step_seconds) / r.step_seconds;
      errors[index].add(error);
      std::printf(
          "%-16s P=%d m=%d V=%d  %-10s  max rel error %.1e %-4s  step %6.3f ms  predicted %6.3f ms %+6.1f%%"
          "  bubble %5.1f%% predicted %5.1f%%\n",
          family_name(c.spec.family), shape.P, shape.m, shape.V, mode_name(mode), r.max_relative_error,
          ok ? "OK" : "FAIL", 1e3 * r.step_seconds, 1e3 * predicted_seconds, error, 100.0 * r.measured_bubble,
          100.0 * predicted.bubble_fraction().to_double());
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const std::span<const pipeline_case> cases = cases_for(P);
  // Arguments: `--frozen` at most once, and steps, a whole number in [1, 1000], at most
  // once (no sign, no trailing characters).
  int steps = 5;
  bool frozen = false;
  bool args_ok = true;
  bool steps_seen = false;
  for (int a = 1; a < argc && args_ok; ++a) {
    const std::string_view text = argv[a];
    if (text == "--frozen" && !frozen) {
      frozen = true;
      continue;
    }
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), steps);
    args_ok = !steps_seen && error == std::errc{} && end == text.data() + text.size() && steps >= 1 && steps <= 1000;
    steps_seen = true;
  }
  if (cases.empty() || !args_ok) {
    if (rank == 0)
      std::fprintf(stderr,
                   "ctpipe: usage: mpirun -np P mpi_pipeline [--frozen] [steps], P in {1, 2, 3, 4} (got %d), "
                   "steps a whole number in [1, 1000]%s\n",
                   P, args_ok ? "" : " (bad or repeated argument)");
    MPI_Finalize();
    return 2;
  }

  const machine_times t = measure_machine(rank, P);
  if (rank == 0) {
    std::printf(
        "P = %d ranks; tanh MLP with P*V stages of width %d, %d rows per micro-batch; %d steps each; "
        "gradients checked to relative %.0e\n",
        P, width, rows, steps, tolerance);
    std::printf(
        "measured: one stage's F %.1f us, B %.1f us, I %.1f us, W %.1f us (median of %d, max over ranks); "
        "t_c %.1f us (half the median round trip of %d, %zu KiB messages)\n",
        1e6 * t.f, 1e6 * t.b, 1e6 * t.i, 1e6 * t.w, kernel_samples, 1e6 * t.c, pingpong_samples, sizeof(block) / 1024);
    for (int V : {1, 2}) {
      const costs c = exact_costs(t, V);
      char b[48], i[48], w[48], l[48];
      std::printf("costs at V=%d, unit a rank's forward V*F = %.1f us: f=1 b=%s i=%s w=%s c=%s\n", V, 1e6 * V * t.f,
                  rational_text(c.b, b), rational_text(c.i, i), rational_text(c.w, w), rational_text(c.c, l));
    }
    std::printf(
        "%s; predicted = execute(lists, costs, model).makespan() * V*F, error = (predicted - measured) / "
        "measured; models: rendezvous -> rendezvous, buffered -> blocking, batched -> batched, one-comm -> "
        "stream-rank, pair-comms -> stream-peer\n",
        frozen ? "lists frozen at compile time for the default costs (--frozen)"
               : "lists lowered at run time for these costs");
  }

  error_range errors[std::size(all_modes)];
  int failures = run_cases(cases, rank, P, steps, frozen, t, errors);
  if (rank == 0) {
    for (send_mode mode : all_modes) {
      const error_range& e = errors[static_cast<int>(mode)];
      if (e.count > 0)
        std::printf("prediction error %-10s  %+6.1f%% to %+6.1f%%, mean |error| %5.1f%% over %d schedules\n",
                    mode_name(mode), e.low, e.high, e.sum_abs / e.count, e.count);
    }
    std::printf("%s\n", failures == 0 ? "all gradients match" : "MISMATCH");
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
