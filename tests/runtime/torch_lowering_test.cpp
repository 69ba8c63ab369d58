// PyTorch's four lowerings (ctpipe/io/torch_lowering.hpp): hand-checked small cases, the
// lists printed in the PyTorch threads token for token (each with its URL), the test
// vectors of `_defer_recv_ops` from PR #178815, the rules' invariants over every family,
// and what the runtime models predict for each order where the threads report a stall or
// a hang. python/tests/test_torch_lowerings.py compares torch-asap and torch-parity with
// PyTorch's own functions.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/torch_lowering.hpp>
#include <ctpipe/lower/execute.hpp>
#include <ctpipe/lower/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catch.hpp"

using namespace ctpipe;
using io::torch_lowering;

namespace {

/// The lists of `which` for `s` after `passes`, as PyTorch's CSV (one row per rank).
std::string lowered_csv(const schedule_spec& s, torch_lowering which, const io::torch_passes& passes = {}) {
  return io::to_csv(io::lower_torch(generate(s).view(), which, passes));
}

/// `rows` (PyTorch's printed lists, ", " between the actions, one string per rank) as CSV.
std::string csv_of(std::initializer_list<std::string_view> rows) {
  std::string out;
  for (std::string_view row : rows) {
    for (std::size_t comma; (comma = row.find(", ")) != std::string_view::npos; row.remove_prefix(comma + 2)) {
      out.append(row.substr(0, comma)).push_back(',');
    }
    out.append(row).push_back('\n');
  }
  return out;
}

/// PyTorch's lowered lists `csv` (one row per rank) of shape `shape`, read action by action
/// without parse_csv()'s checks: PyTorch's own test vectors follow a full B by a W.
io::csv_schedule lists_of(const pipeline_shape& shape, std::string_view csv) {
  std::vector<op> ops;
  std::vector<std::uint32_t> offsets{0};
  std::vector<io::csv_annotation> annotations;
  for (std::size_t end; (end = csv.find('\n')) != std::string_view::npos; csv.remove_prefix(end + 1)) {
    std::string_view row = csv.substr(0, end);
    while (!row.empty()) {
      const std::string_view cell = row.substr(0, row.find(','));
      row.remove_prefix(std::min(row.size(), cell.size() + 1));
      if (cell.starts_with("(")) {  // (F;B)OVERLAP_F_B: the pair's word, then its B
        const op f = io::parse_action(cell.substr(1, cell.find(';') - 1));
        ops.push_back(op{op_kind::overlap_f_b, f.stage(), f.microbatch()});
        ops.push_back(io::parse_action(cell.substr(cell.find(';') + 1, cell.find(')') - cell.find(';') - 1)));
      } else if (cell.find("SHARD") != std::string_view::npos || cell.find("REDUCE") != std::string_view::npos) {
        annotations.push_back({static_cast<int>(offsets.size()) - 1, ops.size() - offsets.back(), std::string(cell)});
      } else {
        ops.push_back(io::parse_action(cell));
      }
    }
    offsets.push_back(static_cast<std::uint32_t>(ops.size()));
  }
  io::csv_schedule out{schedule{shape, ops.size()}, annotations};
  std::copy(ops.begin(), ops.end(), out.ops().begin());
  std::copy(offsets.begin(), offsets.end(), out.offsets().begin());
  return out;
}

/// Interleaved 1F1B with PyTorch's rules (ScheduleInterleaved1F1B), V = 2.
schedule_spec torch_interleaved(int P, int m) {
  schedule_spec s{schedule_family::interleaved_1f1b, {P, m, 2, placement::loop}};
  s.variant = interleaved_variant::torch;
  return s;
}

/// One row of docs/runtimes.md's table of PyTorch's orders against ctpipe's: family, P,
/// m, simulate()'s bubble, then per stream model the bubbles of torch-asap, torch-warmup,
/// torch-consumer, torch-parity and ctpipe's least-loss order (io::lower_least_loss()),
/// in percent to one decimal ("hang" where the model deadlocks), at the article's costs
/// with t_c = 1/2.
std::string stream_table_row(ctpipe::schedule_family family, int P, int m) {
  using namespace ctpipe;
  costs c;
  c.c = rational{1, 2};
  const schedule g = generate({family, {P, m, family_of(family).default_V, natural_placement(family)}});
  const auto percent = [](rational x) { return fmt::format("{:.1f}", 100.0 * x.to_double()); };
  std::string row =
      fmt::format("| {} | {} | {} | {} |", family_name(family), P, m, percent(simulate(g.view(), c).bubble_fraction()));
  for (const runtime_model model : stream_models) {
    std::string cell;
    for (const io::torch_lowering which : {io::torch_lowering::asap, io::torch_lowering::warmup,
                                           io::torch_lowering::consumer, io::torch_lowering::parity}) {
      const execution run = execute(io::lower_torch(g.view(), which).view(), c, model);
      cell += (run.completed() ? percent(run.bubble_fraction()) : std::string("hang")) + " / ";
    }
    const execution own = execute(io::lower_least_loss(g.view(), c, model).lists.view(), c, model);
    row += " " + cell + percent(own.bubble_fraction()) + " |";
  }
  return row;
}

constexpr io::torch_passes no_passes{false, false, 3};
constexpr io::torch_passes reduce_grad_only{false, true, 3};

}  // namespace

