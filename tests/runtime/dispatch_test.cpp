// Zero-cost consumption: the type views (MP11, Hana) and the dispatch table of a frozen
// schedule agree with its value view; run-time ranks reach the right compile-time rank.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/dispatch/hana.hpp>
#include <ctpipe/dispatch/op_types.hpp>
#include <ctpipe/dispatch/table.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <vector>

#include "catch.hpp"

using namespace ctpipe;

namespace {

constexpr auto& one_f_one_b_p8 = schedule_v<schedule_spec{schedule_family::one_f_one_b, {8, 12}}>;
constexpr auto& interleaved_p4 = schedule_v<schedule_spec{schedule_family::interleaved_1f1b, {4, 8, 2}}>;
constexpr auto& zbv_p4 = schedule_v<schedule_spec{schedule_family::zbv, {4, 8, 2, placement::v_shape}}>;

/// The MP11 view of rank R equals the value view, op by op (usable in a constant
/// expression: the same function runs in STATIC_REQUIRE and REQUIRE).
template <const auto& S, int R>
constexpr bool type_view_matches() {
  std::size_t k = 0;
  bool same = boost::mp11::mp_size<rank_ops<S, R>>::value == S.rank(R).size();
  for_each_op<S, R>([&](auto o) { same = same && decltype(o)::value == S.rank(R)[k++]; });
  return same && k == S.rank(R).size();
}

template <const auto& S, std::size_t... R>
constexpr bool every_rank_matches(std::index_sequence<R...>) {
  return (type_view_matches<S, static_cast<int>(R)>() && ...);
}

struct collect {
  template <class Op>
  static void run(std::vector<op>& out) {
    out.push_back(Op::value);
  }
};

}  // namespace

TEST_CASE("type view == value view, at compile time and at run time", "[dispatch]") {
  STATIC_REQUIRE(every_rank_matches<one_f_one_b_p8>(std::make_index_sequence<8>{}));
  STATIC_REQUIRE(every_rank_matches<interleaved_p4>(std::make_index_sequence<4>{}));
  STATIC_REQUIRE(every_rank_matches<zbv_p4>(std::make_index_sequence<4>{}));
  REQUIRE(every_rank_matches<one_f_one_b_p8>(std::make_index_sequence<8>{}));
  REQUIRE(every_rank_matches<interleaved_p4>(std::make_index_sequence<4>{}));
  REQUIRE(every_rank_matches<zbv_p4>(std::make_index_sequence<4>{}));
}

TEST_CASE("mp_with_index reaches the right rank for every rank of P = 8", "[dispatch]") {
  for (std::size_t r = 0; r < 8; ++r) {
    std::vector<op> seen;
    run_rank<one_f_one_b_p8>(r, [&](auto o) { seen.push_back(decltype(o)::value); });
    const auto expected = one_f_one_b_p8.rank(static_cast<int>(r));
    REQUIRE(seen == std::vector<op>(expected.begin(), expected.end()));
    std::size_t reached = 99;
    with_rank<one_f_one_b_p8>(r, [&](auto rank) { reached = decltype(rank)::value; });
    REQUIRE(reached == r);
  }
}

TEST_CASE("run_rank and with_rank reject a rank outside 0 .. P-1 with the library error", "[dispatch]") {
  bool called = false;
  for (const std::size_t r : {std::size_t{8}, std::size_t{9}, static_cast<std::size_t>(-1)}) {
    INFO(r);
    REQUIRE_THROWS_AS(with_rank<one_f_one_b_p8>(r, [&](auto) { called = true; }), ctpipe::error);
    REQUIRE_THROWS_WITH(with_rank<one_f_one_b_p8>(r, [&](auto) { called = true; }), "ctpipe: rank must lie in [0, P)");
    REQUIRE_THROWS_WITH(run_rank<one_f_one_b_p8>(r, [&](auto) { called = true; }), "ctpipe: rank must lie in [0, P)");
  }
  REQUIRE_FALSE(called);
  // The last rank is still reached.
  std::size_t reached = 0;
  with_rank<interleaved_p4>(3, [&](auto rank) { reached = decltype(rank)::value; });
  REQUIRE(reached == 3);
}

TEST_CASE("dispatch table and Hana view run the rank's program in order", "[dispatch]") {
  std::vector<op> by_table;
  dispatch_table<interleaved_p4, 1, collect, std::vector<op>>::run(by_table);
  const auto expected = interleaved_p4.rank(1);
  REQUIRE(by_table == std::vector<op>(expected.begin(), expected.end()));
  STATIC_REQUIRE(dispatch_table<interleaved_p4, 1, collect, std::vector<op>>::entries.size() == 32);
  std::vector<op> by_hana;
  boost::hana::for_each(hana_rank_ops<zbv_p4, 3>, [&](auto o) { by_hana.push_back(decltype(o)::value); });
  const auto zbv3 = zbv_p4.rank(3);
  REQUIRE(by_hana == std::vector<op>(zbv3.begin(), zbv3.end()));
}
