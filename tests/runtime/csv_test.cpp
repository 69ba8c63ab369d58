// PyTorch's CSV schedule format (ctpipe/io/csv.hpp) and the tool's CSV paths: every
// reference vector and generated or lowered schedule round-trips; the reader's text
// rules and each rejection with its message; FSDP's UNSHARD, RESHARD and REDUCE_GRAD
// kept as annotations through validation and round trips; forward-only files rejected
// with their own message; seeded random and mutated inputs (parse or ctpipe::error,
// nothing else; run under ASan+UBSan in CI); `ctpipe --format csv` and `csv-comms`;
// `ctpipe validate`.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/format.hpp>
#include <ctpipe/io/torch_passes.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_lower.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::run_tool;
using ctpipe::tests::temp_file;

namespace {

bool same(schedule_view a, schedule_view b) {
  return a.shape == b.shape && std::equal(a.ops.begin(), a.ops.end(), b.ops.begin(), b.ops.end()) &&
         std::equal(a.offsets.begin(), a.offsets.end(), b.offsets.begin(), b.offsets.end());
}

/// parse_csv(to_csv(v)) equals v. With P = 1 the loop and the V-shape are the same
/// placement (every stage on rank 0, chunk = stage), which the reader calls the loop.
void require_round_trip(schedule_view v) {
  const schedule back = io::parse_csv(io::to_csv(v));
  if (v.shape.P == 1) v.shape.layout = placement::loop;
  REQUIRE(same(back.view(), v));
}

/// The message parse_csv() raises for `text` ("" when it accepts it).
std::string rejection(std::string_view text) {
  try {
    (void)io::parse_csv(text);
  } catch (const ctpipe::error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> vector_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(CTPIPE_VECTORS_DIR)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Every valid spec of a small grid, each family.
std::vector<schedule_spec> small_grid() {
  std::vector<schedule_spec> specs;
  for (const schedule_family f : all_families) {
    for (int P = 1; P <= 4; ++P) {
      for (int m = 1; m <= 6; ++m) {
        for (int V = 1; V <= 3; ++V) {
          schedule_spec spec{f, {P, m, V, natural_placement(f)}};
          if (spec_error(spec) == nullptr) specs.push_back(spec);
        }
      }
    }
  }
  return specs;
}

}  // namespace

TEST_CASE("every reference vector, written as PyTorch writes it, reads back equal and round-trips", "[csv][vectors]") {
  int files = 0;
  int overlapped = 0;
  for (const std::string& file : vector_files()) {
    INFO(file);
    std::ifstream in(file);
    const auto j = nlohmann::json::parse(in);
    if (!j.contains("ranks")) continue;  // a configuration the peer rejects
    // The text as torch's _dump_csv writes it (csv.writer: "\r\n" row ends), and the ops
    // it holds, an overlapped pair as its word (the F's stage and micro-batch) and its B.
    std::string text;
    std::vector<op> ops;
    std::vector<std::uint32_t> offsets{0};
    for (const auto& rank : j.at("ranks")) {
      bool first = true;
      for (const auto& cell : rank) {
        const std::string action = cell.get<std::string>();
        text += (first ? "" : ",") + action;
        first = false;
        if (action.starts_with("(")) {
          ++overlapped;
          const auto semicolon = action.find(';');
          op first = io::parse_action(action.substr(1, semicolon - 1));
          op second = io::parse_action(action.substr(semicolon + 1, action.find(')') - semicolon - 1));
          if (first.kind() == op_kind::B) std::swap(first, second);
          REQUIRE(first.kind() == op_kind::F);
          REQUIRE(second.kind() == op_kind::B);
          ops.push_back(op{op_kind::overlap_f_b, first.stage(), first.microbatch()});
          ops.push_back(second);
        } else {
          ops.push_back(io::parse_action(action));
        }
      }
      text += "\r\n";
      offsets.push_back(static_cast<std::uint32_t>(ops.size()));
    }
    const pipeline_shape shape{j.at("P").get<int>(), j.at("m").get<int>(), j.at("V").get<int>(),
                               j.at("placement") == "v" ? placement::v_shape : placement::loop};
    const schedule read = io::parse_csv(text);
    REQUIRE(same(read.view(), schedule_view{shape, ops, offsets}));
    require_round_trip(read.view());
    // Written back, each rank's row is the vector's cells (the pairs F first, as PyTorch's).
    std::string expected;
    for (const auto& rank : j.at("ranks")) {
      bool first = true;
      for (const auto& cell : rank) expected += (first ? "" : ",") + cell.get<std::string>(), first = false;
      expected += "\n";
    }
    REQUIRE(io::to_csv(read.view()) == expected);
    ++files;
  }
  REQUIRE(files == 21);     // 23 files, 2 of them a peer's rejection
  REQUIRE(overlapped > 0);  // DualPipeV's and combined 1F1B's OVERLAP_F_B pairs
}

TEST_CASE("generated and lowered schedules round-trip through CSV", "[csv]") {
  int count = 0;
  for (const schedule_spec& spec : small_grid()) {
    INFO(family_name(spec.family) << " P = " << spec.shape.P << " m = " << spec.shape.m << " V = " << spec.shape.V);
    const schedule s = generate(spec);
    require_round_trip(s.view());
    require_round_trip(lower(s.view()).view());
    ++count;
  }
  REQUIRE(count > 200);
  // Multi-digit stages and micro-batches.
  const schedule big = generate({schedule_family::gpipe, {13, 11}});
  const std::string text = io::to_csv(big.view());
  REQUIRE(text.find(",12F10,") != std::string::npos);
  require_round_trip(big.view());
}

TEST_CASE("overlapped pairs: DualPipeV P = 4 m = 8 round-trips, each pair one cell with its F first", "[csv]") {
  const schedule s = generate({schedule_family::dualpipev, {4, 8, 2, placement::v_shape}});
  REQUIRE(has_pairs(s.view()));
  const std::string text = io::to_csv(s.view());
  // One cell per action: a pair's two words make one `(F;B)OVERLAP_F_B` cell.
  std::size_t words = 0;
  std::size_t cells = 0;
  std::size_t pairs = 0;
  std::istringstream rows(text);
  std::string row;
  for (int r = 0; std::getline(rows, row); ++r) {
    INFO(r);
    const std::vector<std::string> expected = io::actions(s.rank(r));
    std::vector<std::string> written;
    std::istringstream in(row);
    for (std::string cell; std::getline(in, cell, ',');) written.push_back(cell);
    REQUIRE(written == expected);
    words += s.rank(r).size();
    cells += written.size();
    for (const std::string& cell : written) {
      if (!cell.starts_with("(")) continue;
      ++pairs;
      REQUIRE(cell.ends_with(")OVERLAP_F_B"));
      REQUIRE(cell.find('F') < cell.find(';'));  // the forward first
      REQUIRE(cell.find('B') > cell.find(';'));
    }
  }
  REQUIRE(pairs > 0);
  REQUIRE(cells + pairs == words);
  require_round_trip(s.view());
  const schedule back = io::parse_csv(text);
  REQUIRE(validate(back.view()).ok());
  REQUIRE(simulate(back.view(), costs{}).makespan() == simulate(s.view(), costs{}).makespan());
  // The lowered lists keep each pair's words adjacent: the same cells, with transfers.
  const schedule lowered = lower(s.view());
  require_round_trip(lowered.view());
  const std::string comms = io::to_csv(lowered.view());
  REQUIRE(static_cast<std::size_t>(std::count(comms.begin(), comms.end(), '(')) == pairs);
  REQUIRE(comms.find("SEND_F") != std::string::npos);
}

TEST_CASE(
    "overlapped pairs: PyTorch's DualPipeV cell of 7F4 and 0B0 reads as the pair's word and its B, in either order",
    "[csv]") {
  const std::vector<op> pair{op{op_kind::overlap_f_b, 7, 4}, op{op_kind::B, 0, 0}};
  for (const char* text :
       {"(7F4;0B0)OVERLAP_F_B\n", "(0B0;7F4)OVERLAP_F_B", " ( 7F4 ; 0B0 )OVERLAP_F_B ", "\"(7F4;0B0)OVERLAP_F_B\""}) {
    INFO(text);
    const schedule read = io::parse_csv(text);
    REQUIRE(read.shape() == pipeline_shape{1, 5, 8});  // stages 0 .. 7 on one rank, micro-batches 0 .. 4
    REQUIRE(std::vector<op>(read.view().ops.begin(), read.view().ops.end()) == pair);
    REQUIRE(io::to_csv(read.view()) == "(7F4;0B0)OVERLAP_F_B\n");  // written back F first
  }
  // In a whole file: 1F1B, P = 2, m = 3, with rank 0's third forward overlapped with its
  // first backward; valid, simulated fused.
  const io::csv_schedule read = io::parse_csv("0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n");
  REQUIRE(std::vector<op>(read.rank(0).begin(), read.rank(0).end()) ==
          std::vector<op>{op{op_kind::F, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::overlap_f_b, 0, 2},
                          op{op_kind::B, 0, 0}, op{op_kind::B, 0, 1}, op{op_kind::B, 0, 2}});
  REQUIRE(validate(read.view()).ok());
  const simulation sim = simulate(read.view(), costs{});
  REQUIRE(sim.start(2) == sim.start(3));
  REQUIRE(sim.end(2) == sim.end(3));
  REQUIRE(sim.end(2) - sim.start(2) == rational{3});  // t_f + t_b: the default t_fb
  // FSDP annotations around a pair stay in place.
  const io::csv_schedule annotated = io::parse_csv("0UNSHARD,(0F0;0B1)OVERLAP_F_B,0RESHARD\n");
  REQUIRE(annotated.annotations == std::vector<io::csv_annotation>{{0, 0, "0UNSHARD"}, {0, 2, "0RESHARD"}});
  REQUIRE(io::to_csv(annotated) == "0UNSHARD,(0F0;0B1)OVERLAP_F_B,0RESHARD\n");
}

TEST_CASE("to_csv refuses a pair's word that is not followed by its B, and an annotation inside a pair", "[csv]") {
  auto refusal = [](std::vector<op> ops, std::vector<io::csv_annotation> annotations = {}) {
    const std::vector<std::uint32_t> offsets{0, static_cast<std::uint32_t>(ops.size())};
    try {
      schedule s{{1, 2}, ops.size()};
      std::copy(ops.begin(), ops.end(), s.ops().begin());
      std::copy(offsets.begin(), offsets.end(), s.offsets().begin());
      (void)io::to_csv(io::csv_schedule{std::move(s), std::move(annotations)});
    } catch (const ctpipe::error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string lone =
      "ctpipe: to_csv(): an overlapped pair's word (OVERLAP_F_B) must be followed by its B on its rank";
  REQUIRE(refusal({op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::overlap_f_b, 0, 1}}) ==
          lone);  // at the row's end
  REQUIRE(refusal({op{op_kind::overlap_f_b, 0, 1}, op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}}) == lone);
  REQUIRE(refusal({op{op_kind::overlap_f_b, 0, 1}, op{op_kind::I, 0, 0}}) == lone);
  REQUIRE(refusal({op{op_kind::overlap_f_b, 0, 1}, op{op_kind::overlap_f_b, 0, 0}, op{op_kind::B, 0, 0}}) == lone);
  // The same pair, whole, is written; an annotation between its two words is refused.
  const std::vector<op> good{op{op_kind::F, 0, 0}, op{op_kind::overlap_f_b, 0, 1}, op{op_kind::B, 0, 0},
                             op{op_kind::B, 0, 1}};
  REQUIRE(refusal(good).empty());
  REQUIRE(refusal(good, {{0, 1, "0UNSHARD"}, {0, 3, "0RESHARD"}}).empty());
  REQUIRE(refusal(good, {{0, 2, "0UNSHARD"}}) ==
          "ctpipe: to_csv(): an annotation's position falls inside an overlapped pair");
}

TEST_CASE("to_csv: one row per rank, PyTorch's action strings", "[csv]") {
  const schedule s = generate({schedule_family::one_f_one_b, {2, 2}});
  REQUIRE(io::to_csv(s.view()) == "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  // With communication: the lowered lists as they are (their order is lower()'s).
  REQUIRE(io::to_csv(lower(s.view()).view()).starts_with("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,"));
}

TEST_CASE("parse_csv: spaces, tabs, idle cells, quotes, CRLF, CR, BOM, no final row end, blank lines at the end",
          "[csv]") {
  const schedule expected = generate({schedule_family::one_f_one_b, {2, 2}});
  for (const char* text : {
           "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n",
           "0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n",
           "0F0,0F1,0B0,0B1\r1F0,1B0,1F1,1B1",
           "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n\n\r\n \n",
           "\xEF\xBB\xBF"
           "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1",
           " 0F0 ,\t0F1\t, ,,0B0,  0B1  \n,,1F0,\"1B0\",1F1, \"1B1\" ,\n",
       }) {
    INFO(text);
    const schedule read = io::parse_csv(text);
    REQUIRE(same(read.view(), expected.view()));
  }
  // Leading zeros and many digits.
  const schedule zeros = io::parse_csv("000F0000,0B0\n");
  REQUIRE(zeros.view().ops[0] == op{op_kind::F, 0, 0});
  // The V-shape is inferred; so is V from the largest stage.
  const schedule v = io::parse_csv("0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n");
  REQUIRE(v.shape() == pipeline_shape{2, 1, 2, placement::v_shape});
  const schedule loop = io::parse_csv("0F0,2F0,2B0,0B0\n1F0,3F0,3B0,1B0\n");
  REQUIRE(loop.shape() == pipeline_shape{2, 1, 2, placement::loop});
  // P = 1 with two stages fits both placements: the loop.
  REQUIRE(io::parse_csv("0F0,1F0,1B0,0B0").shape() == pipeline_shape{1, 1, 2, placement::loop});
  // I before W on a row is fine.
  REQUIRE(io::parse_csv("0F0,0I0,0W0").size() == 3);
}

TEST_CASE("parse_csv rejections, each with its message naming the row and cell", "[csv]") {
  const struct {
    std::string text;
    const char* message;
  } cases[] = {
      {"", "ctpipe: CSV has no rows (one row per rank expected)"},
      {"\xEF\xBB\xBF", "ctpipe: CSV has no rows (one row per rank expected)"},
      {"\r\n", "ctpipe: CSV has no rows (one row per rank expected)"},
      {"0F0\n\n1F0\n", "ctpipe: CSV row 2 (rank 1): no ops (every rank needs a row with at least one action)"},
      {"0F0\n , ,\t\n1F0\n", "ctpipe: CSV row 2 (rank 1): no ops (every rank needs a row with at least one action)"},
      {"0F0,1F0x\n", "ctpipe: CSV row 1 (rank 0), cell 2 \"1F0x\": trailing characters after the micro-batch"},
      {"0F0\n1F0,1F1 1\n", "ctpipe: CSV row 2 (rank 1), cell 2 \"1F1 1\": trailing characters after the micro-batch"},
      {"0X0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"0X0\": unknown action kind \"X\" (known: F, B, I, W, SEND_F, RECV_F, "
       "SEND_B, RECV_B, SEND_ACT, RECV_ACT, UNSHARD, RESHARD, REDUCE_GRAD)"},
      {"0F0,0B0,0UNSHARD-1", "ctpipe: CSV row 1 (rank 0), cell 3 \"0UNSHARD-1\": trailing characters after the kind"},
      {"0F0,0B0,0RESHARD3x",
       "ctpipe: CSV row 1 (rank 0), cell 3 \"0RESHARD3x\": trailing characters after the micro-batch"},
      {"0F0,0B0,4096UNSHARD", "ctpipe: CSV row 1 (rank 0), cell 3 \"4096UNSHARD\": stage must be at most 4095"},
      {"0F0,0B0,0REDUCE_GRAD65536",
       "ctpipe: CSV row 1 (rank 0), cell 3 \"0REDUCE_GRAD65536\": micro-batch must be at most 65535"},
      {"0F0,0B0,0UNSHARDED",
       "ctpipe: CSV row 1 (rank 0), cell 3 \"0UNSHARDED\": unknown action kind \"UNSHARDED\" (known: F, B, I, W, "
       "SEND_F, RECV_F, SEND_B, RECV_B, SEND_ACT, RECV_ACT, UNSHARD, RESHARD, REDUCE_GRAD)"},
      {"(0F0;0UNSHARD)OVERLAP_F_B,0B0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0UNSHARD)OVERLAP_F_B\": an overlapped group holds exactly one F and "
       "one B, such as (7F4;0B0)OVERLAP_F_B"},
      {"0F0,0B0,1UNSHARD\n1F0,1B0\n",
       "ctpipe: CSV row 2 (rank 1), cell 1 \"1F0\": stage 1 is already on row 1 (rank 0); a stage lives on one rank"},
      {"0F0,0B0,0UNSHARD\n1UNSHARD, ,1RESHARD\n",
       "ctpipe: CSV row 2 (rank 1): no ops (UNSHARD, RESHARD and REDUCE_GRAD are no ops; every rank needs at least one "
       "op)"},
      {"0F0,0B0\n1F0,1B0,3RESHARD\n",
       "ctpipe: CSV row 2 (rank 1), cell 3 \"3RESHARD\": stage 3 of this annotation has no compute op (the file's "
       "stages are 0 to 1)"},
      // Forward-only (evaluation) files, with or without transfers.
      {"0F0,0F1\n1F0,1F1\n",
       "ctpipe: CSV has forward ops (F) only: forward-only (evaluation) schedules are not supported (ctpipe checks "
       "training steps, where every F has its backward)"},
      {"0UNSHARD,0F0,0SEND_F0,0RESHARD\n1RECV_F0,1F0\n",
       "ctpipe: CSV has forward ops (F) only: forward-only (evaluation) schedules are not supported (ctpipe checks "
       "training steps, where every F has its backward)"},
      {"0f0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"0f0\": unknown action kind \"f\" (known: F, B, I, W, SEND_F, RECV_F, "
       "SEND_B, RECV_B, SEND_ACT, RECV_ACT, UNSHARD, RESHARD, REDUCE_GRAD)"},
      {"0F", "ctpipe: CSV row 1 (rank 0), cell 1 \"0F\": missing micro-batch after the kind"},
      {"0F-1", "ctpipe: CSV row 1 (rank 0), cell 1 \"0F-1\": missing micro-batch after the kind"},
      {"F0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"F0\": not an action (expected <stage><kind><micro-batch> such as 0F3)"},
      {"0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"0\": not an action (expected <stage><kind><micro-batch> such as 0F3)"},
      {"4096F0", "ctpipe: CSV row 1 (rank 0), cell 1 \"4096F0\": stage must be at most 4095"},
      {"99999999999999999999999F0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"99999999999999999999999F0\": stage must be at most 4095"},
      {"0F65536", "ctpipe: CSV row 1 (rank 0), cell 1 \"0F65536\": micro-batch must be at most 65535"},
      {"0F99999999999999999999",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"0F99999999999999999999\": micro-batch must be at most 65535"},
      {"0F0\n1F0\n0F1\n",
       "ctpipe: CSV row 3 (rank 2), cell 1 \"0F1\": stage 0 is already on row 1 (rank 0); a stage lives on one rank"},
      {"0F0,0W0,0I0",
       "ctpipe: CSV row 1 (rank 0), cell 2 \"0W0\": W with no I of stage 0, micro-batch 0 before it on its row (a W "
       "follows its I; a full B has no W)"},
      {"0F0,0F1,0I1,0W0",
       "ctpipe: CSV row 1 (rank 0), cell 4 \"0W0\": W with no I of stage 0, micro-batch 0 before it on its row (a W "
       "follows its I; a full B has no W)"},
      {"0F0\n1F0,1F1, 1W1 ,1I1,1W0,1I0",
       "ctpipe: CSV row 2 (rank 1), cell 3 \"1W1\": W with no I of stage 1, micro-batch 1 before it on its row (a W "
       "follows its I; a full B has no W)"},
      {"(0F0;0B0)OVERLAP",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0B0)OVERLAP\": an overlapped group is "
       "(<action>;<action>)OVERLAP_F_B"},
      {"( )OVERLAP_F_B", "ctpipe: CSV row 1 (rank 0), cell 1 \"( )OVERLAP_F_B\": empty overlapped group"},
      // An overlapped group is one F and one B: anything else names the rule.
      {"(0F0;0SEND_F0)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0SEND_F0)OVERLAP_F_B\": an overlapped group holds exactly one F and "
       "one B, such as (7F4;0B0)OVERLAP_F_B"},
      {"(0F0;0W0)OVERLAP_F_B,0I0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0W0)OVERLAP_F_B\": an overlapped group holds exactly one F and one "
       "B, such as (7F4;0B0)OVERLAP_F_B"},
      {"0F1,(0F0;0I0)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 2 \"(0F0;0I0)OVERLAP_F_B\": an overlapped group holds exactly one F and one "
       "B, such as (7F4;0B0)OVERLAP_F_B"},
      {"(0F0;0F1)OVERLAP_F_B,0B0,0B1",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0F1)OVERLAP_F_B\": an overlapped group holds exactly one F and one "
       "B, such as (7F4;0B0)OVERLAP_F_B"},
      {"0F0,0F1,(0B0;0B1)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 3 \"(0B0;0B1)OVERLAP_F_B\": an overlapped group holds exactly one F and one "
       "B, such as (7F4;0B0)OVERLAP_F_B"},
      {"(0F0)OVERLAP_F_B,0B0",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0)OVERLAP_F_B\": an overlapped group holds exactly one F and one B, "
       "such as (7F4;0B0)OVERLAP_F_B"},
      {"0F1,(0F0;0B1;0B0)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 2 \"(0F0;0B1;0B0)OVERLAP_F_B\": an overlapped group holds exactly one F and "
       "one B, such as (7F4;0B0)OVERLAP_F_B"},
      // A pair's word alone (io::action()'s `1OVERLAP_F_B1`) is no action, in a cell or a group.
      {"1OVERLAP_F_B1",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"1OVERLAP_F_B1\": OVERLAP_F_B is an overlapped pair, written "
       "(<stage>F<micro-batch>;<stage>B<micro-batch>)OVERLAP_F_B"},
      {"(0OVERLAP_F_B0;0B0)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0OVERLAP_F_B0;0B0)OVERLAP_F_B\": \"0OVERLAP_F_B0\": OVERLAP_F_B is an "
       "overlapped pair, written (<stage>F<micro-batch>;<stage>B<micro-batch>)OVERLAP_F_B"},
      // Both halves' stages live on the pair's row.
      {"0F0,1B0\n(1F0;0B0)OVERLAP_F_B\n",
       "ctpipe: CSV row 2 (rank 1), cell 1 \"(1F0;0B0)OVERLAP_F_B\": stage 1 is already on row 1 (rank 0); a stage "
       "lives on one rank"},
      {"(0F0;0X0)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;0X0)OVERLAP_F_B\": \"0X0\": unknown action kind \"X\" (known: F, B, "
       "I, W, SEND_F, RECV_F, SEND_B, RECV_B, SEND_ACT, RECV_ACT, UNSHARD, RESHARD, REDUCE_GRAD)"},
      {"(0F0;)OVERLAP_F_B",
       "ctpipe: CSV row 1 (rank 0), cell 1 \"(0F0;)OVERLAP_F_B\": \"\": not an action (expected "
       "<stage><kind><micro-batch> such as 0F3)"},
      {std::string("0F\0"
                   "0",
                   4),
       "ctpipe: CSV row 1 (rank 0), cell 1 \"0F?0\": missing micro-batch after the kind"},
      {"0F0\n1F0\n2F0,3F0\n",
       "ctpipe: CSV has 4 stages (0 to 3) on 3 rows: the stage count must be a multiple of the row count (is a rank's "
       "row missing?)"},
      {"0F0,1F0\n2F0,3F0\n",
       "ctpipe: CSV stage 1 is on row 1 (rank 0), but the loop placement (stage s on rank s % P) puts it on rank 1, "
       "and no placement fits"},
      {"0F0,2F0,5F0\n1F0,3F0,4F0\n",
       "ctpipe: CSV stage 4 is on row 2 (rank 1), but the loop placement (stage s on rank s % P) puts it on rank 0, "
       "and no placement fits"},
      {"0F0,5F0\n1F0\n2F0,3F0,4F0\n",
       "ctpipe: CSV stage 4 is on row 3 (rank 2), but the V-shape placement (rank r holds stages r and 2P-1-r) puts it "
       "on rank 1, and no placement fits"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    REQUIRE(rejection(c.text) == c.message);
  }
  // A long cell is echoed in part; a long line is no problem.
  const std::string long_cell = "0F0," + std::string(100000, '7') + "x";
  REQUIRE(rejection(long_cell) ==
          "ctpipe: CSV row 1 (rank 0), cell 2 \"7777777777777777777777777777777777777777...\": "
          "stage must be at most 4095");
  // More than 4096 rows: stages 0 .. 4095 on their own rows, then one more row.
  std::string rows;
  for (int r = 0; r < 4096; ++r) rows += std::to_string(r) + "F0," + std::to_string(r) + "B0\n";
  REQUIRE(rejection(rows).empty());  // 4096 rows are fine
  REQUIRE(rejection(rows + "0F1\n") == "ctpipe: CSV has more than 4096 rows (P is at most 4096 ranks)");
  // Larger than the limit.
  const std::string huge(io::max_csv_bytes + 1, '\n');
  REQUIRE(rejection(huge) == "ctpipe: CSV input is larger than 268435456 bytes (the reader's limit)");
}

TEST_CASE(
    "parse_csv keeps FSDP's UNSHARD, RESHARD and REDUCE_GRAD as annotations, and to_csv writes them back in place",
    "[csv]") {
  // 1F1B, P = 2, m = 2, as PyTorch writes it with FSDP: each stage unsharded before its
  // first op, its gradients reduced after its last backward, resharded at the end.
  const std::string text =
      "0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD\n"
      "1UNSHARD,1F0,1B0,1F1,1B1,1REDUCE_GRAD,1RESHARD\n";
  const io::csv_schedule read = io::parse_csv(text);
  const schedule expected = generate({schedule_family::one_f_one_b, {2, 2}});
  REQUIRE(same(read.view(), expected.view()));  // the ops alone: the annotations are no ops
  REQUIRE(read.annotations == std::vector<io::csv_annotation>{{0, 0, "0UNSHARD"},
                                                              {0, 4, "0REDUCE_GRAD"},
                                                              {0, 4, "0RESHARD"},
                                                              {1, 0, "1UNSHARD"},
                                                              {1, 4, "1REDUCE_GRAD"},
                                                              {1, 4, "1RESHARD"}});
  // Through validation and simulation as any schedule, and back to the same text.
  REQUIRE(validate(read.view()).ok());
  REQUIRE(simulate(read.view(), costs{}).makespan() == simulate(expected.view(), costs{}).makespan());
  REQUIRE(io::to_csv(read) == text);
  // The view, or a copy into a plain schedule, is the ops only.
  REQUIRE(io::to_csv(read.view()) == io::to_csv(expected.view()));
  io::csv_schedule again = io::parse_csv(text);
  const schedule plain = std::move(again);
  REQUIRE(same(plain.view(), expected.view()));

  // Anywhere in a row, with PyTorch's row ends, spaces, quotes, idle cells and a
  // micro-batch after the kind (PyTorch's reader accepts one): kept as written, trimmed.
  const io::csv_schedule messy = io::parse_csv(" 0F0 ,\"0UNSHARD\", ,0RESHARD7,0B0\r\n01REDUCE_GRAD,1F0,1B0\r\n");
  REQUIRE(messy.annotations ==
          std::vector<io::csv_annotation>{{0, 1, "0UNSHARD"}, {0, 1, "0RESHARD7"}, {1, 0, "01REDUCE_GRAD"}});
  REQUIRE(io::to_csv(messy) == "0F0,0UNSHARD,0RESHARD7,0B0\n01REDUCE_GRAD,1F0,1B0\n");

  // A lowered file with annotations: validated with its transfers, and round-tripped.
  const schedule lowered = lower(expected.view());
  const io::csv_schedule with_comms{
      lower(expected.view()), {{0, 0, "0UNSHARD"}, {1, 0, "1UNSHARD"}, {1, lowered.rank(1).size(), "1REDUCE_GRAD"}}};
  const std::string comms_text = io::to_csv(with_comms);
  REQUIRE(comms_text.starts_with("0UNSHARD,0F0,0SEND_F0,"));
  REQUIRE(comms_text.ends_with(",1SEND_B1,1REDUCE_GRAD\n"));
  const io::csv_schedule comms = io::parse_csv(comms_text);
  REQUIRE(same(comms.view(), lowered.view()));
  REQUIRE(comms.annotations == with_comms.annotations);
  REQUIRE(validate_lowered(comms.view(), send_semantics::buffered).ok());

  // Annotations of any order are written by rank and position (ties in vector order);
  // one that would not read back is an error.
  const io::csv_schedule edited{generate({schedule_family::one_f_one_b, {2, 2}}),
                                {{1, 4, "1RESHARD"}, {0, 2, "0UNSHARD"}, {1, 0, "1UNSHARD"}, {1, 4, "1REDUCE_GRAD"}}};
  REQUIRE(io::to_csv(edited) == "0F0,0F1,0UNSHARD,0B0,0B1\n1UNSHARD,1F0,1B0,1F1,1B1,1RESHARD,1REDUCE_GRAD\n");
  auto refusal = [](std::vector<io::csv_annotation> annotations) {
    try {
      (void)io::to_csv(io::csv_schedule{generate({schedule_family::one_f_one_b, {2, 2}}), std::move(annotations)});
    } catch (const ctpipe::error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  REQUIRE(refusal({{2, 0, "0UNSHARD"}}) ==
          "ctpipe: to_csv(): an annotation's rank or position is outside the schedule");
  REQUIRE(refusal({{0, 5, "0UNSHARD"}}) ==
          "ctpipe: to_csv(): an annotation's rank or position is outside the schedule");
  REQUIRE(refusal({{0, 0, "0UNSHARD,0F9"}}) ==
          "ctpipe: to_csv(): an annotation is not an UNSHARD, RESHARD or REDUCE_GRAD action");
  REQUIRE(refusal({{0, 0, "0F0"}}) ==
          "ctpipe: to_csv(): an annotation is not an UNSHARD, RESHARD or REDUCE_GRAD action");
  // Stage 5 of a 2-stage schedule: parse_csv() would refuse the file it writes.
  REQUIRE(refusal({{0, 1, "5UNSHARD"}}) == "ctpipe: to_csv(): an annotation's stage is not a stage of the schedule");
}

TEST_CASE("ctpipe validate: a file with FSDP actions is checked on its ops, and a forward-only file is refused by name",
          "[csv][tool]") {
  const temp_file fsdp(
      "0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD\n1UNSHARD,1F0,1B0,1F1,1B1,1REDUCE_GRAD,1RESHARD\n");
  const auto run = run_tool("validate --format json " + fsdp.path);
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.err.empty());
  const auto j = nlohmann::json::parse(run.out);
  REQUIRE(j["ranks"][0] == nlohmann::json{"0F0", "0F1", "0B0", "0B1"});
  REQUIRE(j["makespan"] == "9");

  const temp_file eval("0F0,0SEND_F0,0F1,0SEND_F1\n1RECV_F0,1F0,1RECV_F1,1F1\n");
  const auto refused = run_tool("validate " + eval.path);
  REQUIRE(refused.exit_code == 2);
  REQUIRE(refused.out.empty());
  REQUIRE(refused.err == "ctpipe: " + eval.path +
                             ": CSV has forward ops (F) only: forward-only (evaluation) schedules are not supported "
                             "(ctpipe checks training steps, where every F has its backward)\n");
}

TEST_CASE("parse_csv on 20,000 seeded random and mutated inputs: a schedule or ctpipe::error, nothing else",
          "[csv][fuzz]") {
  // Seeds: valid files (compute-only, lowered, DualPipeV's and a hand-written overlapped
  // pair), then mutations of them and plain random bytes. Each input parses (and then
  // round-trips and validates without a crash) or raises ctpipe::error; anything else
  // fails the test.
  std::vector<std::string> seeds;
  for (const schedule_spec& spec : {schedule_spec{schedule_family::one_f_one_b, {3, 4}},
                                    schedule_spec{schedule_family::zbv, {2, 3, 2, placement::v_shape}},
                                    schedule_spec{schedule_family::interleaved_1f1b, {2, 4, 2}},
                                    schedule_spec{schedule_family::dualpipev, {2, 4, 2, placement::v_shape}}}) {
    const schedule s = generate(spec);
    seeds.push_back(io::to_csv(s.view()));
    seeds.push_back(io::to_csv(lower(s.view()).view()));
  }
  seeds.push_back("(0F0;0B0)OVERLAP_F_B, 12F10 ,\r\n,1SEND_B2\r\n");
  seeds.push_back("0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD\n1UNSHARD,1F0,1B0,1F1,1B1,1REDUCE_GRAD,1RESHARD\n");
  constexpr std::string_view alphabet = "0123456789FBIWSENDRCV_OLAPUHG(),;\r\n \t\"\xEF\xBB\xBF";
  std::mt19937 random(20240611);
  int lowered_valid = 0;  // valid compute schedules among the inputs, lowered and checked
  auto below = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
  int parsed = 0;
  int rejected = 0;
  int annotated = 0;  // parsed inputs with FSDP annotations
  for (int k = 0; k < 20000; ++k) {
    std::string input;
    if (k % 10 == 0) {
      input.resize(below(200));
      for (char& ch : input) ch = static_cast<char>(below(256));
    } else {
      input = seeds[below(seeds.size())];
      const std::size_t edits = 1 + below(4);
      for (std::size_t e = 0; e < edits; ++e) {
        const std::size_t at = input.empty() ? 0 : below(input.size());
        switch (below(5)) {
          case 0:
            if (!input.empty()) input[at] = static_cast<char>(below(256));
            break;
          case 1: input.insert(at, 1, alphabet[below(alphabet.size())]); break;
          case 2: input.erase(at, below(8)); break;
          case 3: input.insert(at, input.substr(at, below(16))); break;
          default: input.insert(at, std::to_string(random())); break;
        }
      }
    }
    INFO(k);
    try {
      const io::csv_schedule s = io::parse_csv(input);
      ++parsed;
      require_round_trip(s.view());
      // With the annotations: the same ops and the same annotations.
      const io::csv_schedule back = io::parse_csv(io::to_csv(s));
      REQUIRE(same(back.view(), s.view()));
      REQUIRE(back.annotations == s.annotations);
      annotated += s.annotations.empty() ? 0 : 1;
      if (static_cast<long long>(s.shape().stages()) * s.shape().m <= (1 << 16)) {
        bool transfers = false;
        for (const op o : s.view().ops) transfers = transfers || is_transfer(o.kind());
        if (transfers) {
          (void)validate_lowered(s.view(), send_semantics::rendezvous);
          (void)validate_lowered(s.view(), send_semantics::buffered);
          (void)peer_order_consistent(s.view());
        } else if (validate(s.view()).ok()) {
          // Any valid compute schedule, however odd its order, lowers to lists that run:
          // the rendezvous order under both send semantics with a consistent peer order,
          // the blocking order under buffered sends, as fast as simulated.
          const schedule lowered = lower(s.view(), costs{}, runtime_model::rendezvous);
          REQUIRE(validate_lowered(lowered.view(), send_semantics::rendezvous).ok());
          REQUIRE(validate_lowered(lowered.view(), send_semantics::buffered).ok());
          REQUIRE(peer_order_consistent(lowered.view()));
          REQUIRE(ctpipe::tests::prove_executed(s.view(), costs{}, runtime_model::blocking));
          ++lowered_valid;
        }
      }
    } catch (const ctpipe::error&) {
      ++rejected;
    }
  }
  REQUIRE(parsed + rejected == 20000);
  REQUIRE(lowered_valid > 10);
  REQUIRE(annotated > 10);
  REQUIRE(parsed > 100);
  REQUIRE(rejected > 100);
}

// --- the tool ----------------------------------------------------------------------------

TEST_CASE("ctpipe --format csv and csv-comms print what reads back as the generated and lowered schedule",
          "[csv][tool]") {
  const struct {
    const char* args;
    schedule_spec spec;
  } cases[] = {
      {"", {schedule_family::one_f_one_b, {4, 8}}},
      {"--schedule zbv -P 3 -m 5", {schedule_family::zbv, {3, 5, 2, placement::v_shape}}},
      {"--schedule interleaved-1f1b -P 2 -m 4 -V 2", {schedule_family::interleaved_1f1b, {2, 4, 2}}},
      {"--schedule zb-h1 -P 12 -m 11", {schedule_family::zb_h1, {12, 11}}},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const schedule s = generate(c.spec);
    const auto csv = run_tool(std::string(c.args) + " --format csv");
    REQUIRE(csv.exit_code == 0);
    REQUIRE(csv.err.empty());
    REQUIRE(same(io::parse_csv(csv.out).view(), s.view()));
    const auto comms = run_tool(std::string(c.args) + " --format csv-comms");
    REQUIRE(comms.exit_code == 0);
    REQUIRE(same(io::parse_csv(comms.out).view(), lower(s.view()).view()));
  }
  const auto too_many = run_tool("-P 1024 -m 4096 --format csv");
  REQUIRE(too_many.exit_code == 2);
  REQUIRE(too_many.err == "ctpipe: 8388608 ops are too many for --format csv (at most 2097152)\n");
}

TEST_CASE("ctpipe validate: a good file, compute-only or with transfers, shows the usual views", "[csv][tool]") {
  const temp_file compute(run_tool("--format csv").out);
  const temp_file comms(run_tool("--format csv-comms").out);

  const auto text = run_tool("validate " + compute.path);
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.err.empty());
  REQUIRE(text.out.starts_with(compute.path +
                               ": valid compute schedule; P = 4, m = 8, V = 1, placement loop (from the file)\n"));
  REQUIRE(text.out.find(compute.path + "  P = 4  m = 8  V = 1  placement loop") != std::string::npos);
  REQUIRE(text.out.find("rank 0  F0-F1-F2-F3-\u2591") != std::string::npos);
  REQUIRE(text.out.find("makespan 33 (no closed form: read from a file)") != std::string::npos);
  REQUIRE(text.out.find("simulated bubble 3/11 (27.3%)") != std::string::npos);

  const auto lowered = run_tool("validate " + comms.path);
  REQUIRE(lowered.exit_code == 0);
  // The default csv-comms lists are made for the blocking model: they run under it (and
  // posted) exactly as simulated.
  REQUIRE(lowered.out.find("valid lowered schedule (96 transfer ops): runs under blocking") != std::string::npos);
  REQUIRE(lowered.out.find("executed, blocking    makespan 33  bubble 3/11 (27.3%)  stall per rank 0 0 0 0") !=
          std::string::npos);
  REQUIRE(lowered.out.find("executed, posted      makespan 33") != std::string::npos);
  // Ordered for rendezvous sends, they run under every model, the stream models too.
  const temp_file rendezvous(run_tool("--format csv-comms --runtime rendezvous").out);
  REQUIRE(run_tool("validate " + rendezvous.path)
              .out.find("runs under blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction, "
                        "stream-edge;") != std::string::npos);

  // JSON: exactly the schedule view's fields, the same values (the closed forms null).
  const auto generated = nlohmann::json::parse(run_tool("--format json").out);
  for (const std::string& path : {compute.path, comms.path}) {
    INFO(path);
    const auto run = run_tool("validate --format json " + path);
    REQUIRE(run.exit_code == 0);
    const auto j = nlohmann::json::parse(run.out);
    std::vector<std::string> keys;
    std::vector<std::string> generated_keys;
    for (const auto& item : j.items()) keys.push_back(item.key());
    for (const auto& item : generated.items()) generated_keys.push_back(item.key());
    REQUIRE(keys == generated_keys);
    REQUIRE(j["schedule"] == path);
    REQUIRE(j["bubble_fraction_formula"].is_null());
    REQUIRE(j["peak_in_flight_formula"].is_null());
    for (const char* key : {"P", "m", "V", "placement", "costs", "gamma", "makespan", "bubble_fraction", "idle",
                            "span_bubble", "peak_in_flight", "messages", "ranks", "timeline"}) {
      INFO(key);
      REQUIRE(j[key] == generated[key]);
    }
  }

  // Standard input, costs and gamma, the other formats.
  const auto piped = run_tool("validate --format json --costs f=1,i=1,w=1 --gamma 1/2 - < " + compute.path);
  REQUIRE(piped.exit_code == 0);
  REQUIRE(nlohmann::json::parse(piped.out)["schedule"] == "-");
  REQUIRE(nlohmann::json::parse(piped.out)["gamma"] == "1/2");
  REQUIRE(run_tool("validate --format svg " + comms.path).out.starts_with("<svg"));
  REQUIRE(run_tool("validate --format trace " + comms.path).exit_code == 0);

  // A file written by hand: PyTorch's row ends, spaces, idle cells, an overlapped pair
  // written B first, which the JSON lists as one action, F first.
  const temp_file by_hand("0F0, 0F1 ,,(0B0;0F2)OVERLAP_F_B,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  const auto hand = run_tool("validate --format json " + by_hand.path);
  REQUIRE(hand.exit_code == 0);
  const auto j = nlohmann::json::parse(hand.out);
  REQUIRE(j["P"] == 2);
  REQUIRE(j["m"] == 3);
  REQUIRE(j["ranks"][0] == nlohmann::json{"0F0", "0F1", "(0F2;0B0)OVERLAP_F_B", "0B1", "0B2"});
  REQUIRE(j["timeline"][0].size() == 5);
}

TEST_CASE("ctpipe validate: an invalid file exits 2 with a ctpipe: line per problem", "[csv][tool]") {
  const struct {
    std::string text;
    std::string message;  // the first line, after "ctpipe: FILE"
    std::size_t lines;    // lines on stderr
  } cases[] = {
      {"0F0,1F0x\n", ": CSV row 1 (rank 0), cell 2 \"1F0x\": trailing characters after the micro-batch\n", 1},
      {"0F0\n0F1\n",
       ": CSV row 2 (rank 1), cell 1 \"0F1\": stage 0 is already on row 1 (rank 0); a stage lives on one rank\n", 1},
      {"0F0,0B0\n\n1F0,1B0\n", ": CSV row 2 (rank 1): no ops (every rank needs a row with at least one action)\n", 1},
      // Compute-only: every issue validate() finds, one line each.
      {"0F0,0B0\n1B0,1F0\n", ": rank 1, step 0, op 1B0: op comes before the op it needs on the same rank (needs 1F0)\n",
       3},
      {"0F0,0F1,0B0\n1F0,1B0,1F1,1B1\n", ": rank 0, op 0B1: op missing\n", 1},
      {"0B0,0F0\n1F0,1B0\n", ": rank 0, step 0, op 0B0: op comes before the op it needs on the same rank (needs 0F0)\n",
       3},
      // Lowered lists that hang under every runtime model: a compute op before the
      // receive of its input, a send before its compute op; one line per stuck rank,
      // then the cycle of waiting ranks, then each stream model's cycle of ranks and
      // streams (4 lines for the deadlock: no stream model's hang is a rank's own fault).
      {"0F0,0SEND_F0,0RECV_B0,0B0\n1F0,1RECV_F0,1B0,1SEND_B0\n",
       ": hangs under every runtime model; under blocking: rank 1, step 0, op 1F0: compute op whose input was not "
       "received before it on its rank (needs 1RECV_F0)\n",
       2},
      {"0SEND_F0,0F0,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n",
       ": hangs under every runtime model; under blocking: rank 0, step 0, op 0SEND_F0: send comes before the compute "
       "op "
       "that produces its data (needs 0F0)\n",
       2},
      {"0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1F0,1B0,1SEND_B0\n",
       ": hangs under every runtime model; under blocking: rank 0, step 1, op 0RECV_B0: deadlock: this op waits for an "
       "op "
       "that never runs (needs 1SEND_B0); waits for rank 1\n",
       7},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const temp_file file(c.text);
    const auto run = run_tool("validate " + file.path);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err.starts_with("ctpipe: " + file.path + c.message));
    REQUIRE(static_cast<std::size_t>(std::count(run.err.begin(), run.err.end(), '\n')) == c.lines);
  }
  // The cycle is named: rank 0 waits for rank 1, which waits for rank 0; under a stream
  // model with the streams its heads are on.
  const temp_file cycle("0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1F0,1B0,1SEND_B0\n");
  const std::string cycle_err = run_tool("validate " + cycle.path).err;
  REQUIRE(cycle_err.find("ctpipe: " + cycle.path + ": rank 0 waits for rank 1, which waits for rank 0\n") !=
          std::string::npos);
  REQUIRE(cycle_err.ends_with(
      "ctpipe: " + cycle.path +
      ": under stream-edge: rank 0 waits at 0B0 for 0RECV_B0 on rank 0's stream (1->0); rank 0's stream (1->0): its "
      "head 0RECV_B0 needs 1SEND_B0, which rank 1 has not reached; rank 1 waits at 1F0 for 1RECV_F0 on rank 1's stream "
      "(0->1); rank 1's stream (0->1): its head 1RECV_F0 needs 0SEND_F0, which rank 0 has not reached; back to rank "
      "0\n"));
  // Lists that hang only where a send waits for its receive run under the other models.
  const temp_file send_first(
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const auto runs = run_tool("validate " + send_first.path);
  REQUIRE(runs.exit_code == 0);
  // (On one stream per rank, or per peer with P = 2, SEND_F1 waits for RECV_F1, queued
  // behind SEND_B0, which waits for RECV_B0, queued behind SEND_F1; per direction or
  // edge the two are on different streams.)
  REQUIRE(runs.out.find("runs under blocking, posted, batched, stream-direction, stream-edge; hangs under rendezvous, "
                        "stream-rank, stream-peer") != std::string::npos);
  // More than 20 problems: 20 lines and a count.
  // (30 backwards before their forwards on one rank: 30 out_of_order, 1 deadlock.)
  std::string many = "0B0,0F0";
  for (int j = 1; j < 30; ++j) many += ",0B" + std::to_string(j) + ",0F" + std::to_string(j);
  const temp_file missing(many + "\n");
  const auto capped = run_tool("validate " + missing.path);
  REQUIRE(capped.exit_code == 2);
  REQUIRE(std::count(capped.err.begin(), capped.err.end(), '\n') == 21);
  REQUIRE(capped.err.ends_with("ctpipe: " + missing.path + ": 11 more issues\n"));
  const struct {
    const char* args;
    const char* message;
  } usage[] = {
      {"validate /nonexistent/x.csv", "ctpipe: cannot read '/nonexistent/x.csv'\n"},
      {"validate /tmp", "ctpipe: cannot read '/tmp'\n"},
      {"validate", "ctpipe: "},
      {"validate --format csv -", "ctpipe: validate --format takes text, json, svg or trace, not 'csv'\n"},
      {"validate --gamma 2 -", "ctpipe: gamma must lie in [0, 1]\n"},
      {"--format yaml", "ctpipe: --format takes text, json, svg, trace, csv or csv-comms, not 'yaml'\n"},
  };
  for (const auto& c : usage) {
    INFO(c.args);
    const auto run = run_tool(std::string(c.args) + " < /dev/null");
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err.starts_with(c.message));
  }
  // The help names the subcommand.
  REQUIRE(run_tool("validate --help").out.find("PyTorch's CSV format") != std::string::npos);
}

TEST_CASE("ctpipe --format csv rejects a bad --gamma or --costs like every format", "[csv][tool]") {
  for (const char* format : {"csv", "csv-comms"}) {
    const auto run = run_tool(std::string("--gamma 5 --format ") + format);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err == "ctpipe: gamma must lie in [0, 1]\n");
  }
}