TEST_CASE("torch lowerings of 1F1B P = 2 m = 2, each list written out", "[torch_lowering]") {
  const schedule_spec s{schedule_family::one_f_one_b, {2, 2}};
  // torch-asap by hand. Round 0: rank 0 runs 0F0 (0SEND_F0; 1RECV_F0 on rank 1), then
  // rank 1 runs 1F0, ready in the same round. Round 1: 0F1 (1RECV_F1 on rank 1); 1B0
  // (last stage: ready; 0RECV_B0 on rank 0). Round 2: 0B0; 1F1. Round 3: rank 0's 0B1
  // waits for 1B1; rank 1 runs 1B1 (0RECV_B1 on rank 0). Round 4: 0B1.
  const std::string asap =
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n";
  // Each RECV right before its consumer: only rank 1's 1RECV_F1 moves (to before 1F1).
  const std::string consumer =
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n";
  REQUIRE(lowered_csv(s, torch_lowering::asap, no_passes) == asap);
  REQUIRE(lowered_csv(s, torch_lowering::consumer, no_passes) == consumer);
  // Parity: rank 0 sends to rank 1 only before it holds a RECV; rank 1 (the higher) is
  // never made to receive first, so the result is the consumer order here.
  REQUIRE(lowered_csv(s, torch_lowering::parity, no_passes) == consumer);
  // Warm-up: rank 0's 0RECV_B0 goes before its first backward, where it is; rank 1's
  // 1RECV_F1 (its warm-up ends at 1B0) goes before 1B0, where it is: torch-asap.
  REQUIRE(lowered_csv(s, torch_lowering::warmup, no_passes) == asap);
  // The passes' actions take rounds: UNSHARD in round 0 delays everything one round,
  // REDUCE_GRAD and RESHARD close each list.
  REQUIRE(lowered_csv(s, torch_lowering::asap) ==
          "0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD,0RESHARD\n"
          "1UNSHARD,1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n");
  REQUIRE(lowered_csv(s, torch_lowering::parity, reduce_grad_only) ==
          "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
          "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1REDUCE_GRAD\n");
}

