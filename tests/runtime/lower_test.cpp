// Lowering (send/recv ops), its validator under rendezvous and buffered sends, batches
// and peer order, at run time: the whole grid of issue 3 and the negative cases.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>
#include <ctpipe/lower/lower.hpp>
#include <ctpipe/lower/validate.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "faulty.hpp"
#include "proofs_lower.hpp"

using namespace ctpipe;
using ctpipe::tests::from_lists;

namespace Catch {
template <>
struct StringMaker<validation_issue> {
  static std::string convert(const validation_issue& i) {
    return "{" + std::string(fault_description(i.what)) + ", rank " + std::to_string(i.rank) + ", step " +
           std::to_string(i.step) + ", " + io::action(i.at) + " needs " + io::action(i.needs) + "}";
  }
};
}  // namespace Catch

namespace {

constexpr send_semantics both[] = {send_semantics::rendezvous, send_semantics::buffered};

std::vector<validation_issue> issues_of(schedule_view v, send_semantics sem) {
  std::vector<validation_issue> out;
  validate_lowered(v, sem, [&](const validation_issue& i) { out.push_back(i); });
  return out;
}

/// A copy of `v` with positions a and b of rank r's list exchanged.
schedule swapped(schedule_view v, int r, std::size_t a, std::size_t b) {
  schedule s{v.shape, v.size()};
  std::copy(v.ops.begin(), v.ops.end(), s.ops().begin());
  std::copy(v.offsets.begin(), v.offsets.end(), s.offsets().begin());
  std::swap(s.ops()[v.offsets[static_cast<std::size_t>(r)] + a], s.ops()[v.offsets[static_cast<std::size_t>(r)] + b]);
  return s;
}

/// Position of op `o` in rank r's list.
std::size_t position_of(schedule_view v, int r, op o) {
  const auto list = v.rank(r);
  const auto it = std::find(list.begin(), list.end(), o);
  REQUIRE(it != list.end());
  return static_cast<std::size_t>(it - list.begin());
}

}  // namespace

TEST_CASE("lowering: every family over P <= 6, m <= 12, V <= 3 runs under its runtime model", "[lower][proofs]") {
  // Buffered sends for every order, rendezvous sends for the rendezvous order.
  using ctpipe::tests::prove_lowering_grid;
  for (const runtime_model model : {runtime_model::blocking, runtime_model::rendezvous}) {
    for (schedule_family family : all_families) {
      INFO(family_name(family) << " " << runtime_model_name(model));
      REQUIRE(prove_lowering_grid(family, interleaved_variant::megatron, 1, 6, 1, 12, 3, costs{}, model));
    }
    for (interleaved_variant variant : {interleaved_variant::megatron_legacy, interleaved_variant::torch}) {
      INFO(variant_name(variant) << " " << runtime_model_name(model));
      REQUIRE(prove_lowering_grid(schedule_family::interleaved_1f1b, variant, 1, 6, 1, 12, 3, costs{}, model));
    }
  }
}

TEST_CASE("lowering: P = 2, V = 2, m = 4 interleaved has 24 messages, 12 sent by each rank", "[lower]") {
  const schedule_spec spec{schedule_family::interleaved_1f1b, {2, 4, 2}};
  const schedule compute = generate(spec);
  const schedule lowered = lower(compute.view());
  REQUIRE(messages(compute.view()) == 24);
  std::vector<op> sends, receives;
  for (int r = 0; r < 2; ++r) {
    int sent = 0;
    for (const op o : lowered.rank(r)) {
      if (!is_transfer(o.kind())) continue;
      // Both neighbours of a rank are the other rank: the peer alone cannot tell the
      // messages apart, the key can.
      REQUIRE(peer_rank(spec.shape, o) == 1 - r);
      (is_send(o.kind()) ? sends : receives).push_back(o);
      sent += is_send(o.kind()) ? 1 : 0;
    }
    REQUIRE(sent == 12);
  }
  REQUIRE(sends.size() == 24);
  REQUIRE(receives.size() == 24);
  // Each RECV matches exactly one SEND, of its own direction: no message is matched
  // across directions.
  for (const op recv : receives) {
    const op send = matching_transfer(recv);
    REQUIRE(std::count(sends.begin(), sends.end(), send) == 1);
    REQUIRE(message_of(send) == message_of(recv));
    REQUIRE((send.kind() == op_kind::send_f) == (recv.kind() == op_kind::recv_f));
  }
  REQUIRE(validate_lowered(lowered.view(), send_semantics::buffered).ok());
  REQUIRE(validate_lowered(lower(compute.view(), costs{}, runtime_model::rendezvous).view(), send_semantics::rendezvous)
              .ok());
  // The frozen form is the same schedule.
  constexpr auto& frozen = lowered_v<schedule_spec{schedule_family::interleaved_1f1b, {2, 4, 2}}>;
  REQUIRE(std::equal(frozen.view().ops.begin(), frozen.view().ops.end(), lowered.view().ops.begin(),
                     lowered.view().ops.end()));
}

