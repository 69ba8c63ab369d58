// The loss of each runtime model on the lists lower() makes for it: for every family at
// P = 4 and P = 8 (m = 2P, V = 2 for the chunked families) and three cost sets, the
// makespan execute() gives under the model against simulate()'s, as a Markdown table
// (docs/runtimes.md and bench/RESULTS.md quote it). Exact: losses are rationals.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <string>

int main() {
  using namespace ctpipe;
  struct cost_set {
    const char* name;
    costs c;
  };
  const cost_set sets[] = {
      {"equal, t_c = 0", costs{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}}},
      {"article, t_c = 0", costs{}},
      {"article, t_c = 1/2", costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}}},
      {"f=1 b=3 i=2 w=1 c=1/10", costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 10}}},
  };
  std::printf("| family | P | m | V | costs | simulate | blocking | posted | rendezvous | batched |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const int P : {4, 8}) {
    for (const schedule_family f : all_families) {
      const bool chunked = f == schedule_family::interleaved_1f1b || f == schedule_family::looped_bfs ||
                           f == schedule_family::zbv || f == schedule_family::interleaved_zb;
      const schedule_spec spec{f, {P, 2 * P, chunked ? 2 : 1, natural_placement(f)}};
      const schedule g = generate(spec);
      for (const cost_set& set : sets) {
        const rational sim = simulate(g.view(), set.c).makespan();
        std::string row = fmt::format("| {} | {} | {} | {} | {} | {}", family_name(f), P, 2 * P, spec.shape.V, set.name,
                                      io::to_string(sim));
        for (const runtime_model model :
             {runtime_model::blocking, runtime_model::posted, runtime_model::rendezvous, runtime_model::batched}) {
          const execution e = execute(lower(g.view(), set.c, model).view(), set.c, model);
          const rational loss = e.makespan() - sim;
          const double percent = 100.0 * (static_cast<double>(loss.num) / static_cast<double>(loss.den)) /
                                 (static_cast<double>(sim.num) / static_cast<double>(sim.den));
          row +=
              loss == rational{0} ? std::string(" | 0") : fmt::format(" | +{} ({:.0f}%)", io::to_string(loss), percent);
        }
        std::printf("%s |\n", row.c_str());
      }
    }
  }
}