TEST_CASE("torch lowerings of interleaved 1F1B P = 2 m = 4 V = 2, each list written out", "[torch_lowering]") {
  const schedule_spec s = torch_interleaved(2, 4);
  // torch-asap: torch 2.13.0's _prepare_schedule_with_comms for ScheduleInterleaved1F1B
  // (pp_degree 2, m = 4), the lists before https://github.com/pytorch/pytorch/pull/172833.
  REQUIRE(lowered_csv(s, torch_lowering::asap) ==
          csv_of({"0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 2RECV_F0, 0F1, 0SEND_F1, 2RECV_F1, 2F0, 2SEND_F0, 2F1, 2SEND_F1, "
                  "2RECV_B0, 0F2, 0SEND_F2, 2B0, 2SEND_B0, 2RECV_B1, 0F3, 0SEND_F3, 2RECV_F2, 2B1, 2SEND_B1, "
                  "0RECV_B0, 2F2, 2SEND_F2, 2RECV_F3, 0B0, 0RECV_B1, 2F3, 2SEND_F3, 0B1, 2RECV_B2, 2B2, 2SEND_B2, "
                  "2RECV_B3, 2B3, 2SEND_B3, 2REDUCE_GRAD, 2RESHARD, 0RECV_B2, 0B2, 0RECV_B3, 0B3, 0REDUCE_GRAD, "
                  "0RESHARD",
                  "1UNSHARD, 3UNSHARD, 1RECV_F0, 1F0, 1SEND_F0, 1RECV_F1, 1F1, 1SEND_F1, 3RECV_F0, 3F0, 3RECV_F1, "
                  "3B0, 3SEND_B0, 1RECV_F2, 3F1, 1RECV_B0, 3B1, 3SEND_B1, 1RECV_F3, 1F2, 1SEND_F2, 1RECV_B1, 1B0, "
                  "1SEND_B0, 3RECV_F2, 1F3, 1SEND_F3, 1B1, 1SEND_B1, 3RECV_F3, 3F2, 3B2, 3SEND_B2, 1RECV_B2, 3F3, "
                  "3B3, 3SEND_B3, 1RECV_B3, 3REDUCE_GRAD, 3RESHARD, 1B2, 1SEND_B2, 1B3, 1SEND_B3, 1REDUCE_GRAD, "
                  "1RESHARD"}));
  // torch-consumer: the lists PR #172833 prints ("Now returns"), token for token:
  // https://github.com/pytorch/pytorch/pull/172833
  const std::string consumer_rank1 =
      "1UNSHARD, 3UNSHARD, 1RECV_F0, 1F0, 1SEND_F0, 1RECV_F1, 1F1, 1SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, 3RECV_F1, "
      "3F1, 3B1, 3SEND_B1, 1RECV_F2, 1F2, 1SEND_F2, 1RECV_B0, 1B0, 1SEND_B0, 1RECV_F3, 1F3, 1SEND_F3, 1RECV_B1, 1B1, "
      "1SEND_B1, 3RECV_F2, 3F2, 3B2, 3SEND_B2, 3RECV_F3, 3F3, 3B3, 3SEND_B3, 3REDUCE_GRAD, 3RESHARD, 1RECV_B2, 1B2, "
      "1SEND_B2, 1RECV_B3, 1B3, 1SEND_B3, 1REDUCE_GRAD, 1RESHARD";
  REQUIRE(lowered_csv(s, torch_lowering::consumer) ==
          csv_of({"0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 0F1, 0SEND_F1, 2RECV_F0, 2F0, 2SEND_F0, 2RECV_F1, 2F1, 2SEND_F1, "
                  "0F2, 0SEND_F2, 2RECV_B0, 2B0, 2SEND_B0, 0F3, 0SEND_F3, 2RECV_B1, 2B1, 2SEND_B1, 2RECV_F2, 2F2, "
                  "2SEND_F2, 0RECV_B0, 0B0, 2RECV_F3, 2F3, 2SEND_F3, 0RECV_B1, 0B1, 2RECV_B2, 2B2, 2SEND_B2, "
                  "2RECV_B3, 2B3, 2SEND_B3, 2REDUCE_GRAD, 2RESHARD, 0RECV_B2, 0B2, 0RECV_B3, 0B3, 0REDUCE_GRAD, "
                  "0RESHARD",
                  consumer_rank1}));
  // torch-parity: torch 2.13.0 with defer_pp_recv=True. Rank 0 (the lower rank) receives
  // 2RECV_F0 before 0SEND_F1; rank 1's list is the consumer order.
  REQUIRE(lowered_csv(s, torch_lowering::parity) ==
          csv_of({"0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 0F1, 2RECV_F0, 0SEND_F1, 2F0, 2RECV_F1, 2SEND_F0, 2F1, 2SEND_F1, "
                  "0F2, 2RECV_B0, 0SEND_F2, 2B0, 2SEND_B0, 0F3, 2RECV_B1, 0SEND_F3, 2B1, 2RECV_F2, 2SEND_B1, 2F2, "
                  "0RECV_B0, 2SEND_F2, 0B0, 2RECV_F3, 2F3, 0RECV_B1, 2SEND_F3, 0B1, 2RECV_B2, 2B2, 2SEND_B2, "
                  "2RECV_B3, 2B3, 2SEND_B3, 2REDUCE_GRAD, 2RESHARD, 0RECV_B2, 0B2, 0RECV_B3, 0B3, 0REDUCE_GRAD, "
                  "0RESHARD",
                  consumer_rank1}));
  // torch-warmup by hand: rank 0's warm-up ends at 2B0, its first backward; 2RECV_F0 and
  // 2RECV_F1 go before 2F0 and 2F1, 2RECV_B0 before 2B0; then torch-asap's list. Rank 1's
  // ends at 3B0: 1RECV_F0, 1RECV_F1 and 3RECV_F0 already precede their consumers, and
  // 3RECV_F1, consumed after the warm-up, stays before 3B0: torch-asap's list.
  const std::string asap_rank1 =
      lowered_csv(s, torch_lowering::asap).substr(lowered_csv(s, torch_lowering::asap).find('\n') + 1);
  REQUIRE(lowered_csv(s, torch_lowering::warmup) ==
          csv_of({"0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 0F1, 0SEND_F1, 2RECV_F0, 2F0, 2SEND_F0, 2RECV_F1, 2F1, 2SEND_F1, "
                  "0F2, 0SEND_F2, 2RECV_B0, 2B0, 2SEND_B0, 2RECV_B1, 0F3, 0SEND_F3, 2RECV_F2, 2B1, 2SEND_B1, "
                  "0RECV_B0, 2F2, 2SEND_F2, 2RECV_F3, 0B0, 0RECV_B1, 2F3, 2SEND_F3, 0B1, 2RECV_B2, 2B2, 2SEND_B2, "
                  "2RECV_B3, 2B3, 2SEND_B3, 2REDUCE_GRAD, 2RESHARD, 0RECV_B2, 0B2, 0RECV_B3, 0B3, 0REDUCE_GRAD, "
                  "0RESHARD"}) +
              asap_rank1);
}

TEST_CASE("torch-asap of interleaved 1F1B P = 2 m = 2 is the list issue 172668 prints", "[torch_lowering]") {
  // https://github.com/pytorch/pytorch/issues/172668: the description's get_schedule_ops()
  // output (its snippet says num_microbatches=4, the lists are those of m = 2).
  REQUIRE(lowered_csv(torch_interleaved(2, 2), torch_lowering::asap) ==
          csv_of({"0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 2RECV_F0, 0F1, 0SEND_F1, 2RECV_F1, 2F0, 2SEND_F0, 2F1, 2SEND_F1, "
                  "2RECV_B0, 2B0, 2SEND_B0, 2RECV_B1, 2B1, 2SEND_B1, 2REDUCE_GRAD, 2RESHARD, 0RECV_B0, 0B0, "
                  "0RECV_B1, 0B1, 0REDUCE_GRAD, 0RESHARD",
                  "1UNSHARD, 3UNSHARD, 1RECV_F0, 1F0, 1SEND_F0, 1RECV_F1, 1F1, 1SEND_F1, 3RECV_F0, 3F0, 3RECV_F1, "
                  "3B0, 3SEND_B0, 1RECV_B0, 3F1, 3B1, 3SEND_B1, 1RECV_B1, 3REDUCE_GRAD, 3RESHARD, 1B0, 1SEND_B0, "
                  "1B1, 1SEND_B1, 1REDUCE_GRAD, 1RESHARD"}));
}

