// The Zero Bubble family at run time: the grid proofs of tests/static with validation
// and interleaved ZB, the cases, and the tool.
#include <ctpipe/ctpipe.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cases.hpp"
#include "proofs.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::zero_bubble;

TEST_CASE("Zero Bubble grid: valid, formulas where they apply (twin of tests/static)", "[zero-bubble][proofs]") {
  for (auto family :
       {schedule_family::zb_h1, schedule_family::zb_h2, schedule_family::zbv, schedule_family::interleaved_zb}) {
    for (int P = 1; P <= 8; ++P) {
      for (int m = 1; m <= 4 * P; ++m) {
        INFO(family_name(family) << " P " << P << " m " << m);
        REQUIRE(ctpipe::tests::prove_zero_bubble_point(family, P, m, true));
      }
    }
  }
}

TEST_CASE("Zero Bubble formulas outside their ranges (docs/spec.md §4.1): they say they do not apply",
          "[zero-bubble][proofs]") {
  // (t_f, t_i, t_w) with t_f < t_w <= t_i, with min(t_i, t_w) > t_f, and with t_w > t_i.
  const costs outside[] = {
      {rational{1}, rational{4}, rational{2}, rational{2}},
      {rational{3}, rational{15}, rational{10}, rational{5}},
      {rational{1}, rational{3}, rational{1}, rational{2}},
      {rational{1, 2}, rational{2}, rational{1}, rational{1}},
  };
  for (auto family : {schedule_family::zb_h1, schedule_family::zb_h2, schedule_family::zbv}) {
    for (int P = 1; P <= 6; ++P) {
      for (int m = 1; m <= 4 * P; ++m) {
        INFO(family_name(family) << " P " << P << " m " << m);
        REQUIRE(ctpipe::tests::prove_zero_bubble_point(family, P, m, false, outside));
      }
    }
  }
  // The counterexamples themselves: the simulation is right, the bare formula would not be.
  const costs h1_case{rational{1}, rational{4}, rational{2}, rational{2}};
  const schedule_spec h1 = zero_bubble(schedule_family::zb_h1, 2, 2);
  REQUIRE(simulate(generate(h1).view(), h1_case).makespan() ==
          rational{12});  // (m(t_f+t_i+t_w) + (P-1)(t_f+t_i-t_w) = 11)
  REQUIRE_FALSE(makespan_formula(h1, h1_case).holds);
  const schedule_spec h2 = zero_bubble(schedule_family::zb_h2, 2, 3);
  REQUIRE(simulate(generate(h2).view(), h1_case).span_bubble() == rational{1});  // (P-1) max(0, t_f+t_i-2t_w) = 0
  REQUIRE_FALSE(span_bubble_formula(h2, h1_case).holds);
  const auto run = ctpipe::tests::run_tool("--schedule zb-h1 -P 2 -m 2 --costs f=1,i=2,w=2");
  REQUIRE(run.out.find("a bug") == std::string::npos);
  REQUIRE(run.out.find("makespan 12 (no closed form: needs t_w <= t_i and t_w <= t_f") != std::string::npos);
}

TEST_CASE("ZB-H1 idles 3 per rank where 1F1B idles 9 (P = 4, m = 8, t_f = t_i = t_w = 1)", "[zero-bubble]") {
  const simulation zb = simulate(generate(zero_bubble(schedule_family::zb_h1, 4, 8)).view(), costs{});
  const simulation plain = simulate(generate({schedule_family::one_f_one_b, {4, 8}}).view(), costs{});
  for (int r = 0; r < 4; ++r) {
    REQUIRE(zb.idle(r) == rational{3});
    REQUIRE(plain.idle(r) == rational{9});
  }
}

TEST_CASE("ZB-H1 with t_w > t_i: idle (P-1)t_f = 3, not the formula's 0", "[zero-bubble]") {
  const costs heavy_w{rational{1}, rational{3}, rational{1}, rational{2}};
  const schedule_spec spec = zero_bubble(schedule_family::zb_h1, 4, 8);
  const simulation sim = simulate(generate(spec).view(), heavy_w);
  for (int r = 0; r < 4; ++r) REQUIRE(sim.idle(r) == rational{3});
  REQUIRE_FALSE(makespan_formula(spec, heavy_w).holds);
  REQUIRE_FALSE(span_bubble_formula(spec, heavy_w).holds);
  const auto run = ctpipe::tests::run_tool("--schedule zb-h1 --costs f=1,i=1,w=2");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("idle per rank 3 3 3 3") != std::string::npos);
  REQUIRE(run.out.find("(no closed form: needs t_w <= t_i and t_w <= t_f") != std::string::npos);
  REQUIRE(run.out.find("= formula (P-1)(t_f+t_i-t_w)") == std::string::npos);
}

