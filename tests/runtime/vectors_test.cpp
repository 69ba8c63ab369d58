// Reference schedules (tests/data/vectors, public orders recorded from the peers' code):
// - every vector our generators cover equals the generated order, rank by rank;
// - for every vector, the metrics table of vectors/README.md (makespan, bubble, peak
//   in-flight per rank, messages) is what our validator and simulator compute from the
//   vector's own order with t_f = 1, t_b = 2, t_i = t_w = 1, t_c = 0, gamma = 1.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>
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
  // interleaved-zb, dualpipev.
  REQUIRE(compared == 14);
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
