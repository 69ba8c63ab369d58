// Simulation, in-flight profile, messages, validator and the grid proofs at run time
// (the same functions tests/static evaluates inside static_assert).
#include <ctpipe/ctpipe.hpp>

#include <span>
#include <string>
#include <vector>

#include "catch.hpp"
#include "faulty.hpp"
#include "proofs.hpp"

using namespace ctpipe;
using ctpipe::tests::fault_case;

TEST_CASE("grid proofs hold at run time (twins of tests/static)", "[analysis][proofs]") {
  using ctpipe::tests::prove_structure;
  using ctpipe::tests::prove_timing;
  const costs article{};
  const costs equal{rational{1}, rational{1}};
  const costs uneven{rational{1, 2}, rational{5, 3}};
  const costs light_backward{rational{3}, rational{1, 2}};
  const costs with_latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};
  for (auto family : {schedule_family::gpipe, schedule_family::one_f_one_b}) {
    INFO(family_name(family));
    REQUIRE(prove_structure(family, 1, 8, 1, 32));
    REQUIRE(prove_timing(family, article, 1, 8, 1, 32));
    REQUIRE(prove_timing(family, equal, 1, 8, 1, 16));
    REQUIRE(prove_timing(family, uneven, 1, 8, 1, 16));
    REQUIRE(prove_timing(family, light_backward, 1, 8, 1, 16));
  }
  REQUIRE(prove_timing(schedule_family::gpipe, with_latency, 1, 8, 1, 16));
  // For every m (phased programs): the twins of tests/static/proofs_timing.cpp, and looped
  // BFS past its P <= 8 there.
  using ctpipe::tests::prove_every_m_phased;
  REQUIRE(prove_every_m_phased(schedule_family::gpipe, article, 1, 16));
  for (const costs& c : {equal, uneven, light_backward, with_latency})
    REQUIRE(prove_every_m_phased(schedule_family::gpipe, c, 1, 8));
  REQUIRE(prove_every_m_phased(schedule_family::looped_bfs, article, 1, 16, 1, 4));
  // Beyond the compile-time grid, at run time only.
  REQUIRE(prove_structure(schedule_family::one_f_one_b, 9, 16, 1, 64));
  REQUIRE(prove_timing(schedule_family::one_f_one_b, article, 9, 16, 1, 64));
}

TEST_CASE("proofs can fail: a formula outside its range is not claimed", "[analysis][proofs]") {
  // 1F1B with latency has no closed form: the proof must say false, not pass vacuously.
  const costs with_latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  REQUIRE_FALSE(ctpipe::tests::prove_timing(schedule_family::one_f_one_b, with_latency, 2, 2, 3, 3));
  REQUIRE_FALSE(bubble_fraction_formula({schedule_family::one_f_one_b, {2, 3}}, with_latency).holds);
  // The simulated makespan is 14: neither the no-latency form (m+P-1)(t_f+t_b) = 12 nor
  // GPipe's latency form 12 + 2(P-1)t_c = 13 (each steady step pays a round trip).
  const schedule s = generate({schedule_family::one_f_one_b, {2, 3}});
  REQUIRE(simulate(s.view(), with_latency).makespan() == rational{14});
}

TEST_CASE("simulation: per-op times, idle, span, span bubble", "[analysis]") {
  const schedule s = generate({schedule_family::one_f_one_b, {4, 8}});
  const simulation sim = simulate(s.view(), costs{});
  // Rank 3 (last) starts its first forward at 3 and alternates F/B without a gap.
  const auto rank3 = s.view().offsets[3];
  REQUIRE(sim.start(rank3) == rational{3});
  REQUIRE(sim.end(rank3) == rational{4});
  REQUIRE(sim.start(rank3 + 1) == rational{4});  // 3B0
  REQUIRE(sim.end(rank3 + 1) == rational{6});
  for (int r = 0; r < 4; ++r) {
    REQUIRE(sim.busy(r) == rational{24});
    REQUIRE(sim.idle(r) == rational{9});
  }
  // Rank 0 spans the whole step (idle 9 inside its span); rank 3 runs from 3 to 27
  // without a gap: span 24 = busy.
  REQUIRE(sim.span(0) == rational{33});
  REQUIRE(sim.span(3) == rational{24});
  REQUIRE(sim.span_bubble() == rational{9});
}

