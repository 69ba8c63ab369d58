// Megatron-LM's layout strings (--layout, tools/ctpipe/layout.hpp, docs/memory.md): the
// grammar on Megatron's own unit-test cases, ctpipe's refusals with their messages, the
// writer, the roles of E and L in bytes and costs, Megatron-Bridge PR #5077's case, and
// the tool end to end.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "layout.hpp"
#include "options.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::run_tool;
using ctpipe::tool::check_layout;
using ctpipe::tool::layout_of;
using ctpipe::tool::parse_layout;

namespace {

/// The message parse_layout() or check_layout() raises, or "" when it accepts.
std::string refusal(const std::string& text, int P, int V, std::int64_t layers) {
  try {
    check_layout(parse_layout(text), P, V, layers);
  } catch (const ctpipe::tool::usage_error& e) {
    return e.what();
  }
  return "";
}

/// The tool's JSON memory object for `args`.
nlohmann::json memory_of_run(const std::string& args) {
  const auto run = run_tool(args + " --format json");
  INFO(args << "\n" << run.err);
  REQUIRE(run.exit_code == 0);
  return nlohmann::json::parse(run.out).at("memory");
}

}  // namespace

// Megatron-LM's cases, as data. Source: NVIDIA/Megatron-LM at commit
// d98e8a64ddf34856e74b24714e3bedb2f5a39553,
// tests/unit_tests/transformer/test_transformer_block.py (test_parsing_layout_from_str:
// each string with the list of stages it parses to; test_layer_builder: the layouts,
// written there as lists, as strings here) and
// tests/unit_tests/pipeline_parallel/test_pipeline_layout.py (test_forward_vpp's strings,
// 8 decoder layers and one MTP layer).
TEST_CASE("layout: Megatron-LM's parsing cases give its stages (test_parsing_layout_from_str)", "[layout]") {
  const std::vector<std::string> sixty_one = [] {
    std::vector<std::string> s{"Ettt"};
    for (int k = 0; k < 29; ++k) s.push_back("tt");
    s.push_back("m");
    s.push_back("L");
    return s;
  }();
  std::vector<std::string> sixty_one_b{"Ett"};
  for (int k = 0; k < 29; ++k) sixty_one_b.push_back("tt");
  sixty_one_b.push_back("t");
  sixty_one_b.push_back("mL");
  const std::vector<std::tuple<int, std::string, std::vector<std::string>, std::int64_t>> cases = {
      {2, "Et|t*4|t|tL", {"Et", "tttt", "t", "tL"}, 7},
      {2, "E|t*6|t|L", {"E", "tttttt", "t", "L"}, 7},
      {4, "E|t|t*2|t||(t|)*2,t*2,L", {"E", "t", "tt", "t", "", "t", "t", "ttL"}, 8},
      {8, "Et*3|(tt|)*29,m|L", sixty_one, 61},
      {16, "Et*2|(tt|)*29,t|mL", sixty_one_b, 61},
  };
  for (const auto& [P, text, stages, layers] : cases) {
    INFO(text);
    REQUIRE(parse_layout(text).stages == stages);
    const int V = static_cast<int>(stages.size()) / P;
    const ctpipe::tool::layout_split split = check_layout(parse_layout(text), P, V, layers);
    std::int64_t sum = 0;
    for (const std::int64_t n : split.layers) sum += n;
    REQUIRE(sum == layers);
    REQUIRE(split.roles.front().first);
    REQUIRE(split.roles.back().last);
  }
}

TEST_CASE("layout: Megatron-LM's layer-builder and forward cases, valid and invalid", "[layout]") {
  // test_layer_builder (7 layers): the valid ones.
  for (const auto& [P, V, text] :
       {std::tuple{2, 2, "Et|t*4|t|tL"}, std::tuple{2, 2, "E|t*7||L"}, std::tuple{2, 2, "E|t*6|t|L"}}) {
    INFO(text);
    REQUIRE(refusal(text, P, V, 7).empty());
  }
  // test_forward_vpp (P = 4, V = 2, 8 layers, one MTP layer; the list one as a string).
  for (const char* text : {"E|t*3|(t|)*5mL", "E|t*3|(t|)*4tm|L", "E|t*3|(t|)*3tt|m|L", "E|t|tt|t||t|t|ttmL"}) {
    INFO(text);
    REQUIRE(refusal(text, 4, 2, 8).empty());
  }
  // test_layer_builder's invalid ones (7 layers) that a string can write; its nested
  // lists ("Invalid layout", and the 2x2 "Usual pp case" marked as an error) have no
  // string form. Its unknown layer type is a character here.
  REQUIRE(refusal("t*6|tL", 2, 1, 7) ==
          "ctpipe: --layout 't*6|tL' holds 0 embeddings (E), Megatron-LM needs exactly 1");
  REQUIRE(refusal("Et*6|t", 2, 1, 7) == "ctpipe: --layout 'Et*6|t' holds 0 losses (L), Megatron-LM needs exactly 1");
  REQUIRE(refusal("E|x*7L", 2, 1, 7) ==
          "ctpipe: --layout 'E|x*7L': 'x' (position 3) is not a layer (E embedding, t decoder layer, m MTP layer, L "
          "loss, | between stages, x*n and (...)*n repeat)");
  REQUIRE(refusal("E|t*7|L", 2, 2, 7) == "ctpipe: --layout has 3 stages, P*V = 4");
}

