// A rank's program consumed at zero cost: the runtime picks its rank at run time, the
// program is unrolled at compile time, each op reaches the handler as a type whose
// kind, stage and micro-batch are constants. Usage: static_dispatch [rank]
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/dispatch/op_types.hpp>

#include <cstdio>
#include <cstdlib>

using namespace ctpipe;

constexpr auto& program = schedule_v<schedule_spec{schedule_family::interleaved_1f1b, {.P = 4, .m = 8, .V = 2}}>;

int main(int argc, char** argv) {
  const int rank = argc > 1 ? std::atoi(argv[1]) : 0;
  if (rank < 0 || rank >= program.shape.P) {
    std::fprintf(stderr, "ctpipe: rank must lie in [0, %d)\n", program.shape.P);
    return 2;
  }
  int forwards = 0;
  int backwards = 0;
  run_rank<program>(static_cast<std::size_t>(rank), [&](auto op) {
    using O = decltype(op);  // O::kind, O::stage, O::microbatch are compile-time constants
    if constexpr (O::kind == op_kind::F) {
      ++forwards;  // a runtime would launch chunk O::stage / P's forward of micro-batch O::microbatch here
    } else {
      ++backwards;
    }
    std::printf("%d%s%d ", O::stage, kind_name(O::kind), O::microbatch);
  });
  std::printf("\nrank %d: %d forwards, %d backwards\n", rank, forwards, backwards);
}
