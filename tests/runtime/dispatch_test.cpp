// Zero-cost consumption: the type views (MP11, Hana) and the dispatch table of a frozen
// schedule agree with its value view; run-time ranks reach the right compile-time rank.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/dispatch/hana.hpp>
#include <ctpipe/dispatch/op_types.hpp>
#include <ctpipe/dispatch/table.hpp>
#include <ctpipe/io/format.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"

using namespace ctpipe;

namespace {

constexpr auto& one_f_one_b_p8 = schedule_v<schedule_spec{schedule_family::one_f_one_b, {8, 12}}>;
constexpr auto& interleaved_p4 = schedule_v<schedule_spec{schedule_family::interleaved_1f1b, {4, 8, 2}}>;
constexpr auto& zbv_p4 = schedule_v<schedule_spec{schedule_family::zbv, {4, 8, 2, placement::v_shape}}>;
constexpr auto& dualpipev_p4 = schedule_v<schedule_spec{schedule_family::dualpipev, {4, 8, 2, placement::v_shape}}>;

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

namespace {

/// Rank R of S through rank_actions: each action as the op words it stands for (a pair's
/// word and its B word), and its PyTorch action string; constexpr up to the strings.
template <const auto& S, int R>
constexpr bool actions_cover_words() {
  std::size_t k = 0;
  bool same = true;
  for_each_action<S, R>([&](auto a) {
    using A = decltype(a);
    if constexpr (is_pair_c<A>) {
      same = same && A::word::value == S.rank(R)[k] && A::backward::value == S.rank(R)[k + 1];
      same = same && A::word::kind == op_kind::overlap_f_b && A::backward::kind == op_kind::B;
      same = same && A::forward == op{op_kind::F, A::word::stage, A::word::microbatch};
      k += 2;
    } else {
      same = same && A::value == S.rank(R)[k] && A::kind != op_kind::overlap_f_b;
      k += 1;
    }
  });
  return same && k == S.rank(R).size();
}

template <const auto& S, std::size_t... R>
constexpr bool every_rank_covered(std::index_sequence<R...>) {
  return (actions_cover_words<S, static_cast<int>(R)>() && ...);
}

/// A runtime's handler on dispatch table entries: runs a pair at its word's entry and
/// skips the B word's entry after it, as the table's documentation says.
struct pair_run {
  std::vector<std::string> out;
  bool in_pair = false;  // the last entry was a pair's word: the next is its B
};
struct run_pairs {
  template <class Op>
  static void run(pair_run& c) {
    if constexpr (Op::kind == op_kind::overlap_f_b) {
      c.out.push_back("pair " + io::action(Op::value));
      c.in_pair = true;
    } else if (Op::kind == op_kind::B && c.in_pair) {
      c.out.back() += " with " + io::action(Op::value);
      c.in_pair = false;
    } else {
      c.out.push_back(io::action(Op::value));
    }
  }
};

}  // namespace

TEST_CASE("overlapped pairs in the type views: two op_c words per pair, one pair_c per pair in rank_actions",
          "[dispatch]") {
  // rank_ops keeps the words: a pair is op_c of its word (kind overlap_f_b), then op_c of its B.
  STATIC_REQUIRE(every_rank_matches<dualpipev_p4>(std::make_index_sequence<4>{}));
  STATIC_REQUIRE(boost::mp11::mp_size<rank_ops<dualpipev_p4, 0>>::value == dualpipev_p4.rank(0).size());
  STATIC_REQUIRE(dualpipev_p4.rank(0).size() == 39);  // 34 actions, 5 of them pairs
  // rank_actions: one pair_c per pair, the words covered in order.
  STATIC_REQUIRE(every_rank_covered<dualpipev_p4>(std::make_index_sequence<4>{}));
  STATIC_REQUIRE(every_rank_covered<zbv_p4>(std::make_index_sequence<4>{}));
  REQUIRE(every_rank_covered<dualpipev_p4>(std::make_index_sequence<4>{}));
  for (int r = 0; r < 4; ++r) {
    INFO(r);
    std::vector<std::string> seen;
    with_rank<dualpipev_p4>(static_cast<std::size_t>(r), [&](auto rank) {
      for_each_action<dualpipev_p4, static_cast<int>(decltype(rank)::value)>([&](auto a) {
        using A = decltype(a);
        if constexpr (is_pair_c<A>) {
          seen.push_back(io::pair_action(A::word::value, A::backward::value));
        } else {
          seen.push_back(io::action(A::value));
        }
      });
    });
    REQUIRE(seen == io::actions(dualpipev_p4.rank(r)));  // PyTorch's actions, a pair as one
  }
  // Rank 0's first pair: the forward of micro-batch 7 on stage 0 with the backward of 3 on stage 7.
  using first_pair = boost::mp11::mp_at_c<rank_actions<dualpipev_p4, 0>, 17>;
  STATIC_REQUIRE(is_pair_c<first_pair>);
  STATIC_REQUIRE(first_pair::forward == op{op_kind::F, 0, 7});
  STATIC_REQUIRE(first_pair::backward::value == op{op_kind::B, 7, 3});
  STATIC_REQUIRE(boost::mp11::mp_size<rank_actions<dualpipev_p4, 0>>::value == 34);
  // Without pairs, rank_actions is rank_ops.
  STATIC_REQUIRE(std::is_same_v<rank_actions<zbv_p4, 2>, rank_ops<zbv_p4, 2>>);
  STATIC_REQUIRE(!is_pair_c<op_c<0>>);

  // A dispatch table has an entry per word; a handler runs the pair at its word.
  pair_run by_table;
  dispatch_table<dualpipev_p4, 0, run_pairs, pair_run>::run(by_table);
  STATIC_REQUIRE(dispatch_table<dualpipev_p4, 0, run_pairs, pair_run>::entries.size() == 39);
  REQUIRE(by_table.out.size() == 34);
  REQUIRE(by_table.out[17] == "pair 0OVERLAP_F_B7 with 7B3");
  REQUIRE(by_table.out[18] == "pair 7OVERLAP_F_B4 with 0B0");
  REQUIRE(by_table.out[19] == "7B4");  // a plain B after a pair runs as itself
}
