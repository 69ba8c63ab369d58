// Compile-time proofs of unequal stages and micro-batches (cost_scale, docs/spec.md
// §2.2, §4.2): the values (1F1B, P = 4, m = 8 with the last stage 5/4 slower:
// 39; layers 8, 8, 7, 7: GPipe 258, 1F1B 252 layer-times), GPipe's closed form
// (Σa + (m-1) max a)(t_f+t_b) for every tuple of stage factors from {1, 3/2, 2, 5/2} on
// P = 2, from {1, 3/2, 2} on P = 3 and from {1, 2} on P = 4, at a few m each, and 1F1B's
// where the last factor is the largest (and none elsewhere);
// and prove_scaled() (busy time, op lengths, formulas, zero loss of the blocking and
// posted lists under execute()) for every family on small shapes. The run-time twin,
// tests/runtime/scaled_test.cpp, takes larger shapes and random factors.
#include "proofs_scaled.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::prove_scaled;
using ctpipe::tests::prove_scaled_formulas;

constexpr rational last_slow[] = {1, 1, 1, rational{5, 4}};
constexpr rational layers[] = {8, 8, 7, 7};
constexpr rational four_factors[] = {1, rational{3, 2}, 2, rational{5, 2}};
constexpr rational three_factors[] = {1, rational{3, 2}, 2};
constexpr rational two_factors[] = {1, 2};
constexpr costs article{};
constexpr costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{0}};

constexpr schedule_spec spec_of(schedule_family f, int P, int m, int V = 1) {
  return {f, {P, m, V, natural_placement(f)}};
}

constexpr rational makespan(schedule_family f, const rational* stage) {
  return simulate(generate(spec_of(f, 4, 8)).view(), article, cost_scale{std::span<const rational>(stage, 4), {}})
      .makespan();
}

static_assert(makespan(schedule_family::one_f_one_b, last_slow) == rational{39});
static_assert(makespan(schedule_family::gpipe, layers) == rational{258});
static_assert(makespan(schedule_family::one_f_one_b, layers) == rational{252});
static_assert(makespan_formula(spec_of(schedule_family::one_f_one_b, 4, 8), article, cost_scale{last_slow, {}}).value ==
              rational{39});
static_assert(!makespan_formula(spec_of(schedule_family::one_f_one_b, 4, 8), article, cost_scale{layers, {}}).holds);

// One constant evaluation each, within Clang's default step limit.
constexpr bool formulas(schedule_family f, int P, int m, const rational* factors, int n, const costs& c) {
  return prove_scaled_formulas(f, P, m, m, factors, n, c);
}
#define CTPIPE_SCALED_FORMULAS(family)                                               \
  static_assert(formulas(schedule_family::family, 2, 1, four_factors, 4, article));  \
  static_assert(formulas(schedule_family::family, 2, 3, four_factors, 4, uneven));   \
  static_assert(formulas(schedule_family::family, 2, 6, four_factors, 4, article));  \
  static_assert(formulas(schedule_family::family, 3, 2, three_factors, 3, article)); \
  static_assert(formulas(schedule_family::family, 3, 5, three_factors, 3, uneven));  \
  static_assert(formulas(schedule_family::family, 4, 4, two_factors, 2, article))
CTPIPE_SCALED_FORMULAS(gpipe);
CTPIPE_SCALED_FORMULAS(one_f_one_b);

// prove_scaled() on every family at its smallest shapes, unequal stages and micro-batches,
// uneven costs with latency (one constant evaluation each, within Clang's default limit;
// the run-time twin adds the article's costs and larger shapes).
constexpr costs latency{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
constexpr rational stages[] = {2, 1, rational{3, 2}, 1, rational{5, 4}, 2, 1, rational{1, 2}};
constexpr rational microbatches[] = {1, 2, rational{1, 2}, 1, 3, 1, 1, rational{3, 2}};

constexpr bool prove_family(schedule_family f, int P, int m) {
  const schedule_spec spec = spec_of(f, P, m, family_of(f).default_V);
  const cost_scale scale{std::span<const rational>(stages, static_cast<std::size_t>(spec.shape.stages())),
                         std::span<const rational>(microbatches, static_cast<std::size_t>(m))};
  return prove_scaled(spec, latency, scale);
}

static_assert(prove_family(schedule_family::gpipe, 3, 3));
static_assert(prove_family(schedule_family::one_f_one_b, 3, 4));
static_assert(prove_family(schedule_family::interleaved_1f1b, 2, 4));
static_assert(prove_family(schedule_family::looped_bfs, 2, 3));
static_assert(prove_family(schedule_family::zb_h1, 3, 3));
static_assert(prove_family(schedule_family::zb_h2, 2, 4));
static_assert(prove_family(schedule_family::zbv, 2, 4));
static_assert(prove_family(schedule_family::interleaved_zb, 2, 3));
static_assert(prove_family(schedule_family::dualpipev, 2, 4));
static_assert(prove_family(schedule_family::dualpipe, 2, 4));
static_assert(prove_family(schedule_family::v_half, 2, 4));
static_assert(prove_family(schedule_family::v_min, 2, 4));

}  // namespace