TEST_CASE("simulation with fractional costs and latency is exact", "[analysis]") {
  const costs c{rational{1, 3}, rational{1, 2}, rational{1}, rational{1}, rational{1, 7}};
  const schedule s = generate({schedule_family::gpipe, {3, 5}});
  const simulation sim = simulate(s.view(), c);
  // GPipe: (m+P-1)(t_f+t_b) + 2(P-1)t_c = 7 * 5/6 + 4/7.
  REQUIRE(sim.makespan() == rational{7} * rational{5, 6} + rational{4, 7});
  REQUIRE(sim.tick() == rational{1, 42});
}

TEST_CASE("in-flight levels follow list order - gamma only matters for split backwards", "[analysis]") {
  const schedule s = generate({schedule_family::one_f_one_b, {2, 3}});
  const in_flight_profile mem = in_flight(s.view());
  // Rank 0: F0 (1) F1 (2) B0 (1) F2 (2) B1 (1) B2 (0).
  const std::vector<rational> expected{1, 2, 1, 2, 1, 0};
  for (std::size_t k = 0; k < expected.size(); ++k) REQUIRE(mem.level_after(k) == expected[k]);
  REQUIRE(mem.peak(0) == rational{2});
  REQUIRE(mem.peak_activations(0) == rational{2});
  // A hand-made split-backward list: F +1, I frees 1 - gamma, W frees gamma.
  const schedule split =
      ctpipe::tests::from_lists({1, 2}, {{op{op_kind::F, 0, 0}, op{op_kind::I, 0, 0}, op{op_kind::F, 0, 1},
                                          op{op_kind::I, 0, 1}, op{op_kind::W, 0, 0}, op{op_kind::W, 0, 1}}});
  REQUIRE(validate(split.view()).ok());
  const in_flight_profile finer = in_flight(split.view(), rational{43, 100});
  REQUIRE(finer.level_after(1) == rational{43, 100});
  REQUIRE(finer.peak(0) == rational{143, 100});
  REQUIRE(in_flight(split.view()).peak(0) == rational{2});
  REQUIRE(in_flight(split.view(), rational{0}).peak(0) == rational{1});
}

TEST_CASE("messages: two per micro-batch per rank boundary", "[analysis]") {
  REQUIRE(messages(generate({schedule_family::one_f_one_b, {3, 4}}).view()) == 16);
  REQUIRE(messages(generate({schedule_family::gpipe, {1, 4}}).view()) == 0);
  REQUIRE(messages_formula({schedule_family::gpipe, {4, 8}}).value == rational{48});
}

TEST_CASE("validator: a missing backward is named, and the ranks it blocks", "[analysis][validate]") {
  std::vector<validation_issue> issues;
  const schedule s = ctpipe::tests::make_faulty(fault_case::missing_backward);
  validate(s.view(), [&](const validation_issue& i) { issues.push_back(i); });
  REQUIRE(issues.size() >= 2);
  REQUIRE(issues[0].what == fault::missing);
  REQUIRE(issues[0].at == op{op_kind::B, 2, 3});
  REQUIRE(issues[0].rank == 2);
  // Rank 1 cannot run its B of micro-batch 3: it waits for 2B3.
  bool rank1_stuck = false;
  for (const auto& i : issues) {
    rank1_stuck = rank1_stuck || (i.what == fault::deadlock && i.rank == 1 && i.at == op{op_kind::B, 1, 3} &&
                                  i.needs == op{op_kind::B, 2, 3});
  }
  REQUIRE(rank1_stuck);
  REQUIRE(ctpipe::tests::first_issue(fault_case::missing_backward) == issues[0]);
}

TEST_CASE("validator: a duplicated forward is named at its step", "[analysis][validate]") {
  const validation_issue i = ctpipe::tests::first_issue(fault_case::duplicate_forward);
  REQUIRE(i.what == fault::duplicate);
  REQUIRE(i.rank == 0);
  REQUIRE(i.step == 3);
  REQUIRE(i.at == op{op_kind::F, 0, 2});
}