TEST_CASE("layout: the grammar's edges, as Megatron-LM's two passes read them", "[layout]") {
  // Commas are cosmetic anywhere, inside a count too (Megatron removes them first).
  REQUIRE(parse_layout("t*1,0").stages == std::vector<std::string>{"tttttttttt"});
  REQUIRE(parse_layout("E,t,|,t,L").stages == std::vector<std::string>{"Et", "tL"});
  // `x*n` repeats any one entry, `|` too, and n may be 0.
  REQUIRE(parse_layout("|*3").stages == std::vector<std::string>(4, ""));
  REQUIRE(parse_layout("Et*0|L").stages == std::vector<std::string>{"E", "L"});
  REQUIRE(parse_layout("E(t*0)*3|L").stages == std::vector<std::string>{"E", "L"});
  REQUIRE(parse_layout("(t*2|)*2").stages == std::vector<std::string>{"tt", "tt", ""});
  REQUIRE(parse_layout("").stages == std::vector<std::string>{""});
}

TEST_CASE("layout: the grammar's refusals name the character and its position", "[layout]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"E(t|", "'(' (position 2) has no ')'"},
      {"Et)|L", "')' (position 3) closes no '('"},
      {"((t)*2|)*2",
       "'(' (position 2) opens a group inside the group at position 1 (Megatron-LM's groups do not nest)"},
      {"E()*2L", "'(' (position 2) opens an empty group"},
      {"E(,)*2L", "'(' (position 2) opens an empty group"},
      {"E(t|)L", "the group at position 2 needs *n after its ')'"},
      {"Et*|L", "'*' (position 3) needs a count (t*3, (t|)*2)"},
      {"*2t", "'*' (position 1) repeats nothing (a count follows one entry or a group, once)"},
      // Megatron's passes read this as six t (the second count repeats the last t only).
      {"(tt)*2*3", "'*' (position 7) repeats a repetition (write one count: t*6)"},
      {"t*2*3", "'*' (position 4) repeats a repetition (write one count: t*6)"},
      {"Et L",
       "' ' (position 3) is not a layer (E embedding, t decoder layer, m MTP layer, L loss, | between stages, "
       "x*n and (...)*n repeat)"},
      {"t*2000000", "the count after '*' (position 2) is over 1048576"},
      {"(t*1000|)*2000", "it expands to more than 1048576 entries and separators"},
  };
  for (const auto& [text, what] : cases) {
    INFO(text);
    REQUIRE_THROWS_WITH(parse_layout(text), "ctpipe: --layout '" + text + "': " + what);
  }
  // A NUL byte (from the library's callers: the shell and Python pass none) is no end.
  const std::string nul("Et\0|L", 5);
  REQUIRE_THROWS_WITH(parse_layout(nul),
                      "ctpipe: --layout 'Et\\x00|L': '\\x00' (position 3) is not a layer (E embedding, t decoder "
                      "layer, m MTP layer, L loss, | between stages, x*n and (...)*n repeat)");
  // A long layout is quoted by its ends and its length (a fresh tester's 4 MB message).
  std::string longer = "E";
  for (int k = 0; k < 100; ++k) longer += "t,";
  longer += "|q|L";
  REQUIRE(longer.size() == 205);
  REQUIRE_THROWS_WITH(parse_layout(longer), "ctpipe: --layout '" + longer.substr(0, 60) + "...(205 bytes)..." +
                                                longer.substr(205 - 16) +
                                                "': 'q' (position 203) is not a layer (E embedding, t decoder layer, "
                                                "m MTP layer, L loss, | between stages, x*n and (...)*n repeat)");
}

