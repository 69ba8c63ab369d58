// Compile-fail case: lower() of a schedule that already holds transfers (not a valid
// compute schedule) stops the constant evaluation with lower()'s message.
// Built with -DCTPIPE_TWIN it lowers the compute schedule once and must compile.
#include <ctpipe/ctpipe.hpp>

constexpr bool lowers() {
  const ctpipe::schedule compute = ctpipe::generate({ctpipe::schedule_family::one_f_one_b, {2, 4}});
  const ctpipe::schedule once = ctpipe::lower(compute.view());
#ifdef CTPIPE_TWIN
  return once.size() == compute.size() + 2 * ctpipe::messages(compute.view());
#else
  return ctpipe::lower(once.view()).size() > 0;
#endif
}
static_assert(lowers());