TEST_CASE("validator: a late fault (rank 2, B before F of micro-batch 5 at step 9)", "[analysis][validate]") {
  const validation_issue i = ctpipe::tests::first_issue(fault_case::late_backward_before_forward);
  REQUIRE(i.what == fault::out_of_order);
  REQUIRE(i.rank == 2);
  REQUIRE(i.step == 9);
  REQUIRE(i.at == op{op_kind::B, 2, 5});
  REQUIRE(i.needs == op{op_kind::F, 2, 5});
  const schedule s = ctpipe::tests::make_faulty(fault_case::late_backward_before_forward);
  REQUIRE_THROWS_WITH(simulate(s.view(), costs{}), "ctpipe: schedule deadlocks (validate() names the stuck ops)");
}

TEST_CASE("validator: a cross-rank deadlock names each stuck rank's first op", "[analysis][validate]") {
  std::vector<validation_issue> issues;
  validate(ctpipe::tests::make_faulty(fault_case::cross_rank_deadlock).view(),
           [&](const validation_issue& i) { issues.push_back(i); });
  REQUIRE(issues.size() == 2);
  REQUIRE(issues[0] == validation_issue{fault::deadlock, 0, 1, op{op_kind::B, 0, 0}, op{op_kind::B, 1, 0}});
  REQUIRE(issues[1] == validation_issue{fault::deadlock, 1, 1, op{op_kind::F, 1, 1}, op{op_kind::F, 0, 1}});
}

TEST_CASE("validator: wrong rank, out of shape, send/recv, mixed backward, bad offsets", "[analysis][validate]") {
  using ctpipe::tests::from_lists;
  // Stage 1 on rank 0.
  auto wrong = from_lists(
      {2, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::F, 1, 0}, op{op_kind::B, 1, 0}, op{op_kind::B, 0, 0}}, {}});
  REQUIRE(validate(wrong.view()).first ==
          validation_issue{fault::wrong_rank, 0, 1, op{op_kind::F, 1, 0}, op{op_kind::F, 1, 0}});
  auto outside = from_lists({1, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::B, 0, 1}}});
  REQUIRE(validate(outside.view()).first.what == fault::out_of_shape);
  REQUIRE_THROWS_WITH(simulate(outside.view(), costs{}),
                      "ctpipe: simulate takes compute ops F, B, I, W (and OVERLAP_F_B words, each followed by its B) "
                      "with stage < P*V and micro-batch < m");
  auto transfer = from_lists({1, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::send_f, 0, 0}, op{op_kind::B, 0, 0}}});
  REQUIRE(validate(transfer.view()).first ==
          validation_issue{fault::not_compute, 0, 1, op{op_kind::send_f, 0, 0}, op{op_kind::send_f, 0, 0}});
  auto mixed = from_lists({1, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::W, 0, 0}}});
  REQUIRE(validate(mixed.view()).first.what == fault::mixed_backward);
  auto w_first = from_lists({1, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::W, 0, 0}, op{op_kind::I, 0, 0}}});
  REQUIRE(validate(w_first.view()).first ==
          validation_issue{fault::out_of_order, 0, 1, op{op_kind::W, 0, 0}, op{op_kind::I, 0, 0}});
  const op ops[] = {op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}};
  const std::uint32_t offsets[] = {0, 3};
  REQUIRE(validate(schedule_view{{1, 1}, ops, offsets}).first.what == fault::bad_offsets);
  // Every fault has a description.
  for (int f = 0; f <= static_cast<int>(fault::wrong_pairing); ++f)
    REQUIRE(fault_description(static_cast<fault>(f))[0] != '\0');
}

