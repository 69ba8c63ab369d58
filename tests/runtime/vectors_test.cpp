// Reference schedules (tests/data/vectors, public orders recorded from the peers' code):
// - every vector our generators cover equals the generated order, rank by rank;
// - for every vector, the metrics table of vectors/README.md (makespan, bubble, peak
//   in-flight per rank, messages) is what our validator and simulator compute from the
//   vector's own order with t_f = 1, t_b = 2, t_i = t_w = 1, t_c = 0, gamma = 1.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"

using namespace ctpipe;

namespace {

const std::string vectors_dir = CTPIPE_VECTORS_DIR;

nlohmann::json read_vector(const std::string& name) {
  std::ifstream in(vectors_dir + "/" + name + ".json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

/// A vector's op lists as a schedule. An overlapped pair `(a;b)OVERLAP_F_B` is ctpipe's
/// pair: an overlap_f_b word for its forward, then its B (vectors/README.md).
struct vector_schedule {
  pipeline_shape shape;
  std::vector<op> ops;
  std::vector<std::uint32_t> offsets{0};
  schedule_view view() const { return {shape, ops, offsets}; }
};

vector_schedule to_schedule(const nlohmann::json& j) {
  vector_schedule s;
  s.shape = {j.at("P").get<int>(), j.at("m").get<int>(), j.at("V").get<int>(),
             j.at("placement") == "v" ? placement::v_shape : placement::loop};
  for (const auto& rank : j.at("ranks")) {
    for (const auto& action : rank) {
      const std::string text = action.get<std::string>();
      if (text.starts_with("(")) {
        const auto semicolon = text.find(';');
        const auto close = text.find(')');
        const op forward = io::parse_action(text.substr(1, semicolon - 1));
        REQUIRE(forward.kind() == op_kind::F);
        s.ops.push_back(op{op_kind::overlap_f_b, forward.stage(), forward.microbatch()});
        s.ops.push_back(io::parse_action(text.substr(semicolon + 1, close - semicolon - 1)));
        REQUIRE(s.ops.back().kind() == op_kind::B);
      } else {
        s.ops.push_back(io::parse_action(text));
      }
    }
    s.offsets.push_back(static_cast<std::uint32_t>(s.ops.size()));
  }
  return s;
}

struct table_row {
  std::string file;
  std::string makespan;
  std::string bubble;
  std::vector<std::string> peaks;
  long long messages = 0;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(' ');
  const auto b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

/// Rows of the metrics table in vectors/README.md.
std::vector<table_row> read_table() {
  std::ifstream in(vectors_dir + "/README.md");
  REQUIRE(in.good());
  std::vector<table_row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| ") || line.starts_with("| file") || line.starts_with("|---")) continue;
    std::vector<std::string> cells;
    std::stringstream cells_in(line.substr(1));
    std::string cell;
    while (std::getline(cells_in, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() < 5) continue;
    table_row row{cells[0], cells[1], cells[2], {}, std::stoll(cells[4])};
    std::stringstream peaks(cells[3]);
    for (std::string p; peaks >> p;) row.peaks.push_back(p);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

/// Every vector file of the directory.
static std::vector<std::string> vector_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(vectors_dir)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("generated orders equal the frameworks' vectors, rank by rank", "[vectors]") {
  int compared = 0;
  int rejected = 0;
  for (const auto& name : vector_names()) {
    const auto j = read_vector(name);
    schedule_spec spec{};
    if (!family_from_name(j.at("schedule").get<std::string>(), spec.family)) continue;  // a family not generated yet
    INFO(name);
    spec.shape = {j.at("P").get<int>(), j.at("m").get<int>(), j.at("V").get<int>(),
                  j.at("placement") == "v" ? placement::v_shape : placement::loop};
    if (j.contains("variant")) REQUIRE(variant_from_name(j.at("variant").get<std::string>(), spec.variant));
    if (j.contains("group") && spec.variant != interleaved_variant::torch) spec.group = j.at("group").get<int>();
    if (j.contains("error")) {
      // The peer rejects this configuration: so must we, at run time and without throwing.
      REQUIRE(spec_error(spec) != nullptr);
      REQUIRE_THROWS_AS(generate(spec), ctpipe::error);
      ++rejected;
      continue;
    }
    const schedule s = generate(spec);
    REQUIRE(j.at("ranks").size() == static_cast<std::size_t>(s.shape().P));
    for (int r = 0; r < s.shape().P; ++r) {
      INFO("rank " << r);
      REQUIRE(io::actions(s.rank(r)) == j.at("ranks")[static_cast<std::size_t>(r)].get<std::vector<std::string>>());
    }
    ++compared;
  }
  // gpipe, 1f1b, 8 interleaved-1f1b (2 of them rejected), looped-bfs, zb-h1, zb-h2, zbv,
  // interleaved-zb, dualpipev, 7 combined-1f1b.
  REQUIRE(compared == 21);
  REQUIRE(rejected == 2);
}

TEST_CASE("vectors/README.md metrics, computed from each vector's own order", "[vectors]") {
  const auto rows = read_table();
  REQUIRE(rows.size() >= 14);
  const costs article{};  // t_f = 1, t_b = 2, t_i = t_w = 1, t_c = 0
  for (const auto& row : rows) {
    INFO(row.file);
    const vector_schedule s = to_schedule(read_vector(row.file));
    const validation_result valid = validate(s.view());
    REQUIRE(valid.ok());
    const simulation sim = simulate(s.view(), article);
    REQUIRE(io::to_string(sim.makespan()) == row.makespan);
    REQUIRE(io::to_string(sim.bubble_fraction()) == row.bubble);
    const in_flight_profile mem = in_flight(s.view());
    REQUIRE(row.peaks.size() == static_cast<std::size_t>(s.shape.P));
    for (int r = 0; r < s.shape.P; ++r) REQUIRE(io::to_string(mem.peak(r)) == row.peaks[static_cast<std::size_t>(r)]);
    REQUIRE(static_cast<long long>(messages(s.view())) == row.messages);
  }
}

TEST_CASE("DualPipeV's vector under the split reading: each half of a pair its own op", "[vectors]") {
  // The fused rule is the README table's (makespan 27); read as separate ops, F then B,
  // the same order has makespan 51/2 and bubble 1/17, the same peaks and messages.
  const vector_schedule s = to_schedule(read_vector("torch_DualPipeV_P4_m8_V2"));
  REQUIRE(has_pairs(s.view()));
  const schedule split = split_pairs(s.view());
  REQUIRE_FALSE(has_pairs(split.view()));
  REQUIRE(split.size() == s.ops.size());
  REQUIRE(validate(split.view()).ok());
  const simulation fused = simulate(s.view(), costs{});
  const simulation apart = simulate(split.view(), costs{});
  REQUIRE(fused.makespan() == rational{27});
  REQUIRE(apart.makespan() == rational{51, 2});
  REQUIRE(apart.bubble_fraction() == rational{1, 17});
  for (int r = 0; r < 4; ++r) REQUIRE(in_flight(split.view()).peak(r) == in_flight(s.view()).peak(r));
  REQUIRE(messages(split.view()) == messages(s.view()));
  // A pair whose t_fb models an overlap gain runs shorter than its two halves: with
  // t_fb = t_f + t_b - 1/2 the fused makespan falls below 27.
  costs overlap{};
  overlap.fb = rational{5, 2};
  REQUIRE(simulate(s.view(), overlap).makespan() < rational{27});
}

namespace {

/// DeepSeek's DualPipe order (vectors/deepseek/dualpipe_P4_m8.json) as ctpipe ops: token
/// `F3.c1` is the forward of micro-batch 3 on the rank's chunk 1 (chunk 0 of rank r is
/// stage r, chunk 1 stage 2P-1-r: the bidirectional placement), and each index pair of
/// `overlapped_pairs` is an overlapped pair (its F becomes the pair's word).
vector_schedule deepseek_dualpipe(const nlohmann::json& j) {
  vector_schedule s;
  const int P = j.at("P").get<int>();
  s.shape = {P, j.at("m").get<int>(), 2, placement::bidirectional};
  for (int r = 0; r < P; ++r) {
    const auto& tokens = j.at("ranks")[static_cast<std::size_t>(r)];
    std::vector<std::size_t> pair_words;
    for (const auto& pair : j.at("overlapped_pairs")[static_cast<std::size_t>(r)])
      pair_words.push_back(pair[0].get<std::size_t>());
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      const std::string t = tokens[k].get<std::string>();
      const std::size_t dot = t.find(".c");
      REQUIRE(dot != std::string::npos);
      const int microbatch = std::stoi(t.substr(1, dot - 1));
      const int chunk = std::stoi(t.substr(dot + 2));
      const std::string kinds = "FBIW";
      const std::size_t kind = kinds.find(t[0]);
      REQUIRE(kind != std::string::npos);
      const bool word = std::find(pair_words.begin(), pair_words.end(), k) != pair_words.end();
      REQUIRE((!word || kind == 0));
      s.ops.push_back(
          op{word ? op_kind::overlap_f_b : static_cast<op_kind>(kind), s.shape.stage_of(r, chunk), microbatch});
    }
    s.offsets.push_back(static_cast<std::uint32_t>(s.ops.size()));
  }
  return s;
}

costs full_costs(int f, int i, int w) {
  return costs{rational{f}, rational{i + w}, rational{i}, rational{w}, rational{0}};
}

}  // namespace

TEST_CASE("DualPipe: the generated order is DeepSeek's, op for op, with its metrics", "[vectors][dualpipe]") {
  const nlohmann::json j = read_vector("deepseek/dualpipe_P4_m8");
  const vector_schedule deepseek = deepseek_dualpipe(j);
  const schedule generated = generate({schedule_family::dualpipe, {4, 8, 2, placement::bidirectional}});
  REQUIRE(generated.view().offsets.size() == deepseek.offsets.size());
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    REQUIRE(io::actions(generated.rank(r)) == io::actions(deepseek.view().rank(r)));
  }
  REQUIRE(validate(generated.view()).ok());
  // The file's metrics at F = I = W = 1 (B = 2), each op a whole stage (t_x, not t_x/2).
  const auto& metrics = j.at("metrics_unit_cost");
  const schedule split = split_pairs(generated.view());
  const simulation apart = simulate(split.view(), full_costs(1, 1, 1));
  REQUIRE(io::to_string(apart.makespan()) == metrics.at("makespan").get<std::string>());
  for (int r = 0; r < 4; ++r) {
    REQUIRE(io::to_string(apart.busy(r)) ==
            metrics.at("busy_per_rank")[static_cast<std::size_t>(r)].get<std::string>());
    REQUIRE(io::to_string(apart.idle(r)) ==
            metrics.at("idle_per_rank")[static_cast<std::size_t>(r)].get<std::string>());
    REQUIRE(
        in_flight(generated.view()).peak(r) ==
        rational{
            metrics.at("peak_in_flight_chunks (F started, last backward piece not ended)")[static_cast<std::size_t>(r)]
                .get<int>()});
    REQUIRE(in_flight(generated.view()).peak_activations(r) ==
            in_flight(generated.view()).peak(r));  // a chunk is a whole stage
  }
  REQUIRE(io::to_string(apart.bubble_fraction()) ==
          metrics.at("bubble_fraction_total_idle_over_P_T").get<std::string>());
  // Fused (the default): makespan and the largest idle per rank at three cost sets.
  const struct {
    const char* key;
    int f, i, w;
  } fused[] = {{"t_f=1,t_i=1,t_w=1", 1, 1, 1}, {"t_f=1,t_i=2,t_w=1", 1, 2, 1}, {"t_f=2,t_i=2,t_w=1", 2, 2, 1}};
  const auto& rule = metrics.at("fused_pair_rule (pair = one unit of cost F+B, waits for both inputs)");
  for (const auto& c : fused) {
    INFO(c.key);
    const simulation sim = simulate(generated.view(), full_costs(c.f, c.i, c.w));
    REQUIRE(io::to_string(sim.makespan()) == rule.at(c.key).at("makespan").get<std::string>());
    rational worst{0};
    for (int r = 0; r < 4; ++r) worst = sim.idle(r) > worst ? sim.idle(r) : worst;
    REQUIRE(io::to_string(worst) == rule.at(c.key).at("max_idle").get<std::string>());
  }
}

TEST_CASE("DualPipe: DeepSeek's rules and the structural minimum", "[vectors][dualpipe]") {
  const auto error_of = [](int P, int m, bool minimum) {
    schedule_spec s{schedule_family::dualpipe, {P, m, 2, placement::bidirectional}};
    s.structural_minimum = minimum;
    const char* e = spec_error(s);
    return std::string(e == nullptr ? "" : e);
  };
  const std::string even_m =
      "ctpipe: dualpipe needs m even and m >= 2P (DeepSeek's DualPipe.step asserts num_chunks % 2 == 0 and num_chunks "
      ">= num_ranks * 2)";
  REQUIRE(error_of(8, 14, false) == even_m);
  REQUIRE(error_of(6, 13, false) == even_m);
  REQUIRE(error_of(5, 10, false) ==
          "ctpipe: dualpipe needs P even (DeepSeek's DualPipe.step asserts num_ranks % 2 == 0)");
  REQUIRE(error_of(8, 16, false).empty());
  REQUIRE(error_of(8, 14, true).empty());
  REQUIRE(error_of(8, 13, true) == "ctpipe: dualpipe needs m even and m >= 2P-2 (its structural minimum)");
  REQUIRE(error_of(8, 12, true) == "ctpipe: dualpipe needs m even and m >= 2P-2 (its structural minimum)");
  REQUIRE(error_of(2, 2, true).empty());
  schedule_spec v_shape{schedule_family::dualpipe, {4, 8, 2, placement::v_shape}};
  REQUIRE(std::string(spec_error(v_shape)) ==
          "ctpipe: dualpipe runs two model copies on the bidirectional placement (V = 2, placement bidirectional)");
}

namespace {

/// A lowered DualPipeV rank in the token format of vectors/deepseek/dualpipev_P2_m4_lowered.txt:
/// `F0c1` (kind, micro-batch, chunk), `[F3c0+B1c1]` an overlapped pair, `{S1 R1}` a batch
/// of transfers to and from the named ranks.
std::string deepseek_tokens(const schedule_view& v, int r) {
  const auto rank_ops = v.rank(r);
  std::string line = "r" + std::to_string(r) + ":";
  const auto compute = [&](op o, op_kind k) {
    return std::string(kind_name(k)) + std::to_string(o.microbatch()) + "c" +
           std::to_string(v.shape.chunk_of(o.stage()));
  };
  for (std::size_t k = 0; k < rank_ops.size(); ++k) {
    const op o = rank_ops[k];
    if (is_transfer(o.kind())) {
      line += " {";
      for (bool first = true; k < rank_ops.size() && is_transfer(rank_ops[k].kind()); ++k, first = false) {
        line += (first ? "" : " ") + std::string(is_send(rank_ops[k].kind()) ? "S" : "R") +
                std::to_string(peer_rank(v.shape, rank_ops[k]));
      }
      line += "}";
      --k;
    } else if (o.kind() == op_kind::overlap_f_b) {
      line += " [" + compute(o, op_kind::F) + "+" + compute(rank_ops[k + 1], rank_ops[k + 1].kind()) + "]";
      ++k;
    } else {
      line += " " + compute(o, o.kind());
    }
  }
  return line;
}

}  // namespace

TEST_CASE("DualPipeV lowered as DeepSeek's runtime issues it, token for token, and it runs batched",
          "[vectors][dualpipe][lower]") {
  std::ifstream in(vectors_dir + "/deepseek/dualpipev_P2_m4_lowered.txt");
  REQUIRE(in.good());
  std::vector<std::string> expected;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("r")) expected.push_back(line);
  }
  REQUIRE(expected.size() == 2);
  const schedule_spec spec{schedule_family::dualpipev, {2, 4, 2, placement::v_shape}};
  const schedule lowered = lower_deepseek(spec);
  for (int r = 0; r < 2; ++r) REQUIRE(deepseek_tokens(lowered.view(), r) == expected[static_cast<std::size_t>(r)]);
  // The plain rule "the previous op's sends and this op's receives in one batch" is not it:
  // lower() for the batched model gives other batches.
  const schedule keyed = lower(generate(spec).view(), costs{}, runtime_model::batched);
  REQUIRE(deepseek_tokens(keyed.view(), 0) != expected[0]);
}

TEST_CASE("DualPipe lowered as DeepSeek's runtime issues it: the middle ranks send chunk 0's warm-up forward at once",
          "[dualpipe][lower]") {
  // DualPipe.step at P = 2, m = 4 (both ranks are middle ranks), followed call by call
  // in deepseek-ai/DualPipe dualpipe/dualpipe.py: step 2 `_forward_chunk(0, recv=False,
  // send=self.is_middle_rank)`, no `_send_forward(0)` after chunk 1's forward; step 4's
  // first (F 0; B 1) not overlapped, its sends deferred. Chunk 1 of rank r is stage
  // 2P-1-r (the up pipeline, micro-batches 2 and 3).
  const schedule lowered = lower_deepseek({schedule_family::dualpipe, {2, 4, 2, placement::bidirectional}});
  REQUIRE(deepseek_tokens(lowered.view(), 0) ==
          "r0: F0c0 {S1 R1} F2c1 F1c0 B2c1 {S1 S1 R1 R1} [F3c1+B0c0] B3c1 {S1 R1} I1c0 W1c0");
  REQUIRE(deepseek_tokens(lowered.view(), 1) ==
          "r1: F2c1 {S0 R0} F0c0 F3c1 B0c0 {S0 S0 R0 R0} [F1c0+B2c1] B1c0 {S0 R0} I3c1 W3c1");
}

TEST_CASE(
    "DeepSeek's lowering with the pairs read split runs as fused: both inputs before the pair, both outputs after",
    "[dualpipe][lower]") {
  schedule_spec split{schedule_family::dualpipev, {4, 8, 2, placement::v_shape}};
  split.pairs = pair_model::split;
  const schedule compute = generate(split);
  REQUIRE(simulate(compute.view(), costs{}).makespan() == rational{51, 2});
  const schedule l = lower_deepseek(split);
  REQUIRE(validate_lowered(l.view(), send_semantics::buffered).ok());
  for (const runtime_model model : {runtime_model::blocking, runtime_model::posted, runtime_model::batched}) {
    INFO(runtime_model_name(model));
    const execution run = execute(l.view(), costs{}, model);
    REQUIRE(run.completed());
    REQUIRE(run.makespan() == rational{27});
  }
}

TEST_CASE(
    "DeepSeek's lowering of DualPipeV and DualPipe over P <= 8, m <= 4P: the compute order, every message, batched "
    "first in first out",
    "[dualpipe][lower]") {
  for (const bool dualpipe : {false, true}) {
    for (int P = dualpipe ? 2 : 1; P <= 8; P += dualpipe ? 2 : 1) {
      for (int m = 2 * P; m <= 4 * P; m += dualpipe ? 2 : 1) {
        INFO((dualpipe ? "dualpipe" : "dualpipev") << " P = " << P << ", m = " << m);
        const schedule_spec spec = dualpipe
                                       ? schedule_spec{schedule_family::dualpipe, {P, m, 2, placement::bidirectional}}
                                       : schedule_spec{schedule_family::dualpipev, {P, m, 2, placement::v_shape}};
        const schedule l = lower_deepseek(spec);
        const schedule compute = generate(spec);
        const schedule back = compute_part(l.view());
        REQUIRE(std::equal(back.view().ops.begin(), back.view().ops.end(), compute.view().ops.begin(),
                           compute.view().ops.end()));
        REQUIRE(l.size() == compute.size() + 2 * messages(compute.view()));
        REQUIRE(validate_lowered(l.view(), send_semantics::buffered).ok());
        // Tagless pairing is first in first out per direction (the k-th send from a to b
        // meets the k-th receive on b from a): execute() under `batched` checks it (a
        // wrong pairing does not complete). The stronger peer_order_consistent() (one order
        // for both directions together) does not hold for DeepSeek's order.
        // DeepSeek posts a batch's sends and receives together (batch_isend_irecv), so its
        // lists are for the models whose sends do not wait for their receive; one
        // synchronous send at a time (rendezvous) is not what it runs.
        for (const runtime_model model : {runtime_model::blocking, runtime_model::posted, runtime_model::batched}) {
          INFO(runtime_model_name(model));
          const execution run = execute(l.view(), costs{}, model);
          REQUIRE(run.completed());
          // Never faster than the schedule allows; at the article's costs it loses nothing.
          REQUIRE(run.makespan() == simulate(compute.view(), costs{}).makespan());
        }
      }
    }
  }
  REQUIRE_THROWS_WITH(
      lower_deepseek({schedule_family::one_f_one_b, {4, 8}}),
      "ctpipe: lower_deepseek() reproduces DeepSeek's step() (dualpipev, dualpipe); lower() lowers every family");
}

namespace {

/// A vector of the Zero Bubble authors' V-schedule generator (vectors/zb_authors): tokens
/// `F3.c1`, `I3.c1`, `W3.c1` (kind, micro-batch, chunk of the rank; chunk 0 is stage r,
/// chunk 1 stage 2P-1-r).
vector_schedule zb_authors_schedule(const nlohmann::json& j) {
  vector_schedule s;
  const int P = j.at("P").get<int>();
  s.shape = {P, j.at("m").get<int>(), 2, placement::v_shape};
  int r = 0;
  for (const auto& rank : j.at("ranks")) {
    for (const auto& token : rank) {
      const std::string text = token.get<std::string>();
      const auto dot = text.find(".c");
      const op_kind kind = text[0] == 'F' ? op_kind::F : text[0] == 'I' ? op_kind::I : op_kind::W;
      REQUIRE(std::string("FIW").find(text[0]) != std::string::npos);
      const int chunk = std::stoi(text.substr(dot + 2));
      s.ops.push_back(op{kind, chunk == 0 ? r : 2 * P - 1 - r, std::stoi(text.substr(1, dot - 1))});
    }
    s.offsets.push_back(static_cast<std::uint32_t>(s.ops.size()));
    ++r;
  }
  return s;
}

}  // namespace

TEST_CASE("V-Half and V-Min: the generated orders are the Zero Bubble authors', op for op, with their metrics",
          "[vectors][v-memory]") {
  for (const auto& [file, family] : {std::pair{"zb_authors/vhalf_P4_m8", schedule_family::v_half},
                                     std::pair{"zb_authors/vmin_P4_m8", schedule_family::v_min}}) {
    INFO(file);
    const nlohmann::json j = read_vector(file);
    const vector_schedule authors = zb_authors_schedule(j);
    const schedule generated = generate({family, {4, 8, 2, placement::v_shape}});
    for (int r = 0; r < 4; ++r) {
      INFO("rank " << r);
      REQUIRE(io::actions(generated.rank(r)) == io::actions(authors.view().rank(r)));
    }
    REQUIRE(validate(generated.view()).ok());
    // The file's metrics at chunk costs F = I = W = 1: full-stage t_f = t_i = t_w = 2.
    const auto& metrics = j.at("metrics_unit_cost");
    const simulation sim = simulate(generated.view(), full_costs(2, 2, 2));
    REQUIRE(io::to_string(sim.makespan()) == metrics.at("makespan").get<std::string>());
    REQUIRE(io::to_string(sim.bubble_fraction()) ==
            metrics.at("bubble_fraction_total_idle_over_P_T").get<std::string>());
    const in_flight_profile mem = in_flight(generated.view());
    for (int r = 0; r < 4; ++r) {
      const auto k = static_cast<std::size_t>(r);
      REQUIRE(io::to_string(sim.busy(r)) == metrics.at("busy_per_rank")[k].get<std::string>());
      REQUIRE(io::to_string(sim.idle(r)) == metrics.at("idle_per_rank")[k].get<std::string>());
      REQUIRE(mem.peak(r) ==
              rational{metrics.at("peak_in_flight_chunks (F started, last backward piece not ended)")[k].get<int>()});
      REQUIRE(io::to_string(mem.peak_activations(r)) ==
              metrics.at("peak_in_flight_full_activations")[k].get<std::string>());
    }
    // The generator's own log line: its bubble rate, (T - busy) / T, to four places.
    const std::string log = j.at("reported_by_generator").at("log").get<std::string>();
    const double rate = static_cast<double>(sim.bubble_fraction().num) / static_cast<double>(sim.bubble_fraction().den);
    REQUIRE(log.ends_with(fmt::format("-> {:.4f}", rate)));
  }
}