TEST_CASE("P = 1 works for every schedule: no messages, no bubble", "[zero-bubble]") {
  for (auto family : all_families) {
    INFO(family_name(family));
    if (family == schedule_family::dualpipe) continue;  // needs P even (DeepSeek's rule): P = 2 below
    // combined-1f1b at P = 1 is Megatron's no-pipelining schedule: one chunk.
    const int V = family == schedule_family::gpipe || family == schedule_family::one_f_one_b ||
                          family == schedule_family::zb_h1 || family == schedule_family::zb_h2 ||
                          family == schedule_family::combined_1f1b
                      ? 1
                      : 2;
    const schedule s = generate({family, {1, 4, V, natural_placement(family)}});
    REQUIRE(validate(s.view()).ok());
    REQUIRE(messages(s.view()) == 0);
    const simulation sim = simulate(s.view(), costs{});
    REQUIRE(sim.bubble_fraction() == rational{0});
    REQUIRE(sim.span_bubble() == rational{0});
  }
}

TEST_CASE("m = 1 works for ZB-H1 and ZB-H2 - ZB-V below 2P-1 micro-batches stays valid", "[zero-bubble]") {
  for (int P = 1; P <= 8; ++P) {
    INFO("P " << P);
    REQUIRE(validate(generate(zero_bubble(schedule_family::zb_h1, P, 1)).view()).ok());
    REQUIRE(validate(generate(zero_bubble(schedule_family::zb_h2, P, 1)).view()).ok());
    for (int m = 1; m < 2 * P - 1; ++m)
      REQUIRE(validate(generate(zero_bubble(schedule_family::zbv, P, m)).view()).ok());
  }
}

TEST_CASE("Ws are numbered first-in first-out after their Is", "[zero-bubble]") {
  // Per stage for every schedule; across a rank's stages too, except ZB-V, whose
  // cooldown (as PyTorch's) drains chunk 1's Ws before chunk 0's.
  for (auto family :
       {schedule_family::zb_h1, schedule_family::zb_h2, schedule_family::zbv, schedule_family::interleaved_zb}) {
    const schedule s = generate(zero_bubble(family, 4, 8));
    for (int r = 0; r < 4; ++r) {
      INFO(family_name(family) << " rank " << r);
      std::vector<op> is;
      std::vector<op> ws;
      for (const op o : s.rank(r)) {
        if (o.kind() == op_kind::I) is.push_back(o);
        if (o.kind() == op_kind::W) {
          ws.push_back(o);
          REQUIRE(std::count_if(is.begin(), is.end(), [&](op i) { return i.stage() == o.stage(); }) >=
                  std::count_if(ws.begin(), ws.end(), [&](op w) { return w.stage() == o.stage(); }));
        }
      }
      REQUIRE(is.size() == ws.size());
      for (int stage : {s.shape().stage_of(r, 0), s.shape().stage_of(r, s.shape().V - 1)}) {
        std::vector<int> i_order;
        std::vector<int> w_order;
        for (op o : is)
          if (o.stage() == stage) i_order.push_back(o.microbatch());
        for (op o : ws)
          if (o.stage() == stage) w_order.push_back(o.microbatch());
        REQUIRE(i_order == w_order);
      }
      if (family != schedule_family::zbv) {
        for (std::size_t k = 0; k < ws.size(); ++k) {
          REQUIRE(ws[k].stage() == is[k].stage());
          REQUIRE(ws[k].microbatch() == is[k].microbatch());
        }
      }
    }
  }
}

TEST_CASE("placement and V are checked for ZB-V and the ZB-H schedules", "[zero-bubble]") {
  REQUIRE_THROWS_WITH(generate({schedule_family::zbv, {4, 8, 2, placement::loop}}),
                      "ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)");
  REQUIRE_THROWS_WITH(generate({schedule_family::zbv, {4, 8, 1}}),
                      "ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)");
  REQUIRE_THROWS_WITH(generate({schedule_family::zb_h1, {4, 8, 2}}),
                      "ctpipe: zb-h1 and zb-h2 have one model chunk per rank (V must be 1)");
  REQUIRE_THROWS_WITH(generate({schedule_family::interleaved_zb, {4, 9, 2}}),
                      "ctpipe: interleaved-zb (torch) needs m % max(1, m / P) == 0");
  const auto run = ctpipe::tests::run_tool("--schedule zbv --placement loop");
  REQUIRE(run.exit_code == 2);
  REQUIRE(run.err == "ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)\n");
}

