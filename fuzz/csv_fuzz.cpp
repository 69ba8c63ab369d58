// libFuzzer target for the CSV reader (ctpipe/io/csv.hpp): on any bytes parse_csv()
// returns a schedule or raises ctpipe::error, never anything else, and a schedule it
// returns writes back (to_csv, with its annotations) to a text that reads back equal,
// annotations included; the validators then run
// on it without a crash, and a valid compute schedule lowers to lists that run under
// both send semantics. Built with -DCTPIPE_BUILD_FUZZ=ON (Clang only) under ASan and
// UBSan; see docs/building.md ("Fuzzing the CSV reader").
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t
#include <cstdlib>  // std::abort
#include <algorithm>
#include <string_view>

#include "ctpipe/ctpipe.hpp"
#include "ctpipe/io/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ctpipe::io::csv_schedule s = ctpipe::io::parse_csv(text);
    const ctpipe::io::csv_schedule back = ctpipe::io::parse_csv(ctpipe::io::to_csv(s));
    const ctpipe::schedule_view a = s.view();
    const ctpipe::schedule_view b = back.view();
    if (!(a.shape == b.shape) || !std::equal(a.ops.begin(), a.ops.end(), b.ops.begin(), b.ops.end()) ||
        !std::equal(a.offsets.begin(), a.offsets.end(), b.offsets.begin(), b.offsets.end()) ||
        back.annotations != s.annotations) {
      std::abort();  // the round trip lost something
    }
    // The validators' memory grows with S*m: keep each input cheap.
    if (static_cast<long long>(a.shape.stages()) * a.shape.m <= (1 << 16)) {
      const bool transfers =
          std::any_of(a.ops.begin(), a.ops.end(), [](ctpipe::op o) { return ctpipe::is_transfer(o.kind()); });
      if (transfers) {
        (void)ctpipe::validate_lowered(a, ctpipe::send_semantics::rendezvous);
        (void)ctpipe::validate_lowered(a, ctpipe::send_semantics::buffered);
        (void)ctpipe::peer_order_consistent(a);
      } else if (ctpipe::validate(a).ok()) {
        // Any valid compute schedule lowers to lists that run under both send semantics.
        const ctpipe::schedule l = ctpipe::lower(a);
        if (!ctpipe::validate_lowered(l.view(), ctpipe::send_semantics::rendezvous).ok() ||
            !ctpipe::validate_lowered(l.view(), ctpipe::send_semantics::buffered).ok() ||
            !ctpipe::peer_order_consistent(l.view())) {
          std::abort();
        }
      }
    }
  } catch (const ctpipe::error&) {
    // rejected with a message: fine
  }
  return 0;
}
