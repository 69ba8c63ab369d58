// Interleaved 1F1B and looped BFS at run time: the grid proofs of tests/static with
// validation and for every rule, the cases, and the tool.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "catch.hpp"
#include "cases.hpp"
#include "proofs.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::interleaved;

TEST_CASE("interleaved grid: valid, bubble, makespan, peaks, messages (twin of tests/static)",
          "[interleaved][proofs]") {
  int points = 0;
  for (int P = 1; P <= 6; ++P) {
    for (int V = 1; V <= 4; ++V) {
      for (int m = 1; m <= 4 * P; ++m) {
        INFO("P " << P << " V " << V << " m " << m);
        for (int g = 1; g <= m; ++g) {
          INFO("g " << g);
          REQUIRE(ctpipe::tests::prove_interleaved_point(interleaved(P, m, V, interleaved_variant::megatron, g), true));
          points += V > 1 && spec_error(interleaved(P, m, V, interleaved_variant::megatron, g)) == nullptr;
        }
        // The other rules, each with its default group; warmup factor 1.
        REQUIRE(
            ctpipe::tests::prove_interleaved_point(interleaved(P, m, V, interleaved_variant::megatron_legacy), true));
        REQUIRE(ctpipe::tests::prove_interleaved_point(interleaved(P, m, V, interleaved_variant::torch), true));
        schedule_spec factor_one = interleaved(P, m, V);
        factor_one.warmup_factor = 1;
        REQUIRE(ctpipe::tests::prove_interleaved_point(factor_one, true));
      }
    }
  }
  // Configurations with V > 1 that Megatron's rule accepts in the grid, counted independently
  // of ctpipe (a check that the grid is what it claims to be).
  REQUIRE(points == 708);
}

TEST_CASE("looped BFS: valid - bubble (P-1)/(mV+P-1) for m >= P, peak mV", "[interleaved][proofs]") {
  for (int P = 1; P <= 6; ++P) {
    for (int V = 1; V <= 4; ++V) {
      for (int m = 1; m <= 4 * P; ++m) {
        INFO("P " << P << " V " << V << " m " << m);
        const schedule_spec spec{schedule_family::looped_bfs, {P, m, V}};
        const schedule s = generate(spec);
        REQUIRE(validate(s.view()).ok());
        const simulation sim = simulate(s.view(), costs{});
        const closed_form bubble = bubble_fraction_formula(spec, costs{});
        REQUIRE(bubble.holds == (m >= P || V == 1));
        if (bubble.holds)
          REQUIRE(sim.bubble_fraction() == bubble.value);
        else
          REQUIRE(sim.bubble_fraction() > rational{P - 1} / rational{m * V + P - 1});
        const in_flight_profile mem = in_flight(s.view());
        for (int r = 0; r < P; ++r) REQUIRE(mem.peak(r) == rational{m * V});
      }
    }
  }
}

TEST_CASE("interleaved with V = 1 is 1F1B (megatron rules) and PyTorch's rule (torch) for P in [1, 6], m in [1, 18]",
          "[interleaved]") {
  for (int P = 1; P <= 6; ++P) {
    for (int m = 1; m <= 12; ++m) REQUIRE(ctpipe::tests::interleaved_v1_is_1f1b(P, m));
    for (int m = 1; m <= 18; ++m) REQUIRE(ctpipe::tests::interleaved_torch_v1_is_pytorchs(P, m));
  }
  // PyTorch 2.13.0's ScheduleInterleaved1F1B with one stage per rank (its pipeline_order,
  // run here on 2026-12-03): P = 2, m = 3, and P = 4, m = 6.
  const auto rows = [](int P, int m) {
    return io::to_csv(generate({schedule_family::interleaved_1f1b, {P, m, 1}, interleaved_variant::torch}).view());
  };
  CHECK(rows(2, 3) == "0F0,0F1,0F2,0B0,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n");
  CHECK(rows(4, 6) ==
        "0F0,0F1,0F2,0F3,0F4,0F5,0B0,0B1,0B2,0B3,0B4,0B5\n"
        "1F0,1F1,1F2,1F3,1F4,1B0,1F5,1B1,1B2,1B3,1B4,1B5\n"
        "2F0,2F1,2F2,2B0,2F3,2B1,2F4,2B2,2F5,2B3,2B4,2B5\n"
        "3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5\n");
  // PyTorch: "Interleaved 1F1B requires the number of microbatches to be a multiple of the
  // number of rounds (5), but got 16."
  CHECK(std::string(spec_error({schedule_family::interleaved_1f1b, {3, 16, 1}, interleaved_variant::torch})) ==
        "ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0");
}

TEST_CASE("interleaved warmups, peaks and messages of the issue's cases", "[interleaved]") {
  const schedule_spec p4m8 = interleaved(4, 8, 2);
  for (int r = 0; r < 4; ++r) REQUIRE(warmup_forwards(p4m8, r) == 10 - 2 * r);
  const schedule_spec p4m4 = interleaved(4, 4, 2);
  const schedule_spec legacy = interleaved(4, 4, 2, interleaved_variant::megatron_legacy);
  const int current_warmups[] = {8, 8, 6, 4};
  for (int r = 0; r < 4; ++r) {
    REQUIRE(warmup_forwards(p4m4, r) == current_warmups[r]);
    REQUIRE(warmup_forwards(legacy, r) == 8);
  }
  // Legacy with m = P: every rank runs all its forwards first.
  const schedule l = generate(legacy);
  for (int r = 0; r < 4; ++r) {
    for (int k = 0; k < 8; ++k) REQUIRE(l.rank(r)[static_cast<std::size_t>(k)].kind() == op_kind::F);
  }
  const schedule p2 = generate(interleaved(2, 4, 2));
  REQUIRE(validate(p2.view()).ok());
  REQUIRE(messages(p2.view()) == 24);
  REQUIRE(messages_between(p2.view(), 0, 1) == message_count{8, 4});
  REQUIRE(messages_between(p2.view(), 1, 0) == message_count{4, 8});
  // P = 8, V = 2: rank 0 peaks at 23 chunks = 23/2 full activations (the article).
  const in_flight_profile mem = in_flight(generate(interleaved(8, 16, 2)).view());
  REQUIRE(mem.peak(0) == rational{23});
  REQUIRE(mem.peak_activations(0) == rational{23, 2});
}