TEST_CASE("malformed views are errors, never out-of-bounds reads or writes", "[analysis][validate]") {
  const op ops[] = {op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::B, 0, 1}};
  const char* layout = "ctpipe: schedule view offsets must be P+1 non-decreasing positions from 0 to the op count";
  // Offsets claiming more ops than the view holds.
  const std::uint32_t too_many[] = {0, 4};
  const schedule_view short_ops{{1, 2}, std::span<const op>(ops, 2), too_many};
  // Offsets too short for P, and none at all.
  const std::uint32_t two[] = {0, 2};
  const schedule_view short_offsets{{4, 1}, std::span<const op>(ops, 2), two};
  const schedule_view no_offsets{{1, 1}, {}, {}};
  for (const schedule_view& v : {short_ops, short_offsets, no_offsets}) {
    REQUIRE_THROWS_WITH(simulate(v, costs{}), layout);
    REQUIRE_THROWS_WITH(in_flight(v), layout);
    REQUIRE_THROWS_WITH(messages(v), layout);
    REQUIRE_THROWS_WITH(messages_between(v, 0, 0), layout);
    REQUIRE(validate(v).first.what == fault::bad_offsets);
  }
  // Invalid shapes.
  for (const pipeline_shape shape :
       {pipeline_shape{-1, 1}, pipeline_shape{0, 1}, pipeline_shape{1, 0}, pipeline_shape{1, 1, 0},
        pipeline_shape{1, -1}, pipeline_shape{2, 1, 1, placement::v_shape}}) {
    const schedule_view v{shape, {}, {}};
    REQUIRE(validate(v).first.what == fault::bad_shape);
    REQUIRE_THROWS_AS(simulate(v, costs{}), ctpipe::error);
    REQUIRE_THROWS_AS(in_flight(v), ctpipe::error);
    REQUIRE_THROWS_AS(messages(v), ctpipe::error);
  }
  // Ops outside the shape, and unused kind codes decoded from raw bits.
  op odd{};
  odd.bits = 0xF0000000u;  // kind code 15
  const op outside[] = {op{op_kind::F, 4000, 0}, odd};
  const std::uint32_t both[] = {0, 1, 2};
  const schedule_view v{{2, 1}, outside, both};
  REQUIRE(messages(v) == 0);
  REQUIRE(in_flight(v).peak(0) == rational{1});  // in_flight counts by kind only
  REQUIRE(in_flight(v).peak(1) == rational{0});  // kind 15 allocates nothing
  REQUIRE(validate(v).first.what == fault::out_of_shape);
  REQUIRE(std::string(kind_name(odd.kind())) == "?");
  REQUIRE_THROWS_AS(simulate(v, costs{}), ctpipe::error);
  REQUIRE_THROWS_AS((op{static_cast<op_kind>(200), 0, 0}), ctpipe::error);
}

TEST_CASE("a gamma whose denominator overflows the levels is an error, not a wrong peak", "[analysis]") {
  const schedule s = generate({schedule_family::gpipe, {2, 16}});
  REQUIRE_THROWS_WITH(in_flight(s.view(), rational{999999999999999999, 1000000000000000000}),
                      "ctpipe: rational overflow (64-bit numerator or denominator)");
  REQUIRE(in_flight(s.view(), rational{3, 7}).peak(0) == rational{16});
}

