// Compile-fail case: expand() of 1F1B's periodic program at P = 4 below its m_min = P-1
// = 3 (where the warm-up is cut short, the program does not hold) is rejected. Built
// with -DCTPIPE_TWIN it expands m = 3 and must compile.
#include <ctpipe/schedules/program.hpp>

#ifdef CTPIPE_TWIN
constexpr int m = 3;
#else
constexpr int m = 2;
#endif

static_assert(ctpipe::expand(ctpipe::program_of(ctpipe::schedule_spec{ctpipe::schedule_family::one_f_one_b, {4, 8}}), m)
                  .size() == 8 * static_cast<std::size_t>(m));
