// Core values: rationals, ops, shapes, costs, schedule storage.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>

#include "catch.hpp"
#include "options.hpp"

using namespace ctpipe;

TEST_CASE("rationals are exact and reduced", "[core]") {
  constexpr rational third{1, 3};
  constexpr rational sum = third + rational{1, 6};
  STATIC_REQUIRE(sum == rational{1, 2});
  REQUIRE(sum.num == 1);
  REQUIRE(sum.den == 2);
  REQUIRE(rational{4, -6} == rational{-2, 3});
  REQUIRE(rational{-2, 3}.den == 3);
  REQUIRE(rational{3, 4} * rational{2, 3} == rational{1, 2});
  REQUIRE(rational{3, 4} / rational{3, 8} == rational{2});
  REQUIRE(rational{1, 3} < rational{1, 2});
  REQUIRE(rational{-1, 2} < rational{0});
  // Comparisons are exact where the cross products pass 64 bits (found by a fresh user:
  // two makespans near 4 with denominators near 10^12 used to raise an overflow).
  constexpr rational near_four_a{4000012000009LL, 1000003000002LL}, near_four_b{3999990000001LL, 999997000001LL};
  static_assert(near_four_a < near_four_b);
  REQUIRE(near_four_a < near_four_b);
  REQUIRE_FALSE(near_four_b < near_four_a);
  REQUIRE(rational{INT64_MAX - 1, INT64_MAX} < rational{1});
  REQUIRE_FALSE(rational{INT64_MAX, INT64_MAX - 1} > rational{INT64_MAX - 1, INT64_MAX - 2});
  REQUIRE(rational{-INT64_MAX, 3} < rational{INT64_MAX, 5});
  REQUIRE(io::to_string(rational{33}) == "33");
  REQUIRE(io::to_string(rational{6, 22}) == "3/11");
}

TEST_CASE("rational overflow and zero denominators are errors, never wrong answers", "[core]") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  REQUIRE_THROWS_WITH(rational{big} + rational{1}, "ctpipe: rational overflow (64-bit numerator or denominator)");
  REQUIRE_THROWS_WITH(rational{big} * rational{2}, "ctpipe: rational overflow (64-bit numerator or denominator)");
  REQUIRE_THROWS_WITH((rational{1, big} + rational{1, big - 1}),
                      "ctpipe: rational overflow (64-bit numerator or denominator)");
  REQUIRE_THROWS_WITH((rational{1, 0}), "ctpipe: rational with zero denominator");
  REQUIRE_THROWS_WITH(rational{1} / rational{0}, "ctpipe: rational division by zero");
}

TEST_CASE("parse_rational reads integers, fractions and decimals exactly", "[core]") {
  STATIC_REQUIRE(parse_rational("1/2") == rational{1, 2});
  REQUIRE(parse_rational("3") == rational{3});
  REQUIRE(parse_rational("-7/3") == rational{-7, 3});
  REQUIRE(parse_rational("0.43") == rational{43, 100});
  REQUIRE(parse_rational("1.5") == rational{3, 2});
  for (const char* bad : {"", "-", "1/", "/2", "1.", ".5", "2x", "1/2/3", " 1", "1 ", "abc"}) {
    INFO(bad);
    REQUIRE_THROWS_WITH(parse_rational(bad), "ctpipe: not an exact number (use 3, 1/2 or 0.25)");
  }
  // 18 digits fit 64 bits; more are refused as too long, not as not a number.
  REQUIRE(parse_rational("576460752303423487") == rational{576460752303423487});
  for (const char* long_one : {"1234567890123456789", "1/1234567890123456789", "0.3333333333333333333333"}) {
    INFO(long_one);
    REQUIRE_THROWS_WITH(parse_rational(long_one), "ctpipe: more than 18 digits in a number (exact numbers are 64-bit: "
                                                  "write it as a fraction of shorter numbers or in larger units)");
  }
  REQUIRE_THROWS_WITH(parse_rational("1/0"), "ctpipe: rational with zero denominator");
}

