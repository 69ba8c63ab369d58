// ctpipe/dispatch/table.hpp: per-rank dispatch tables, for runtimes that loop over a
// rank's program instead of unrolling it.
#pragma once

#include <cstddef>  // std::size_t
#include <span>     // the table as a span
#include <utility>  // std::index_sequence

#include "ctpipe/dispatch/op_types.hpp"

namespace ctpipe {

/// A rank's program as a constexpr array of function pointers: entry k is
/// `&Handler::template run<op_c<...>>`, the handler's code for the rank's k-th op, which
/// takes a `Context&`. `Handler` is a type with a static member function template
/// `template <class Op> static void run(Context&)`. An overlapped pair is two entries,
/// its word's (kind overlap_f_b) then its B word's (op_types.hpp's file comment): a
/// handler that runs the pair at the word skips the next entry's B.
template <const auto& S, int R, class Handler, class Context>
struct dispatch_table {
  using entry = void (*)(Context&);
  static constexpr std::size_t size = S.offsets[R + 1] - S.offsets[R];

 private:
  template <std::size_t... I>
  static constexpr auto make(std::index_sequence<I...>) {
    struct table_t {
      entry entries[size == 0 ? 1 : size];
    };
    return table_t{{&Handler::template run<op_c<S.ops[S.offsets[R] + I].bits>>...}};
  }
  static constexpr auto storage = make(std::make_index_sequence<size>{});

 public:
  /// The entries, in execution order.
  static constexpr std::span<const entry> entries{storage.entries, size};

  /// Runs the rank's program: one indirect call per op.
  static void run(Context& context) {
    for (entry e : entries) e(context);
  }
};

}  // namespace ctpipe