TEST_CASE("tool: Zero Bubble table, both bubble metrics, I and W, gamma view", "[zero-bubble][tool]") {
  const auto h2 = ctpipe::tests::run_tool("--schedule zb-h2");
  REQUIRE(h2.exit_code == 0);
  REQUIRE(h2.out.find("simulated bubble 1/9 (11.1%) = formula (P-1)/(3m+P-1)") != std::string::npos);
  REQUIRE(h2.out.find("span bubble 0 (largest span - busy over ranks) = formula (P-1) max(0, t_f+t_i-2t_w)") !=
          std::string::npos);
  REQUIRE(h2.out.find("I~ input-gradient  W+ weight-gradient") != std::string::npos);
  const auto v = ctpipe::tests::run_tool("--schedule zbv --format json");
  REQUIRE(v.exit_code == 0);
  const auto j = nlohmann::json::parse(v.out);
  REQUIRE(j["makespan"] == "51/2");
  REQUIRE(j["bubble_fraction"] == "1/17");
  REQUIRE(j["span_bubble"] == "0");
  REQUIRE(j["placement"] == "v");
  REQUIRE(j["V"] == 2);
  REQUIRE(j["peak_in_flight"] == nlohmann::json{"8", "8", "8", "8"});
  // The memory view for gamma = 0.43 against the plain count.
  const auto mem = ctpipe::tests::run_tool("--schedule zb-h1 --gamma 0.43");
  REQUIRE(mem.out.find("(gamma = 43/100; in brackets the plain count, gamma = 1)") != std::string::npos);
  REQUIRE(mem.out.find(" 4 [4] = formula (P-r) + r*gamma") != std::string::npos);
  REQUIRE(mem.out.find(" 229/100 [4] = formula (P-r) + r*gamma") != std::string::npos);
}

TEST_CASE(
    "DualPipeV and DualPipe over P in [1, 12] x m in [1, 6P], by DeepSeek's rule and at the structural minimum: op "
    "counts, peaks, messages, DeepSeek's idle (the compile-time grid's function)",
    "[dualpipe]") {
  for (const auto family : {ctpipe::schedule_family::dualpipev, ctpipe::schedule_family::dualpipe}) {
    for (int P = 1; P <= 12; ++P) {
      for (int m = 1; m <= 6 * P; ++m) {
        INFO(ctpipe::family_name(family) << " P = " << P << ", m = " << m);
        REQUIRE(ctpipe::tests::prove_dual_point(family, P, m, true));
        REQUIRE(ctpipe::tests::prove_dual_point(family, P, m, true, true));  // the structural minimum
      }
    }
  }
  REQUIRE(
      std::string(ctpipe::spec_error({ctpipe::schedule_family::dualpipev, {4, 7, 2, ctpipe::placement::v_shape}})) ==
      "ctpipe: dualpipev needs m >= 2P (DeepSeek's DualPipeV.step asserts num_chunks >= num_ranks * 2)");
  REQUIRE(std::string(ctpipe::spec_error({ctpipe::schedule_family::dualpipev, {4, 8}})) ==
          "ctpipe: dualpipev runs two chunks per rank on the V-shape placement (V = 2, placement v)");
  ctpipe::schedule_spec minimum{ctpipe::schedule_family::dualpipev, {4, 6, 2, ctpipe::placement::v_shape}};
  minimum.structural_minimum = true;
  REQUIRE(std::string(ctpipe::spec_error(minimum)) == "ctpipe: dualpipev needs m >= 2P-1 (its structural minimum)");
  ctpipe::schedule_spec not_dualpipe{ctpipe::schedule_family::zbv, {4, 8, 2, ctpipe::placement::v_shape}};
  not_dualpipe.structural_minimum = true;
  REQUIRE(std::string(ctpipe::spec_error(not_dualpipe)) ==
          "ctpipe: only dualpipev and dualpipe take the structural minimum");
}

TEST_CASE("DualPipeV's generator called below its rule (m < 2P-1) stays in bounds: its W queue balances",
          "[dualpipe]") {
  // The rule refuses these shapes first; the generator itself must still not read past
  // its W queue (the ASan job runs this), and each rank pops exactly the Ws it queued.
  for (int P = 1; P <= 16; ++P) {
    for (int m = 1; m <= 3; ++m) {
      for (int r = 0; r < P; ++r) {
        INFO("P = " << P << ", m = " << m << ", r = " << r);
        int inputs = 0, weights = 0;
        ctpipe::schedules::dualpipev({P, m, 2, ctpipe::placement::v_shape}, r, [&](ctpipe::op o) {
          inputs += o.kind() == ctpipe::op_kind::I ? 1 : 0;
          weights += o.kind() == ctpipe::op_kind::W ? 1 : 0;
        });
        REQUIRE(inputs == 2 * P - 1 - r);
        REQUIRE(weights == inputs);
      }
    }
  }
}