TEST_CASE("an op packs kind, stage and micro-batch into 4 bytes", "[core]") {
  constexpr op o{op_kind::B, 4095, 65535};
  STATIC_REQUIRE(sizeof(op) == 4);
  REQUIRE(o.kind() == op_kind::B);
  REQUIRE(o.stage() == 4095);
  REQUIRE(o.microbatch() == 65535);
  REQUIRE(io::action(op{op_kind::F, 0, 3}) == "0F3");
  REQUIRE(io::action(op{op_kind::send_b, 1, 2}) == "1SEND_B2");
  REQUIRE_THROWS_WITH((op{op_kind::F, 4096, 0}),
                      "ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind among the 11 kinds");
  REQUIRE_THROWS_WITH((op{op_kind::F, 0, -1}),
                      "ctpipe: op stage must lie in [0, 4096), micro-batch in [0, 65536), kind among the 11 kinds");
}

TEST_CASE("action strings parse strictly", "[core]") {
  REQUIRE(io::parse_action("0F3") == op{op_kind::F, 0, 3});
  REQUIRE(io::parse_action("12W10") == op{op_kind::W, 12, 10});
  REQUIRE(io::parse_action("1RECV_F2") == op{op_kind::recv_f, 1, 2});
  for (const char* bad : {"", "F3", "0F", "0X3", "1F0x", "0f3", "-1F0", "4096F0", "0F65536", "0F3 "}) {
    INFO(bad);
    REQUIRE_THROWS_WITH(io::parse_action(bad),
                        "ctpipe: not an action string (expected <stage><kind><micro-batch> such as 0F3)");
  }
}

TEST_CASE("stage placement: loop and V-shape", "[core]") {
  constexpr pipeline_shape loop{4, 8, 2};
  REQUIRE(loop.stages() == 8);
  REQUIRE(loop.rank_of(5) == 1);
  REQUIRE(loop.chunk_of(5) == 1);
  REQUIRE(loop.stage_of(1, 1) == 5);
  constexpr pipeline_shape v{4, 8, 2, placement::v_shape};
  REQUIRE(v.rank_of(7) == 0);
  REQUIRE(v.rank_of(4) == 3);
  REQUIRE(v.chunk_of(4) == 1);
  REQUIRE(v.stage_of(0, 1) == 7);
  for (int s = 0; s < 8; ++s) {
    REQUIRE(v.stage_of(v.rank_of(s), v.chunk_of(s)) == s);
    REQUIRE(loop.stage_of(loop.rank_of(s), loop.chunk_of(s)) == s);
  }
}

TEST_CASE("the placement table: one entry per placement, in order, and the bidirectional rule", "[core]") {
  REQUIRE(std::size(placement_table) == 3);
  for (std::size_t k = 0; k < std::size(placement_table); ++k)
    REQUIRE(static_cast<std::size_t>(placement_table[k].id) == k);
  REQUIRE(std::string(placement_name(placement::bidirectional)) == "bidirectional");
  REQUIRE(std::string(placement_name(static_cast<placement>(7))) == "loop");  // no placement: the loop's entry
  constexpr pipeline_shape two{4, 8, 2, placement::bidirectional};
  static_assert(two.stage_of(0, 0, 3) == 0 && two.stage_of(0, 1, 3) == -1);  // micro-batch 3 goes down
  static_assert(two.stage_of(0, 1, 4) == 7 && two.stage_of(0, 0, 4) == -1);  // micro-batch 4 goes up
  static_assert(two.first_stage(4) == 4 && two.last_stage(3) == 3 && two.cost_chunks() == 1);
  constexpr pipeline_shape v{4, 8, 2, placement::v_shape};
  static_assert(v.stage_of(0, 1, 4) == 7 && v.first_stage(4) == 0 && v.last_stage(3) == 7 && v.cost_chunks() == 2);
  for (int s = 0; s < 8; ++s) REQUIRE(two.rank_of(s) == v.rank_of(s));
  for (int j = 0; j < 8; ++j) {
    REQUIRE(two.stage_of(3, 0, j) == (j < 4 ? 3 : -1));
    REQUIRE(two.stage_of(3, 1, j) == (j < 4 ? -1 : 4));
  }
}