TEST_CASE("rank 0 of interleaved 1F1B P = 8 V = 2 begins as PR 165664 prints it, before and after",
          "[torch_lowering]") {
  // https://github.com/pytorch/pytorch/pull/165664 prints rank 0's first actions
  // ("Before" and "Now", truncated); the print fits m = 8 and m = 16.
  const std::string before =
      csv_of({"0UNSHARD, 8UNSHARD, 0F0, 0SEND_F0, 8RECV_F0, 0F1, 0SEND_F1, 8RECV_F1, 0F2, 0SEND_F2, 8RECV_F2, 0F3, "
              "0SEND_F3, 8RECV_F3"});
  const std::string now = csv_of({"0UNSHARD, 8UNSHARD, 0F0, 0SEND_F0, 0F1, 0SEND_F1, 0F2, 0SEND_F2, 0F3, 0SEND_F3"});
  for (const int m : {8, 16}) {
    INFO("m = " << m);
    REQUIRE(
        lowered_csv(torch_interleaved(8, m), torch_lowering::asap).starts_with(before.substr(0, before.size() - 1)));
    REQUIRE(lowered_csv(torch_interleaved(8, m), torch_lowering::warmup).starts_with(now.substr(0, now.size() - 1)));
  }
}

TEST_CASE("defer_recv_ops on the four cases of PyTorch's test_defer_recv_ops", "[torch_lowering]") {
  // The parametrized test_defer_recv_ops of test/distributed/pipelining/test_schedule.py
  // (pytorch/pytorch, with _defer_recv_ops: https://github.com/pytorch/pytorch/pull/178815):
  // its inputs and expected outputs, token for token.
  const pipeline_shape one_each{2, 2, 1, placement::loop}, v_shape{2, 2, 2, placement::v_shape};
  const struct {
    const char* name;
    pipeline_shape shape;
    std::string in, out;
  } cases[] = {
      {"simple_2_rank_2_stage_no_overlap", one_each,
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 0RECV_B0, 0B0, 0RECV_B1, 0B1",
               "1RECV_F0, 1RECV_F1, 1F0, 1B0, 1SEND_B0, 1F1, 1B1, 1SEND_B1"}),
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 0RECV_B0, 0B0, 0RECV_B1, 0B1",
               "1RECV_F0, 1F0, 1B0, 1SEND_B0, 1RECV_F1, 1F1, 1B1, 1SEND_B1"})},
      {"v_2_rank_4_stage_no_overlap", v_shape,
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, 3RECV_F1, 3F1, 3B1, 3SEND_B1, 0RECV_B0, "
               "0B0, 3W0, 0RECV_B1, 0B1, 3W1, 0W0, 0W1",
               "1RECV_F0, 1RECV_F1, 1F0, 2F0, 2SEND_F0, 1F1, 2RECV_B0, 2F1, 2SEND_F1, 2B0, 2RECV_B1, 1B0, 1SEND_B0, "
               "2B1, 1B1, 1SEND_B1, 2W0, 2W1, 1W0, 1W1"}),
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, 3RECV_F1, 3F1, 3B1, 3SEND_B1, 0RECV_B0, "
               "0B0, 3W0, 0RECV_B1, 0B1, 3W1, 0W0, 0W1",
               "1RECV_F0, 1F0, 2F0, 2SEND_F0, 1RECV_F1, 1F1, 2F1, 2SEND_F1, 2RECV_B0, 2B0, 1B0, 1SEND_B0, 2RECV_B1, "
               "2B1, 1B1, 1SEND_B1, 2W0, 2W1, 1W0, 1W1"})},
      {"simple_2_rank_2_stage_iw_split", one_each,
       csv_of({"0RECV_B0, 0F0, 0SEND_F0, 0F1, 0SEND_F1, 0I0, 0W0, 0RECV_B1, 0I1, 0W1",
               "1RECV_F0, 1RECV_F1, 1F0, 1I0, 1SEND_B0, 1W0, 1F1, 1I1, 1SEND_B1, 1W1"}),
       csv_of({"0F0, 0RECV_B0, 0SEND_F0, 0F1, 0SEND_F1, 0I0, 0W0, 0RECV_B1, 0I1, 0W1",
               "1RECV_F0, 1F0, 1I0, 1SEND_B0, 1W0, 1RECV_F1, 1F1, 1I1, 1SEND_B1, 1W1"})},
      {"v_2_rank_4_stage_overlap_f_b", v_shape,
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, 3RECV_F1, 3F1, 3B1, 3SEND_B1, 0RECV_B0, "
               "0B0, 3W0, 0RECV_B1, 0B1, 3W1, 0W0, 0W1",
               "1RECV_F0, 1RECV_F1, 2RECV_B0, 1F0, 2F0, 2SEND_F0, (1F1;2B0)OVERLAP_F_B, 2W0, 1B0, 1SEND_B0, 1W0"}),
       csv_of({"0F0, 0SEND_F0, 0F1, 0SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, 3RECV_F1, 3F1, 3B1, 3SEND_B1, 0RECV_B0, "
               "0B0, 3W0, 0RECV_B1, 0B1, 3W1, 0W0, 0W1",
               "1RECV_F0, 1F0, 2F0, 2SEND_F0, 1RECV_F1, 2RECV_B0, (1F1;2B0)OVERLAP_F_B, 2W0, 1B0, 1SEND_B0, 1W0"})},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    REQUIRE(io::to_csv(io::defer_recv_ops(lists_of(c.shape, c.in))) == c.out);
  }
}

