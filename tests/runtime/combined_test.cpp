// Combined 1F1B (Megatron-LM's overlap_moe_expert_parallel_comm) at run time: the grid
// proof of tests/static with validation on a larger grid, Megatron's own orders in
// Megatron's notation (tests/data/vectors/megatron_combined_*.json), the peaks,
// the refusals (library, tool), the split reading, CSV, compare and the tool.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_combined.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;

namespace {

schedule_spec combined_spec(int P, int m, int V, int g = 0) {
  schedule_spec s{schedule_family::combined_1f1b, {P, m, V}};
  s.group = g;
  return s;
}

/// Rank r's ops in Megatron's order notation (`convert_schedule_table_to_order`): a
/// forward (or a pair's word) of chunk c is c+1, a backward of chunk c is -(c+1); a pair
/// is its forward then its backward, as Megatron lists a combined step.
std::vector<int> megatron_notation(schedule_view v, int r) {
  std::vector<int> out;
  for (op o : v.rank(r)) {
    const int chunk = v.shape.chunk_of(o.stage()) + 1;
    out.push_back(o.kind() == op_kind::B ? -chunk : chunk);
  }
  return out;
}

}  // namespace

TEST_CASE("combined 1F1B grid: rule, warmup, pairs, valid, timing fused and split, peaks, messages",
          "[combined][proofs]") {
  // The compile-time grid is P <= 5, V <= 3, m <= 3P; here P <= 8, V <= 4, m <= 3P with validation.
  int accepted = 0;
  for (int P = 1; P <= 8; ++P) {
    for (int V = 1; V <= 4; ++V) {
      for (int m = 1; m <= 3 * P; ++m) {
        for (int g = 1; g <= m; ++g) {
          INFO("P " << P << " V " << V << " m " << m << " g " << g);
          REQUIRE(ctpipe::tests::prove_combined_point(P, V, m, g, true));
          accepted += spec_error(combined_spec(P, m, V, g)) == nullptr;
        }
      }
    }
  }
  REQUIRE(accepted == 534);  // V >= 2 points Megatron accepts on this grid, and P = 1 with V = 1
}

TEST_CASE("combined 1F1B equals Megatron's own order code, in Megatron's notation", "[combined][vectors]") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CTPIPE_VECTORS_DIR)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("megatron_combined_")) continue;
    INFO(name);
    std::ifstream in(entry.path());
    const nlohmann::json j = nlohmann::json::parse(in);
    REQUIRE(j.at("schedule") == "combined-1f1b");
    const schedule_spec spec = combined_spec(j.at("P"), j.at("m"), j.at("V"), j.at("group"));
    REQUIRE(spec_error(spec) == nullptr);
    const schedule s = generate(spec);
    for (int r = 0; r < spec.shape.P; ++r) {
      INFO("rank " << r);
      const auto rank = static_cast<std::size_t>(r);
      REQUIRE(megatron_notation(s.view(), r) == j.at("megatron_order")[rank].get<std::vector<int>>());
      REQUIRE(warmup_forwards(spec, r) == j.at("warmup")[rank].get<int>());
    }
    ++files;
  }
  REQUIRE(files == 7);
}

TEST_CASE("combined 1F1B: the issue's example, P = 4, V = 2, m = 8, g = 4", "[combined]") {
  const schedule_spec spec = combined_spec(4, 8, 2, 4);
  const schedule s = generate(spec);
  // Rank 0's chunk order as the issue quotes it from Megatron's code.
  REQUIRE(megatron_notation(s.view(), 0) == std::vector<int>{1,  1,  1,  1,  2,  2,  2,  2,  1,  1,  1,
                                                             1,  -2, 2,  -2, 2,  -2, 2,  -2, 2,  -1, -1,
                                                             -1, -1, -2, -2, -2, -2, -1, -1, -1, -1});
  const in_flight_profile mem = in_flight(s.view());
  const schedule plain = generate({schedule_family::interleaved_1f1b, {4, 8, 2}});
  const in_flight_profile plain_mem = in_flight(plain.view());
  const int peaks[] = {12, 10, 8, 6};
  const int plain_peaks[] = {11, 9, 7, 5};
  for (int r = 0; r < 4; ++r) {
    REQUIRE(mem.peak(r) == rational{peaks[r]});
    REQUIRE(peak_in_flight_formula(spec, rational{1}, r).value == rational{peaks[r]});
    REQUIRE(plain_mem.peak(r) == rational{plain_peaks[r]});
  }
  // Same makespan as plain interleaved at the article's costs, fused and split: 57/2.
  REQUIRE(simulate(s.view(), costs{}).makespan() == rational{57, 2});
  REQUIRE(simulate(split_pairs(s.view()).view(), costs{}).makespan() == rational{57, 2});
  REQUIRE(makespan_formula(spec, costs{}).value == rational{57, 2});
  // An overlap gain of 1/2 a pair (t_fb = 5/2) shortens the fused schedule; no closed form.
  costs gain{};
  gain.fb = rational{5, 2};
  REQUIRE(simulate(s.view(), gain).makespan() < rational{57, 2});
  REQUIRE_FALSE(makespan_formula(spec, gain).holds);
}