TEST_CASE("the shape and cost gates give the library's messages at run time", "[core]") {
  REQUIRE_THROWS_WITH(check_shape({0, 8}), "ctpipe: P (pipeline ranks) must be >= 1");
  REQUIRE_THROWS_WITH(check_shape({4, 0}), "ctpipe: m (micro-batches) must be >= 1");
  REQUIRE_THROWS_WITH(check_shape({4, 8, 0}), "ctpipe: V (model chunks per rank) must be >= 1");
  REQUIRE_THROWS_WITH(check_shape({4, 8, 3, placement::v_shape}), "ctpipe: the V-shape placement needs V = 2");
  REQUIRE_THROWS_WITH(check_shape({4097, 8}), "ctpipe: P*V must be at most 4096 stages");
  REQUIRE_THROWS_WITH(check_shape({4, 65537}), "ctpipe: m must be at most 65536 micro-batches");
  REQUIRE_THROWS_WITH(check_spec({schedule_family::gpipe, {4, 8, 2}}),
                      "ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)");
  REQUIRE_THROWS_WITH(check_costs({rational{0}}), "ctpipe: t_f (forward cost) must be > 0");
  REQUIRE_THROWS_WITH(check_costs({rational{1}, rational{-1}}), "ctpipe: costs must be >= 0");
  REQUIRE_THROWS_WITH(check_gamma(rational{3, 2}), "ctpipe: gamma must lie in [0, 1]");
}

TEST_CASE("parsing of the --costs option", "[core][tool]") {
  REQUIRE(tool::parse_costs("") == costs{});
  const costs c = tool::parse_costs("f=1/2,c=0.25");
  REQUIRE(c.f == rational{1, 2});
  REQUIRE(c.b == rational{2});
  REQUIRE(c.c == rational{1, 4});
  REQUIRE(tool::parse_costs("i=2,w=1").b == rational{3});
  REQUIRE(tool::parse_costs("b=5,i=2,w=1").b == rational{5});
  for (const char* bad : {"f", "x=1", "f=1,f=2", "f=1,", ",f=1", "f:1"}) {
    INFO(bad);
    REQUIRE_THROWS_AS(tool::parse_costs(bad), ctpipe::error);
  }
  // A bad number names its key (parse_number()).
  REQUIRE_THROWS_WITH(tool::parse_costs("f==1"), "ctpipe: --costs f: not an exact number (use 3, 1/2 or 0.25)");
  REQUIRE_THROWS_WITH(tool::parse_costs("i=1,w=1/0"), "ctpipe: --costs w: rational with zero denominator");
  REQUIRE_THROWS_WITH(tool::parse_costs("c=1,f="), "ctpipe: --costs f: not an exact number (use 3, 1/2 or 0.25)");
  REQUIRE_THROWS_WITH(tool::parse_costs("b=-1"), "ctpipe: costs must be >= 0");
  // fb, the overlapped pair: t_f + t_b unless given.
  REQUIRE(tool::parse_costs("").pair() == rational{3});
  REQUIRE(tool::parse_costs("f=2,b=4").pair() == rational{6});
  REQUIRE(tool::parse_costs("fb=5/2").pair() == rational{5, 2});
  REQUIRE(tool::parse_costs("fb=0,f=1").pair() == rational{0});
  REQUIRE_THROWS_WITH(tool::parse_costs("fb=-1"), "ctpipe: costs must be >= 0");
  REQUIRE_THROWS_AS(tool::parse_costs("fb=1,fb=2"), ctpipe::error);
  REQUIRE_THROWS_AS(tool::parse_costs("fbb=1"), ctpipe::error);
}