TEST_CASE("defer_recv_ops keeps the annotations in place and refuses a RECV nothing consumes", "[torch_lowering]") {
  // Rank 0 (the lower) receives from rank 1 before it sends to it; rank 1's RECV moves
  // past its UNSHARD to its consumer; the annotations keep their places among the rest.
  const io::csv_schedule in = io::parse_csv(
      "0UNSHARD,0F0,0RECV_B0,0F1,0SEND_F0,0B0,0RECV_B1,0SEND_F1,0B1,0REDUCE_GRAD,0RESHARD\n"
      "1RECV_F0,1RECV_F1,1UNSHARD,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n");
  REQUIRE(io::to_csv(io::defer_recv_ops(in)) ==
          "0UNSHARD,0F0,0F1,0RECV_B0,0SEND_F0,0B0,0RECV_B1,0SEND_F1,0B1,0REDUCE_GRAD,0RESHARD\n"
          "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n");
  // A second RECV of one key is dropped (PyTorch's dict holds one).
  REQUIRE(io::to_csv(io::defer_recv_ops(io::parse_csv("0F0,0SEND_F0,0B0\n1RECV_F0,1RECV_F0,1F0,1B0\n"))) ==
          "0F0,0SEND_F0,0B0\n1RECV_F0,1F0,1B0\n");
  REQUIRE_THROWS_WITH(io::defer_recv_ops(io::parse_csv("0F0,0SEND_F0,0B0\n1F0,1B0,1RECV_F0\n")),
                      "ctpipe: defer_recv_ops(): rank 1: RECV 1RECV_F0 has no consumer after it (PyTorch raises "
                      "\"leftover RECV ops with no consumer found\")");
}

TEST_CASE("torch lowerings: every family, the compute order kept, one SEND and one RECV per message",
          "[torch_lowering]") {
  int checked = 0;
  for (const schedule_family family : all_families) {
    if (family == schedule_family::dualpipe) continue;  // refused below
    for (int P = 1; P <= 4; ++P) {
      for (const int m : {2 * P, 2 * P + 3}) {
        const schedule_spec s{family, {P, m, family_of(family).default_V, natural_placement(family)}};
        if (spec_error(s) != nullptr) continue;
        INFO(family_name(family) << " P = " << P << ", m = " << m);
        const schedule g = generate(s);
        const rational simulated = simulate(g.view(), costs{}).makespan();
        for (const torch_lowering which : io::all_torch_lowerings) {
          INFO(io::torch_lowering_name(which));
          const io::csv_schedule l = io::lower_torch(g.view(), which);
          REQUIRE(l.size() == g.size() + 2 * messages(g.view()));
          const schedule compute = compute_part(l.view());
          REQUIRE(std::equal(compute.view().ops.begin(), compute.view().ops.end(), g.view().ops.begin(),
                             g.view().ops.end()));
          REQUIRE(validate_lowered_ops(l.view(), [](const validation_issue&) {}) == 0);
          REQUIRE(l.annotations.size() == io::torch_annotations(g.view()).size());
          // Every RECV precedes its consumer and every SEND follows its producer: under
          // `posted` nothing waits longer than simulate() lets it.
          const execution posted = execute(l.view(), costs{}, runtime_model::posted);
          REQUIRE(posted.completed());
          REQUIRE(posted.makespan() == simulated);
          ++checked;
        }
      }
    }
  }
  REQUIRE(checked > 150);
}

TEST_CASE("torch-asap never deadlocks, torch-consumer loses nothing under blocking", "[torch_lowering]") {
  // torch-asap appends each RECV in the same step as its SEND and an action only once its
  // RECV is there: taken in that global order, every transfer finds both its ops at the
  // heads of their lists (and streams), so no model can hang it. torch-consumer puts each
  // RECV right before its consumer and each SEND right after its producer: ctpipe's
  // adjacent order, exact under blocking.
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  for (const schedule_family family : all_families) {
    if (family == schedule_family::dualpipe) continue;
    for (int P = 2; P <= 4; ++P) {
      const schedule_spec s{family, {P, 2 * P + 1, family_of(family).default_V, natural_placement(family)}};
      if (spec_error(s) != nullptr) continue;
      INFO(family_name(family) << " P = " << P);
      const schedule g = generate(s);
      const io::csv_schedule asap = io::lower_torch(g.view(), torch_lowering::asap);
      for (const runtime_model model : all_runtime_models) {
        INFO(runtime_model_name(model));
        REQUIRE(execute(asap.view(), latency, model).completed());
      }
      const execution consumer =
          execute(io::lower_torch(g.view(), torch_lowering::consumer).view(), latency, runtime_model::blocking);
      REQUIRE(consumer.makespan() == simulate(g.view(), latency).makespan());
    }
  }
}

TEST_CASE("torch lowerings: no message between neighbouring stages on one rank", "[torch_lowering]") {
  // ZB-V P = 2: stages 1 and 2 on rank 1 (the V's turn), as PyTorch's _has_comms.
  const schedule g = generate({schedule_family::zbv, {2, 4, 2, placement::v_shape}});
  for (const torch_lowering which : io::all_torch_lowerings) {
    const std::string text = io::to_csv(io::lower_torch(g.view(), which, no_passes));
    for (const char* absent : {"1SEND_F", "2RECV_F", "2SEND_B", "1RECV_B", "0RECV_F", "3SEND_F", "0SEND_B"}) {
      REQUIRE(text.find(absent) == std::string::npos);
    }
    REQUIRE(text.find("0SEND_F0") != std::string::npos);
    REQUIRE(text.find("3RECV_F0") != std::string::npos);
  }
  // P = 1: no transfer at all; the annotations still come.
  const schedule one = generate({schedule_family::one_f_one_b, {1, 3}});
  REQUIRE(io::to_csv(io::lower_torch(one.view(), torch_lowering::parity)) ==
          "0UNSHARD,0F0,0B0,0F1,0B1,0F2,0B2,0REDUCE_GRAD,0RESHARD\n");
}

