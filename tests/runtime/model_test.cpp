// Memory in bytes (ctpipe/analysis/model.hpp, docs/memory.md) at run time: the twin of
// tests/static/proofs_model.cpp through the same functions, the presets' parameter
// counts, the weighting by gamma and by micro-batch factors, the errors, and the tool's
// --model, --memory-limit and --layers.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>
#include <ctpipe/io/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <tuple>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_model.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::run_tool;

TEST_CASE("model: a small model counted by hand, Korthikanti's five formulas, bytes per parameter", "[model]") {
  REQUIRE(ctpipe::tests::tiny_by_hand());
  for (const auto& [s, b, h, a, t] : {std::tuple{2048, 1, 12288, 96, 8}, std::tuple{4096, 2, 4096, 32, 4},
                                      std::tuple{4, 1, 8, 2, 2}, std::tuple{1024, 4, 5120, 40, 2}}) {
    INFO("s=" << s << " b=" << b << " h=" << h << " a=" << a << " t=" << t);
    REQUIRE(ctpipe::tests::korthikanti_formulas(s, b, h, a, t));
  }
  REQUIRE(bytes_per_parameter(transformer_model{}) == rational{18});
  REQUIRE(bytes_per_parameter(transformer_model{.dp = 8, .distributed_optimizer = true}) == rational{15, 2});
}

TEST_CASE("model: Megatron-LM's estimate against the schedule's own peak (docs/memory.md)", "[model]") {
  // P = 4, V = 2: Megatron says 11/2 stage-equivalents for rank 0 whatever m and g are.
  REQUIRE(ctpipe::tests::megatron_stage_equivalents(4, 2, 8) == rational{11, 2});
  REQUIRE(ctpipe::tests::megatron_stage_equivalents(4, 2, 4) == rational{11, 2});
  REQUIRE(ctpipe::tests::megatron_against_schedule(8, 8) == rational{15, 2});  // under: 15/2 held
  REQUIRE(ctpipe::tests::megatron_against_schedule(4, 0) == rational{4});      // over: 4 held
  REQUIRE(ctpipe::tests::megatron_stage_equivalents(4, 1, 2) == rational{2});  // 1F1B: min(P, m)
}

TEST_CASE("model: the presets' parameter counts are their published sizes", "[model]") {
  // Parameters = L x layer_parameters + 2vh (embedding and head, untied); the published
  // sizes are 175B, 7B and 70B (RMSNorm counted as LayerNorm: a few thousand more).
  const auto total = [](const transformer_model& m) { return m.layers * layer_parameters(m) + 2 * m.vocab * m.hidden; };
  REQUIRE(total(find_model_preset("gpt3-175b")->model) / 1000000000 == 175);
  REQUIRE(total(find_model_preset("llama2-7b")->model) / 100000000 == 67);    // 6.74B
  REQUIRE(total(find_model_preset("llama2-70b")->model) / 1000000000 == 68);  // 68.98B
  REQUIRE(find_model_preset("nope") == nullptr);
}

TEST_CASE("model: gamma weighs I and W, micro-batch factors scale bytes", "[model]") {
  const transformer_model tiny{.layers = 4, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4};
  const std::int64_t split[] = {2, 2};
  // With one stage per rank every op of rank r weighs its stage's bytes, so the activation
  // part of the peak is in_flight()'s gamma-weighted peak (in chunks) times those bytes:
  // two counts of the same events, by two functions.
  for (const schedule_family f : {schedule_family::zb_h1, schedule_family::zb_h2, schedule_family::one_f_one_b}) {
    const schedule zb = generate(schedule_spec{f, {2, 4, 1, placement::loop}});
    for (const rational gamma : {rational{0}, rational{1, 2}, rational{3, 7}, rational{1}}) {
      const model_memory mm = memory_of(zb.view(), tiny, split, gamma);
      const in_flight_profile chunks = in_flight(zb.view(), gamma);
      for (int r = 0; r < 2; ++r) {
        INFO(family_name(f) << " gamma " << gamma.num << "/" << gamma.den << " rank " << r);
        REQUIRE(mm.peak_bytes(r) - mm.static_bytes(r) == chunks.peak(r) * stage_activation_bytes(tiny, 2, r, 2));
      }
    }
  }
  // Micro-batch factors of 2 everywhere double every activation byte.
  const std::vector<rational> twos(4, rational{2});
  const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, {2, 4, 1, placement::loop}});
  const model_memory one = memory_of(g.view(), tiny, split, rational{1});
  const model_memory two = memory_of(g.view(), tiny, split, rational{1}, twos);
  for (int r = 0; r < 2; ++r) {
    REQUIRE(two.peak_bytes(r) - two.static_bytes(r) == rational{2} * (one.peak_bytes(r) - one.static_bytes(r)));
  }
}