TEST_CASE("combined 1F1B: without the extra warmup forward the fused pairs would wait for themselves", "[combined]") {
  // Plain interleaved 1F1B (P = 4, V = 2, m = 8) with each steady forward and the backward
  // after it made one fused pair: on the last rank the first pair holds the forward and
  // the backward of micro-batch 0 on chunk 1, and the backward needs that forward.
  const schedule plain = generate({schedule_family::interleaved_1f1b, {4, 8, 2}});
  std::vector<op> ops(plain.view().ops.begin(), plain.view().ops.end());
  std::vector<std::uint32_t> offsets(plain.view().offsets.begin(), plain.view().offsets.end());
  const schedule_spec spec{schedule_family::interleaved_1f1b, {4, 8, 2}};
  for (int r = 0; r < 4; ++r) {
    const int w = warmup_forwards(spec, r);
    for (int k = w; k < 16; ++k) {
      const std::size_t word = offsets[static_cast<std::size_t>(r)] + static_cast<std::size_t>(w + 2 * (k - w));
      ops[word] = op{op_kind::overlap_f_b, ops[word].stage(), ops[word].microbatch()};
    }
  }
  const schedule_view paired{spec.shape, ops, offsets};
  REQUIRE_FALSE(validate(paired).ok());
  // The last rank's first pair: F of micro-batch 0 on stage 7 with its own backward.
  const std::size_t first = offsets[3] + static_cast<std::size_t>(warmup_forwards(spec, 3));
  REQUIRE(ops[first] == op{op_kind::overlap_f_b, 7, 0});
  REQUIRE(ops[first + 1] == op{op_kind::B, 7, 0});
  // Combined 1F1B's one more warmup forward makes every rank's order valid.
  REQUIRE(validate(generate(combined_spec(4, 8, 2)).view()).ok());
}

TEST_CASE("combined 1F1B lowered: exact under blocking and posted, and a fused pair can hold a rendezvous",
          "[combined][execute]") {
  const schedule s = generate(combined_spec(6, 6, 2));
  const costs equal{rational{1}, rational{1}, rational{1, 2}, rational{1, 2}, rational{0}};
  REQUIRE(simulate(s.view(), equal).makespan() == rational{17});
  for (const runtime_model model : {runtime_model::blocking, runtime_model::posted}) {
    REQUIRE(execute(lower(s.view(), equal, model).view(), equal, model).makespan() == rational{17});
  }
  // Under rendezvous the fused pairs (two ops long) make a sender wait: 1/2 lost. Read
  // split, the same order runs exactly as simulated.
  const auto rendezvous = [&equal](schedule_view v) {
    return execute(lower(v, equal, runtime_model::rendezvous).view(), equal, runtime_model::rendezvous).makespan();
  };
  REQUIRE(rendezvous(s.view()) == rational{35, 2});
  const schedule split = split_pairs(s.view());
  REQUIRE(rendezvous(split.view()) == simulate(split.view(), equal).makespan());
}

TEST_CASE("combined 1F1B at P = 1: Megatron's no-pipelining phases", "[combined]") {
  // F0 alone, then (F j+1; B j), then the last B.
  const schedule s = generate(combined_spec(1, 4, 1));
  REQUIRE(io::actions(s.rank(0)) == std::vector<std::string>{"0F0", "(0F1;0B0)OVERLAP_F_B", "(0F2;0B1)OVERLAP_F_B",
                                                             "(0F3;0B2)OVERLAP_F_B", "0B3"});
}