TEST_CASE("layout: the refusals give the counts (lost, duplicated or misplaced layers)", "[layout]") {
  // Megatron-LM issue #1304: 30 layers on PP 4 that built 28.
  REQUIRE(refusal("Et*7|t*7|t*7|t*7L", 4, 1, 30) == "ctpipe: --layout holds 28 decoder layers, the model has 30");
  REQUIRE(refusal("Et*8|t*8|t*8|t*8|t*8|t*8|t*8L", 4, 2, 56) == "ctpipe: --layout has 7 stages, P*V = 8");
  REQUIRE(refusal("Et*8|t*8|t*8|t*8L", 4, 1, 30) == "ctpipe: --layout holds 32 decoder layers, the model has 30");
  REQUIRE(refusal("Et|L", 2, 1, 2) == "ctpipe: --layout holds 1 decoder layer, the model has 2");
  REQUIRE(refusal("EEt|tL", 2, 1, 2) ==
          "ctpipe: --layout 'EEt|tL' holds 2 embeddings (E), Megatron-LM needs exactly 1");
  REQUIRE(refusal("Et|tLL", 2, 1, 2) == "ctpipe: --layout 'Et|tLL' holds 2 losses (L), Megatron-LM needs exactly 1");
  REQUIRE(refusal("|tE|tL", 3, 1, 2) ==
          "ctpipe: --layout '|tE|tL': its first entry is 't' (stage 1); Megatron-LM needs the embedding E first");
  REQUIRE(refusal("Et|Lt", 2, 1, 2) ==
          "ctpipe: --layout 'Et|Lt': its last entry is 't' (stage 1); Megatron-LM needs the loss L last");
  REQUIRE(refusal("Et*2|mt|t*2|t*3L", 4, 1, 8) ==
          "ctpipe: --layout 'Et*2|mt|t*2|t*3L' puts a decoder layer (t) after an MTP layer (m), on stage 1; "
          "Megatron-LM needs every t before the m");
  REQUIRE(refusal("Et*4|m|t*4|L", 2, 2, 8) ==
          "ctpipe: --layout 'Et*4|m|t*4|L' puts MTP layers (m) on stage 1 (rank 1, virtual stage 0 of 2); "
          "Megatron-LM needs them on a rank's last virtual stage");
  REQUIRE(refusal("Et*4|t*4|m|mL", 4, 1, 8) ==
          "ctpipe: --layout 'Et*4|t*4|m|mL' spreads its MTP layers (m) over 2 stages; Megatron-LM needs them all on "
          "one");
  // Empty stages and a standalone embedding or loss are Megatron's own (and allowed).
  REQUIRE(refusal("|E|t*8|L|", 5, 1, 8).empty());
}

TEST_CASE("layout: the writer's strings parse back to the same stages", "[layout]") {
  const std::vector<std::int64_t> even{8, 8, 8, 8};
  REQUIRE(layout_of(even) == "Et*8|(t*8|)*2,t*8L");
  const std::vector<std::int64_t> split{4, 4, 4, 4, 5, 4, 4, 3};
  REQUIRE(layout_of(split) == "Et*4|(t*4|)*3,t*5|(t*4|)*2,t*3L");
  const std::vector<std::int64_t> one{1, 0, 2};
  const stage_role roles[] = {{false, false}, {true, false}, {false, true}};
  REQUIRE(layout_of(one, roles) == "t|E|t*2L");  // not a valid layout (t before E), but what was asked
  for (const auto& layers : {even, split, std::vector<std::int64_t>{1, 1, 1, 1, 1}, std::vector<std::int64_t>{3}}) {
    const std::string text = layout_of(layers);
    INFO(text);
    const ctpipe::tool::layout_split back =
        check_layout(parse_layout(text), static_cast<int>(layers.size()), 1, [&layers] {
          std::int64_t sum = 0;
          for (const std::int64_t n : layers) sum += n;
          return sum;
        }());
    REQUIRE(back.layers == layers);
  }
}