TEST_CASE("overlapped pairs: fused timing, split reading, memory and messages", "[analysis][pairs]") {
  using ctpipe::tests::from_lists;
  const op f00{op_kind::F, 0, 0}, pair01{op_kind::overlap_f_b, 0, 1}, b00{op_kind::B, 0, 0}, b01{op_kind::B, 0, 1};
  // One rank, one stage: F0, (F1; B0) fused, B1.
  const schedule s = from_lists({1, 2}, {{f00, pair01, b00, b01}});
  REQUIRE(validate(s.view()).ok());
  REQUIRE(has_pairs(s.view()));
  const simulation sim = simulate(s.view(), costs{});
  REQUIRE(sim.start(1) == rational{1});
  REQUIRE(sim.end(1) == rational{4});  // t_fb = t_f + t_b = 3
  REQUIRE(sim.start(2) == sim.start(1));
  REQUIRE(sim.end(2) == sim.end(1));
  REQUIRE(sim.makespan() == rational{6});
  REQUIRE(sim.busy(0) == rational{6});  // the pair counts once
  costs overlap{};
  overlap.fb = rational{2};
  REQUIRE(simulate(s.view(), overlap).makespan() == rational{5});
  REQUIRE(simulate(s.view(), overlap).busy(0) == rational{5});
  const schedule split = split_pairs(s.view());
  REQUIRE(split.view().ops[1] == op{op_kind::F, 0, 1});
  REQUIRE(split.view().ops[2] == b00);
  const simulation apart = simulate(split.view(), overlap);  // t_fb plays no part
  REQUIRE(apart.start(2) == rational{2});
  REQUIRE(apart.makespan() == rational{6});
  // Memory: the pair's forward allocates before its backward frees.
  REQUIRE(in_flight(s.view()).peak(0) == rational{2});
  REQUIRE(in_flight(s.view()).level_after(1) == rational{2});
  REQUIRE(in_flight(s.view()).level_after(2) == rational{1});
  // Across ranks: the pair waits for both inputs. Rank 1 runs F(1,0), then (F(1,1);
  // B(1,0)): its forward's input comes from rank 0 at 2 + t_c, its backward's is local.
  const schedule two = from_lists(
      {2, 2}, {{f00, op{op_kind::F, 0, 1}, b00, b01},
               {op{op_kind::F, 1, 0}, op{op_kind::overlap_f_b, 1, 1}, op{op_kind::B, 1, 0}, op{op_kind::B, 1, 1}}});
  REQUIRE(validate(two.view()).ok());
  costs late{};
  late.c = rational{3};
  const simulation cross = simulate(two.view(), late);
  REQUIRE(cross.start(4) == rational{4});  // F(1,0): F(0,0) ends at 1, + 3
  REQUIRE(cross.start(5) == rational{5});  // the pair: F(0,1) ends at 2, + 3, after F(1,0) ends at 5
  REQUIRE(cross.end(6) == rational{8});
  REQUIRE(messages(two.view()) == 4);
  REQUIRE(messages_between(two.view(), 0, 1) == message_count{2, 0});
  REQUIRE(messages_between(two.view(), 1, 0) == message_count{0, 2});
}

TEST_CASE("overlapped pairs: a broken pair and a deadlock through a pair are named", "[analysis][validate][pairs]") {
  using ctpipe::tests::from_lists;
  const op f00{op_kind::F, 0, 0}, pair01{op_kind::overlap_f_b, 0, 1}, b00{op_kind::B, 0, 0}, b01{op_kind::B, 0, 1};
  const schedule at_end = from_lists({1, 2}, {{f00, b00, pair01}});
  REQUIRE(validate(at_end.view()).first == validation_issue{fault::broken_pair, 0, 2, pair01, pair01});
  REQUIRE_THROWS_WITH(simulate(at_end.view(), costs{}),
                      "ctpipe: simulate takes compute ops F, B, I, W (and OVERLAP_F_B words, each followed by its B) "
                      "with stage < P*V and micro-batch < m");
  const schedule before_i = from_lists({1, 2}, {{f00, pair01, op{op_kind::I, 0, 0}, op{op_kind::W, 0, 0}, b01}});
  REQUIRE(validate(before_i.view()).first == validation_issue{fault::broken_pair, 0, 1, pair01, pair01});
  REQUIRE(std::string(fault_description(fault::broken_pair)) ==
          "overlapped pair (OVERLAP_F_B) not followed on its rank by a B, its backward half");
  const schedule outside = from_lists({1, 2}, {{f00, op{op_kind::overlap_f_b, 0, 2}, b00, b01}});
  REQUIRE(validate(outside.view()).first.what == fault::out_of_shape);
  // Rank 0 waits at B(0,0) for the pair's B(1,0); the pair waits for F(0,1), after B(0,0).
  const schedule stuck = from_lists(
      {2, 2}, {{f00, b00, op{op_kind::F, 0, 1}, b01},
               {op{op_kind::F, 1, 0}, op{op_kind::overlap_f_b, 1, 1}, op{op_kind::B, 1, 0}, op{op_kind::B, 1, 1}}});
  std::vector<validation_issue> issues;
  validate(stuck.view(), [&](const validation_issue& i) { issues.push_back(i); });
  REQUIRE(issues.size() == 2);
  REQUIRE(issues[0] == validation_issue{fault::deadlock, 0, 1, b00, op{op_kind::B, 1, 0}});
  REQUIRE(issues[1] == validation_issue{fault::deadlock, 1, 1, op{op_kind::overlap_f_b, 1, 1}, op{op_kind::F, 0, 1}});
  // A pair's word is its forward: with an F of the same stage and micro-batch it is a
  // duplicate.
  const schedule waits_b =
      from_lists({2, 2}, {{f00, op{op_kind::F, 0, 1}, pair01, b00, b01},
                          {op{op_kind::F, 1, 0}, op{op_kind::F, 1, 1}, op{op_kind::B, 1, 0}, op{op_kind::B, 1, 1}}});
  REQUIRE(validate(waits_b.view()).first.what == fault::duplicate);
}

