// Uses the library's frozen schedules and a compile-time proof; prints rank 0's count.
#include <ctpipe/ctpipe.hpp>

constexpr auto& gpipe = ctpipe::schedule_v<ctpipe::schedule_spec{ctpipe::schedule_family::gpipe, {2, 3}}>;
static_assert(ctpipe::simulate(gpipe.view(), ctpipe::costs{}).makespan() == ctpipe::rational{12});

int main() { return gpipe.rank(0).size() == 6 ? 0 : 1; }
