// Probe for the largest lowered schedule at the compilers' default constexpr limits:
// lowered_v freezes lower(generate(spec), costs{}, CTPIPE_MODEL) (default blocking); with
// -DCTPIPE_VALIDATE=1 a second constant evaluation checks it with validate_lowered
// (rendezvous sends for the rendezvous order, buffered sends for the blocking order).
// -DCTPIPE_FAMILY=one_f_one_b -DCTPIPE_P=8 -DCTPIPE_M=256 -DCTPIPE_V=1 -DCTPIPE_LAYOUT=loop;
// bench/lowered_limits.sh searches the largest m.
#include <ctpipe/ctpipe.hpp>

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::CTPIPE_FAMILY, {CTPIPE_P, CTPIPE_M, CTPIPE_V, placement::CTPIPE_LAYOUT}};
#ifndef CTPIPE_MODEL
#define CTPIPE_MODEL blocking
#endif
constexpr runtime_model model = runtime_model::CTPIPE_MODEL;
constexpr auto& lowered = lowered_v<spec, costs{}, model>;
#if CTPIPE_VALIDATE
static_assert(validate_lowered(lowered.view(), model == runtime_model::rendezvous ? send_semantics::rendezvous
                                                                                  : send_semantics::buffered)
                  .ok());
#endif

int main() { return static_cast<int>(lowered.size() % 2); }