TEST_CASE("overlapped pairs: the split reading claims no DeepSeek formula, a broken pair no out-of-order",
          "[analysis][pairs]") {
  schedule_spec split{schedule_family::dualpipev, {4, 8, 2, placement::v_shape}};
  split.pairs = pair_model::split;
  REQUIRE_FALSE(makespan_formula(split, costs{}).holds);
  REQUIRE(std::string(makespan_formula(split, costs{}).condition) ==
          "the pairs are read split: DeepSeek's idle is for fused pairs");
  REQUIRE(simulate(generate(split).view(), costs{}).makespan() == rational{51, 2});
  using ctpipe::tests::from_lists;
  const op pair01{op_kind::overlap_f_b, 0, 1};
  const schedule before_w = from_lists(
      {1, 2}, {{op{op_kind::F, 0, 0}, pair01, op{op_kind::W, 0, 0}, op{op_kind::B, 0, 1}, op{op_kind::B, 0, 0}}});
  std::vector<validation_issue> issues;
  validate(before_w.view(), [&](const validation_issue& i) { issues.push_back(i); });
  // The broken pair, the W before any I, and B(0,0) beside that W; nothing about B(0,1),
  // whose F the pair's word stands for.
  REQUIRE(issues.size() == 3);
  REQUIRE(issues[0] == validation_issue{fault::broken_pair, 0, 1, pair01, pair01});
  REQUIRE(issues[1] == validation_issue{fault::out_of_order, 0, 2, op{op_kind::W, 0, 0}, op{op_kind::I, 0, 0}});
  REQUIRE(issues[2].what == fault::mixed_backward);
  REQUIRE(issues[2].at == op{op_kind::B, 0, 0});
}

TEST_CASE("the bidirectional placement with an odd m: micro-batches j with 2j < m go down", "[analysis][dualpipe]") {
  using ctpipe::tests::from_lists;
  // P = 2, m = 3: micro-batches 0 and 1 down (stages 0, 1), micro-batch 2 up (stages 2, 3).
  const pipeline_shape shape{2, 3, 2, placement::bidirectional};
  REQUIRE(shape.last_stage(1) == 1);
  REQUIRE(shape.first_stage(2) == 2);
  REQUIRE(shape.stage_of(0, 1, 0) == -1);
  REQUIRE(shape.stage_of(0, 1, 2) == 3);
  const schedule s = from_lists(shape, {{op{op_kind::F, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::F, 3, 2},
                                         op{op_kind::B, 3, 2}, op{op_kind::B, 0, 0}, op{op_kind::B, 0, 1}},
                                        {op{op_kind::F, 1, 0}, op{op_kind::F, 1, 1}, op{op_kind::F, 2, 2},
                                         op{op_kind::B, 1, 0}, op{op_kind::B, 1, 1}, op{op_kind::B, 2, 2}}});
  REQUIRE(validate(s.view()).ok());
  REQUIRE(messages(s.view()) == 6);
  REQUIRE(simulate(s.view(), costs{}).busy(0) == rational{9});  // a chunk is a whole stage: 3 x (1 + 2)
  // An op outside its micro-batch's pipeline is out of shape.
  const schedule wrong = from_lists(shape, {{op{op_kind::F, 0, 2}}, {}});
  REQUIRE(validate(wrong.view()).first ==
          validation_issue{fault::out_of_shape, 0, 0, op{op_kind::F, 0, 2}, op{op_kind::F, 0, 2}});
}