TEST_CASE("lowering: message keys, tags and partners", "[lower]") {
  const pipeline_shape shape{2, 4, 2};
  const op send_f{op_kind::send_f, 1, 3};
  REQUIRE(matching_transfer(send_f) == op{op_kind::recv_f, 2, 3});
  REQUIRE(matching_transfer(matching_transfer(send_f)) == send_f);
  REQUIRE(message_of(send_f) == message_key{1, 3, true});
  const op send_b{op_kind::send_b, 2, 3};
  REQUIRE(matching_transfer(send_b) == op{op_kind::recv_b, 1, 3});
  REQUIRE(message_of(send_b) == message_key{1, 3, false});
  // Same edge and micro-batch, other direction: another tag.
  REQUIRE(message_tag(shape, send_f) != message_tag(shape, send_b));
  REQUIRE(message_tag(shape, send_f) == message_tag(shape, matching_transfer(send_f)));
  REQUIRE(peer_rank(shape, send_f) == 0);
  REQUIRE(peer_rank(shape, send_b) == 1);
  // The V-shape turn: stages 3 and 4 of ZB-V with P = 4 are both on rank 3.
  const schedule zbv = lower(generate({schedule_family::zbv, {4, 8, 2, placement::v_shape}}).view());
  for (const op o : zbv.view().ops) {
    if (is_transfer(o.kind())) REQUIRE(message_of(o).edge != 3);
  }
  // P = 1 has no message at all.
  const schedule one = lower(generate({schedule_family::one_f_one_b, {1, 5}}).view());
  REQUIRE(one.size() == 10);
}

TEST_CASE("lowering: batches are the runs of transfers, consistent across ranks", "[lower]") {
  // The key order (rendezvous, batched) keeps each rank pair's messages in one order on
  // both ranks.
  const schedule lowered =
      lower(generate({schedule_family::one_f_one_b, {4, 8}}).view(), costs{}, runtime_model::batched);
  for (int r = 0; r < 4; ++r) {
    const auto list = lowered.rank(r);
    std::size_t in_batches = 0, last_end = 0;
    for_each_batch(list, [&](std::size_t first, std::size_t last) {
      REQUIRE(first < last);
      REQUIRE((first == 0 || !is_transfer(list[first - 1].kind())));
      REQUIRE((last == list.size() || !is_transfer(list[last].kind())));
      REQUIRE(first >= last_end);
      last_end = last;
      in_batches += last - first;
    });
    std::size_t transfers = 0;
    for (const op o : list) transfers += is_transfer(o.kind()) ? 1 : 0;
    REQUIRE(in_batches == transfers);
  }
  REQUIRE(peer_order_consistent(lowered.view()));
  // Exchanging two messages of one rank pair on one side breaks the order.
  const std::size_t a = position_of(lowered.view(), 1, op{op_kind::recv_f, 1, 0});
  const std::size_t b = position_of(lowered.view(), 1, op{op_kind::recv_f, 1, 1});
  REQUIRE_FALSE(peer_order_consistent(swapped(lowered.view(), 1, a, b).view()));
}

