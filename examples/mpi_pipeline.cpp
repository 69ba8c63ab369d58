// A training step of a small MLP, pipelined over MPI processes: each process executes
// its rank's lowered op list (compute F, B, I, W and SEND_F, RECV_F, SEND_B, RECV_B)
// straight from the constexpr `lowered_v<spec>`, with real math (Eigen), and rank 0
// checks the weight gradients against the same model run in one process without a
// pipeline. Every schedule family, in three send modes.
//
// Run with P processes, P in {1, 2, 3, 4} (the pipeline shape follows the world size),
// from the build directory:
//   mpirun -np 4 examples/mpi_pipeline [steps]
// As root, or with more processes than cores, Open MPI needs to be told:
//   mpirun --allow-run-as-root --oversubscribe -np 4 examples/mpi_pipeline
// CTest runs it with 4 and with 2 processes (`ctest -R mpi_pipeline`, examples/CMakeLists.txt).
// `steps` (default 3): training steps per schedule and mode, all checked; the bubble is
// the fastest step's.
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
// The last stage's B or I first forms dy = y - target (the loss gradient).
//
// Send modes, each with the lists lowered for its runtime model (ctpipe/lower/runtime.hpp):
// - rendezvous: SEND as MPI_Ssend (blocks until the receive is posted), RECV as
//   MPI_Recv, op by op; lists `lowered_v<S, costs{}, runtime_model::rendezvous>`;
// - buffered: SEND as MPI_Bsend into a buffer attached before the step (returns at
//   once), RECV as MPI_Recv, op by op; the `blocking` model's lists, `lowered_v<S>`;
// - batched: each run of consecutive transfer ops (for_each_batch) posted as
//   MPI_Isend/MPI_Irecv, then one MPI_Waitall; the `batched` model's lists.
// Each message's tag is message_tag() (edge, micro-batch, direction), its peer
// peer_rank(): two messages between the same ranks never match each other's receive.
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
// Timing: each rank adds up the wall-clock time of its compute ops (busy); rank 0
// gathers them with the step's start (the earliest, after a barrier) and end (the
// latest) and prints the measured bubble 1 - sum(busy) / (P * wall) next to the
// simulated bubble fraction (simulate() with the default costs t_f = 1, t_b = 2,
// t_i = t_w = 1, no latency). The measured one also pays message latency and whatever
// else the machine runs; with more processes than cores (4 on 2) the ranks also take
// turns on the cores, and at most `cores` of them compute at any time. (On one machine the processes share MPI_Wtime's clock; across machines it
// need not be synchronised, see MPI_WTIME_IS_GLOBAL, and the wall time is approximate.)
//
// Exit status: 0 when every schedule and mode matches the reference, 1 on a mismatch,
// 2 on a bad world size or argument.

#define EIGEN_RUNTIME_NO_MALLOC  // with assertions on (Debug), any Eigen allocation in the step aborts
#include <Eigen/Core>
#include <mpi.h>

#include <ctpipe/ctpipe.hpp>
#include <ctpipe/lower/lower.hpp>