TEST_CASE("lower_torch refuses lowered, invalid and two-copy schedules, and names its lowerings", "[torch_lowering]") {
  const schedule g = generate({schedule_family::one_f_one_b, {2, 4}});
  REQUIRE_THROWS_WITH(io::lower_torch(lower(g.view()).view(), torch_lowering::asap),
                      "ctpipe: lower_torch() takes a compute-only schedule; this one has SEND, RECV or copy ops (it is "
                      "lowered already)");
  schedule swapped = split_pairs(g.view());       // a copy (no pairs to split)
  std::swap(swapped.ops()[0], swapped.ops()[2]);  // rank 0: 0B0 before 0F0
  REQUIRE_THROWS_WITH(io::lower_torch(swapped.view(), torch_lowering::consumer),
                      "ctpipe: lower_torch() takes a valid compute schedule (validate() names the problems)");
  const schedule dual = generate({schedule_family::dualpipe, {2, 4, 2, placement::bidirectional}});
  REQUIRE_THROWS_WITH(io::lower_torch(dual.view(), torch_lowering::asap),
                      "ctpipe: lower_torch(): dualpipe's two model copies (the bidirectional placement) do not run in "
                      "PyTorch's one-copy runtime (docs/pytorch.md)");
  REQUIRE_THROWS_WITH(io::lower_torch(g.view(), static_cast<torch_lowering>(7)), "ctpipe: unknown torch lowering");
  REQUIRE_THROWS_WITH(io::lower_torch(g.view(), torch_lowering::asap, {true, true, 0}),
                      "ctpipe: --max-active-stages must be >= 1");
  for (const torch_lowering which : io::all_torch_lowerings) {
    torch_lowering back = torch_lowering::asap;
    REQUIRE(io::torch_lowering_from_name(io::torch_lowering_name(which), back));
    REQUIRE(back == which);
  }
  torch_lowering unchanged = torch_lowering::warmup;
  REQUIRE_FALSE(io::torch_lowering_from_name("asap", unchanged));
  REQUIRE(unchanged == torch_lowering::warmup);
  REQUIRE(std::string_view(io::torch_lowering_name(static_cast<torch_lowering>(9))) == "?");
}

TEST_CASE("what the runtime models predict for the orders of the threads", "[torch_lowering][streams]") {
  const costs article{};
  // Issue 172668 (https://github.com/pytorch/pytorch/issues/172668): with PR 172833's order
  // two nodes deadlocked, rank 0 stuck at "0SendF1, 2RecvF0, 2F0" and rank 1 at "1SendF0,
  // 1RecvF1, 1F1". On one stream per rank whose transfers wait for their partner, rank 0's
  // 0SEND_F1 waits for 1RECV_F1, queued behind 1SEND_F0, which waits for 2RECV_F0, queued
  // behind 0SEND_F1: the same ranks stop at the same ops.
  const schedule g = generate(torch_interleaved(2, 4));
  const io::csv_schedule consumer = io::lower_torch(g.view(), torch_lowering::consumer, no_passes);
  const execution stream = execute(consumer.view(), article, runtime_model::stream_rank);
  REQUIRE_FALSE(stream.completed());
  REQUIRE(stream.stuck().size() == 2);
  REQUIRE((stream.stuck()[0].rank == 0 && io::action(stream.stuck()[0].at) == "2F0"));
  REQUIRE((stream.stuck()[1].rank == 1 && io::action(stream.stuck()[1].at) == "1F1"));
  const execution rendezvous = execute(consumer.view(), article, runtime_model::rendezvous);
  REQUIRE(io::action(rendezvous.stuck()[0].at) == "0SEND_F1");
  REQUIRE(io::action(rendezvous.stuck()[1].at) == "1SEND_F0");
  // The rank-parity deferral (PR 178815) reorders only RECVs that torch-asap placed
  // before a SEND: rank 0's 2RECV_B0 comes after its 2SEND_F1 in torch-asap already, and
  // rank 1 (the higher) is let send 3SEND_B0 before 3RECV_F1, so a stream whose sends
  // wait for their receives still hangs; per directed edge, or with sends that return at
  // once (blocking), it runs as simulated.
  const io::csv_schedule parity = io::lower_torch(g.view(), torch_lowering::parity, no_passes);
  const execution parity_stream = execute(parity.view(), article, runtime_model::stream_rank);
  REQUIRE_FALSE(parity_stream.completed());
  REQUIRE(io::action(parity_stream.stuck()[0].at) == "2B0");
  REQUIRE(io::action(parity_stream.stuck()[1].at) == "3F1");
  for (const runtime_model model : {runtime_model::blocking, runtime_model::posted, runtime_model::stream_edge}) {
    REQUIRE(execute(parity.view(), article, model).makespan() == simulate(g.view(), article).makespan());
  }
}