TEST_CASE("parse_csv: the shape comes from the compute ops, so a stray transfer shows as out of shape", "[csv]") {
  const schedule s = io::parse_csv("0F0,0SEND_F0,0SEND_F5,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n");
  REQUIRE(s.shape() == pipeline_shape{2, 1});
  REQUIRE(validate_lowered(s.view(), send_semantics::buffered).first ==
          validation_issue{fault::out_of_shape, 0, 2, op{op_kind::send_f, 0, 5}, op{op_kind::send_f, 0, 5}});
  // A file of transfers only takes its shape from them.
  REQUIRE(io::parse_csv("0SEND_F0\n1RECV_F0\n").shape() == pipeline_shape{2, 1});
}

// --- PyTorch's passes: UNSHARD, RESHARD, REDUCE_GRAD (io/torch_passes.hpp) ----------------

TEST_CASE("torch_annotations() places UNSHARD, RESHARD and REDUCE_GRAD as PyTorch's own passes do", "[csv][torch]") {
  // Expected rows: PyTorch 2.13.0's `_add_send_recv(_add_reduce_grad(_add_unshard_reshard(row), m))`
  // on the compute rows of `ctpipe -s 1f1b -P 2 -m 2 --format csv` (run on 2026-12-03);
  // ctpipe's own lowering places the same sends and receives here.
  const schedule s = generate({schedule_family::one_f_one_b, {2, 2}});
  CHECK(io::to_torch_csv(lower(s.view()).view()) ==
        "0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n");
  // The compute-only rows of interleaved 1F1B P = 2, m = 4, V = 2 with PyTorch's passes (the
  // same run, its SEND/RECV left out): two stages per rank, both unsharded at the start.
  const schedule il = generate({schedule_family::interleaved_1f1b, {2, 4, 2}});
  CHECK(io::to_torch_csv(il.view()) ==
        "0UNSHARD,2UNSHARD,0F0,0F1,2F0,2F1,0F2,2B0,0F3,2B1,2F2,0B0,2F3,0B1,2B2,2B3,2REDUCE_GRAD,2RESHARD,0B2,0B3,"
        "0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,3UNSHARD,1F0,1F1,3F0,3B0,3F1,3B1,1F2,1B0,1F3,1B1,3F2,3B2,3F3,3B3,3REDUCE_GRAD,3RESHARD,1B2,1B3,"
        "1REDUCE_GRAD,1RESHARD\n");
  // A window of 1: each stage change reshards the one before.
  CHECK(io::to_torch_csv(il.view(), {true, true, 1})
            .starts_with("0UNSHARD,0F0,0F1,0RESHARD,2UNSHARD,2F0,2F1,2RESHARD,0UNSHARD,0F2,"));
  // REDUCE_GRAD only; none at all.
  CHECK(io::to_torch_csv(s.view(), {false, true, 3}) == "0F0,0F1,0B0,0B1,0REDUCE_GRAD\n1F0,1B0,1F1,1B1,1REDUCE_GRAD\n");
  CHECK(io::to_torch_csv(s.view(), {false, false, 3}) == io::to_csv(s.view()));
  // Split backwards: the m-th W of a stage, not its I, reduces; an overlapped pair counts its B.
  const schedule zb = generate({schedule_family::zb_h1, {2, 2}});
  const std::string zb_csv = io::to_torch_csv(zb.view(), {false, true, 3});
  CHECK(zb_csv.find("1W1,1REDUCE_GRAD") != std::string::npos);
  const schedule dv = generate({schedule_family::dualpipev, {2, 4, 2, placement::v_shape}});
  const io::csv_schedule back = io::parse_csv(io::to_torch_csv(dv.view()));
  CHECK(same(back.view(), dv.view()));  // the annotations read back beside the same ops
  std::size_t reduces = 0;
  for (const io::csv_annotation& a : back.annotations) reduces += a.text.ends_with("REDUCE_GRAD") ? 1 : 0;
  CHECK(reduces == 4);  // one per stage
  CHECK_THROWS_WITH(io::torch_annotations(s.view(), {true, true, 0}), "ctpipe: --max-active-stages must be >= 1");
}

TEST_CASE("rows ending in CR LF (Python's csv writer, PyTorch's _dump_csv) read as rows ending in LF", "[csv][torch]") {
  const std::string lf =
      io::to_torch_csv(lower(generate({schedule_family::zbv, {3, 6, 2, placement::v_shape}}).view()).view());
  std::string crlf;
  for (const char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const io::csv_schedule a = io::parse_csv(lf);
  const io::csv_schedule b = io::parse_csv(crlf);
  CHECK(same(a.view(), b.view()));
  CHECK(a.annotations == b.annotations);
  CHECK(io::to_csv(b) == lf);
}