TEST_CASE("combined 1F1B: Megatron's refusals as ctpipe's rules", "[combined][rules]") {
  const struct {
    schedule_spec spec;
    const char* message;
  } refused[] = {
      {combined_spec(4, 8, 1),
       "ctpipe: combined-1f1b with P > 1 needs V >= 2 (Megatron's TransformerConfig asserts "
       "virtual_pipeline_model_parallel_size is not None when pipeline_model_parallel_size > 1)"},
      {combined_spec(1, 4, 2),
       "ctpipe: combined-1f1b with P = 1 needs V = 1 (Megatron's no-pipelining schedule asserts len(model) == 1)"},
      {combined_spec(4, 3, 2),
       "ctpipe: combined-1f1b needs the group size in [P, m] (Megatron raises unless PP <= "
       "microbatch_group_size_per_vp_stage <= M)"},
      {combined_spec(4, 8, 2, 3),
       "ctpipe: combined-1f1b needs the group size in [P, m] (Megatron raises unless PP <= "
       "microbatch_group_size_per_vp_stage <= M)"},
      {combined_spec(4, 8, 2, 9),
       "ctpipe: combined-1f1b needs the group size in [P, m] (Megatron raises unless PP <= "
       "microbatch_group_size_per_vp_stage <= M)"},
      {combined_spec(4, 6, 2),
       "ctpipe: combined-1f1b needs m % group == 0 or m % group >= P (Megatron raises when 0 < M % "
       "microbatch_group_size_per_vp_stage < PP)"},
      {combined_spec(4, 8, 2, -1), "ctpipe: the group size must be >= 0 (0 = the variant's default)"},
      {schedule_spec{schedule_family::combined_1f1b, {4, 8, 2, placement::v_shape}},
       "ctpipe: combined-1f1b runs on the loop placement"},
  };
  for (const auto& [spec, message] : refused) {
    INFO(message);
    REQUIRE(spec_error(spec) == std::string(message));
    REQUIRE_THROWS_WITH(generate(spec), message);
  }
  schedule_spec variant = combined_spec(4, 8, 2);
  variant.warmup_factor = 1;
  REQUIRE(
      spec_error(variant) ==
      std::string("ctpipe: combined-1f1b takes a group but no variant or warmup factor (it is Megatron's, factor 2)"));
  // m = 10: g = 5 makes two groups; g = 4 leaves a last group of 2 < P. At P = 3, m = 7,
  // g = 4 the last group of 3 = P is accepted.
  REQUIRE(spec_error(combined_spec(4, 10, 2, 5)) == nullptr);
  REQUIRE(spec_error(combined_spec(4, 10, 2, 4)) != nullptr);
  REQUIRE(spec_error(combined_spec(3, 7, 2, 4)) == nullptr);  // 7 % 4 = 3 >= P
}

TEST_CASE("combined 1F1B in the tool: show, refusals, split pairs, compare, CSV", "[combined][tool]") {
  using ctpipe::tests::run_tool;
  const auto json = run_tool("-s combined-1f1b -P 4 -V 2 -m 8 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  REQUIRE(j.at("schedule") == "combined-1f1b");
  REQUIRE(j.at("makespan") == "57/2");
  REQUIRE(j.at("pairs") == "fused");
  REQUIRE(j.at("peak_in_flight") == nlohmann::json::array({"12", "10", "8", "6"}));
  const auto split = run_tool("-s combined-1f1b -P 4 -V 2 -m 8 --pair-model split --format json");
  REQUIRE(split.exit_code == 0);
  REQUIRE(nlohmann::json::parse(split.out).at("makespan") == "57/2");
  const auto group = run_tool("-s combined-1f1b -P 4 -V 2 -m 10 -g 5 --format json");
  REQUIRE(group.exit_code == 0);
  REQUIRE(nlohmann::json::parse(group.out).at("peak_in_flight") == nlohmann::json::array({"13", "11", "9", "7"}));
  const auto bad = run_tool("-s combined-1f1b -P 4 -V 1 -m 8");
  REQUIRE(bad.exit_code == 2);
  REQUIRE(bad.err.starts_with("ctpipe: combined-1f1b with P > 1 needs V >= 2"));
  const auto remainder = run_tool("-s combined-1f1b -P 4 -m 6");
  REQUIRE(remainder.exit_code == 2);
  REQUIRE(remainder.err.starts_with("ctpipe: combined-1f1b needs m % group == 0 or m % group >= P"));
  const auto factor = run_tool("-s combined-1f1b --warmup-factor 1");
  REQUIRE(factor.exit_code == 2);
  REQUIRE(factor.err ==
          "ctpipe: --variant and --warmup-factor apply to interleaved-1f1b only (combined-1f1b takes --group)\n");
  const auto compare = run_tool("compare --schedules interleaved-1f1b,combined-1f1b -P 4 -m 8 --format json");
  REQUIRE(compare.exit_code == 0);
  REQUIRE(compare.out.find("combined-1f1b") != std::string::npos);
  // CSV (PyTorch's format) keeps the pairs and reads back to the same schedule.
  const schedule s = generate(combined_spec(4, 8, 2));
  const std::string csv = io::to_csv(s.view());
  REQUIRE(csv.find("OVERLAP_F_B") != std::string::npos);
  const schedule back = io::parse_csv(csv);
  REQUIRE(back.size() == s.size());
  for (int r = 0; r < 4; ++r) REQUIRE(io::actions(back.rank(r)) == io::actions(s.rank(r)));
}
