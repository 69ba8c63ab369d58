// Compile-time proofs for interleaved 1F1B, Megatron's rule, over P in [1, 6] x V in
// [1, 4] x every m in [1, 4P] x every group size g it accepts (warmup factor 2): the
// simulated bubble fraction and makespan equal (P-1)/(mV+P-1) and (m+(P-1)/V)(t_f+t_b)
// with the article's costs, every rank's peak in-flight count equals
// min(mV, 2(P-1-r) + (V-1)g + 1), and the message count equals 2m(PV-1)
// (tests/static/proofs.hpp, prove_interleaved_point). P = 1 .. 5 here, P = 6 in
// proofs_interleaved_p6.cpp (two translation units build in parallel).
//
// Each point is one variable template, so one constant evaluation of at most P*m*V*2 =
// 1152 ops, far inside the default limits of GCC 12 and Clang 14 (no -fconstexpr-*
// flag). Validity of every point, the other rules (megatron-legacy, torch, warmup
// factor 1) over the same grid, and V = 1 = 1F1B are checked at run time through the
// same function (tests/runtime/interleaved_test.cpp); a few of them also at compile time
// in spec_values.cpp.
#include "proofs_interleaved.hpp"

#ifndef CTPIPE_PROVE_P6
static_assert(ctpipe::tests::interleaved_grid<1>(), "interleaved 1F1B, P = 1");
static_assert(ctpipe::tests::interleaved_grid<2>(), "interleaved 1F1B, P = 2");
static_assert(ctpipe::tests::interleaved_grid<3>(), "interleaved 1F1B, P = 3");
static_assert(ctpipe::tests::interleaved_grid<4>(), "interleaved 1F1B, P = 4");
static_assert(ctpipe::tests::interleaved_grid<5>(), "interleaved 1F1B, P = 5");
#else
static_assert(ctpipe::tests::interleaved_grid<6>(), "interleaved 1F1B, P = 6");
#endif
