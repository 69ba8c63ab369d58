// Unequal stages and micro-batches (cost_scale, docs/spec.md §2.2, §4.2) at run time:
// the values, the twin of tests/static/proofs_scaled.cpp over larger shapes and
// seeded random factors for every family (prove_scaled(): busy time and op lengths
// restated from the spec, the closed forms, the executed runs of the lowered lists),
// homogeneity (every factor k multiplies the makespan by k), the errors, and the tool's
// --stage-scale and --microbatch-scale.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/report.hpp>

#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_scaled.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::prove_scaled;
using ctpipe::tests::prove_scaled_formulas;
using ctpipe::tests::run_tool;

namespace {

schedule_spec spec_of(schedule_family f, int P, int m, int V) { return {f, {P, m, V, natural_placement(f)}}; }

rational makespan(schedule_family f, int P, int m, const std::vector<rational>& stage,
                  const std::vector<rational>& mb = {}, const costs& c = costs{}) {
  return simulate(generate(spec_of(f, P, m, 1)).view(), c, cost_scale{stage, mb}).makespan();
}

}  // namespace

TEST_CASE(
    "unequal stages: 1F1B with the last stage 5/4 slower takes 39, layers 8, 8, 7, 7 part GPipe (258) and 1F1B (252)",
    "[scaled]") {
  REQUIRE(makespan(schedule_family::one_f_one_b, 4, 8, {1, 1, 1, rational{5, 4}}) == rational{39});
  REQUIRE(makespan(schedule_family::gpipe, 4, 8, {8, 8, 7, 7}) == rational{258});
  REQUIRE(makespan(schedule_family::one_f_one_b, 4, 8, {8, 8, 7, 7}) == rational{252});
  const schedule_spec one_f_one_b = spec_of(schedule_family::one_f_one_b, 4, 8, 1);
  const std::vector<rational> layers{8, 8, 7, 7};
  REQUIRE_FALSE(makespan_formula(one_f_one_b, costs{}, cost_scale{layers, {}}).holds);
  const std::vector<rational> last_slow{1, 1, 1, rational{5, 4}};
  const closed_form T = makespan_formula(one_f_one_b, costs{}, cost_scale{last_slow, {}});
  REQUIRE(T.holds);
  REQUIRE(T.value == rational{39});
  REQUIRE(std::string(T.formula) == "(Σa + (m-1) max a)(t_f+t_b)");
}

TEST_CASE("unequal micro-batches: one rank runs the sum of its scaled ops", "[scaled]") {
  // P = 1: no waiting, so the makespan is the sum of every op's cost: m forwards and
  // backwards, each scaled by its micro-batch's factor.
  const std::vector<rational> mb{1, 2, rational{1, 2}, 3};
  REQUIRE(makespan(schedule_family::one_f_one_b, 1, 4, {}, mb) == rational{3} * (rational{1} + 2 + rational{1, 2} + 3));
  REQUIRE(makespan(schedule_family::gpipe, 1, 4, {rational{3, 2}}, mb) ==
          rational{3, 2} * rational{3} * rational{13, 2});
}

TEST_CASE("the closed forms under unequal stages, every factor tuple over P <= 5", "[scaled][proofs]") {
  const rational three[] = {1, rational{3, 2}, 2};
  const rational two[] = {1, 2};
  const costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{0}};
  for (const schedule_family f : {schedule_family::gpipe, schedule_family::one_f_one_b}) {
    INFO(family_name(f));
    REQUIRE(prove_scaled_formulas(f, 2, 1, 10, three, 3, costs{}));
    REQUIRE(prove_scaled_formulas(f, 3, 1, 8, three, 3, uneven));
    REQUIRE(prove_scaled_formulas(f, 4, 1, 8, three, 3, costs{}));
    REQUIRE(prove_scaled_formulas(f, 5, 1, 6, two, 2, uneven));
  }
}

TEST_CASE("prove_scaled: every family over P <= 5, m <= 10, V <= 3, random stage and micro-batch factors",
          "[scaled][proofs]") {
  std::mt19937 rng(20261201);
  const auto factor = [&rng] {
    return rational{static_cast<std::int64_t>(1 + rng() % 6), static_cast<std::int64_t>(1 + rng() % 4)};
  };
  const costs sets[] = {costs{}, costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}},
                        costs{rational{2}, rational{1}, rational{1, 3}, rational{2, 3}, rational{1, 5}, rational{2}}};
  int proved = 0;
  for (const schedule_family f : all_families) {
    for (int P = 1; P <= 5; ++P) {
      for (int m = 1; m <= 10; ++m) {
        for (int V = 1; V <= 3; ++V) {
          const schedule_spec spec = spec_of(f, P, m, V);
          if (spec_error(spec) != nullptr) continue;
          std::vector<rational> stage(static_cast<std::size_t>(spec.shape.stages())), mb(static_cast<std::size_t>(m));
          for (rational& x : stage) x = factor();
          for (rational& x : mb) x = factor();
          for (const costs& c : sets) {
            INFO(family_name(f) << " P=" << P << " m=" << m << " V=" << V << " t_c=" << c.c.num << "/" << c.c.den);
            REQUIRE(prove_scaled(spec, c, cost_scale{stage, mb}));
            REQUIRE(prove_scaled(spec, c, cost_scale{stage, {}}));
            ++proved;
          }
        }
      }
    }
  }
  REQUIRE(proved > 1000);
}