TEST_CASE("lowered validator: rendezvous deadlock where both ranks send", "[lower][validate]") {
  // P = 2, m = 2: after F1 rank 0 sends its activation while rank 1, having finished
  // B0, sends its gradient; neither has posted the receive the other needs.
  const schedule s = from_lists(
      {2, 2}, {{op{op_kind::F, 0, 0}, op{op_kind::send_f, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::send_f, 0, 1},
                op{op_kind::recv_b, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::recv_b, 0, 1}, op{op_kind::B, 0, 1}},
               {op{op_kind::recv_f, 1, 0}, op{op_kind::F, 1, 0}, op{op_kind::B, 1, 0}, op{op_kind::send_b, 1, 0},
                op{op_kind::recv_f, 1, 1}, op{op_kind::F, 1, 1}, op{op_kind::B, 1, 1}, op{op_kind::send_b, 1, 1}}});
  const auto issues = issues_of(s.view(), send_semantics::rendezvous);
  REQUIRE(issues.size() == 2);
  REQUIRE(issues[0] == validation_issue{fault::deadlock, 0, 3, op{op_kind::send_f, 0, 1}, op{op_kind::recv_f, 1, 1}});
  REQUIRE(issues[1] == validation_issue{fault::deadlock, 1, 3, op{op_kind::send_b, 1, 0}, op{op_kind::recv_b, 0, 0}});
  // Buffered sends do not wait: the same lists run.
  REQUIRE(validate_lowered(s.view(), send_semantics::buffered).ok());
}

TEST_CASE("lowered validator: a deadlock late in the schedule, not at the start", "[lower][validate]") {
  // 1F1B, P = 2, m = 8 lowered for rendezvous sends; rank 1 posts its last receive (of 0F7's activation) only
  // after sending the gradient of micro-batch 6, while rank 0 sends that activation
  // before receiving the gradient.
  const schedule lowered =
      lower(generate({schedule_family::one_f_one_b, {2, 8}}).view(), costs{}, runtime_model::rendezvous);
  const std::size_t recv = position_of(lowered.view(), 1, op{op_kind::recv_f, 1, 7});
  const std::size_t send = position_of(lowered.view(), 1, op{op_kind::send_b, 1, 6});
  REQUIRE(send == recv + 1);
  const schedule late = swapped(lowered.view(), 1, recv, send);
  const auto issues = issues_of(late.view(), send_semantics::rendezvous);
  REQUIRE(issues.size() == 2);
  const std::size_t rank0_step = position_of(lowered.view(), 0, op{op_kind::send_f, 0, 7});
  REQUIRE(rank0_step > 20);
  REQUIRE(issues[0] == validation_issue{fault::deadlock, 0, static_cast<int>(rank0_step), op{op_kind::send_f, 0, 7},
                                        op{op_kind::recv_f, 1, 7}});
  REQUIRE(issues[1] == validation_issue{fault::deadlock, 1, static_cast<int>(recv), op{op_kind::send_b, 1, 6},
                                        op{op_kind::recv_b, 0, 6}});
  REQUIRE(validate_lowered(late.view(), send_semantics::buffered).ok());
}

TEST_CASE("lowered validator: a send placed before its compute", "[lower][validate]") {
  for (const send_semantics sem : both) {
    // Lists made for the semantics: the key order for rendezvous sends, the adjacent
    // order (each SEND right after its producer) for buffered ones.
    const runtime_model model = sem == send_semantics::rendezvous ? runtime_model::rendezvous : runtime_model::blocking;
    const schedule lowered = lower(generate({schedule_family::one_f_one_b, {4, 8}}).view(), costs{}, model);
    const std::size_t f = position_of(lowered.view(), 2, op{op_kind::F, 2, 5});
    REQUIRE(lowered.rank(2)[f + 1] == op{op_kind::send_f, 2, 5});
    const schedule early = swapped(lowered.view(), 2, f, f + 1);
    const auto issues = issues_of(early.view(), sem);
    REQUIRE_FALSE(issues.empty());
    // The rank halts there; the ranks waiting on it are reported stuck after it.
    const auto it = std::find_if(issues.begin(), issues.end(), [](const validation_issue& i) { return i.rank == 2; });
    REQUIRE(it != issues.end());
    REQUIRE(*it == validation_issue{fault::send_before_compute, 2, static_cast<int>(f), op{op_kind::send_f, 2, 5},
                                    op{op_kind::F, 2, 5}});
  }
  // A split backward names I as the producer of a gradient.
  const schedule zb = lower(generate({schedule_family::zb_h1, {2, 2}}).view());
  const std::size_t i = position_of(zb.view(), 1, op{op_kind::I, 1, 0});
  const std::size_t send = position_of(zb.view(), 1, op{op_kind::send_b, 1, 0});
  REQUIRE(send > i);
  schedule moved{zb.shape(), zb.size()};
  std::copy(zb.view().ops.begin(), zb.view().ops.end(), moved.ops().begin());
  std::copy(zb.view().offsets.begin(), zb.view().offsets.end(), moved.offsets().begin());
  auto list = moved.ops().subspan(moved.offsets()[1]);
  std::rotate(list.begin() + static_cast<std::ptrdiff_t>(i), list.begin() + static_cast<std::ptrdiff_t>(send),
              list.begin() + static_cast<std::ptrdiff_t>(send) + 1);
  REQUIRE(validate_lowered(moved.view(), send_semantics::buffered).first ==
          validation_issue{fault::send_before_compute, 1, static_cast<int>(i), op{op_kind::send_b, 1, 0},
                           op{op_kind::I, 1, 0}});
}

