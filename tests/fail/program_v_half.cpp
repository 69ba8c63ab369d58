// Compile-fail case: program_of() for V-Half, a family without a periodic program (its
// warm-up and cool-down come from a greedy over the whole timeline), is rejected.
// Built with -DCTPIPE_TWIN it asks for 1F1B's and must compile.
#include <ctpipe/schedules/program.hpp>

#ifdef CTPIPE_TWIN
constexpr auto family = ctpipe::schedule_family::one_f_one_b;
#else
constexpr auto family = ctpipe::schedule_family::v_half;
#endif

static_assert(ctpipe::program_of(ctpipe::schedule_spec{family, {4, 8}}).m_min == 3);
