// Compile-time proofs, executed = proved (docs/spec.md §7.2): for every family, the lists
// lower(v, c, model) makes run under `model` to exactly simulate(v, c)'s makespan
//   - under `blocking` and `posted`, for uneven costs with latency (t_f = 1, t_b = 3,
//     t_i = 2, t_w = 1, t_c = 1/2);
//   - under `rendezvous` with equal op costs and t_c = 0,
// and the batched order runs to completion under its model with latency; the stream
// order runs every compute op at its simulated time under one stream per rank without
// latency (uneven op costs; the run-time twin adds latency, the other policies and the
// claim that it is never slower than the key order, with zero loss wherever
// stream_spacing() holds). Each
// static_assert is a grid (P <= 3, m <= 4, V <= 2; m <= 3 for the streams) in one constant
// evaluation within the compilers' default limits; the run-time twin in
// tests/runtime/execute_test.cpp takes P <= 6, m <= 12, V <= 3, every interleaved rule
// and more cost sets through the same function.
#include "proofs_lower.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::prove_executed_grid;

constexpr costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
constexpr costs equal{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}};
constexpr costs uneven_instant{rational{1}, rational{3}, rational{2}, rational{1}, rational{0}};

constexpr bool grid(schedule_family f, const costs& c, runtime_model model) {
  return prove_executed_grid(f, 3, 4, 2, c, model);
}

/// The stream order's proof at P ranks (P = 1 has no transfers): m <= 3, V <= 2 (or,
/// for a family that needs more micro-batches, its least m, 2P for DualPipeV), under one
/// stream per rank without latency, uneven op costs. One P per static_assert: each point
/// lowers, runs and simulates twice (the key order's run and stream_spacing() besides),
/// and looped BFS at P <= 3 in one evaluation passes Clang's step limit.
constexpr bool stream_grid(schedule_family f, int P) {
  int proved = 0;
  for (int m = 1; m <= 2 * P && (m <= 3 || proved == 0); ++m) {
    for (int V = 1; V <= 2; ++V) {
      const schedule_spec spec{f, {P, m, V, natural_placement(f)}};
      if (spec_error(spec) != nullptr) continue;
      if (!ctpipe::tests::prove_executed(generate(spec).view(), uneven_instant, runtime_model::stream_rank))
        return false;
      ++proved;
    }
  }
  return proved > 0;
}

#define CTPIPE_EXECUTED_PROOFS(family)                                            \
  static_assert(grid(schedule_family::family, uneven, runtime_model::blocking));  \
  static_assert(grid(schedule_family::family, uneven, runtime_model::posted));    \
  static_assert(grid(schedule_family::family, equal, runtime_model::rendezvous)); \
  static_assert(grid(schedule_family::family, uneven, runtime_model::batched));   \
  static_assert(stream_grid(schedule_family::family, 2));                         \
  static_assert(stream_grid(schedule_family::family, 3))

CTPIPE_EXECUTED_PROOFS(gpipe);
CTPIPE_EXECUTED_PROOFS(one_f_one_b);
CTPIPE_EXECUTED_PROOFS(interleaved_1f1b);
CTPIPE_EXECUTED_PROOFS(looped_bfs);
CTPIPE_EXECUTED_PROOFS(zb_h1);
CTPIPE_EXECUTED_PROOFS(zb_h2);
CTPIPE_EXECUTED_PROOFS(zbv);
CTPIPE_EXECUTED_PROOFS(interleaved_zb);
CTPIPE_EXECUTED_PROOFS(dualpipev);

#undef CTPIPE_EXECUTED_PROOFS

// The example of a loss no order avoids under rendezvous: zb-h1, P = 2, m = 2,
// costs f = 1, i = 1, w = 2 simulates to 9; its rendezvous lists run in 10.
constexpr bool zb_h1_rendezvous_loss() {
  const costs c{rational{1}, rational{3}, rational{1}, rational{2}, rational{0}};
  const schedule g = generate({schedule_family::zb_h1, {2, 2}});
  const schedule l = lower(g.view(), c, runtime_model::rendezvous);
  return simulate(g.view(), c).makespan() == rational{9} &&
         execute(l.view(), c, runtime_model::rendezvous).makespan() == rational{10} &&
         execute(lower(g.view(), c, runtime_model::blocking).view(), c, runtime_model::blocking).makespan() ==
             rational{9};
}
static_assert(zb_h1_rendezvous_loss());

// lowered_v freezes the order of a model: the rendezvous lists of 1F1B P = 4, m = 8 run
// under rendezvous sends, and the default (blocking) lists equal lower(v).
constexpr auto& rendezvous_1f1b =
    lowered_v<schedule_spec{schedule_family::one_f_one_b, {4, 8}}, costs{}, runtime_model::rendezvous>;
static_assert(validate_lowered(rendezvous_1f1b.view(), send_semantics::rendezvous).ok());
static_assert(execute(rendezvous_1f1b.view(), costs{}, runtime_model::rendezvous).makespan() == rational{33});

}  // namespace