TEST_CASE("lowered validator: a receive consumed by the wrong micro-batch", "[lower][validate]") {
  // Rank 1 receives micro-batch 1's activation where micro-batch 0's belongs: F0 finds
  // micro-batch 1's message on its edge.
  const schedule lowered = lower(generate({schedule_family::one_f_one_b, {2, 4}}).view());
  const std::size_t r0 = position_of(lowered.view(), 1, op{op_kind::recv_f, 1, 0});
  const std::size_t r1 = position_of(lowered.view(), 1, op{op_kind::recv_f, 1, 1});
  const schedule wrong = swapped(lowered.view(), 1, r0, r1);
  const validation_result buffered = validate_lowered(wrong.view(), send_semantics::buffered);
  // Named with its own RECV, the one to move.
  REQUIRE(buffered.first == validation_issue{fault::wrong_microbatch, 1, static_cast<int>(r0) + 1, op{op_kind::F, 1, 0},
                                             op{op_kind::recv_f, 1, 0}});
  // Under rendezvous rank 1 waits at the receive of micro-batch 1 while rank 0 sends
  // micro-batch 0: a deadlock, named on both ranks.
  const auto rendezvous = issues_of(wrong.view(), send_semantics::rendezvous);
  REQUIRE(rendezvous.size() == 2);
  REQUIRE(rendezvous[0].what == fault::deadlock);
  REQUIRE(rendezvous[0].at == op{op_kind::send_f, 0, 0});
  REQUIRE(rendezvous[1].at == op{op_kind::recv_f, 1, 1});
  // A compute op with no receive at all before it.
  schedule dropped = from_lists(
      {2, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::send_f, 0, 0}, op{op_kind::recv_b, 0, 0}, op{op_kind::B, 0, 0}},
               {op{op_kind::F, 1, 0}, op{op_kind::recv_f, 1, 0}, op{op_kind::B, 1, 0}, op{op_kind::send_b, 1, 0}}});
  REQUIRE(validate_lowered(dropped.view(), send_semantics::buffered).first ==
          validation_issue{fault::not_received, 1, 0, op{op_kind::F, 1, 0}, op{op_kind::recv_f, 1, 0}});
}