TEST_CASE("model: errors", "[model]") {
  REQUIRE_THROWS_WITH(check_model(transformer_model{}),
                      "ctpipe: a model needs layers, hidden, heads, vocab and seq >= 1 (and micro_batch, tp, dp >= 1)");
  REQUIRE_THROWS_WITH(check_model(transformer_model{.layers = 1, .hidden = 10, .heads = 3, .vocab = 1, .seq = 1}),
                      "ctpipe: the model's hidden size must be a multiple of its heads");
  REQUIRE_THROWS_WITH(even_split(3, 4, 0), "ctpipe: the model needs at least one layer per stage (L >= S)");
  const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, {2, 4, 1, placement::loop}});
  const std::int64_t bad[] = {4, 0};
  const transformer_model tiny{.layers = 4, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4};
  REQUIRE_THROWS_WITH(memory_of(g.view(), tiny, bad, rational{1}),
                      "ctpipe: the layer split needs one entry per stage, each >= 1");
}

TEST_CASE("tool: --model, --memory-limit and --layers", "[model][tool]") {
  const auto run = run_tool("-s interleaved-1f1b -P 4 -m 8 -V 2 --model llama2-7b --memory-limit 80GiB --format json");
  REQUIRE(run.exit_code == 0);
  const auto memory = nlohmann::json::parse(run.out).at("memory");
  REQUIRE(memory.at("model") == "llama2-7b");
  REQUIRE(memory.at("layers") == nlohmann::json::array({4, 4, 4, 4, 4, 4, 4, 4}));
  REQUIRE(memory.at("limit_bytes").at(0) == std::to_string(80LL << 30));
  // Every rank is over 80 GiB here (no recompute, attention scores kept): over = peak - limit.
  for (int r = 0; r < 4; ++r) {
    const rational peak = parse_rational(memory.at("peak_bytes").at(r).get<std::string>());
    REQUIRE(parse_rational(memory.at("over_bytes").at(r).get<std::string>()) ==
            max(rational{0}, peak - rational{80LL << 30}));
  }
  REQUIRE(memory.at("limit_activations").is_null());
  REQUIRE(nlohmann::json::parse(run_tool("--format json").out).at("memory").is_null());
  const auto text = run_tool("-P 4 -m 8 --memory-limit 3 --color never");
  REQUIRE(text.out.find("rank 0  4  OVER the limit 3 by 1") != std::string::npos);
  REQUIRE(text.out.find("rank 1  3  fits the limit 3") != std::string::npos);
  REQUIRE(run_tool("-P 4 -m 8 --memory-limit 3GiB").err ==
          "ctpipe: a memory limit in bytes needs --model (a plain number is full activations per rank)\n");
  REQUIRE(run_tool("--model nope").err ==
          "ctpipe: --model takes a preset (gpt3-175b, llama2-7b, llama2-70b) or a JSON file, not 'nope'\n");
  REQUIRE(run_tool("--model llama2-7b --layers 8,8,8,7").err ==
          "ctpipe: --layers needs one entry per stage (4 of them, P*V), each >= 1, summing to the model's 32 layers "
          "(given 4)\n");
  REQUIRE(run_tool("-s dualpipe -P 4 -m 8 --model llama2-7b --layers 8,8,8,8,8,8,8,8 --format json").exit_code == 0);
  REQUIRE(run_tool("--model /tmp").err ==
          "ctpipe: --model takes a preset (gpt3-175b, llama2-7b, llama2-70b) or a JSON file, not '/tmp'\n");
  REQUIRE(run_tool("--model llama2-7b --memory-limit 80GiB --format trace").err ==
          "ctpipe: --memory-limit shows in --format text, json and svg only\n");
  REQUIRE(run_tool("--device-flops 312T").err ==
          "ctpipe: --device-flops and --link-bandwidth need --model (its FLOPs and message bytes)\n");
  REQUIRE(run_tool("--model llama2-7b --memory-limit 0.5B").err ==
          "ctpipe: --memory-limit 0.5B is not a whole number of bytes\n");
  // With a model, i or w given without b makes b their sum, as without one (docs/spec.md §1).
  const auto costs = nlohmann::json::parse(run_tool("--model llama2-7b --costs i=1 --format json").out).at("costs");
  REQUIRE(parse_rational(costs.at("b").get<std::string>()) ==
          rational{1} + parse_rational(costs.at("w").get<std::string>()));
  REQUIRE(run_tool("--model llama2-7b --memory-limit 80XB").err ==
          "ctpipe: --memory-limit takes a number of full activations per rank (4, 5/2) or of bytes with a unit (80GiB, "
          "1.5TB), not '80XB'\n");
  // A model file: a preset changed by keys, and an unknown key.
  const std::string path = "/tmp/ctpipe-model-test.json";
  std::ofstream(path) << R"({"base": "llama2-7b", "tp": 8, "sequence_parallel": true, "recompute": "selective"})";
  const auto file =
      nlohmann::json::parse(run_tool("-P 4 -m 8 --model " + path + " --layers 8,8,8,8 --format json").out).at("memory");
  REQUIRE(file.at("model") == path);
  transformer_model m = find_model_preset("llama2-7b")->model;
  m.tp = 8;
  m.sequence_parallel = true;
  m.recompute = recompute_mode::selective;
  const std::int64_t split[] = {8, 8, 8, 8};
  const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, {4, 8, 1, placement::loop}});
  REQUIRE(file.at("peak_bytes").at(0) == io::to_string(memory_of(g.view(), m, split, rational{1}).peak_bytes(0)));
  std::ofstream(path) << R"({"base": "llama2-7b", "hidden": 4096.5})";
  REQUIRE(run_tool("--model " + path).err == "ctpipe: " + path + ": key 'hidden' has the wrong type\n");
  std::ofstream(path) << R"({"base": "llama2-7b",})";
  REQUIRE(run_tool("--model " + path).err == "ctpipe: " + path + ": not valid JSON\n");
  std::ofstream(path) << R"({"base": "llama2-7b", "heads2": 8})";
  REQUIRE(run_tool("--model " + path).err ==
          "ctpipe: " + path + ": unknown key 'heads2' (docs/tool.md lists the keys)\n");
  std::remove(path.c_str());
}

