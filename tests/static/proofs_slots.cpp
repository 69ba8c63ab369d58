// Compile-time proofs of the slots (ctpipe/analysis/slots.hpp, docs/memory.md "Slots"):
// for each family on a grid (P <= 4, m <= 5, V <= 2; zbv at P = 4: m <= 4; dualpipev:
// P = 2, m = 4, 5 and P = 4, m = 8), under uneven costs with latency
// (t_f = 1, t_b = 3, t_i = 2, t_w = 1, t_c = 1/2), the activation slots of the simulated
// timeline and the activation slots and receive buffers of ctpipe's lowering executed
// under blocking and stream-rank are minimal: each rank's count equals its
// largest overlap and a clique of that many lifetimes shares one instant. The
// simulated counts lie within one of in_flight()'s peaks. The run-time twin,
// tests/runtime/slots_test.cpp, runs the same functions on a larger grid and checks the
// overlaps against a brute-force count.
#include "proofs_slots.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::prove_slots_grid;

constexpr costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
constexpr runtime_model models[] = {runtime_model::blocking, runtime_model::stream_rank};

// One constant evaluation per family and P: Clang's 1M-step limit holds one P of a family
// (two runs of each point besides the simulation), not the whole grid; zbv at P = 4
// holds m <= 4, and dualpipev needs m >= 2P.
#define CTPIPE_SLOT_PROOFS(family, P, m_hi) \
  static_assert(prove_slots_grid(schedule_family::family, P, P, m_hi, uneven, models))

CTPIPE_SLOT_PROOFS(gpipe, 2, 5);
CTPIPE_SLOT_PROOFS(gpipe, 3, 5);
CTPIPE_SLOT_PROOFS(gpipe, 4, 5);
CTPIPE_SLOT_PROOFS(one_f_one_b, 2, 5);
CTPIPE_SLOT_PROOFS(one_f_one_b, 3, 5);
CTPIPE_SLOT_PROOFS(one_f_one_b, 4, 5);
CTPIPE_SLOT_PROOFS(interleaved_1f1b, 2, 5);
CTPIPE_SLOT_PROOFS(interleaved_1f1b, 3, 5);
CTPIPE_SLOT_PROOFS(interleaved_1f1b, 4, 5);
CTPIPE_SLOT_PROOFS(zb_h1, 2, 5);
CTPIPE_SLOT_PROOFS(zb_h1, 3, 5);
CTPIPE_SLOT_PROOFS(zb_h1, 4, 5);
CTPIPE_SLOT_PROOFS(zbv, 2, 5);
CTPIPE_SLOT_PROOFS(zbv, 3, 5);
CTPIPE_SLOT_PROOFS(zbv, 4, 4);
CTPIPE_SLOT_PROOFS(dualpipev, 2, 5);
CTPIPE_SLOT_PROOFS(dualpipev, 4, 8);

#undef CTPIPE_SLOT_PROOFS

}  // namespace