TEST_CASE("interleaved configurations are accepted and rejected with the rule's message", "[interleaved]") {
  REQUIRE(spec_error(interleaved(4, 10, 2, interleaved_variant::megatron, 5)) == nullptr);
  REQUIRE(validate(generate(interleaved(4, 10, 2, interleaved_variant::megatron, 5)).view()).ok());
  REQUIRE_THROWS_WITH(generate(interleaved(4, 6, 2, interleaved_variant::megatron, 4)),
                      "ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or m % group >= P");
  REQUIRE_THROWS_WITH(generate(interleaved(6, 3, 2)),
                      "ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P");
  REQUIRE_THROWS_WITH(generate(interleaved(4, 8, 2, interleaved_variant::megatron, 9)),
                      "ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m]");
  for (int m : {7, 10}) REQUIRE(spec_error(interleaved(4, m, 2, interleaved_variant::torch)) == nullptr);
  for (int m : {9, 14}) {
    REQUIRE_THROWS_WITH(generate(interleaved(4, m, 2, interleaved_variant::torch)),
                        "ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0");
  }
  REQUIRE_THROWS_WITH(generate(interleaved(4, 6, 2, interleaved_variant::megatron_legacy)),
                      "ctpipe: interleaved-1f1b (megatron-legacy) needs m % P == 0");
  REQUIRE_THROWS_WITH(check_spec({schedule_family::interleaved_1f1b, {4, 8, 2, placement::v_shape}}),
                      "ctpipe: interleaved-1f1b, looped-bfs and interleaved-zb run on the loop placement");
  REQUIRE_THROWS_WITH(check_spec({schedule_family::interleaved_1f1b, {4, 8, 2}, interleaved_variant::megatron, 0, 3}),
                      "ctpipe: the warmup factor must be 1 or 2");
  REQUIRE_THROWS_WITH(check_spec({schedule_family::one_f_one_b, {4, 8}, interleaved_variant::torch}),
                      "ctpipe: only interleaved-1f1b takes a group, variant or warmup factor");
}

TEST_CASE("warmup factor 1: same makespan without latency, fewer chunks in flight - factor 2 hides latency",
          "[interleaved]") {
  schedule_spec two = interleaved(4, 8, 2);
  schedule_spec one = two;
  one.warmup_factor = 1;
  const schedule s2 = generate(two);
  const schedule s1 = generate(one);
  REQUIRE(simulate(s1.view(), costs{}).makespan() == simulate(s2.view(), costs{}).makespan());
  REQUIRE(in_flight(s1.view()).peak(0) == rational{8});
  REQUIRE(in_flight(s2.view()).peak(0) == rational{11});
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};
  REQUIRE(simulate(s2.view(), latency).makespan() < simulate(s1.view(), latency).makespan());
}

TEST_CASE("tool: interleaved options, chunk labels, formula that does not apply", "[interleaved][tool]") {
  const auto run = ctpipe::tests::run_tool("--schedule interleaved-1f1b -P 4 -m 8 -V 2");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("simulated bubble 3/19 (15.8%) = formula (P-1)/(mV+P-1)") != std::string::npos);
  REQUIRE(run.out.find("F0.1") != std::string::npos);  // micro-batch 0 on chunk 1
  REQUIRE(run.out.find("11 (11/2 full) = formula min(mV, 2(P-1-r) + (V-1)g + 1)") != std::string::npos);
  const auto torch =
      ctpipe::tests::run_tool("--schedule interleaved-1f1b --variant torch -P 4 -m 3 -V 2 --format json");
  REQUIRE(torch.exit_code == 0);
  const auto j = nlohmann::json::parse(torch.out);
  REQUIRE(j["bubble_fraction"] == "2/5");
  REQUIRE(j["bubble_fraction_formula"].is_null());
  const auto text = ctpipe::tests::run_tool("--schedule interleaved-1f1b --variant torch -P 4 -m 3 -V 2");
  REQUIRE(text.out.find("simulated bubble 2/5 (40.0%) (no closed form: needs m >= P") != std::string::npos);
  const auto bad = ctpipe::tests::run_tool("--schedule interleaved-1f1b -P 6 -m 3 -V 2");
  REQUIRE(bad.exit_code == 2);
  REQUIRE(bad.out.empty());
  REQUIRE(bad.err == "ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P\n");
  const auto wrong_option = ctpipe::tests::run_tool("--schedule 1f1b --group 4");
  REQUIRE(wrong_option.exit_code == 2);
  REQUIRE(wrong_option.err ==
          "ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only (--group also to "
          "combined-1f1b)\n");
  const auto bad_variant = ctpipe::tests::run_tool("--schedule interleaved-1f1b --variant deepspeed");
  REQUIRE(bad_variant.exit_code == 2);
  REQUIRE(bad_variant.err == "ctpipe: --variant takes megatron, megatron-legacy or torch, not 'deepspeed'\n");
}