#include <algorithm>  // std::fill
#include <array>      // the table of schedules per world size
#include <cmath>      // std::sin, std::cos, std::sqrt, std::fmax
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint32_t
#include <charconv>   // std::from_chars: the steps argument
#include <cstdio>     // std::printf
#include <limits>     // quiet NaN
#include <span>       // rank op lists
#include <string_view>  // the steps argument
#include <system_error>  // std::errc
#include <utility>    // std::index_sequence
#include <vector>     // buffers, allocated once per schedule before the steps

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
  int S = 0;
  int m = 0;
  std::vector<weight_matrix> weight;   // S: W_s
  std::vector<bias_vector> bias;       // S: b_s
  std::vector<weight_matrix> d_weight; // S: dL/dW_s, summed over micro-batches
  std::vector<bias_vector> d_bias;     // S: dL/db_s
  std::vector<block> activation;       // (S+1)*m: [s*m + j] is stage s's input for micro-batch j;
                                       // [S*m + j] the model's output
  std::vector<block> gradient;         // (S+1)*m: dL/d activation, same indices
  std::vector<block> pre_activation_gradient;  // S*m: dz of stage s, stashed by I for W
  std::vector<block> target;           // m

  step_state(int stages, int microbatches)
      : S(stages), m(microbatches), weight(sz(S)), bias(sz(S)), d_weight(sz(S)), d_bias(sz(S)),
        activation(sz((S + 1) * m)), gradient(sz((S + 1) * m)), pre_activation_gradient(sz(S * m)),
        target(sz(m)) {}

  static std::size_t sz(int n) { return static_cast<std::size_t>(n); }
  block& act(int s, int j) { return activation[sz(s * m + j)]; }
  block& grad(int s, int j) { return gradient[sz(s * m + j)]; }
  block& dz(int s, int j) { return pre_activation_gradient[sz(s * m + j)]; }

  /// The fixed inputs, targets and weights; NaN in every buffer a step must write, so a
  /// value read before it arrived poisons the gradients instead of passing unnoticed.
  void reset() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int s = 0; s < S; ++s) {
      for (int i = 0; i < width; ++i) {
        for (int k = 0; k < width; ++k)
          weight[sz(s)](i, k) = 0.9 / std::sqrt(double{width}) * std::sin(1.0 + 0.37 * s + 0.71 * i + 1.13 * k);
        bias[sz(s)](i) = 0.1 * std::cos(0.5 * s + 0.3 * i);
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
          act(0, j)(i, k) = std::sin(0.11 * sample + 0.23 * k + 0.5);
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
  /// I(s, j): dz = dy * (1 - y^2), stashed for W; dx = dz W_s^T (not for stage 0, whose
  /// input is data). The last stage starts from the loss gradient dy = y - target.
  void backward_input(int s, int j) {
    if (s == S - 1) grad(S, j) = act(S, j) - target[sz(j)];
    dz(s, j).array() = grad(s + 1, j).array() * (1.0 - act(s + 1, j).array().square());
    if (s > 0) grad(s, j).noalias() = dz(s, j) * weight[sz(s)].transpose();
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
/// micro-batch (every stage's F, then every stage's B).
void run_reference(step_state& st) {
  st.reset();
  for (int j = 0; j < st.m; ++j) {
    for (int s = 0; s < st.S; ++s) st.forward(s, j);
    for (int s = st.S - 1; s >= 0; --s) {
      st.backward_input(s, j);
      st.backward_weight(s, j);
    }
  }
}

// --- the schedules -------------------------------------------------------------------

/// The shape each family runs with on P ranks: m = 2P micro-batches (valid for every
/// family: ZB-V needs m >= 2P-1, interleaved 1F1B a group of P dividing m); V = 2 for the
/// families with model chunks, on the V-shape for ZB-V.
constexpr schedule_spec spec_for(int P, schedule_family f) {
  const bool chunked = f == schedule_family::interleaved_1f1b || f == schedule_family::looped_bfs ||
                       f == schedule_family::zbv || f == schedule_family::interleaved_zb;
  return {f, {.P = P, .m = 2 * P, .V = chunked ? 2 : 1, .layout = natural_placement(f)}};
}

/// One schedule as a process runs it: the lowered lists for each send mode, indexed by
/// send_mode (static storage), and the simulated bubble fraction of its compute
/// schedule, all computed at compile time.
struct pipeline_case {
  schedule_spec spec;
  schedule_view lowered[3];
  rational simulated_bubble;
};

template <schedule_spec S>
constexpr pipeline_case make_case() {
  static_assert(2 * (S.shape.stages() - 1) * S.shape.m <= 32767,
                "ctpipe: message_tag() must fit the MPI tags every MPI accepts (up to 32767)");
  return {S,
          {lowered_v<S, costs{}, runtime_model::rendezvous>.view(), lowered_v<S>.view(),
           lowered_v<S, costs{}, runtime_model::batched>.view()},
          simulate(schedule_v<S>.view(), costs{}).bubble_fraction()};
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

enum class send_mode { rendezvous, buffered, batched };

constexpr const char* mode_name(send_mode mode) {
  switch (mode) {
    case send_mode::rendezvous: return "rendezvous";
    case send_mode::buffered: return "buffered";
    case send_mode::batched: return "batched";
  }
  return "?";
}

constexpr int message_size = rows * width;  // doubles per message: one block

/// What a rank's run of the step measured.
struct rank_timing {
  double start = 0;  // MPI_Wtime when the rank began its list
  double end = 0;    // when its list and its sends were done
  double busy = 0;   // sum of its compute ops' durations
};

/// Runs one rank's lowered list `ops` once. `batch_end[k]` is the end of the batch
/// starting at position k (batched mode); `requests` has room for the longest batch.
/// Everything it touches is allocated by the caller.
template <send_mode Mode>
rank_timing run_rank(std::span<const op> ops, const pipeline_shape& shape, step_state& st,
                     std::span<const std::uint32_t> batch_end, std::span<MPI_Request> requests) {
  rank_timing t;
  t.start = MPI_Wtime();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const op o = ops[k];
    const int s = o.stage();
    const int j = o.microbatch();
    if (is_transfer(o.kind())) {
      if constexpr (Mode == send_mode::batched) {
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
    const double begin = MPI_Wtime();
    switch (o.kind()) {
      case op_kind::F: st.forward(s, j); break;
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

/// Max over stages of max |g - g_ref| / max |g_ref| (weights and biases together).
/// `gathered` holds every stage's dW_s then db_s, back to back.
double max_relative_error(const std::vector<double>& gathered, const step_state& ref) {
  double worst = 0;
  const double* g = gathered.data();
  for (int s = 0; s < ref.S; ++s) {
    const std::size_t i = static_cast<std::size_t>(s);
    const double scale = std::fmax(ref.d_weight[i].cwiseAbs().maxCoeff(), ref.d_bias[i].cwiseAbs().maxCoeff());
    const Eigen::Map<const weight_matrix> dw(g);
    const Eigen::Map<const bias_vector> db(g + width * width);
    const double diff =
        std::fmax((dw - ref.d_weight[i]).cwiseAbs().maxCoeff(), (db - ref.d_bias[i]).cwiseAbs().maxCoeff());
    const double error = diff / scale;
    worst = !(error <= worst) ? error : worst;  // a NaN (a value read before it arrived) stays
    g += width * width + width;
  }
  return worst;
}

/// Runs `steps` training steps of one schedule in one mode on this process's rank (each
/// from the same weights, so each must give the reference's gradients); rank 0 returns
/// the comparison with the reference and the bubble of the fastest step (the one least
/// disturbed by other processes on the machine).
case_result run_case(const pipeline_case& c, send_mode mode, int rank, int steps, const step_state& reference) {
  const pipeline_shape& shape = c.spec.shape;
  const std::span<const op> ops = c.lowered[static_cast<int>(mode)].rank(rank);

  // Allocated once, before any step: the step's buffers, the batch ends and requests
  // (batched), the Bsend buffer (buffered), the gathered gradients.
  step_state st(shape.stages(), shape.m);
  std::vector<std::uint32_t> batch_end(ops.size(), 0);
  std::size_t longest_batch = 0;
  for_each_batch(ops, [&](std::size_t first, std::size_t last) {
    batch_end[first] = static_cast<std::uint32_t>(last);
    longest_batch = last - first > longest_batch ? last - first : longest_batch;
  });
  std::vector<MPI_Request> requests(longest_batch > 0 ? longest_batch : 1, MPI_REQUEST_NULL);
  std::size_t sends = 0;
  for (const op o : ops) sends += is_send(o.kind()) ? 1 : 0;
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
      case send_mode::rendezvous: t = run_rank<send_mode::rendezvous>(ops, shape, st, batch_end, requests); break;
      case send_mode::buffered: t = run_rank<send_mode::buffered>(ops, shape, st, batch_end, requests); break;
      case send_mode::batched: t = run_rank<send_mode::batched>(ops, shape, st, batch_end, requests); break;
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const std::span<const pipeline_case> cases = cases_for(P);
  // steps: a whole number in [1, 1000], nothing else (no sign, no trailing characters).
  int steps = 3;
  bool steps_ok = argc <= 2;
  if (argc == 2) {
    const std::string_view text = argv[1];
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), steps);
    steps_ok = error == std::errc{} && end == text.data() + text.size() && steps >= 1 && steps <= 1000;
  }
  if (cases.empty() || !steps_ok) {
    if (rank == 0)
      std::fprintf(stderr, "ctpipe: usage: mpirun -np P mpi_pipeline [steps], P in {1, 2, 3, 4} (got %d), steps in [1, 1000]%s\n",
                   P, steps_ok ? "" : (argc > 2 ? " (one argument at most)" : " (not a whole number in that range)"));
    MPI_Finalize();
    return 2;
  }
  if (rank == 0)
    std::printf("P = %d ranks; tanh MLP with P*V stages of width %d, %d rows per micro-batch; %d steps each; "
                "gradients checked to relative %.0e\n",
                P, width, rows, steps, tolerance);

  int failures = 0;
  for (const pipeline_case& c : cases) {
    const pipeline_shape& shape = c.spec.shape;
    step_state reference(shape.stages(), shape.m);
    if (rank == 0) run_reference(reference);
    for (send_mode mode : {send_mode::rendezvous, send_mode::buffered, send_mode::batched}) {
      const case_result r = run_case(c, mode, rank, steps, reference);
      if (rank != 0) continue;
      const bool ok = r.max_relative_error <= tolerance;
      failures += ok ? 0 : 1;
      std::printf("%-16s P=%d m=%d V=%d  %-10s  max rel error %.1e %-4s  bubble measured %5.1f%% (step %6.2f ms)"
                  "  simulated %5.1f%%\n",
                  family_name(c.spec.family), shape.P, shape.m, shape.V, mode_name(mode), r.max_relative_error,
                  ok ? "OK" : "FAIL", 100.0 * r.measured_bubble, 1e3 * r.step_seconds,
                  100.0 * static_cast<double>(c.simulated_bubble.num) / static_cast<double>(c.simulated_bubble.den));
    }
  }
  if (rank == 0) std::printf("%s\n", failures == 0 ? "all gradients match" : "MISMATCH");
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