TEST_CASE("homogeneity: every stage factor k multiplies the makespan by k (t_c = 0), for every family", "[scaled]") {
  for (const schedule_family f : all_families) {
    const schedule_spec spec = spec_of(f, 4, 8, family_of(f).default_V);
    if (spec_error(spec) != nullptr) continue;
    const schedule g = generate(spec);
    const std::vector<rational> threes(static_cast<std::size_t>(spec.shape.stages()), rational{3, 2});
    const std::vector<rational> ones(static_cast<std::size_t>(spec.shape.stages()), rational{1});
    INFO(family_name(f));
    REQUIRE(simulate(g.view(), costs{}, cost_scale{threes, {}}).makespan() ==
            rational{3, 2} * simulate(g.view(), costs{}).makespan());
    REQUIRE(simulate(g.view(), costs{}, cost_scale{ones, {}}).makespan() == simulate(g.view(), costs{}).makespan());
  }
}

TEST_CASE("cost_scale errors: a list of the wrong length, a factor that is not positive", "[scaled]") {
  const schedule g = generate(spec_of(schedule_family::one_f_one_b, 4, 8, 1));
  const std::vector<rational> three{1, 1, 1}, zero{1, 0, 1, 1}, seven(7, rational{1});
  const std::vector<rational> zeros(4, rational{0}), negative{1, -1, 1, 1};
  std::vector<rational> one_zero(8, rational{1});
  one_zero[3] = rational{0};
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{three, {}}),
                      "ctpipe: the stage scale needs one factor per stage (P*V of them)");
  // A stage of factor 0 does no work (a Megatron-LM layout's empty stage): its ops last 0.
  const simulation with_zero = simulate(g.view(), costs{}, cost_scale{zero, {}});
  REQUIRE(with_zero.makespan() > rational{0});
  // GPipe's flow-shop form (Σa + (m-1) max a)(t_f+t_b) holds with it: (3 + 7) * 3.
  const schedule gp = generate(spec_of(schedule_family::gpipe, 4, 8, 1));
  REQUIRE(simulate(gp.view(), costs{}, cost_scale{zero, {}}).makespan() == rational{30});
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{zeros, {}}),
                      "ctpipe: stage factors must be >= 0, at least one > 0");
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{negative, {}}),
                      "ctpipe: stage factors must be >= 0, at least one > 0");
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{{}, one_zero}), "ctpipe: scale factors must be > 0");
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{{}, seven}),
                      "ctpipe: the micro-batch scale needs one factor per micro-batch (m of them)");
  REQUIRE_THROWS_WITH(io::analyze(spec_of(schedule_family::one_f_one_b, 4, 8, 1), costs{}, rational{1}, three),
                      "ctpipe: the stage scale needs one factor per stage (P*V of them)");
}

TEST_CASE("tool: --stage-scale and --microbatch-scale, echoed in the JSON, checked against the shape",
          "[scaled][tool]") {
  const auto text = run_tool("-P 4 -m 8 --stage-scale 1,1,1,5/4 --color never");
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.out.find("stage scale 1,1,1,5/4") != std::string::npos);
  REQUIRE(text.out.find("makespan 39 = formula (Σa + (m-1) max a)(t_f+t_b)") != std::string::npos);
  const auto json =
      run_tool("-s gpipe -P 4 -m 8 --stage-scale 8,8,7,7 --microbatch-scale 1,1,1,1,1,1,1,1 --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.at("makespan") == "258");
  REQUIRE(j.at("stage_scale") == nlohmann::json::array({"8", "8", "7", "7"}));
  REQUIRE(j.at("microbatch_scale").size() == 8);
  for (const auto& [model, run] : j.at("executed").items()) REQUIRE(run.at("makespan") == "258");
  const auto plain = nlohmann::json::parse(run_tool("--format json").out);
  REQUIRE(plain.at("stage_scale").is_null());
  REQUIRE(plain.at("microbatch_scale").is_null());
  const auto wrong = run_tool("-P 4 -m 8 --stage-scale 1,2");
  REQUIRE(wrong.exit_code == 2);
  REQUIRE(wrong.out.empty());
  REQUIRE(wrong.err == "ctpipe: --stage-scale needs one factor per stage, 4 of them (P*V); 2 given\n");
  REQUIRE(run_tool("-P 4 -m 8 --microbatch-scale 1,2").err ==
          "ctpipe: --microbatch-scale needs one factor per micro-batch, 8 of them (m); 2 given\n");
  REQUIRE(run_tool("-P 4 -m 8 --microbatch-scale 1,,2").err ==
          "ctpipe: --microbatch-scale takes exact numbers separated by commas (e.g. 1,1,1,5/4)\n");
  // compare: the families with another number of stages (P*V) are rejected rows.
  const auto compare = run_tool("compare -P 4 -m 8 --stage-scale 1,1,1,5/4 --format json");
  REQUIRE(compare.exit_code == 0);
  const auto c = nlohmann::json::parse(compare.out);
  REQUIRE(c.at("schedules").at(1).at("schedule") == "1f1b");
  REQUIRE(c.at("schedules").at(1).at("makespan") == "39");
  bool interleaved_rejected = false;
  for (const auto& r : c.at("rejected")) {
    interleaved_rejected |=
        r.at("schedule") == "interleaved-1f1b" &&
        r.at("reason") == "ctpipe: --stage-scale needs one factor per stage, 8 of them (P*V); 4 given";
  }
  REQUIRE(interleaved_rejected);
}