TEST_CASE("layout: E and L place the embedding's and the head's bytes and FLOPs on their stages", "[layout][model]") {
  const transformer_model& llama = find_model_preset("llama2-7b")->model;
  const pipeline_shape shape{4, 8, 1, placement::loop};
  const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, shape});
  // The default roles (stage 0 and S-1) are a layout's E first and L last.
  const std::int64_t even[] = {8, 8, 8, 8};
  const stage_role ends[] = {{true, false}, {false, false}, {false, false}, {false, true}};
  const model_memory plain = memory_of(g.view(), llama, even, rational{1});
  const model_memory same = memory_of(g.view(), llama, even, rational{1}, {}, ends);
  for (int r = 0; r < 4; ++r) REQUIRE(plain.peak_bytes(r) == same.peak_bytes(r));
  // Standalone embedding and loss stages: "E|t*16|t*16|L".
  const std::int64_t alone[] = {0, 16, 16, 0};
  const model_memory m = memory_of(g.view(), llama, alone, rational{1}, {}, ends);
  const rational vh{llama.vocab * llama.hidden};
  REQUIRE(m.static_bytes(0) == vh * rational{18});                                 // the embedding only
  REQUIRE(m.static_bytes(3) == (vh + rational{2 * llama.hidden}) * rational{18});  // the head and the final norm
  REQUIRE(m.static_bytes(1) == rational{16 * layer_parameters(llama)} * rational{18});
  rational factors[4];
  model_stage_factors(llama, shape, alone, factors, ends);
  REQUIRE(factors[0] == rational{0});  // no FLOPs ctpipe counts: the embedding lookup is not counted
  REQUIRE(factors[1] == factors[2]);
  REQUIRE(factors[3] == rational{llama.vocab * 4, 2 * 16 * stage_forward_flops(llama, 1, false) + llama.vocab});
  REQUIRE(factors[0] + factors[1] + factors[2] + factors[3] == rational{4});
  // A stage of factor 0 runs in no time; every stage 0 is refused.
  REQUIRE(simulate(g.view(), costs{}, cost_scale{factors, {}}).makespan() > rational{0});
  const rational none[] = {0, 0, 0, 0};
  REQUIRE_THROWS_WITH(simulate(g.view(), costs{}, cost_scale{none, {}}),
                      "ctpipe: stage factors must be >= 0, at least one > 0");
  const std::int64_t empty_default[] = {8, 0, 16, 8};
  REQUIRE_THROWS_WITH(memory_of(g.view(), llama, empty_default, rational{1}),
                      "ctpipe: the layer split needs one entry per stage, each >= 1");
}

TEST_CASE("layout: Megatron-Bridge PR #5077's uneven case, 9952 parameters on the heaviest stage", "[layout][model]") {
  // NVIDIA-NeMo/Megatron-Bridge PR #5077 ("account for uneven PP in memory estimate"),
  // tests/unit_tests/training/utils/test_theoretical_memory_utils.py at commit
  // 067f987df03b8355b03192d88d70f1709fedf51a,
  // test_dense_model_state_estimate_uses_heaviest_uneven_pipeline_stage: 8 layers, hidden
  // 16, 4 heads (kv_channels 4), FFN 64 GeLU, vocabulary 32, untied, TP 1, PP 4 with 1
  // layer on the first stage and 3 on the last ([1, 2, 2, 3]), the distributed optimizer
  // over 4 data-parallel ranks: 9952 parameters and 89568 bytes on the heaviest stage,
  // where the old estimator said 6792.
  const transformer_model bridge{.layers = 8,
                                 .hidden = 16,
                                 .heads = 4,
                                 .ffn = 64,
                                 .vocab = 32,
                                 .seq = 8,
                                 .micro_batch = 2,
                                 .dp = 4,
                                 .distributed_optimizer = true};
  REQUIRE(layer_parameters(bridge) == 3136);
  REQUIRE(3 * layer_parameters(bridge) + 16 * 32 + 2 * 16 == 9952);
  REQUIRE(stage_static_bytes(bridge, 3, stage_role{false, true}) == rational{89568});
  REQUIRE(bytes_per_parameter(bridge) == rational{9});
  // The old estimator: every layer (and the final norm) over PP, plus the embedding.
  const rational old = rational{8 * layer_parameters(bridge) + 2 * 16, 4} + rational{16 * 32};
  REQUIRE(old == rational{6792});
  REQUIRE(rational{1} - old / rational{9952} == rational{395, 1244});  // 31.75%: "31.8% low"
  // The same through the tool: the model as a file, the split as a layout.
  const std::string path = "/tmp/ctpipe-layout-bridge.json";
  std::ofstream(path) << R"({"layers": 8, "hidden": 16, "heads": 4, "ffn": 64, "vocab": 32, "seq": 8,
                             "micro_batch": 2, "dp": 4, "distributed_optimizer": true})";
  const nlohmann::json memory = memory_of_run("-P 4 -m 8 --model " + path + " --layout 'Et|tt|tt|tttL'");
  REQUIRE(memory.at("layers") == nlohmann::json::array({1, 2, 2, 3}));
  REQUIRE(memory.at("static_bytes") ==
          nlohmann::json::array(
              {std::to_string((3136 + 512) * 9), std::to_string(2 * 3136 * 9), std::to_string(2 * 3136 * 9), "89568"}));
  std::remove(path.c_str());
}

