// ctpipe/plan/searched.hpp: search() at compile time (docs/search.md): searched(), the
// best of the greedy constructions in one constant expression, and searched_v, the same
// schedule frozen in static storage with each construction evaluated on its own.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint32_t
#include <span>
#include <utility>  // std::index_sequence

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/greedy_best.hpp"
#include "ctpipe/plan/rule_sets.hpp"
#include "ctpipe/plan/search_problem.hpp"

namespace ctpipe {

/// The compile-time form of search(): the best of the same greedy rule sets, without
/// local repair or the exact method, so `searched(p)` equals `search(problem of p,
/// {.authors_only = p.authors_only, .repair = false}).ops` op for op (a test holds this).
/// Loop placement: 74 constructions (8 with authors_only); V-shape: 28 rule sets of up to
/// v_rounds constructions and 8 fixed orders (4 rule sets with authors_only); each a
/// linear pass over the 3 V P m ops (O(P m)); usable in a constant expression (transient
/// storage; one evaluation holds every construction, so the compilers' limits bound their
/// sum: searched_v evaluates them one by one). Errors: check_search_problem()'s messages, search()'s authors_only
/// message, and `ctpipe: search's schedule failed its own check (a bug)`.
constexpr schedule searched(const search_spec& p) {
  detail::check_search_spec(p);
  schedule out{p.shape, 3 * static_cast<std::size_t>(p.shape.V) * static_cast<std::size_t>(p.shape.P) *
                            static_cast<std::size_t>(p.shape.m)};
  const detail::greedy_outcome g =
      detail::greedy_best(p.shape, p.cost, p.gamma, std::span<const rational>(&p.memory_limit, 1),
                          detail::rule_sets_of(p.shape, p.authors_only), out.ops().data(), out.offsets().data());
  detail::require(g.span >= 0 || !p.authors_only,
                  "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their "
                  "code stops on an assertion here); search without authors_only finds a schedule");
  detail::require(g.span >= 0, "ctpipe: search's schedule failed its own check (a bug)");
  return out;
}

namespace detail {
/// Construction k of searched(S)'s greedy_best(), evaluated in a constant expression of
/// its own (so each construction, not their sum, meets the compilers' per-evaluation
/// limits): its span in ticks, -1 when it does not fit.
template <search_spec S, int K>
inline constexpr std::int64_t searched_unit_span = [] {
  check_search_spec(S);
  const std::size_t n = 3 * static_cast<std::size_t>(S.shape.V) * static_cast<std::size_t>(S.shape.P) *
                        static_cast<std::size_t>(S.shape.m);
  buffer<op> ops(n);
  buffer<std::uint32_t> offsets(static_cast<std::size_t>(S.shape.P) + 1);
  return greedy_unit(S.shape, S.cost, S.gamma, std::span<const rational>(&S.memory_limit, 1),
                     rule_sets_of(S.shape, S.authors_only), K, ops.data(), offsets.data())
      .span;
}();

/// The construction greedy_best() keeps for S: the first of the least span, -1 when none
/// fits.
template <search_spec S, std::size_t... K>
constexpr int searched_best_unit(std::index_sequence<K...>) {
  const std::int64_t spans[] = {searched_unit_span<S, static_cast<int>(K)>...};
  int best = -1;
  for (std::size_t k = 0; k < sizeof...(K); ++k) {
    if (spans[k] >= 0 && (best < 0 || spans[k] < spans[static_cast<std::size_t>(best)])) best = static_cast<int>(k);
  }
  return best;
}

/// Whether check_search_spec(p) passes (without raising: searched_v evaluates the
/// constructions only then, so a bad spec gives its message once, not once for each).
constexpr bool search_spec_fine(const search_spec& p) {
  const costs& c = p.cost;
  return shape_error(p.shape) == nullptr && c.f > rational{0} && c.b >= rational{0} && c.i >= rational{0} &&
         c.w >= rational{0} && c.c >= rational{0} && c.move >= rational{0} &&
         (c.fb >= rational{0} || c.fb == rational{-1}) && p.gamma >= rational{0} && p.gamma <= rational{1} &&
         searchable(p.shape) && p.memory_limit >= rational{1};
}

/// searched_best_unit() over S's constructions when S is fine, else -1 (none evaluated).
template <search_spec S>
constexpr int searched_best() {
  if constexpr (search_spec_fine(S)) {
    return searched_best_unit<S>(std::make_index_sequence<static_cast<std::size_t>(
                                     unit_count(S.shape, rule_sets_of(S.shape, S.authors_only)))>{});
  } else {
    return -1;
  }
}

template <search_spec S>
constexpr auto freeze_searched() {
  check_search_spec(S);  // a bad spec stops here, with the library's message
  constexpr int best = searched_best<S>();
  frozen_schedule<3 * static_cast<std::size_t>(S.shape.V) * static_cast<std::size_t>(S.shape.P) *
                      static_cast<std::size_t>(S.shape.m),
                  static_cast<std::size_t>(S.shape.P)>
      f{};
  f.shape = S.shape;
  require(best >= 0 || !S.authors_only,
          "ctpipe: search: none of the Zero Bubble authors' rule sets stays within this memory limit (their code stops "
          "on an assertion here); search without authors_only finds a schedule");
  require(best >= 0, "ctpipe: search's schedule failed its own check (a bug)");
  greedy_unit(S.shape, S.cost, S.gamma, std::span<const rational>(&S.memory_limit, 1),
              rule_sets_of(S.shape, S.authors_only), best, f.ops, f.offsets);
  return f;
}
}  // namespace detail

/// searched(S) frozen at compile time: a frozen_schedule of 3 V P m ops in static storage,
/// to be proved (static_assert on simulate(), in_flight(), validate() of its view()) and
/// dispatched like schedule_v. Each construction runs in a constant evaluation of its own
/// (detail::searched_unit_span), the first of the least span is run once more into the
/// frozen storage: the same schedule as searched(S), but the compilers' per-evaluation
/// limits (Clang's -fconstexpr-steps, GCC's -fconstexpr-ops-limit) bound one construction,
/// not the 74 (V-shape: 36) together. A bad S is a compile error with
/// check_search_problem()'s message. The largest shapes GCC and Clang take at their default
/// limits: bench/RESULTS.md (P = 8, m = 32 with every construction on both).
template <search_spec S>
inline constexpr auto searched_v = detail::freeze_searched<S>();

}  // namespace ctpipe
