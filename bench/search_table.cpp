// The search's tables for bench/RESULTS.md (docs/search.md): the Zero Bubble authors'
// anchor settings at k = 1, 1.5, 2, 3 (their published bubble, their heuristic as
// search_options::authors_only reproduces it, ctpipe's search, the lower bound, the gap,
// the search's seconds, best of 5), the same on the V-shape against the authors'
// automatic ZB-V (chunk costs half the numbers; their rates at k = 1 as the issue quotes
// them), then the exact method on P = 4, m = 8 (the greedy alone, after local repair,
// exact, bound, seconds). Prints Markdown. Argument: CBC's time limit in seconds
// (default 60).
#include <ctpipe/exact/search_cbc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

using namespace ctpipe;

namespace {

struct setting {
  int P, m;
  std::int64_t f, i, w, c;
  const char* theirs[4];
};

search_problem problem(int P, int m, const costs& c, rational gamma, rational limit, bool v_shape = false) {
  search_problem p;
  p.shape = v_shape ? pipeline_shape{P, m, 2, placement::v_shape} : pipeline_shape{P, m, 1, placement::loop};
  p.cost = c, p.gamma = gamma, p.memory_limit = {limit};
  return p;
}

double percent(rational x) { return x.to_double() * 100; }

/// One row of the anchor tables: setting s at limit k P (loop or V-shape), the authors'
/// printed rate `theirs`, their heuristic here, ctpipe's search, the bound, the gap, and
/// the search's best seconds of 5.
void row(const setting& s, rational k, bool v_shape, const char* theirs_printed) {
  costs c;
  c.f = rational{s.f}, c.i = rational{s.i}, c.w = rational{s.w}, c.c = rational{s.c}, c.b = c.i + c.w;
  const search_problem p = problem(s.P, s.m, c, rational{16, 37}, k * rational{s.P}, v_shape);
  const search_report theirs = search(p, {true}).report;
  const search_report ours = search(p).report;
  double best = ours.seconds;
  for (int run = 0; run < 4; ++run) best = std::min(best, search(p).report.seconds);
  const rational work = rational{s.m} * (c.f + c.i + c.w);
  const rational bound = (ours.lower_bound - work) / ours.lower_bound;
  std::printf("| %d | %d | %g | %s | %.2f%% | %.2f%% | %.2f%% | %.2f pt | %s | %.4f |\n", s.P, s.m, k.to_double(),
              theirs_printed, percent(theirs.bubble), percent(ours.bubble), percent(bound),
              percent(ours.bubble) - percent(bound), ours.optimal ? "yes" : "no", best);
}

/// An exact value as text: `a` or `a/b`.
std::string exact(rational x) {
  return x.den == 1 ? std::to_string(x.num) : std::to_string(x.num) + "/" + std::to_string(x.den);
}

}  // namespace

int main(int argc, char** argv) {
  const double exact_seconds = argc > 1 ? std::atof(argv[1]) : 60;
  const setting settings[] = {
      {16, 48, 28814, 28760, 19352, 1610, {".1536", ".0632", ".0077", ".0077"}},
      {24, 96, 13566, 13968, 10518, 758, {".1121", ".0503", ".0083", "0"}},
      {32, 256, 18894, 19288, 14386, 887, {".0593", ".0254", ".0036", "0"}},
  };
  const rational ks[] = {rational{1}, rational{3, 2}, rational{2}, rational{3}};
  std::printf(
      "| P | m | k | authors' table | their heuristic here | ctpipe | lower bound | gap | proved | ctpipe seconds |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const setting& s : settings) {
    for (int x = 0; x < 4; ++x) row(s, ks[x], false, s.theirs[x]);
  }
  std::printf("\nThe V-shape (two chunks per rank, `--placement v`; limit k P full activations):\n\n");
  std::printf(
      "| P | m | k | authors' rate | their automatic ZB-V here | ctpipe | lower bound | gap | proved | ctpipe seconds "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const char* const theirs_v[] = {".0697", ".0483", "-"};
  for (int n = 0; n < 3; ++n) {
    for (int x = 0; x < 4; ++x) row(settings[n], ks[x], true, x == 0 ? theirs_v[n] : "-");
  }
  std::printf("\nExact method (CBC, %g s limit), P = 4, m = 8 (96 ops):\n\n", exact_seconds);
  std::printf(
      "| costs f, i, w, c | gamma | limit | greedy span | after local repair | exact span | lower bound | proved | "
      "seconds |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  costs article;
  costs heavy;
  heavy.f = rational{1}, heavy.i = rational{2}, heavy.w = rational{1, 2}, heavy.c = rational{1, 4};
  costs authors;
  authors.f = rational{28814}, authors.i = rational{28760}, authors.w = rational{19352}, authors.c = rational{1610};
  const std::pair<const char*, costs> cost_sets[] = {
      {"1, 1, 1, 0", article}, {"1, 2, 1/2, 1/4", heavy}, {"28814, 28760, 19352, 1610", authors}};
  for (const auto& [name, c] : cost_sets) {
    for (const rational g : {rational{1}, rational{16, 37}}) {
      for (const int limit : {2, 3, 4, 6}) {
        const search_problem p = problem(4, 8, c, g, rational{limit});
        const search_report greedy = search(p, {false, false}).report;
        const search_report local = search(p).report;
        exact_options o;
        o.seconds = exact_seconds;
        const search_report r = search_exact(p, o).report;
        std::printf("| %s | %s | %d | %s | %s | %s | %s | %s | %.2f |\n", name, g == rational{1} ? "1" : "16/37", limit,
                    exact(greedy.span).c_str(), exact(local.span).c_str(), exact(r.span).c_str(),
                    exact(r.lower_bound).c_str(), r.optimal ? "yes" : "no", r.seconds);
      }
    }
  }
  std::printf(
      "\nExact method on the V-shape (CBC, %g s limit, detail::v_search_program), P m <= 8, gamma 16/37, limit "
      "3/2:\n\n",
      exact_seconds);
  std::printf(
      "| P | m | costs f, i, w, c | greedy span | after local repair | exact span | lower bound | proved | seconds "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  const std::tuple<int, int, const char*, costs> v_cases[] = {{2, 2, "1, 1, 1, 0", article},
                                                              {2, 3, "1, 1, 1, 0", article},
                                                              {2, 4, "1, 1, 1, 0", article},
                                                              {4, 2, "1, 2, 1/2, 1/4", heavy}};
  for (const auto& [P, m, name, c] : v_cases) {
    const search_problem p = problem(P, m, c, rational{16, 37}, rational{3, 2}, true);
    const search_report greedy = search(p, {false, false}).report;
    const search_report local = search(p).report;
    exact_options o;
    o.seconds = exact_seconds;
    const search_report r = search_exact(p, o).report;
    std::printf("| %d | %d | %s | %s | %s | %s | %s | %s | %.2f |\n", P, m, name, exact(greedy.span).c_str(),
                exact(local.span).c_str(), exact(r.span).c_str(), exact(r.lower_bound).c_str(),
                r.optimal ? "yes" : "no", r.seconds);
  }
}
