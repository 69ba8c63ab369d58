// Compile-fail case: a rational overflow in a constant expression is a compile error
// that shows the library's message (with GCC too). Built with -DCTPIPE_TWIN it adds a
// value that fits and must compile.
#include <ctpipe/ctpipe.hpp>

#include <cstdint>  // INT64_MAX

#ifdef CTPIPE_TWIN
constexpr std::int64_t big = INT64_MAX - 1;
#else
constexpr std::int64_t big = INT64_MAX;
#endif

static_assert(ctpipe::rational{big} + ctpipe::rational{1} > ctpipe::rational{0});