TEST_CASE("lowered validator: structure of the transfers", "[lower][validate]") {
  const pipeline_shape two{2, 1};
  const op f0{op_kind::F, 0, 0}, b0{op_kind::B, 0, 0}, f1{op_kind::F, 1, 0}, b1{op_kind::B, 1, 0};
  const op sf{op_kind::send_f, 0, 0}, rf{op_kind::recv_f, 1, 0}, sb{op_kind::send_b, 1, 0}, rb{op_kind::recv_b, 0, 0};
  const schedule good = from_lists(two, {{f0, sf, rb, b0}, {rf, f1, b1, sb}});
  for (const send_semantics sem : both) REQUIRE(validate_lowered(good.view(), sem).ok());
  // A missing RECV: named on the rank that should hold it.
  const schedule missing = from_lists(two, {{f0, sf, rb, b0}, {f1, b1, sb}});
  REQUIRE(validate_lowered(missing.view(), send_semantics::rendezvous).first ==
          validation_issue{fault::missing, 1, -1, rf, rf});
  // A duplicated SEND.
  const schedule twice = from_lists(two, {{f0, sf, sf, rb, b0}, {rf, f1, b1, sb}});
  REQUIRE(validate_lowered(twice.view(), send_semantics::buffered).first ==
          validation_issue{fault::duplicate, 0, 2, sf, sf});
  // A SEND on the rank that does not own its stage, and one with no partner stage.
  const schedule elsewhere = from_lists(two, {{f0, sf, rb, b0}, {rf, f1, b1, sb, op{op_kind::send_f, 0, 0}}});
  REQUIRE(validate_lowered(elsewhere.view(), send_semantics::buffered).first.what == fault::wrong_rank);
  const schedule edge = from_lists(two, {{f0, sf, rb, b0, op{op_kind::send_b, 0, 0}}, {rf, f1, b1, sb}});
  REQUIRE(validate_lowered(edge.view(), send_semantics::buffered).first ==
          validation_issue{fault::no_partner, 0, 4, op{op_kind::send_b, 0, 0}, op{op_kind::send_b, 0, 0}});
  const schedule beyond = from_lists(two, {{f0, sf, rb, b0, op{op_kind::send_f, 0, 1}}, {rf, f1, b1, sb}});
  REQUIRE(validate_lowered(beyond.view(), send_semantics::buffered).first.what == fault::out_of_shape);
  // An op of an unused kind (raw bits 11 << 28) is named once, at its step.
  schedule raw = from_lists(two, {{f0, sf, rb, b0}, {rf, f1, b1, sb, f1}});
  raw.ops()[raw.size() - 1].bits = 11u << 28;
  const auto raw_issues = issues_of(raw.view(), send_semantics::buffered);
  REQUIRE(raw_issues.size() == 1);
  REQUIRE(raw_issues[0].what == fault::not_compute);
  REQUIRE(raw_issues[0].rank == 1);
  REQUIRE(raw_issues[0].step == 4);
  // A placement value that is neither loop nor V-shape is a bad shape, not a wild index.
  const pipeline_shape odd{2, 1, 3, static_cast<placement>(5)};
  const op stray[] = {op{op_kind::F, 5, 0}, op{op_kind::send_f, 4, 0}};
  const std::uint32_t stray_offsets[] = {0, 1, 2};
  REQUIRE(validate_lowered(schedule_view{odd, stray, stray_offsets}, send_semantics::buffered).first.what ==
          fault::bad_shape);
  REQUIRE_THROWS_WITH(peer_order_consistent(schedule_view{odd, stray, stray_offsets}),
                      "ctpipe: placement must be loop, v_shape or bidirectional");
  // A message across the V-shape turn (stages 1 and 2 of P = 2 live on rank 1).
  const schedule zbv = lower(generate({schedule_family::zbv, {2, 2, 2, placement::v_shape}}).view());
  std::vector<op> ops(zbv.view().ops.begin(), zbv.view().ops.end());
  std::vector<std::uint32_t> offsets(zbv.view().offsets.begin(), zbv.view().offsets.end());
  ops.push_back(op{op_kind::send_f, 1, 0});
  ++offsets[2];
  const auto turn = validate_lowered(schedule_view{zbv.shape(), ops, offsets}, send_semantics::buffered);
  REQUIRE(turn.first == validation_issue{fault::local_transfer, 1, static_cast<int>(offsets[2] - offsets[1]) - 1,
                                         op{op_kind::send_f, 1, 0}, op{op_kind::send_f, 1, 0}});
  // Compute faults keep their meaning, with steps in the lowered lists.
  const schedule no_b = from_lists(two, {{f0, sf, rb}, {rf, f1, b1, sb}});
  REQUIRE(validate_lowered(no_b.view(), send_semantics::buffered).first ==
          validation_issue{fault::missing, 0, -1, b0, b0});
  const schedule late_b = from_lists(two, {{f0, sf, rb, b0}, {rf, b1, f1, sb}});
  REQUIRE(validate_lowered(late_b.view(), send_semantics::buffered).first ==
          validation_issue{fault::out_of_order, 1, 1, b1, f1});
  // lower() refuses an invalid or already lowered schedule.
  REQUIRE_THROWS_WITH(lower(good.view()),
                      "ctpipe: lower() takes a valid compute schedule (validate() names the problems)");
  REQUIRE(semantics_name(send_semantics::rendezvous) == std::string("rendezvous"));
}

TEST_CASE("lowering: docs/lowering.md's 1F1B P = 2, m = 8 example", "[lower]") {
  constexpr auto& program =
      lowered_v<schedule_spec{schedule_family::one_f_one_b, {2, 8}}, costs{}, runtime_model::rendezvous>;
  static_assert(validate_lowered(program.view(), send_semantics::rendezvous).ok());
  std::string head;
  for (std::size_t k = 0; k < 10; ++k) head += io::action(program.rank(1)[k]) + " ";
  REQUIRE(head == "1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1RECV_F2 1SEND_B1 1F2 ");
  REQUIRE(validate_lowered(program.view(), send_semantics::rendezvous).ok());
}

