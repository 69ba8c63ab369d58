// Compile-time proofs for combined 1F1B (Megatron-LM's overlap_moe_expert_parallel_comm)
// over P in [1, 5] x V in [1, 3] x every m in [1, 3P] x every group size g in [1, m]
// (tests/static/proofs_combined.hpp, prove_combined_point): ctpipe's rule accepts exactly
// what Megatron accepts; rank r's warmup is min(mV, 2(P-1-r) + (V-1)g + 1) forwards,
// then overlapped pairs; under fused pairs (t_fb = t_f + t_b) and split pairs, at three
// cost sets, the makespan is (m+(P-1)/V)(t_f+t_b), the bubble (P-1)/(mV+P-1) and every
// rank idles (P-1)(t_f+t_b)/V; every rank's peak in-flight chunks are
// min(mV, 2(P-1-r) + (V-1)g + 2); the messages 2m(PV-1). Each point is one constant
// evaluation of at most 2 * P*m*V*2 = 900 ops. Validity of every point, and a larger
// grid, run at run time through the same function (tests/runtime/combined_test.cpp).
#include "proofs_combined.hpp"

static_assert(ctpipe::tests::combined_grid<1>(), "combined 1F1B, P = 1");
static_assert(ctpipe::tests::combined_grid<2>(), "combined 1F1B, P = 2");
static_assert(ctpipe::tests::combined_grid<3>(), "combined 1F1B, P = 3");
static_assert(ctpipe::tests::combined_grid<4>(), "combined 1F1B, P = 4");
static_assert(ctpipe::tests::combined_grid<5>(), "combined 1F1B, P = 5");

// The issue's example, P = 4, V = 2, m = 8, g = 4: peaks 12 10 8 6, one chunk more on
// every rank than interleaved 1F1B's 11 9 7 5.
constexpr ctpipe::schedule_spec issue_example{ctpipe::schedule_family::combined_1f1b, {4, 8, 2}};
static_assert(ctpipe::peak_in_flight_formula(issue_example, ctpipe::rational{1}, 0).value == ctpipe::rational{12});
static_assert(ctpipe::peak_in_flight_formula(issue_example, ctpipe::rational{1}, 3).value == ctpipe::rational{6});
