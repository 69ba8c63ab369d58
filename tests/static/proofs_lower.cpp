// Compile-time proofs, lowering: at one point per family and shape class (odd P, P = 1,
// m < P, m = P, the V-shape turn, three chunks), lower(generate(spec)) runs to completion
// under rendezvous and buffered sends, carries one SEND and one RECV per message, keeps
// the compute order and orders each rank pair's messages alike on both ranks.
// One static_assert per point: each is its own constant evaluation within Clang's
// default step budget. The full grid (P <= 6, m <= 12, V <= 3, every family and
// interleaved rule) runs at run time through the same function
// (tests/runtime/lower_test.cpp).
#include "proofs_lower.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::prove_lowering;

constexpr schedule_spec point(schedule_family f, int P, int m, int V = 1) {
  return {f, {P, m, V, natural_placement(f)}};
}

static_assert(prove_lowering(point(schedule_family::gpipe, 4, 8)));
static_assert(prove_lowering(point(schedule_family::gpipe, 3, 2)));
static_assert(prove_lowering(point(schedule_family::one_f_one_b, 4, 8)));
static_assert(prove_lowering(point(schedule_family::one_f_one_b, 5, 3)));
static_assert(prove_lowering(point(schedule_family::one_f_one_b, 1, 4)));
static_assert(prove_lowering(point(schedule_family::interleaved_1f1b, 2, 4, 2)));
static_assert(prove_lowering(point(schedule_family::interleaved_1f1b, 4, 8, 2)));
static_assert(prove_lowering(point(schedule_family::interleaved_1f1b, 3, 6, 3)));
static_assert(prove_lowering(point(schedule_family::looped_bfs, 4, 8, 2)));
static_assert(prove_lowering(point(schedule_family::zb_h1, 4, 8)));
static_assert(prove_lowering(point(schedule_family::zb_h1, 3, 3)));
static_assert(prove_lowering(point(schedule_family::zb_h2, 4, 8)));
static_assert(prove_lowering(point(schedule_family::zbv, 4, 8, 2)));
static_assert(prove_lowering(point(schedule_family::zbv, 3, 5, 2)));
static_assert(prove_lowering(point(schedule_family::interleaved_zb, 4, 8, 2)));

// P = 2, V = 2, m = 4 interleaved (issue 3): 24 messages, 12 sent by each rank, each
// RECV of the direction of its SEND.
constexpr auto& interleaved_p2 = lowered_v<point(schedule_family::interleaved_1f1b, 2, 4, 2)>;
constexpr int count_of(int r, op_kind k) {
  int n = 0;
  for (const op o : interleaved_p2.rank(r)) n += o.kind() == k ? 1 : 0;
  return n;
}
static_assert(count_of(0, op_kind::send_f) + count_of(0, op_kind::send_b) == 12);
static_assert(count_of(1, op_kind::send_f) + count_of(1, op_kind::send_b) == 12);
static_assert(count_of(0, op_kind::send_f) + count_of(1, op_kind::send_f) == 12);
static_assert(count_of(0, op_kind::recv_f) + count_of(1, op_kind::recv_f) == 12);
static_assert(count_of(0, op_kind::send_b) + count_of(1, op_kind::send_b) == 12);
static_assert(count_of(0, op_kind::recv_b) + count_of(1, op_kind::recv_b) == 12);

}  // namespace