TEST_CASE("peer order: the adjacent order matches messages by key, not first in first out, on ZB-V", "[lower]") {
  // Rank 0 of ZB-V with P = 2 sends both activations (stage 0 to 1) and gradients
  // (stage 3 to 2) to rank 1; the adjacent order interleaves them as rank 0 produces
  // them and rank 1 receives them as it consumes them. A runtime that matches by
  // (edge, micro-batch, direction), as MPI tags do, runs it; one that pairs in order
  // needs the key order.
  const schedule g = generate({schedule_family::zbv, {2, 4, 2, placement::v_shape}});
  REQUIRE_FALSE(peer_order_consistent(lower(g.view()).view()));
  REQUIRE(peer_order_consistent(lower(g.view(), costs{}, runtime_model::batched).view()));
  REQUIRE(execute(lower(g.view()).view(), costs{}, runtime_model::blocking).completed());
  REQUIRE(
      execute(lower(g.view(), costs{}, runtime_model::batched).view(), costs{}, runtime_model::batched).completed());
}

TEST_CASE("directed order: posted lists receive each peer's messages in the order it sends them, on ZB-V", "[lower]") {
  // ZB-V P = 2, m = 3: rank 0 sends rank 1 activations of stage 0 and gradients of stage
  // 3 as it produces them; in the adjacent (blocking) order rank 1 receives them as it
  // consumes them, in another order. PyTorch's runtime over gloo pairs them in posting
  // order: the posted lists move those receives earlier into the send order, at no cost.
  const costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
  const schedule g = generate({schedule_family::zbv, {2, 3, 2, placement::v_shape}});
  const schedule adjacent = lower(g.view(), uneven, runtime_model::blocking);
  const schedule posted = lower(g.view(), uneven, runtime_model::posted);
  REQUIRE_FALSE(directed_order_consistent(adjacent.view()));
  REQUIRE(directed_order_consistent(posted.view()));
  REQUIRE_FALSE(peer_order_consistent(posted.view()));  // the two directions still interleave differently
  REQUIRE(validate_lowered(posted.view(), send_semantics::buffered).ok());
  REQUIRE(execute(posted.view(), uneven, runtime_model::posted).makespan() == simulate(g.view(), uneven).makespan());
  // Only receives moved: the same ops on each rank, the sends and compute ops in place.
  for (int r = 0; r < 2; ++r) {
    std::vector<op> a, b;
    for (const op o : adjacent.view().rank(r))
      if (is_send(o.kind()) || !is_transfer(o.kind())) a.push_back(o);
    for (const op o : posted.view().rank(r))
      if (is_send(o.kind()) || !is_transfer(o.kind())) b.push_back(o);
    REQUIRE(a == b);
    REQUIRE(adjacent.view().rank(r).size() == posted.view().rank(r).size());
  }
  // Rank 1's first receive from rank 0 on each edge, exchanged: no longer in send order.
  const std::size_t x = position_of(posted.view(), 1, op{op_kind::recv_f, 1, 0});
  const std::size_t y = position_of(posted.view(), 1, op{op_kind::recv_f, 1, 1});
  REQUIRE_FALSE(directed_order_consistent(swapped(posted.view(), 1, x, y).view()));
  // The key order keeps one order for both directions, so each direction's too.
  REQUIRE(directed_order_consistent(lower(g.view(), uneven, runtime_model::rendezvous).view()));
  const pipeline_shape v_shape{2, 1, 2, placement::v_shape};
  const schedule stray = from_lists(
      v_shape, {{op{op_kind::F, 0, 0}, op{op_kind::send_f, 3, 0}}, {op{op_kind::F, 1, 0}, op{op_kind::F, 2, 0}}});
  REQUIRE_FALSE(directed_order_consistent(stray.view()));
}