TEST_CASE("t_fb: its default, its cost on a chunk, and its gate", "[core]") {
  const costs article{};
  REQUIRE(article.fb == rational{-1});
  REQUIRE(article.pair() == article.f + article.b);
  REQUIRE(article.of(op_kind::overlap_f_b, 2) == rational{3, 2});
  costs c{};
  c.fb = rational{5, 2};
  REQUIRE(c.of(op_kind::overlap_f_b, 1) == rational{5, 2});
  c.fb = rational{-1, 2};
  REQUIRE_THROWS_WITH(check_costs(c), "ctpipe: t_fb (overlapped pair cost) must be >= 0, or -1 for t_f + t_b");
  c.fb = rational{-2};
  REQUIRE_THROWS_WITH(check_costs(c), "ctpipe: t_fb (overlapped pair cost) must be >= 0, or -1 for t_f + t_b");
  REQUIRE(std::string(kind_name(op_kind::overlap_f_b)) == "OVERLAP_F_B");
  REQUIRE(is_compute(op_kind::overlap_f_b));
  REQUIRE(std::string(kind_name(static_cast<op_kind>(9))) == "SEND_ACT");
  REQUIRE(std::string(kind_name(static_cast<op_kind>(11))) == "?");
}

TEST_CASE("schedule storage: CSR layout, per-rank spans", "[core]") {
  const schedule s = generate({schedule_family::gpipe, {3, 2}});
  const schedule_view v = s.view();
  REQUIRE(v.offsets.size() == 4);
  REQUIRE(v.offsets[0] == 0);
  REQUIRE(v.offsets[3] == v.size());
  REQUIRE(v.size() == 12);
  for (int r = 0; r < 3; ++r) {
    REQUIRE(v.rank(r).size() == 4);
    REQUIRE(v.rank(r)[0] == op{op_kind::F, r, 0});
    REQUIRE(v.rank(r)[3] == op{op_kind::B, r, 1});
  }
}

TEST_CASE("the family table: one entry per family, in order, and safe on a value that is no family", "[core]") {
  REQUIRE(all_families.size() == std::size(family_table));
  for (std::size_t k = 0; k < all_families.size(); ++k) {
    const family_entry& e = family_of(all_families[k]);
    INFO(e.name);
    REQUIRE(static_cast<std::size_t>(e.id) == k);
    schedule_family back{};
    REQUIRE(family_from_name(e.name, back));
    REQUIRE(back == e.id);
    // Its default V and placement make a request its rules accept.
    REQUIRE(spec_error({e.id, {4, 8, e.default_V, e.natural_placement}}) == nullptr);
    // Ops of each rank: 2mV or 3mV; DualPipeV's rank r 4m + 2P - 1 - r (a W per I);
    // DualPipe's 2m + P - 1 - min(r, P-1-r).
    const schedule_spec s{e.id, {4, 8, e.default_V, e.natural_placement}};
    const schedule generated = generate(s);
    for (int r = 0; r < 4; ++r) {
      const std::size_t expected = e.id == schedule_family::dualpipev ? static_cast<std::size_t>(4 * 8 + 2 * 4 - 1 - r)
                                   : e.id == schedule_family::dualpipe
                                       ? static_cast<std::size_t>(2 * 8 + 4 - 1 - (r < 3 - r ? r : 3 - r))
                                       : static_cast<std::size_t>(8 * e.default_V * (e.splits_backward ? 3 : 2));
      REQUIRE(ops_of_rank(s, r) == expected);
      REQUIRE(generated.view().rank(r).size() == expected);
    }
    REQUIRE(ops_per_rank(s) == ops_of_rank(s, 0));
    REQUIRE(total_ops(s) == generated.size());
  }
  const auto none = static_cast<schedule_family>(99);
  REQUIRE_FALSE(known_family(none));
  REQUIRE(std::string(family_name(none)) == "?");
  REQUIRE_FALSE(splits_backward(none));
  REQUIRE(natural_placement(none) == placement::loop);
  REQUIRE(std::string(spec_error({none, {4, 8}})) == "ctpipe: unknown schedule family or interleaved variant");
}