TEST_CASE("layout: the tool reads --layout, refuses bad ones with exit 2, and split writes one", "[layout][tool]") {
  // The even split as a layout is --layers 8,8,8,8: the same JSON.
  const auto by_layout = run_tool("-P 4 -m 8 --model llama2-7b --layout 'Et*8|(t*8|)*2,t*8L' --format json");
  const auto by_layers = run_tool("-P 4 -m 8 --model llama2-7b --layers 8,8,8,8 --format json");
  REQUIRE(by_layout.exit_code == 0);
  REQUIRE(by_layout.out == by_layers.out);
  // A standalone embedding stage costs nothing ctpipe counts: its factor is 0.
  const auto alone = run_tool("-P 4 -m 8 --model llama2-7b --layout 'E|t*16|t*16|L' --format json");
  REQUIRE(alone.exit_code == 0);
  REQUIRE(nlohmann::json::parse(alone.out).at("stage_scale").at(0) == "0");
  REQUIRE(run_tool("-P 4 -m 8 --model llama2-7b --layout 'E|t*16|t*16|L' --color never").exit_code == 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--model llama2-7b --layout 'Et*8|t*8|t*16L'", "ctpipe: --layout has 3 stages, P*V = 4"},
      {"--model llama2-7b --layout 'Et*7|t*7|t*7|t*7L'", "ctpipe: --layout holds 28 decoder layers, the model has 32"},
      {"--layout 'Et|tL'", "ctpipe: --layout needs --model"},
      {"--model llama2-7b --layers 8,8,8,8 --layout 'Et*8|(t*8|)*2,t*8L'",
       "ctpipe: --layout and --layers both give the layers per stage; give one"},
      {"--model llama2-7b --layout 'Et*8|t*8|x'",
       "ctpipe: --layout 'Et*8|t*8|x': 'x' (position 10) is not a layer (E "
       "embedding, t decoder layer, m MTP layer, L loss, | between stages, "
       "x*n and (...)*n repeat)"},
      {"-s zbv --model llama2-7b --layout 'Et*4|(t*4|)*6,t*4L'",
       "ctpipe: --layout is Megatron-LM's, whose stage s runs on rank s mod P: it needs the loop placement (zbv's "
       "placement is v)"},
      {"split --model llama2-7b --layout 'Et*8|(t*8|)*2,t*8L'",
       "ctpipe: split chooses the layers; --layout is for the other commands"},
      {"search -P 4 -m 8 --model llama2-7b --layout 'Et*8|(t*8|)*2,t*8L'",
       "ctpipe: search takes --layers, not --layout"},
  };
  for (const auto& [args, message] : refused) {
    INFO(args);
    const auto run = run_tool(args);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err == message + "\n");
  }
  // split's answer as a layout, which --layout reads back to the same layers.
  const auto split = run_tool("split -s interleaved-1f1b -P 4 -m 8 -V 2 --model llama2-7b --format json");
  const nlohmann::json answer = nlohmann::json::parse(split.out);
  REQUIRE(answer.at("layout") == "Et*4|(t*4|)*3,t*5|(t*4|)*2,t*3L");
  const nlohmann::json back = memory_of_run("-s interleaved-1f1b -P 4 -m 8 -V 2 --model llama2-7b --layout '" +
                                            answer.at("layout").get<std::string>() + "'");
  REQUIRE(back.at("layers") == answer.at("split").at("layers"));
  REQUIRE(run_tool("split -s interleaved-1f1b -P 4 -m 8 -V 2 --model llama2-7b")
              .out.find("\nlayout    Et*4|(t*4|)*3,t*5|(t*4|)*2,t*3L\n") != std::string::npos);
  const nlohmann::json v =
      nlohmann::json::parse(run_tool("split -s zbv -P 4 -m 8 --model llama2-7b --format json").out);
  REQUIRE(v.at("layout").is_null());
}