TEST_CASE("peer order: transfers without a partner stage give false, never an out-of-bounds access", "[lower]") {
  // On the V-shape with P = 2 the last stage is 3: a SEND_F or RECV_B there has no
  // partner (the fresh-user review's crash input, `0F0,3SEND_F0 / 1F0,2F0`).
  const pipeline_shape v_shape{2, 1, 2, placement::v_shape};
  for (const op_kind k : {op_kind::send_f, op_kind::recv_b}) {
    const schedule s =
        from_lists(v_shape, {{op{op_kind::F, 0, 0}, op{k, 3, 0}}, {op{op_kind::F, 1, 0}, op{op_kind::F, 2, 0}}});
    REQUIRE_FALSE(peer_order_consistent(s.view()));
  }
  const schedule stage_zero = from_lists({2, 1}, {{op{op_kind::recv_f, 0, 0}}, {}});
  REQUIRE_FALSE(peer_order_consistent(stage_zero.view()));
}

// A schedule may mix full backwards (B) with split ones (I + W), as DualPipeV does: a
// diagnosis names the backward that is in the schedule, not the waiting op's kind.
TEST_CASE("diagnoses of mixed B and I/W name the producer the schedule holds", "[lower][validate]") {
  using K = op_kind;
  {  // stage 0 runs B, stage 1 runs I + W; rank 0 waits for stage 1's backward of 0
    const op ops[] = {op{K::F, 0, 0}, op{K::B, 0, 0}, op{K::F, 0, 1}, op{K::B, 0, 1}, op{K::F, 1, 1},
                      op{K::I, 1, 1}, op{K::W, 1, 1}, op{K::F, 1, 0}, op{K::I, 1, 0}, op{K::W, 1, 0}};
    const std::uint32_t off[] = {0, 4, 10};
    std::vector<validation_issue> issues;
    validate(schedule_view{{2, 2}, ops, off}, [&](const validation_issue& i) { issues.push_back(i); });
    REQUIRE(issues.size() == 2);
    REQUIRE(issues[0].what == fault::deadlock);
    REQUIRE(issues[0].at == op{K::B, 0, 0});
    REQUIRE(issues[0].needs == op{K::I, 1, 0});  // was 1B0, which the schedule does not hold
    REQUIRE(issues[1].at == op{K::F, 1, 1});
    REQUIRE(issues[1].needs == op{K::F, 0, 1});
  }
  {  // stage 0 runs I + W, stage 1 runs B; rank 1 sends its gradient before computing it
    const op ops[] = {op{K::F, 0, 0},      op{K::send_f, 0, 0}, op{K::recv_b, 0, 0}, op{K::I, 0, 0}, op{K::W, 0, 0},
                      op{K::recv_f, 1, 0}, op{K::F, 1, 0},      op{K::send_b, 1, 0}, op{K::B, 1, 0}};
    const std::uint32_t off[] = {0, 5, 9};
    const schedule_view v{{2, 1}, ops, off};
    const validation_result lowered = validate_lowered(v, send_semantics::buffered);
    REQUIRE(lowered.first.what == fault::send_before_compute);
    REQUIRE(lowered.first.at == op{K::send_b, 1, 0});
    REQUIRE(lowered.first.needs == op{K::B, 1, 0});  // was 1I0
    const execution run = execute(v, costs{}, runtime_model::blocking);
    REQUIRE_FALSE(run.completed());
    REQUIRE(run.stuck()[0].what == fault::send_before_compute);
    REQUIRE(run.stuck()[0].needs == op{K::B, 1, 0});
  }
}

TEST_CASE("a runtime model cast from another number is refused, and named ?", "[lower]") {
  const auto bad = static_cast<runtime_model>(runtime_model_count);
  REQUIRE(std::string(runtime_model_name(bad)) == "?");
  const schedule g = generate({schedule_family::one_f_one_b, {2, 2}});
  REQUIRE_THROWS_WITH(lower(g.view(), costs{}, bad), "ctpipe: unknown runtime model");
  REQUIRE_THROWS_WITH(execute(lower(g.view()).view(), costs{}, bad), "ctpipe: unknown runtime model");
}