TEST_CASE("torch-asap's warm-up stall under one stream per rank, interleaved 1F1B P = 8 V = 2",
          "[torch_lowering][streams]") {
  // PR 165664 (https://github.com/pytorch/pytorch/pull/165664) and issue 188833
  // (https://github.com/pytorch/pytorch/issues/188833): rank 0 posts 8RECV_F0 right after
  // 0SEND_F0, and on one stream 0SEND_F1 waits behind it until rank 7 sends 7F0, a whole
  // pass of the pipeline later; rank 1 stalls at every warm-up RECV. Per directed edge
  // (#195760's communicators) the RECV no longer holds the sends to rank 1.
  const costs article{};
  const schedule g = generate(torch_interleaved(8, 8));
  const rational simulated = simulate(g.view(), article).makespan();
  REQUIRE(simulated == rational{69, 2});
  const io::csv_schedule asap = io::lower_torch(g.view(), torch_lowering::asap);
  const execution stream = execute(asap.view(), article, runtime_model::stream_rank);
  REQUIRE(stream.makespan() == rational{62});
  REQUIRE(stream.stall(1) == rational{25});
  REQUIRE(stream.stall_intervals()[0].rank == 1);
  REQUIRE(io::action(asap.view().ops[stream.stall_intervals()[0].op_index]) == "1RECV_F1");
  REQUIRE(execute(asap.view(), article, runtime_model::stream_edge).makespan() == simulated);
  // Run by a rank that blocks at each RECV, torch-asap holds rank 0 at every 8RECV_F of
  // the warm-up (69 against 69/2); the warm-up order lets it send its forwards first.
  const execution blocking = execute(asap.view(), article, runtime_model::blocking);
  REQUIRE(blocking.makespan() == rational{69});
  REQUIRE(blocking.stall(0) == rational{28});
  const execution warmup =
      execute(io::lower_torch(g.view(), torch_lowering::warmup).view(), article, runtime_model::blocking);
  REQUIRE(warmup.makespan() == rational{81, 2});
  REQUIRE(warmup.stall(0) == rational{0});
}

TEST_CASE("the table of docs/pytorch.md: each torch lowering under each model, P = 4 m = 8",
          "[torch_lowering][streams]") {
  // Makespan minus simulate() at the article's costs (t_c = 0), "hang" where the model
  // deadlocks; models in all_runtime_models' order.
  schedule_spec interleaved = torch_interleaved(4, 8);
  const struct {
    schedule_spec spec;
    torch_lowering which;
    const char* cells[8];
  } rows[] = {
      {{schedule_family::one_f_one_b, {4, 8}}, torch_lowering::asap, {"12", "12", "0", "12", "0", "0", "0", "0"}},
      {{schedule_family::one_f_one_b, {4, 8}}, torch_lowering::warmup, {"12", "12", "0", "12", "0", "0", "0", "0"}},
      {{schedule_family::one_f_one_b, {4, 8}},
       torch_lowering::consumer,
       {"0", "hang", "0", "0", "hang", "hang", "0", "0"}},
      {{schedule_family::one_f_one_b, {4, 8}},
       torch_lowering::parity,
       {"0", "hang", "0", "0", "hang", "hang", "0", "0"}},
      {interleaved, torch_lowering::asap, {"19", "19", "0", "19", "13/2", "0", "6", "0"}},
      {interleaved, torch_lowering::warmup, {"25/2", "hang", "0", "25/2", "hang", "hang", "hang", "0"}},
      {interleaved, torch_lowering::consumer, {"0", "hang", "0", "hang", "hang", "hang", "hang", "0"}},
      {interleaved, torch_lowering::parity, {"0", "hang", "0", "hang", "hang", "hang", "hang", "0"}},
      {{schedule_family::zb_h1, {4, 8}}, torch_lowering::asap, {"7", "7", "0", "7", "0", "0", "0", "0"}},
      {{schedule_family::zb_h1, {4, 8}}, torch_lowering::warmup, {"7", "7", "0", "7", "0", "0", "0", "0"}},
      {{schedule_family::zb_h1, {4, 8}}, torch_lowering::consumer, {"0", "hang", "0", "6", "hang", "hang", "0", "0"}},
      {{schedule_family::zb_h1, {4, 8}}, torch_lowering::parity, {"0", "hang", "0", "6", "hang", "hang", "0", "0"}},
      {{schedule_family::zbv, {4, 8, 2, placement::v_shape}},
       torch_lowering::asap,
       {"9", "9", "0", "9", "2", "0", "3/2", "0"}},
      {{schedule_family::zbv, {4, 8, 2, placement::v_shape}},
       torch_lowering::warmup,
       {"15/2", "hang", "0", "29/2", "hang", "hang", "hang", "0"}},
      {{schedule_family::zbv, {4, 8, 2, placement::v_shape}},
       torch_lowering::consumer,
       {"0", "hang", "0", "hang", "hang", "hang", "hang", "hang"}},
      {{schedule_family::zbv, {4, 8, 2, placement::v_shape}},
       torch_lowering::parity,
       {"0", "hang", "0", "hang", "hang", "hang", "hang", "hang"}},
  };
  for (const auto& row : rows) {
    INFO(family_name(row.spec.family) << " " << io::torch_lowering_name(row.which));
    const schedule g = generate(row.spec);
    const io::csv_schedule l = io::lower_torch(g.view(), row.which);
    const rational simulated = simulate(g.view(), costs{}).makespan();
    for (int k = 0; k < runtime_model_count; ++k) {
      INFO(runtime_model_name(all_runtime_models[k]));
      const execution run = execute(l.view(), costs{}, all_runtime_models[k]);
      REQUIRE((run.completed() ? io::to_string(run.makespan() - simulated) : std::string("hang")) == row.cells[k]);
    }
  }
}