TEST_CASE(
    "V-Half and V-Min over P in [1, 16] x m in [1, 6P]: op counts, the paper's memory bounds on every rank, the idle "
    "closed forms (the compile-time grid's function)",
    "[v-memory]") {
  for (const auto family : {ctpipe::schedule_family::v_half, ctpipe::schedule_family::v_min}) {
    for (int P = 1; P <= 16; ++P) {
      for (int m = 1; m <= 6 * P; ++m) {
        INFO(ctpipe::family_name(family) << " P = " << P << ", m = " << m);
        REQUIRE(ctpipe::tests::prove_v_memory_point(family, P, m, true));
      }
    }
  }
  const ctpipe::schedule_spec v_half_loop{ctpipe::schedule_family::v_half, {4, 8, 2, ctpipe::placement::loop}};
  REQUIRE(std::string(ctpipe::spec_error(v_half_loop)) ==
          "ctpipe: v-half and v-min run two chunks per rank on the V-shape placement (V = 2, placement v)");
  REQUIRE(std::string(ctpipe::spec_error({ctpipe::schedule_family::v_min, {4, 8}})) ==
          "ctpipe: v-half and v-min run two chunks per rank on the V-shape placement (V = 2, placement v)");
}

TEST_CASE(
    "V-Half and V-Min against 1F1B: the idle ratio is about 0.28 and 0.61 at P = 4, m = 8, and tends to the paper's "
    "1/2 and 2/3",
    "[v-memory]") {
  using ctpipe::rational;
  const auto idle_ratio = [](ctpipe::schedule_family family, int P, int m) {
    const ctpipe::costs article{};
    const ctpipe::schedule v = ctpipe::generate({family, {P, m, 2, ctpipe::placement::v_shape}});
    const ctpipe::schedule one = ctpipe::generate({ctpipe::schedule_family::one_f_one_b, {P, m}});
    const ctpipe::simulation a = ctpipe::simulate(v.view(), article), b = ctpipe::simulate(one.view(), article);
    for (int r = 1; r < P; ++r) REQUIRE(a.idle(r) == a.idle(0));  // every rank idles the same
    return a.idle(0) / b.idle(0);
  };
  REQUIRE(idle_ratio(ctpipe::schedule_family::v_half, 4, 8) == rational{5, 18});
  REQUIRE(idle_ratio(ctpipe::schedule_family::v_min, 4, 8) == rational{11, 18});
  // (3P-7)/(6(P-1)) and (4P-5)/(6(P-1)) at P = 16 (1F1B idles 6(P-1) chunk times t_f/2).
  REQUIRE(idle_ratio(ctpipe::schedule_family::v_half, 16, 48) == rational{41, 90});
  REQUIRE(idle_ratio(ctpipe::schedule_family::v_min, 16, 48) == rational{59, 90});
  // The closed forms name their range.
  const ctpipe::schedule_spec s{ctpipe::schedule_family::v_half, {4, 5, 2, ctpipe::placement::v_shape}};
  REQUIRE(std::string(ctpipe::makespan_formula(s, {}).condition) == "needs m >= P+2 (below it the idle varies with m)");
  const ctpipe::costs heavy_w{rational{1}, rational{3}, rational{1}, rational{2}, rational{0}};
  REQUIRE(std::string(
              ctpipe::makespan_formula({ctpipe::schedule_family::v_min, {4, 8, 2, ctpipe::placement::v_shape}}, heavy_w)
                  .condition) == "needs t_f = t_i = t_w (the generator's unit case)");
  // t_b plays no part (every backward is split): the formula holds with any t_b.
  const ctpipe::schedule_spec p6{ctpipe::schedule_family::v_half, {6, 12, 2, ctpipe::placement::v_shape}};
  const ctpipe::costs odd_b{rational{1}, rational{3}, rational{1}, rational{1}, rational{0}};
  const ctpipe::closed_form T = ctpipe::makespan_formula(p6, odd_b);
  REQUIRE(T.holds);
  REQUIRE(T.value == rational{83, 2});
  REQUIRE(ctpipe::simulate(ctpipe::generate(p6).view(), odd_b).makespan() == T.value);
  REQUIRE(std::string(T.formula) == "m(t_f+t_i+t_w) + (3P-7) t_f/2 (P even)");
  // The formula text names the case that applies (P = 2 and P = 1 are their own).
  const ctpipe::schedule_spec p2{ctpipe::schedule_family::v_half, {2, 4, 2, ctpipe::placement::v_shape}};
  REQUIRE(std::string(ctpipe::makespan_formula(p2, {}).formula) == "m(t_f+t_i+t_w) + t_f/2 (P = 2)");
  REQUIRE(ctpipe::makespan_formula(p2, {}).value == rational{25, 2});
  const ctpipe::schedule_spec p1{ctpipe::schedule_family::v_min, {1, 3, 2, ctpipe::placement::v_shape}};
  REQUIRE(std::string(ctpipe::makespan_formula(p1, {}).formula) == "m(t_f+t_i+t_w) (P = 1)");
  REQUIRE(ctpipe::makespan_formula(p1, {}).value == rational{9});
}