TEST_CASE(
    "docs/runtimes.md: DualPipeV fused loses nothing, read split it loses under rendezvous and batched without latency",
    "[lower][docs]") {
  const costs article{};  // t_f = 1, t_b = 2, t_i = t_w = 1, t_c = 0
  const costs equal{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}};
  const struct {
    int P, m;
    rational fused, split, split_keyed;
  } rows[] = {{4, 8, {27}, {51, 2}, {59, 2}}, {2, 8, {25}, {49, 2}, {59, 2}}, {2, 32, {97}, {193, 2}, {251, 2}}};
  for (const auto& row : rows) {
    INFO("P = " << row.P << ", m = " << row.m);
    const schedule g = generate({schedule_family::dualpipev, {row.P, row.m, 2, placement::v_shape}});
    const schedule split = split_pairs(g.view());
    REQUIRE(simulate(g.view(), article).makespan() == row.fused);
    REQUIRE(simulate(split.view(), article).makespan() == row.split);
    for (const runtime_model model : all_runtime_models) {
      INFO(runtime_model_name(model));
      // Fused pairs (DeepSeek's runtime): every model runs the lists in the simulated time.
      REQUIRE(execute(lower(g.view(), article, model).view(), article, model).makespan() == row.fused);
      // Split: the halves meet transfers the partner rank cannot take between ops.
      const rational run = execute(lower(split.view(), article, model).view(), article, model).makespan();
      // (The stream models run the key order without holding a rank in its transfers:
      // tests/runtime/execute_test.cpp checks them against an independent reference.)
      const bool keyed = model == runtime_model::rendezvous || model == runtime_model::batched;
      if (!is_stream_model(model)) REQUIRE(run == (keyed ? row.split_keyed : row.split));
      // Equal op costs: no loss under any model, either reading.
      REQUIRE(execute(lower(split.view(), equal, model).view(), equal, model).makespan() ==
              simulate(split.view(), equal).makespan());
      REQUIRE(execute(lower(g.view(), equal, model).view(), equal, model).makespan() ==
              simulate(g.view(), equal).makespan());
    }
  }
}

TEST_CASE("overlapped pairs that take no time (t_fb = 0): every lowering runs under its model", "[lower][pairs]") {
  costs free_pairs{};
  free_pairs.fb = rational{0};
  for (const auto family : {schedule_family::dualpipev, schedule_family::dualpipe}) {
    for (int P = 1; P <= 6; ++P) {
      for (int m = 2 * P; m <= 3 * P; ++m) {
        const schedule_spec spec{family, {P, m, 2, natural_placement(family)}};
        if (spec_error(spec) != nullptr) continue;
        INFO(family_name(family) << " P = " << P << ", m = " << m);
        const schedule g = generate(spec);
        for (const runtime_model model : all_runtime_models) {
          INFO(runtime_model_name(model));
          const execution run = execute(lower(g.view(), free_pairs, model).view(), free_pairs, model);
          REQUIRE(run.completed());
          if (model == runtime_model::blocking || model == runtime_model::posted) {
            REQUIRE(run.makespan() == simulate(g.view(), free_pairs).makespan());
          }
        }
      }
    }
  }
}

TEST_CASE("lowering: stages of factor 0 (a Megatron layout's empty stage) keep every RECV before its consumer",
          "[lower][scaled]") {
  // A fresh tester's finding: with a stage of factor 0 its ops take no time, so a message
  // and its consumer share a tick; the key order broke that tie by the flat order and
  // put 0B0 before 0RECV_B0 (gpipe, P = 2, m = 2, stage factors 2, 0). The tie now
  // follows the dependency walk whenever some op that sends can take no time.
  int runs = 0;
  for (const schedule_family family :
       {schedule_family::gpipe, schedule_family::one_f_one_b, schedule_family::zb_h1, schedule_family::interleaved_1f1b,
        schedule_family::zbv, schedule_family::dualpipev}) {
    for (int P = 2; P <= 4; ++P) {
      const int V =
          family == schedule_family::gpipe || family == schedule_family::one_f_one_b || family == schedule_family::zb_h1
              ? 1
              : 2;
      schedule_spec s{family, {P, 2 * P, V, natural_placement(family)}};
      if (spec_error(s) != nullptr) continue;
      const schedule v = generate(s);
      for (int zero = 0; zero < s.shape.stages(); ++zero) {
        std::vector<rational> factors(static_cast<std::size_t>(s.shape.stages()), rational{3, 2});
        factors[static_cast<std::size_t>(zero)] = rational{0};
        const cost_scale scale{factors, {}};
        for (const runtime_model model : {runtime_model::rendezvous, runtime_model::batched}) {
          INFO(family_name(family) << " P = " << P << " stage " << zero << " of factor 0, "
                                   << runtime_model_name(model));
          const schedule lowered = lower(v.view(), costs{}, model, scale);
          const execution run = execute(lowered.view(), costs{}, model, scale);
          REQUIRE(run.completed());
          ++runs;
        }
      }
    }
  }
  REQUIRE(runs > 100);
}
