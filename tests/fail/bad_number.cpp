// Compile-fail case: parse_rational of a malformed number in a constant expression shows
// the parser's message (with GCC too). Built with -DCTPIPE_TWIN it parses "3/7".
#include <ctpipe/ctpipe.hpp>

#ifdef CTPIPE_TWIN
constexpr const char* text = "3/7";
#else
constexpr const char* text = "3/7x";
#endif

static_assert(ctpipe::parse_rational(text) == ctpipe::rational{3, 7});