TEST_CASE("the table of docs/runtimes.md: PyTorch's orders against ctpipe's under each stream model, every row",
          "[torch_lowering][streams][docs]") {
  std::ifstream in(std::string(CTPIPE_SOURCE_DIR) + "/docs/runtimes.md");
  REQUIRE(in.good());
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    const std::size_t start = line.find("| ");
    if (start == std::string::npos || line.find(" / ") == std::string::npos) continue;
    line.erase(0, start);
    const std::size_t bar = line.find(" | ", 2);
    schedule_family family{};
    if (!family_from_name(line.substr(2, bar - 2), family)) continue;
    const int P = std::stoi(line.substr(bar + 3));
    INFO(line);
    REQUIRE(line == stream_table_row(family, P, 2 * P));
    ++rows;
  }
  REQUIRE(rows == 2 * (static_cast<int>(std::size(all_families)) - 1));  // P = 4 and 8, all but dualpipe
}

TEST_CASE(
    "lower_least_loss: the fastest of the stream order, the deadline order and torch-asap moved to its "
    "streams' turns",
    "[torch_lowering][streams]") {
  costs c;
  c.c = rational{1, 2};
  int deadline_kept = 0, asap_kept = 0, no_loss = 0, at_bound = 0;
  for (const schedule_family family : all_families) {
    for (const int P : {2, 4, 8}) {
      const schedule g = generate({family, {P, 2 * P, family_of(family).default_V, natural_placement(family)}});
      const rational simulated = simulate(g.view(), c).makespan();
      for (const runtime_model model : stream_models) {
        INFO(family_name(family) << " P=" << P << " " << runtime_model_name(model));
        const io::least_loss_lowering best = io::lower_least_loss(g.view(), c, model);
        const execution run = execute(best.lists.view(), c, model);
        REQUIRE(run.completed());
        REQUIRE(run.makespan() - simulated == best.loss);
        REQUIRE(best.loss >= best.bound);
        REQUIRE(best.bound == stream_loss_bound(g.view(), c, model));
        REQUIRE(stream_order_consistent(best.lists.view(), model));
        REQUIRE(compute_part(best.lists.view()).view().size() == g.size());
        REQUIRE(best.loss <= execute(lower(g.view(), c, model).view(), c, model).makespan() - simulated);
        const schedule due = lower_by_deadline(g.view(), c, model);
        if (due.view().size() != 0 && execute(due.view(), c, model).completed())
          REQUIRE(best.loss <= execute(due.view(), c, model).makespan() - simulated);
        if (family != schedule_family::dualpipe) {
          for (const torch_lowering which : io::all_torch_lowerings) {
            const execution theirs = execute(io::lower_torch(g.view(), which).view(), c, model);
            if (theirs.completed()) REQUIRE(best.loss <= theirs.makespan() - simulated);
          }
        }
        no_loss += best.loss == rational{0} ? 1 : 0;
        at_bound += best.loss == best.bound ? 1 : 0;
        deadline_kept += std::string_view(best.order) == "deadline" ? 1 : 0;
        asap_kept += std::string_view(best.order) == "torch-asap+stream-turn" ? 1 : 0;
      }
    }
  }
  REQUIRE(deadline_kept == 26);  // the three orders each win somewhere (156 cases, 127 the stream order's)
  REQUIRE(asap_kept == 3);
  REQUIRE(no_loss == 88);  // docs/runtimes.md: 88 of the 156 lose nothing, 92 meet the bound
  REQUIRE(at_bound == 92);
  const schedule g = generate({schedule_family::interleaved_zb, {8, 16, 2}});
  const io::least_loss_lowering best = io::lower_least_loss(g.view(), c, runtime_model::stream_peer);
  REQUIRE(std::string_view(best.order) == "torch-asap+stream-turn");
  REQUIRE(best.loss == rational{3, 2});
  REQUIRE_THROWS_WITH(io::lower_least_loss(g.view(), c, runtime_model::posted),
                      "ctpipe: lower_least_loss() takes a stream model");
}

TEST_CASE("lower_by_deadline: every family completes under every stream model, no loss without latency",
          "[torch_lowering][streams]") {
  int checked = 0;
  for (const rational latency : {rational{0}, rational{1, 2}}) {
    costs c;
    c.c = latency;
    for (const schedule_family family : all_families) {
      for (int P = 1; P <= 4; ++P) {
        for (int m = 1; m <= 2 * P + 1; ++m) {
          const schedule_spec spec{family, {P, m, family_of(family).default_V, natural_placement(family)}};
          if (spec_error(spec) != nullptr) continue;
          const schedule g = generate(spec);
          for (const runtime_model model : stream_models) {
            INFO(family_name(family) << " P=" << P << " m=" << m << " " << runtime_model_name(model));
            const schedule due = lower_by_deadline(g.view(), c, model);
            REQUIRE(due.view().size() == g.size() + 2 * messages(g.view()));
            REQUIRE(validate_lowered_ops(due.view(), [](const validation_issue&) {}) == 0);
            REQUIRE(stream_order_consistent(due.view(), model));
            const execution run = execute(due.view(), c, model);
            REQUIRE(run.completed());
            if (latency == rational{0}) REQUIRE(run.makespan() == simulate(g.view(), c).makespan());
            ++checked;
          }
        }
      }
    }
  }
  REQUIRE(checked > 500);
  costs c;
  REQUIRE_THROWS_WITH(lower_by_deadline(generate({schedule_family::gpipe, {2, 2}}).view(), c, runtime_model::posted),
                      "ctpipe: lower_by_deadline() takes a stream model");
}