namespace {

/// Every contiguous split of L layers over S stages, each at least one layer.
void every_split(std::int64_t L, int S, std::vector<std::int64_t>& prefix,
                 std::vector<std::vector<std::int64_t>>& out) {
  if (static_cast<int>(prefix.size()) == S - 1) {
    prefix.push_back(L);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  const int left = S - static_cast<int>(prefix.size()) - 1;
  for (std::int64_t n = 1; n <= L - left; ++n) {
    prefix.push_back(n);
    every_split(L - n, S, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

TEST_CASE(
    "split: GPipe's split is the best of every split (tried one by one), the others never worse than even or ZB's",
    "[model][split]") {
  // Small models whose head outweighs a layer (v > a layer's FLOPs), so that the even
  // split is not always the best.
  const transformer_model shapes[] = {
      {.layers = 10, .hidden = 8, .heads = 2, .vocab = 200, .seq = 4},
      {.layers = 9, .hidden = 16, .heads = 4, .ffn = 40, .swiglu = true, .vocab = 64, .seq = 8},
      {.layers = 14, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4},
  };
  for (const transformer_model& model : shapes) {
    const costs c = model_costs(model);
    for (const int P : {2, 3, 4}) {
      const schedule_spec gpipe{schedule_family::gpipe, {P, 6, 1, placement::loop}};
      const split_result r = choose_split(gpipe, model, c);
      REQUIRE(r.exact);
      std::vector<std::vector<std::int64_t>> all;
      std::vector<std::int64_t> prefix;
      every_split(model.layers, P, prefix, all);
      const schedule g = generate(gpipe);
      rational least = r.best.makespan;
      for (const auto& layers : all)
        least = std::min(least, evaluate_split(g, model, layers, c, rational{1}, std::nullopt).makespan);
      INFO("L=" << model.layers << " P=" << P);
      REQUIRE(r.best.makespan == least);
      for (const schedule_family f : {schedule_family::one_f_one_b, schedule_family::zb_h1}) {
        const split_result o = choose_split(schedule_spec{f, {P, 6, 1, placement::loop}}, model, c);
        REQUIRE_FALSE(o.exact);
        REQUIRE(o.best.makespan <= o.even.makespan);
        if (o.zb) REQUIRE(o.best.makespan <= o.zb->makespan);
      }
    }
  }
  // The ZB advice applies when L = kS - 2: 10 layers over 4 stages is 2,3,3,2.
  const split_result zb = choose_split(schedule_spec{schedule_family::one_f_one_b, {4, 8, 1, placement::loop}},
                                       shapes[0], model_costs(shapes[0]));
  REQUIRE(zb.zb);
  REQUIRE(zb.zb->layers == std::vector<std::int64_t>{2, 3, 3, 2});
}

TEST_CASE("split: under a memory limit it finds a split that fits wherever one does (every split tried)",
          "[model][split]") {
  const transformer_model model{.layers = 9, .hidden = 8, .heads = 2, .vocab = 200, .seq = 4};
  const costs c = model_costs(model);
  for (const schedule_family f : {schedule_family::one_f_one_b, schedule_family::zb_h1, schedule_family::gpipe}) {
    const schedule_spec spec{f, {3, 6, 1, placement::loop}};
    const schedule g = generate(spec);
    std::vector<std::vector<std::int64_t>> all;
    std::vector<std::int64_t> prefix;
    every_split(model.layers, 3, prefix, all);
    std::vector<rational> worst;  // per split: its largest peak
    for (const auto& layers : all) {
      const model_memory mm = memory_of(g.view(), model, layers, rational{1});
      rational most{0};
      for (int r = 0; r < 3; ++r) most = max(most, mm.peak_bytes(r));
      worst.push_back(most);
    }
    std::vector<rational> limits = worst;
    std::sort(limits.begin(), limits.end());
    for (const rational limit : {limits.front(), limits[limits.size() / 2], limits.front() - rational{1}}) {
      const split_result r = choose_split(spec, model, c, rational{1}, limit);
      const bool some_fit = limits.front() <= limit;
      INFO(family_name(f) << " limit " << limit.num);
      REQUIRE(r.best.fits() == some_fit);
      REQUIRE_FALSE(r.exact);
    }
  }
}

TEST_CASE("model: DualPipe's two copies each hold the whole model, with an embedding and a head each", "[model]") {
  const transformer_model model{.layers = 8, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4};
  const schedule_spec spec{schedule_family::dualpipe, {4, 8, 2, placement::bidirectional}};
  const schedule g = generate(spec);
  const std::int64_t split[] = {2, 2, 2, 2, 2, 2, 2, 2};  // each copy: 8 layers over its 4 stages
  const model_memory mm = memory_of(g.view(), model, split, rational{1});
  // Rank 0 holds stage 0 (the down copy's first: the embedding) and stage 7 (the up
  // copy's last: the head); rank 3 stage 3 (the down copy's last) and 4 (the up copy's
  // first): the same static bytes. The middle ranks hold none of them.
  const rational two_layers = stage_static_bytes(model, 2, stage_role{});
  const rational ends =
      stage_static_bytes(model, 2, stage_role{true, false}) + stage_static_bytes(model, 2, stage_role{false, true});
  REQUIRE(mm.static_bytes(0) == ends);
  REQUIRE(mm.static_bytes(3) == ends);
  REQUIRE(mm.static_bytes(1) == rational{2} * two_layers);
  REQUIRE(role_of(spec.shape, 3).last);
  REQUIRE(role_of(spec.shape, 4).first);
  REQUIRE(copy_stages(spec.shape) == 4);
  // The head's FLOPs fall on both copies' last stages.
  const std::vector<std::int64_t> layers(split, split + 8);
  std::vector<rational> factors(8);
  model_stage_factors(model, spec.shape, layers, factors);
  REQUIRE(factors[3] == factors[7]);
  REQUIRE(factors[3] > factors[2]);
  rational sum{0};
  for (const rational& x : factors) sum = sum + x;
  REQUIRE(sum == rational{8});
}

TEST_CASE("model: sizes that overflow 64 bits are an error, never a wrong count", "[model]") {
  transformer_model m = find_model_preset("llama2-7b")->model;
  m.seq = 4294967296;
  REQUIRE_THROWS_WITH(layer_activation_bytes(m), "ctpipe: rational overflow (64-bit numerator or denominator)");
  m = find_model_preset("llama2-7b")->model;
  m.hidden = 4294967296;
  m.heads = 1;
  m.kv_heads = 1;
  REQUIRE_THROWS_WITH(layer_parameters(m), "ctpipe: rational overflow (64-bit numerator or denominator)");
  m = find_model_preset("llama2-7b")->model;
  m.tp = 3;  // 32 heads over 3 ranks
  REQUIRE_THROWS_WITH(check_model(m),
                      "ctpipe: the model's key/value heads must be a multiple of its tensor-parallel size");
}

TEST_CASE("tool: ctpipe split", "[model][split][tool]") {
  const auto run = run_tool("split -s interleaved-1f1b -P 4 -m 8 -V 2 --model llama2-7b --format json");
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::json::parse(run.out);
  REQUIRE(j.at("exact") == false);
  REQUIRE(parse_rational(j.at("split").at("makespan").get<std::string>()) <=
          parse_rational(j.at("even").at("makespan").get<std::string>()));
  REQUIRE(j.at("even").at("layers") == nlohmann::json::array({4, 4, 4, 4, 4, 4, 4, 4}));
  const auto gpipe = run_tool("split -s gpipe -P 4 -m 8 --model llama2-7b");
  REQUIRE(gpipe.out.find("(exact for gpipe)") != std::string::npos);
  REQUIRE(run_tool("split -P 4 -m 8").err == "ctpipe: split needs --model (a preset or a JSON file)\n");
  REQUIRE(run_tool("split -P 4 -m 8 --model llama2-7b --memory-limit 3").err ==
          "ctpipe: split takes a memory limit in bytes (80GiB)\n");
}

TEST_CASE("tool: the SVG draws each rank's peak bytes against the limit, as the JSON counts them", "[model][tool]") {
  const std::string args = "-P 4 -m 8 --model llama2-7b --memory-limit 40GiB";
  const auto svg = run_tool(args + " --format svg");
  const auto json = nlohmann::json::parse(run_tool(args + " --format json").out).at("memory");
  REQUIRE(svg.exit_code == 0);
  for (int r = 0; r < 4; ++r) {
    const std::string bar = "class=\"peak-bytes\" data-rank=\"" + std::to_string(r) + "\" data-bytes=\"" +
                            json.at("peak_bytes").at(r).get<std::string>() + "\"";
    REQUIRE(svg.out.find(bar) != std::string::npos);
  }
  REQUIRE(svg.out.find("limit 40.00 GiB") != std::string::npos);
  REQUIRE(svg.out.find("over by") != std::string::npos);
}
