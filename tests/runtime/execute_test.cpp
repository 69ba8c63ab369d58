// Runtime models and cost-aware lowering (docs/spec.md §7): execute() on hand-made lists
// with hand-computed times, the head-of-line stall, hangs named as validate_lowered
// names them, batched groups, first-in first-out pairing, the executed makespans of the
// lists the tool wrote before cost-aware lowering (tests/data/lowered), and the
// executed = proved grid at run time through the functions tests/static/proofs_execute.cpp
// evaluates at compile time.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "executed.hpp"  // stream_cycle: the tool's naming of a stream model's hang
#include "options.hpp"   // chunks_default: the tool's V per family
#include "faulty.hpp"
#include "proofs_lower.hpp"

using namespace ctpipe;
using ctpipe::tests::from_lists;
using ctpipe::tool::chunks_default;

namespace {

constexpr op F(int s, int j) { return op{op_kind::F, s, j}; }
constexpr op B(int s, int j) { return op{op_kind::B, s, j}; }
constexpr op send_f(int s, int j) { return op{op_kind::send_f, s, j}; }
constexpr op recv_f(int s, int j) { return op{op_kind::recv_f, s, j}; }
constexpr op send_b(int s, int j) { return op{op_kind::send_b, s, j}; }
constexpr op recv_b(int s, int j) { return op{op_kind::recv_b, s, j}; }

/// One micro-batch over two ranks, the sends and receives next to their ops.
schedule one_microbatch() {
  return from_lists({2, 1},
                    {{F(0, 0), send_f(0, 0), recv_b(0, 0), B(0, 0)}, {recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0)}});
}

/// Rank 1 receives both activations before its first forward: a receive in front of a
/// compute op whose input is already there (a head-of-line stall under blocking).
constexpr schedule head_of_line() {
  return from_lists({2, 2},
                    {{F(0, 0), send_f(0, 0), F(0, 1), send_f(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
                     {recv_f(1, 0), recv_f(1, 1), F(1, 0), B(1, 0), send_b(1, 0), F(1, 1), B(1, 1), send_b(1, 1)}});
}

/// 1F1B, P = 2, m = 2, each transfer next to its op: both ranks send first in the steady
/// state, so one transfer at a time deadlocks under rendezvous; posted as groups it runs.
schedule send_first() {
  return from_lists({2, 2},
                    {{F(0, 0), send_f(0, 0), F(0, 1), send_f(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
                     {recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0), recv_f(1, 1), F(1, 1), B(1, 1), send_b(1, 1)}});
}

schedule read_csv(const std::string& name) {
  std::ifstream in(std::string(CTPIPE_SOURCE_DIR) + "/tests/data/lowered/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return io::parse_csv(text.str());
}

costs with_latency(rational c) {
  costs out;
  out.c = c;
  return out;
}

}  // namespace

TEST_CASE("execute: one micro-batch under each model, times by hand", "[execute]") {
  const schedule s = one_microbatch();
  const costs c = with_latency(rational{1, 2});
  // Under every model: F on rank 1 at 3/2, its B to 9/2, the gradient back at 5, rank
  // 0's B from 5 to 7, as simulate() has it.
  for (const runtime_model model : all_runtime_models) {
    INFO(runtime_model_name(model));
    const execution e = execute(s.view(), c, model);
    REQUIRE(e.completed());
    REQUIRE(e.makespan() == rational{7});
    REQUIRE(e.start(5) == rational{3, 2});  // F(1, 0)
    REQUIRE(e.start(3) == rational{5});     // B(0, 0)
    REQUIRE(e.busy(0) == rational{3});
    REQUIRE(e.idle(1) == rational{4});
    REQUIRE(e.stall(0) == rational{0});
    REQUIRE(e.wait(0) == rational{4});
  }
  // Where the models differ: the SEND of rank 0 returns at once unless it waits for its
  // receive (rendezvous, batched: until 1 + t_c); rank 1's RECV returns at once under
  // posted, and the F waits at the consumer instead.
  REQUIRE(execute(s.view(), c, runtime_model::blocking).end(1) == rational{1});
  REQUIRE(execute(s.view(), c, runtime_model::rendezvous).end(1) == rational{3, 2});
  REQUIRE(execute(s.view(), c, runtime_model::batched).end(1) == rational{3, 2});
  const execution posted = execute(s.view(), c, runtime_model::posted);
  REQUIRE(posted.end(4) == rational{0});
  REQUIRE(posted.reached(5) == rational{0});
  REQUIRE(posted.start(5) == rational{3, 2});
  REQUIRE(execute(s.view(), c, runtime_model::blocking).end(4) == rational{3, 2});
}

TEST_CASE("execute: a receive in front of a ready op stalls the rank", "[execute]") {
  const schedule s = head_of_line();
  const execution e = execute(s.view(), costs{}, runtime_model::blocking);
  REQUIRE(e.completed());
  REQUIRE(simulate(compute_part(s.view()).view(), costs{}).makespan() == rational{9});
  REQUIRE(e.makespan() == rational{10});
  // Rank 1 waits in RECV_F(1, 1) from 1 to 2 while F(1, 0)'s input is there since 1.
  REQUIRE(e.stall(1) == rational{1});
  REQUIRE(e.wait(1) == rational{3});
  REQUIRE(e.stall(0) == rational{0});
  REQUIRE(e.wait(0) == rational{4});
  // Posted runs it as simulated: the RECV does not block, the consumer waits.
  const execution p = execute(s.view(), costs{}, runtime_model::posted);
  REQUIRE(p.makespan() == rational{9});
  REQUIRE(p.stall(1) == rational{0});
  // lower() for blocking puts each RECV next to its consumer: no stall, no loss.
  const schedule lowered = lower(compute_part(s.view()).view());
  const execution fixed = execute(lowered.view(), costs{}, runtime_model::blocking);
  REQUIRE(fixed.makespan() == rational{9});
  REQUIRE(fixed.stall(1) == rational{0});
}

TEST_CASE("execute: stall_intervals() gives each stall where it is, and they sum to stall()", "[execute]") {
  // head_of_line() under blocking: rank 1 stalls in its RECV_F(1, 1) (op 9) from 1 to 2.
  const schedule s = head_of_line();
  const execution e = execute(s.view(), costs{}, runtime_model::blocking);
  REQUIRE(e.stall_intervals().size() == 1);
  REQUIRE(e.stall_intervals()[0] == stall_interval{1, 9, 1, 2});
  REQUIRE(e.tick() == rational{1});
  REQUIRE(e.end_ticks(9) == 2);
  // Evaluated at compile time too.
  static_assert([] {
    const execution c = execute(head_of_line().view(), costs{}, runtime_model::blocking);
    return c.stall_intervals().size() == 1 && c.stall_intervals()[0] == stall_interval{1, 9, 1, 2};
  }());
  // Nothing stalls: posted, lists lowered for the model, a run that hangs.
  REQUIRE(execute(s.view(), costs{}, runtime_model::posted).stall_intervals().empty());
  REQUIRE(
      execute(lower(compute_part(s.view()).view()).view(), costs{}, runtime_model::blocking).stall_intervals().empty());
  REQUIRE(execute(send_first().view(), costs{}, runtime_model::rendezvous).stall_intervals().empty());
  // The old unit-order lists stall on many ranks: by rank, in list order, each inside
  // its transfer op's [start, end), and per rank they sum to stall(r).
  // (The stream models stall at compute ops instead, and these lists hang on a shared
  // stream: their stall intervals are tested with the stream models below.)
  const schedule interleaved = read_csv("interleaved-1f1b_P8_m16_V2_unit-order.csv");
  for (const runtime_model model : all_runtime_models) {
    if (is_stream_model(model)) continue;
    for (const costs& c : {costs{}, with_latency(rational{1, 2})}) {
      INFO(runtime_model_name(model) << " t_c = " << io::to_string(c.c));
      const execution x = execute(interleaved.view(), c, model);
      REQUIRE(x.completed());
      std::vector<std::int64_t> sums(8, 0);
      const stall_interval* previous = nullptr;
      for (const stall_interval& i : x.stall_intervals()) {
        const op o = interleaved.view().ops[i.op_index];
        REQUIRE(is_transfer(o.kind()));
        REQUIRE(i.op_index >= interleaved.view().offsets[static_cast<std::size_t>(i.rank)]);
        REQUIRE(i.op_index < interleaved.view().offsets[static_cast<std::size_t>(i.rank) + 1]);
        REQUIRE(x.start_ticks(i.op_index) <= i.start_ticks);
        REQUIRE(i.start_ticks < i.end_ticks);
        REQUIRE(i.end_ticks == x.end_ticks(i.op_index));
        if (previous != nullptr) {
          REQUIRE(previous->rank <= i.rank);
          if (previous->rank == i.rank) REQUIRE(previous->end_ticks <= i.start_ticks);
          if (previous->rank == i.rank) REQUIRE(previous->op_index < i.op_index);
        }
        previous = &i;
        sums[static_cast<std::size_t>(i.rank)] += i.end_ticks - i.start_ticks;
      }
      for (int r = 0; r < 8; ++r) {
        REQUIRE(x.tick() * rational{sums[static_cast<std::size_t>(r)]} == x.stall(r));
        REQUIRE(x.wait(r) >= rational{0});
      }
      if (model == runtime_model::blocking) REQUIRE_FALSE(x.stall_intervals().empty());
    }
  }
  // Batched: rank 0 waits in four groups of a SEND and a RECV that end together (each
  // 1 time unit), then 1/2 and 1 in single SENDs: 11/2, counted once per group.
  const execution batched = execute(interleaved.view(), costs{}, runtime_model::batched);
  REQUIRE(batched.stall(0) == rational{11, 2});
  REQUIRE(batched.stall_intervals()[0] == stall_interval{0, 71, 48, 50});
  REQUIRE(batched.stall_intervals()[1].op_index == 77);
}

TEST_CASE("execute: send-first lists deadlock under rendezvous and run as batched groups", "[execute]") {
  const schedule s = send_first();
  const execution r = execute(s.view(), costs{}, runtime_model::rendezvous);
  REQUIRE_FALSE(r.completed());
  REQUIRE(r.stuck().size() == 2);
  REQUIRE(r.stuck()[0] == validation_issue{fault::deadlock, 0, 3, send_f(0, 1), recv_f(1, 1)});
  REQUIRE(r.stuck()[1] == validation_issue{fault::deadlock, 1, 3, send_b(1, 0), recv_b(0, 0)});
  // validate_lowered names them the same way.
  std::vector<validation_issue> named;
  validate_lowered(s.view(), send_semantics::rendezvous, [&](const validation_issue& i) { named.push_back(i); });
  REQUIRE(named == std::vector<validation_issue>(r.stuck().begin(), r.stuck().end()));
  // Batched: {SEND_F(0,1), RECV_B(0,0)} and {SEND_B(1,0), RECV_F(1,1)} are one group
  // each, posted at 2 and 4, both done at 4; 9 in all, 1F1B's (m+P-1)(t_f+t_b).
  const execution b = execute(s.view(), costs{}, runtime_model::batched);
  REQUIRE(b.completed());
  REQUIRE(b.makespan() == rational{9});
  REQUIRE(b.end(3) == rational{4});
  REQUIRE(b.end(4) == rational{4});
  REQUIRE(execute(s.view(), costs{}, runtime_model::blocking).makespan() == rational{9});
}

TEST_CASE("execute: after a batched group the rank is reached when the whole group is done", "[execute]") {
  // Rank 1's group {SEND_F(1, 0), RECV_B(1, 0), RECV_F(1, 1)} completes at 5 (its last
  // RECV returned at 2): B(1, 0) is reached at 5, not 2 (found by a fresh user).
  const schedule lists = from_lists(
      {3, 2}, {{F(0, 0), send_f(0, 0), F(0, 1), send_f(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
               {recv_f(1, 0), F(1, 0), send_f(1, 0), recv_b(1, 0), recv_f(1, 1), B(1, 0), send_b(1, 0), F(1, 1),
                send_f(1, 1), recv_b(1, 1), B(1, 1), send_b(1, 1)},
               {recv_f(2, 0), F(2, 0), B(2, 0), send_b(2, 0), recv_f(2, 1), F(2, 1), B(2, 1), send_b(2, 1)}});
  const execution e = execute(lists.view(), costs{}, runtime_model::batched);
  REQUIRE(e.completed());
  const std::size_t b10 = lists.view().offsets[1] + 5;
  REQUIRE(lists.view().ops[b10] == B(1, 0));
  REQUIRE(e.end(b10 - 1) == rational{2});
  REQUIRE(e.reached(b10) == rational{5});
  REQUIRE(e.start(b10) == rational{5});
  REQUIRE(ctpipe::tests::execution_consistent(e, lists.view()));
}

TEST_CASE("execute: batched pairing is first in first out, and a crossed pair is a fault", "[execute]") {
  // Rank 1 receives micro-batch 1's activation before micro-batch 0's: tags would sort
  // it out, first-in first-out pairing hands it the wrong message.
  const schedule crossed = from_lists(
      {2, 2}, {{F(0, 0), send_f(0, 0), F(0, 1), send_f(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
               {recv_f(1, 1), recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0), F(1, 1), B(1, 1), send_b(1, 1)}});
  const execution e = execute(crossed.view(), costs{}, runtime_model::batched);
  REQUIRE_FALSE(e.completed());
  REQUIRE(e.stuck().size() == 2);
  REQUIRE(e.stuck()[0] == validation_issue{fault::wrong_pairing, 1, 0, recv_f(1, 1), send_f(0, 0)});
  REQUIRE(e.stuck()[1] == validation_issue{fault::wrong_pairing, 1, 1, recv_f(1, 0), send_f(0, 1)});
  // Matched by message (tags), the same lists run.
  REQUIRE(execute(crossed.view(), costs{}, runtime_model::blocking).completed());
  // A wrong pairing does not hide the other ranks' faults: here rank 0 also waits at
  // RECV_B(0, 0) for a SEND_B that rank 1 reaches only after its crossed group.
  const schedule crossed_and_stuck = from_lists(
      {2, 2}, {{F(0, 0), F(0, 1), recv_b(0, 0), B(0, 0), send_f(0, 0), send_f(0, 1), recv_b(0, 1), B(0, 1)},
               {recv_f(1, 1), recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0), F(1, 1), B(1, 1), send_b(1, 1)}});
  const execution both = execute(crossed_and_stuck.view(), costs{}, runtime_model::batched);
  REQUIRE(both.stuck().size() == 3);
  REQUIRE(both.stuck()[0].what == fault::wrong_pairing);
  REQUIRE(both.stuck()[1].what == fault::wrong_pairing);
  REQUIRE(both.stuck()[2] == validation_issue{fault::deadlock, 0, 2, recv_b(0, 0), send_b(1, 0)});
}

TEST_CASE("execute: a consumer before its receive, a send before its producer", "[execute]") {
  constexpr const char* not_well_formed =
      "ctpipe: execute() takes a lowered schedule with well-formed ops and transfers (validate_lowered() names the "
      "problems)";
  const schedule late_recv = from_lists(
      {2, 1}, {{F(0, 0), send_f(0, 0), recv_b(0, 0), B(0, 0)}, {F(1, 0), recv_f(1, 0), B(1, 0), send_b(1, 0)}});
  const schedule early_send = from_lists(
      {2, 1}, {{send_f(0, 0), F(0, 0), recv_b(0, 0), B(0, 0)}, {recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0)}});
  for (const runtime_model model : all_runtime_models) {
    INFO(runtime_model_name(model));
    const execution a = execute(late_recv.view(), costs{}, model);
    REQUIRE_FALSE(a.completed());
    REQUIRE(a.stuck()[0] == validation_issue{fault::not_received, 1, 0, F(1, 0), recv_f(1, 0)});
    const execution b = execute(early_send.view(), costs{}, model);
    REQUIRE_FALSE(b.completed());
    REQUIRE(b.stuck()[0] == validation_issue{fault::send_before_compute, 0, 0, send_f(0, 0), F(0, 0)});
  }
  // Under batched, a SEND later in a group than its first op is checked too: rank 0
  // posts SEND_F(0, 0) and SEND_F(0, 1) as one group before F(0, 1) has run.
  const schedule early_in_group = from_lists(
      {2, 2}, {{F(0, 0), send_f(0, 0), send_f(0, 1), F(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
               {recv_f(1, 0), F(1, 0), B(1, 0), send_b(1, 0), recv_f(1, 1), F(1, 1), B(1, 1), send_b(1, 1)}});
  const execution grouped = execute(early_in_group.view(), costs{}, runtime_model::batched);
  REQUIRE_FALSE(grouped.completed());
  REQUIRE(grouped.stuck()[0] == validation_issue{fault::send_before_compute, 0, 2, send_f(0, 1), F(0, 1)});
  // A batched group whose first op is matched and whose second never is: the rank is
  // named at the second (its partner SEND comes after a RECV that waits for rank 0).
  const schedule half_matched = from_lists(
      {2, 2}, {{F(0, 0), F(0, 1), send_f(0, 0), recv_b(0, 0), B(0, 0), send_f(0, 1), recv_b(0, 1), B(0, 1)},
               {recv_f(1, 0), F(1, 0), recv_f(1, 1), F(1, 1), B(1, 0), send_b(1, 0), B(1, 1), send_b(1, 1)}});
  const execution half = execute(half_matched.view(), costs{}, runtime_model::batched);
  REQUIRE_FALSE(half.completed());
  REQUIRE(half.stuck().size() == 2);
  REQUIRE(half.stuck()[0] == validation_issue{fault::deadlock, 0, 3, recv_b(0, 0), send_b(1, 0)});
  REQUIRE(half.stuck()[1] == validation_issue{fault::deadlock, 1, 2, recv_f(1, 1), send_f(0, 1)});
  // One op at a time (blocking) the same lists hang at the same ops.
  const execution one_at_a_time = execute(half_matched.view(), costs{}, runtime_model::blocking);
  REQUIRE(std::vector<validation_issue>(one_at_a_time.stuck().begin(), one_at_a_time.stuck().end()) ==
          std::vector<validation_issue>(half.stuck().begin(), half.stuck().end()));
  // A malformed list is an error, not a hang.
  const schedule no_recv =
      from_lists({2, 1}, {{F(0, 0), send_f(0, 0), recv_b(0, 0), B(0, 0)}, {F(1, 0), B(1, 0), send_b(1, 0)}});
  REQUIRE_THROWS_WITH(execute(no_recv.view(), costs{}, runtime_model::blocking), not_well_formed);
  // So is a compute part that cannot run, though each op is well formed: on V-shape rank
  // 1, F(2, 0) comes before F(1, 0), which it needs on the same rank.
  const schedule local_order =
      from_lists(pipeline_shape{2, 1, 2, placement::v_shape},
                 {{F(0, 0), send_f(0, 0), recv_f(3, 0), F(3, 0), B(3, 0), send_b(3, 0), recv_b(0, 0), B(0, 0)},
                  {recv_f(1, 0), F(2, 0), F(1, 0), send_f(2, 0), recv_b(2, 0), B(2, 0), B(1, 0), send_b(1, 0)}});
  std::vector<validation_issue> named;
  REQUIRE(validate_lowered_ops(local_order.view(), [&named](const validation_issue& i) { named.push_back(i); }) == 2);
  REQUIRE(named[0] == validation_issue{fault::deadlock, 0, 3, F(3, 0), F(2, 0)});
  REQUIRE(named[1] == validation_issue{fault::deadlock, 1, 1, F(2, 0), F(1, 0)});
  for (const runtime_model model : all_runtime_models) {
    INFO(runtime_model_name(model));
    REQUIRE_THROWS_WITH(execute(local_order.view(), costs{}, model), not_well_formed);
  }
}

TEST_CASE("execute: the lists the tool wrote before cost-aware lowering, run in order", "[execute]") {
  // `ctpipe --format csv-comms` as it was (lists ordered by a unit-cost simulation),
  // kept in tests/data/lowered. Run strictly in order with buffered sends and blocking
  // receives they lose against the simulation; posted they do not.
  const schedule interleaved = read_csv("interleaved-1f1b_P8_m16_V2_unit-order.csv");
  const schedule zb = read_csv("zb-h1_P8_m16_unit-order.csv");
  const costs latency = with_latency(rational{1, 2});
  REQUIRE(simulate(compute_part(interleaved.view()).view(), costs{}).makespan() == rational{117, 2});
  REQUIRE(execute(interleaved.view(), costs{}, runtime_model::blocking).makespan() == rational{67});
  REQUIRE(simulate(compute_part(interleaved.view()).view(), latency).makespan() == rational{147, 2});
  REQUIRE(execute(interleaved.view(), latency, runtime_model::blocking).makespan() == rational{267, 2});
  REQUIRE(simulate(compute_part(zb.view()).view(), latency).makespan() == rational{69});
  REQUIRE(execute(zb.view(), latency, runtime_model::blocking).makespan() == rational{77});
  REQUIRE(execute(interleaved.view(), costs{}, runtime_model::posted).makespan() == rational{117, 2});
  // Lowered for the model, the same schedules run as simulated.
  for (const schedule* s : {&interleaved, &zb}) {
    const schedule compute = compute_part(s->view());
    for (const costs& c : {costs{}, latency}) {
      const schedule l = lower(compute.view(), c, runtime_model::blocking);
      REQUIRE(execute(l.view(), c, runtime_model::blocking).makespan() == simulate(compute.view(), c).makespan());
    }
  }
}

TEST_CASE("execute: zb-h1 P = 2, m = 2 with f = 1, i = 1, w = 2 loses 1 under rendezvous", "[execute]") {
  const costs c{rational{1}, rational{3}, rational{1}, rational{2}, rational{0}};
  const schedule g = generate({schedule_family::zb_h1, {2, 2}});
  REQUIRE(simulate(g.view(), c).makespan() == rational{9});
  REQUIRE(execute(lower(g.view(), c, runtime_model::rendezvous).view(), c, runtime_model::rendezvous).makespan() ==
          rational{10});
  REQUIRE(execute(lower(g.view(), c, runtime_model::blocking).view(), c, runtime_model::blocking).makespan() ==
          rational{9});
}

TEST_CASE("executed = proved: every family, rule, cost set and model over P <= 6, m <= 12, V <= 3",
          "[execute][proofs]") {
  using ctpipe::tests::prove_executed;
  const costs sets[] = {
      costs{},                                                                    // the article's
      costs{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}},     // equal
      costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}},  // uneven, latency
      costs{rational{2}, rational{1}, rational{1, 3}, rational{2, 3}, rational{1, 5}},
      costs{rational{1}, rational{0}, rational{0}, rational{0}, rational{0}},  // free backwards
      costs{rational{1}, rational{2}, rational{1}, rational{0}, rational{3}},  // free W, slow links
  };
  const interleaved_variant rules[] = {interleaved_variant::megatron, interleaved_variant::megatron_legacy,
                                       interleaved_variant::torch};
  int proved = 0;
  for (const schedule_family family : all_families) {
    for (const interleaved_variant rule : rules) {
      if (rule != interleaved_variant::megatron && family != schedule_family::interleaved_1f1b) continue;
      for (int P = 1; P <= 6; ++P) {
        for (int m = 1; m <= 12; ++m) {
          for (int V = 1; V <= 3; ++V) {
            const schedule_spec spec{family, {P, m, V, natural_placement(family)}, rule};
            if (spec_error(spec) != nullptr) continue;
            const schedule g = generate(spec);
            for (const costs& c : sets) {
              for (const runtime_model model : all_runtime_models) {
                INFO(family_name(family) << " " << variant_name(rule) << " P=" << P << " m=" << m << " V=" << V << " "
                                         << runtime_model_name(model) << " t_c=" << io::to_string(c.c));
                REQUIRE(prove_executed(g.view(), c, model));
                ++proved;
              }
            }
          }
        }
      }
    }
  }
  REQUIRE(proved > 10000);
}

TEST_CASE("stream_loss_bound: no lowering runs below it, and it is reached where the stream order is best",
          "[execute][streams][lower]") {
  // Every family, P 2..4, m <= 2P + 1, V <= 2, three latencies: the lists of every
  // ctpipe order that completes under a stream model lose at least the bound there.
  int runs = 0, reached = 0;
  for (const rational latency : {rational{1, 4}, rational{1, 2}, rational{1}}) {
    const costs c = with_latency(latency);
    for (const schedule_family family : all_families) {
      for (int P = 2; P <= 4; ++P) {
        for (int m = 1; m <= 2 * P + 1; ++m) {
          for (int V = 1; V <= 2; ++V) {
            const schedule_spec spec{family, {P, m, V, natural_placement(family)}};
            if (spec_error(spec) != nullptr) continue;
            const schedule g = generate(spec);
            const rational simulated = simulate(g.view(), c).makespan();
            for (const runtime_model model : stream_models) {
              INFO(family_name(family) << " P=" << P << " m=" << m << " V=" << V << " " << runtime_model_name(model)
                                       << " t_c=" << io::to_string(latency));
              const rational bound = stream_loss_bound(g.view(), c, model);
              REQUIRE(bound >= rational{0});
              if (stream_spacing(g.view(), c, model)) REQUIRE(bound == rational{0});
              for (const runtime_model order : {model, runtime_model::rendezvous, runtime_model::posted}) {
                const execution e = execute(lower(g.view(), c, order).view(), c, model);
                if (!e.completed()) {  // the stream and key orders run under every policy; the posted may hang
                  REQUIRE(order == runtime_model::posted);
                  continue;
                }
                REQUIRE(e.makespan() - simulated >= bound);
                ++runs;
                if (order == model && bound > rational{0} && e.makespan() - simulated == bound) ++reached;
              }
            }
          }
        }
      }
    }
  }
  REQUIRE(runs > 3000);
  REQUIRE(reached > 20);  // a loss that no order avoids, and the stream order's
  // One by hand: looped BFS, P = 2, m = 3, V = 2, t_c = 1/2, one stream per rank: the
  // stream order loses 1, and no order loses less.
  const costs c = with_latency(rational{1, 2});
  const schedule g = generate({schedule_family::looped_bfs, {2, 3, 2, placement::loop}});
  const execution e = execute(lower(g.view(), c, runtime_model::stream_rank).view(), c, runtime_model::stream_rank);
  REQUIRE(e.makespan() - simulate(g.view(), c).makespan() == rational{1});
  REQUIRE(stream_loss_bound(g.view(), c, runtime_model::stream_rank) == rational{1});
  REQUIRE_THROWS_WITH(stream_loss_bound(g.view(), c, runtime_model::posted),
                      "ctpipe: stream_loss_bound() takes a stream model");
}

TEST_CASE("lowering for each model: structure, validity and peer order over P <= 5, m <= 10, V <= 3",
          "[execute][lower]") {
  using ctpipe::tests::prove_lowering_grid;
  const costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
  for (const schedule_family family : all_families) {
    for (const runtime_model model : all_runtime_models) {
      INFO(family_name(family) << " " << runtime_model_name(model));
      REQUIRE(prove_lowering_grid(family, interleaved_variant::megatron, 1, 5, 1, 10, 3, uneven, model));
    }
  }
}

TEST_CASE("key order with costs of fine denominators: sorted by comparison, still deadlock-free", "[execute][lower]") {
  // t_c = 1/1000000 makes the tick a millionth: the makespan in ticks is far above the op
  // count, and the lowering sorts by comparison instead of counting ticks.
  const costs fine{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 1000000}};
  for (const schedule_family family : all_families) {
    INFO(family_name(family));
    const schedule g = generate({family, {4, 8, chunks_default(family), natural_placement(family)}});
    for (const runtime_model model : {runtime_model::rendezvous, runtime_model::batched}) {
      const schedule l = lower(g.view(), fine, model);
      REQUIRE(simulate(g.view(), fine).makespan_ticks() > 4 * static_cast<std::int64_t>(g.size()) + 64);
      REQUIRE(validate_lowered(l.view(), send_semantics::rendezvous).ok());
      REQUIRE(peer_order_consistent(l.view()));
      REQUIRE(execute(l.view(), fine, model).completed());
    }
  }
}

TEST_CASE("runtime models: names", "[execute]") {
  runtime_model m = runtime_model::blocking;
  REQUIRE(runtime_model_from_name("batched", m));
  REQUIRE(m == runtime_model::batched);
  REQUIRE_FALSE(runtime_model_from_name("eager", m));
  REQUIRE(m == runtime_model::batched);
  REQUIRE(std::string(runtime_model_name(runtime_model::posted)) == "posted");
}

TEST_CASE("the loss tables of docs/runtimes.md and bench/RESULTS.md: every row recomputed", "[execute][docs]") {
  // Each row: family, P, m, V, costs, simulate()'s makespan, then per model (blocking,
  // posted, rendezvous, batched) the loss of execute(lower(v, c, model), c, model):
  // `0` or `+loss (percent%)`, as bench/runtime_loss.cpp prints them.
  const std::pair<const char*, costs> sets[] = {
      {"equal, t_c = 0", costs{rational{1}, rational{1}, rational{1}, rational{1}, rational{0}}},
      {"article, t_c = 0", costs{}},
      {"article, t_c = 1/2", costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}}},
      {"f=1 b=3 i=2 w=1 c=1/10", costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 10}}},
  };
  const runtime_model models[] = {runtime_model::blocking, runtime_model::posted, runtime_model::rendezvous,
                                  runtime_model::batched};
  int rows = 0;
  for (const char* file : {"/docs/runtimes.md", "/bench/RESULTS.md"}) {
    std::ifstream in(std::string(CTPIPE_SOURCE_DIR) + file);
    REQUIRE(in.good());
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> cells;
      for (std::size_t at = 1; at < line.size();) {  // the cells between the bars, trimmed
        const std::size_t bar = line.find('|', at);
        if (bar == std::string::npos) break;
        std::string cell = line.substr(at, bar - at);
        cell.erase(0, cell.find_first_not_of(' '));
        cell.erase(cell.find_last_not_of(' ') + 1);
        cells.push_back(cell);
        at = bar + 1;
      }
      schedule_family family{};
      if (line.rfind("| ", 0) != 0 || cells.size() != 10 || !family_from_name(cells[0], family)) continue;
      INFO(file << ": " << line);
      const costs* c = nullptr;
      for (const auto& [name, set] : sets) c = cells[4] == name ? &set : c;
      REQUIRE(c != nullptr);
      const schedule g = generate(
          {family, {std::stoi(cells[1]), std::stoi(cells[2]), std::stoi(cells[3]), natural_placement(family)}});
      const rational sim = simulate(g.view(), *c).makespan();
      REQUIRE(io::to_string(sim) == cells[5]);
      for (int k = 0; k < 4; ++k) {
        const rational loss = execute(lower(g.view(), *c, models[k]).view(), *c, models[k]).makespan() - sim;
        const std::string expected =
            loss == rational{0} ? "0"
                                : fmt::format("+{} ({:.0f}%)", io::to_string(loss), 100.0 * (loss / sim).to_double());
        REQUIRE(cells[6 + static_cast<std::size_t>(k)] == expected);
      }
      ++rows;
    }
  }
  REQUIRE(rows == 32 + 64);  // P = 4 in both files, P = 8 in RESULTS.md
}

// ---------------------------------------------------------------------------------------
// Stream models (docs/spec.md §7, docs/runtimes.md): NCCL's first-in first-out streams
// under four channel policies.

namespace {

/// P = 3, m = 2, 1F1B-like; rank 1 posts RECV_B(1, 0) before RECV_F(1, 1): under
/// stream-rank the receive of micro-batch 1's activation (which rank 0 sends at 2)
/// queues behind the gradient, which rank 2 sends only at 4 (tests/data/lowered/
/// stream_head_of_line_P3_m2.csv holds the same lists).
constexpr schedule streams_head_of_line() {
  return from_lists({3, 2},
                    {{F(0, 0), send_f(0, 0), F(0, 1), send_f(0, 1), recv_b(0, 0), B(0, 0), recv_b(0, 1), B(0, 1)},
                     {recv_f(1, 0), F(1, 0), send_f(1, 0), recv_b(1, 0), recv_f(1, 1), F(1, 1), send_f(1, 1), B(1, 0),
                      send_b(1, 0), recv_b(1, 1), B(1, 1), send_b(1, 1)},
                     {recv_f(2, 0), F(2, 0), B(2, 0), send_b(2, 0), recv_f(2, 1), F(2, 1), B(2, 1), send_b(2, 1)}});
}

constexpr costs equal_costs() {
  costs c;
  c.b = rational{1};
  return c;
}

/// An independent reference for the stream models, written from their rule (docs/spec.md
/// §7) and sharing no code with execute(): exact rationals, a fixed-point loop that
/// advances every rank and every stream until nothing moves (quadratic; small lists
/// only). Compute durations come from simulate() of the compute part. Per op of `l`: a
/// compute op's start; whether every rank finished; the makespan.
struct stream_reference {
  bool completed = false;
  rational makespan{0};
  std::vector<rational> start;
};

stream_reference run_stream_reference(schedule_view l, const costs& c, runtime_model model) {
  const int P = l.shape.P;
  const std::size_t n = l.size();
  const schedule compute = compute_part(l);
  const simulation sim = simulate(compute.view(), c);
  std::vector<rational> length(n, rational{0});
  std::vector<int> owner(n);
  std::vector<std::map<std::uint32_t, std::size_t>> transfers(static_cast<std::size_t>(P));  // per rank: op -> index
  std::size_t i = 0;
  for (int r = 0; r < P; ++r) {
    for (std::size_t k = l.offsets[static_cast<std::size_t>(r)]; k < l.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      owner[k] = r;
      if (is_transfer(l.ops[k].kind())) {
        transfers[static_cast<std::size_t>(r)][l.ops[k].bits] = k;
      } else {
        length[k] = sim.end(i) - sim.start(i);
        ++i;
      }
    }
  }
  auto partner = [&](std::size_t k) {
    const op o = l.ops[k];
    return transfers[static_cast<std::size_t>(peer_rank(l.shape, o))].at(matching_transfer(o).bits);
  };
  // The policy's channel of each transfer, as a tuple, numbered in order of appearance.
  std::map<std::tuple<int, int, int>, std::size_t> numbers;
  std::vector<std::vector<std::size_t>> streams;
  std::vector<std::size_t> stream(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const op o = l.ops[k];
    if (!is_transfer(o.kind())) continue;
    const int r = owner[k], q = peer_rank(l.shape, o);
    const bool send = is_send(o.kind()), forward = o.kind() == op_kind::send_f || o.kind() == op_kind::recv_f;
    std::tuple<int, int, int> channel{r, 0, 0};
    if (model == runtime_model::stream_peer) channel = {r, q, 0};
    if (model == runtime_model::stream_direction) channel = {r, forward ? 1 : 2, 0};
    if (model == runtime_model::stream_edge) channel = {r, send ? r : q, send ? q : r};
    const auto [at, fresh] = numbers.try_emplace(channel, streams.size());
    if (fresh) streams.emplace_back();
    streams[at->second].push_back(k);
    stream[k] = at->second;
  }
  std::vector<std::size_t> pos(static_cast<std::size_t>(P)), head(streams.size(), 0);
  for (int r = 0; r < P; ++r) pos[static_cast<std::size_t>(r)] = l.offsets[static_cast<std::size_t>(r)];
  std::vector<rational> clock(static_cast<std::size_t>(P), rational{0}), free(streams.size(), rational{0});
  std::vector<std::optional<rational>> issued(n), done(n);
  stream_reference out;
  out.start.assign(n, rational{0});
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < P; ++r) {
      std::size_t& k = pos[static_cast<std::size_t>(r)];
      rational& now = clock[static_cast<std::size_t>(r)];
      while (k < l.offsets[static_cast<std::size_t>(r) + 1]) {
        const op o = l.ops[k];
        if (is_transfer(o.kind())) {
          issued[k] = now, ++k, moved = true;
          continue;
        }
        const std::size_t words = o.kind() == op_kind::overlap_f_b ? 2 : 1;
        rational at = now;
        bool ready = true;
        for (std::size_t h = 0; h < words; ++h) {  // the RECVs it consumes
          const op w = l.ops[k + h];
          if (w.kind() == op_kind::W) continue;
          const bool forward = w.kind() == op_kind::F || w.kind() == op_kind::overlap_f_b;
          const op recv{forward ? op_kind::recv_f : op_kind::recv_b, w.stage(), w.microbatch()};
          const auto found = transfers[static_cast<std::size_t>(r)].find(recv.bits);
          if (found == transfers[static_cast<std::size_t>(r)].end()) continue;  // a local input
          if (!done[found->second]) ready = false;
          if (ready) at = std::max(at, *done[found->second]);
        }
        if (!ready) break;
        for (std::size_t h = 0; h < words; ++h) out.start[k + h] = at;
        now = at + length[k], k += words, moved = true;
        out.makespan = std::max(out.makespan, now);
      }
    }
    for (std::size_t s = 0; s < streams.size(); ++s) {
      while (head[s] < streams[s].size()) {
        const std::size_t x = streams[s][head[s]], y = partner(x), t = stream[y];
        if (!issued[x] || !issued[y] || streams[t][head[t]] != y) break;
        const rational end = std::max(std::max(*issued[x], free[s]), std::max(*issued[y], free[t])) + c.c;
        done[x] = done[y] = end, free[s] = free[t] = end, ++head[s], ++head[t], moved = true;
      }
    }
  }
  out.completed = true;
  for (int r = 0; r < P; ++r)
    out.completed = out.completed && pos[static_cast<std::size_t>(r)] == l.offsets[static_cast<std::size_t>(r) + 1];
  return out;
}

/// Whether execute() under stream model `model` agrees with the reference on `l`: both
/// hang, or both complete with the same makespan and every compute op's start.
bool agrees_with_reference(schedule_view l, const costs& c, runtime_model model) {
  const execution e = execute(l, c, model);
  const stream_reference ref = run_stream_reference(l, c, model);
  if (e.completed() != ref.completed) return false;
  if (!e.completed()) return true;
  if (e.makespan() != ref.makespan) return false;
  for (std::size_t k = 0; k < l.size(); ++k) {
    if (!is_transfer(l.ops[k].kind()) && e.start(k) != ref.start[k]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("stream models: head-of-line blocking under stream-rank, times by hand", "[execute][streams]") {
  // t_f = t_b = 1, t_c = 0. simulate(): rank 1 runs F(1,0) [1,2], F(1,1) [2,3], B(1,0)
  // [4,5], B(1,1) [6,7]; rank 2 F(2,0) [2,3], B(2,0) [3,4], F(2,1) [4,5], B(2,1) [5,6];
  // rank 0 B(0,1) [7,8]: makespan 8.
  // stream-rank, rank 1's one stream in list order: RECV_F(1,0), SEND_F(1,0), RECV_B(1,0),
  // RECV_F(1,1), SEND_F(1,1), SEND_B(1,0), RECV_B(1,1), SEND_B(1,1). RECV_F(1,0) meets
  // rank 0's SEND_F(0,0) at 1; F(1,0) [1,2]; at 2 rank 1 issues SEND_F(1,0) (it meets
  // rank 2's RECV_F(2,0) at 2), RECV_B(1,0) and RECV_F(1,1). RECV_B(1,0) heads the stream
  // from 2 but its SEND_B(2,0) comes at 4 (F(2,0) [2,3], B(2,0) [3,4]); rank 0's
  // SEND_F(0,1), issued at 2, waits for RECV_F(1,1), queued behind it: both at 4. So
  // F(1,1) [4,5] (a stall [2,4): its transfer alone would have been there at 2),
  // SEND_F(1,1) at 5 meets rank 2's RECV_F(2,1) (issued at 4): F(2,1) [5,6], B(2,1)
  // [6,7], SEND_B(2,1) at 7; rank 1: B(1,0) [5,6], SEND_B(1,0) at 6 meets RECV_B(0,0):
  // B(0,0) [6,7]; RECV_B(1,1) meets SEND_B(2,1) at 7: B(1,1) [7,8]; SEND_B(1,1) at 8:
  // B(0,1) [8,9]. Makespan 9, stall 2 on rank 1 only.
  // With a stream per peer, direction or edge RECV_F(1,1) does not queue behind
  // RECV_B(1,0), and every op runs at its simulated time: makespan 8.
  const schedule s = streams_head_of_line();
  const costs c = equal_costs();
  REQUIRE(simulate(compute_part(s.view()).view(), c).makespan() == rational{8});
  const execution e = execute(s.view(), c, runtime_model::stream_rank);
  REQUIRE(e.completed());
  REQUIRE(e.makespan() == rational{9});
  REQUIRE(e.stall(0) == rational{0});
  REQUIRE(e.stall(1) == rational{2});
  REQUIRE(e.stall(2) == rational{0});
  REQUIRE(e.stall_intervals().size() == 1);
  REQUIRE(e.stall_intervals()[0] == stall_interval{1, 12, 2, 4});  // on RECV_F(1,1), op 12
  REQUIRE(e.start(13) == rational{4});                             // F(1,1)
  REQUIRE(e.reached(13) == rational{2});
  // The transfers on the stream: RECV_B(1,0) (op 11) heads it from 2 and completes at 4;
  // RECV_F(1,1) reaches the head at 4; both return when issued, at 2.
  REQUIRE(e.start(11) == rational{2});
  REQUIRE(e.end(11) == rational{2});
  REQUIRE(e.transfer_start(11) == rational{2});
  REQUIRE(e.transfer_end(11) == rational{4});
  REQUIRE(e.transfer_start(12) == rational{4});
  REQUIRE(e.transfer_end(12) == rational{4});
  REQUIRE(e.stream_of(12) == 4);          // rank 1's one stream
  REQUIRE(e.stream_of(13) == 12);         // not a transfer: streams_per_rank * P
  REQUIRE(e.transfer_partner(12) == 3);   // rank 0's SEND_F(0,1)
  REQUIRE(e.stream_head(4) == s.size());  // every op of the stream completed
  for (const runtime_model model :
       {runtime_model::stream_peer, runtime_model::stream_direction, runtime_model::stream_edge}) {
    INFO(runtime_model_name(model));
    const execution other = execute(s.view(), c, model);
    REQUIRE(other.makespan() == rational{8});
    REQUIRE(other.stall(1) == rational{0});
    REQUIRE(other.stall_intervals().empty());
  }
  // Evaluated at compile time too, through the same function.
  static_assert([] {
    const execution x = execute(streams_head_of_line().view(), equal_costs(), runtime_model::stream_rank);
    return x.makespan() == rational{9} && x.stall_intervals().size() == 1 &&
           x.stall_intervals()[0] == stall_interval{1, 12, 2, 4};
  }());
  static_assert(execute(streams_head_of_line().view(), equal_costs(), runtime_model::stream_edge).makespan() ==
                rational{8});
  for (const runtime_model model : stream_models) REQUIRE(agrees_with_reference(s.view(), c, model));
}

TEST_CASE("stream models: a looped schedule's FIFO cycle (pytorch#195760) hangs on a shared stream, runs per edge",
          "[execute][streams]") {
  // P = 2, V = 2 (stages 0 and 2 on rank 0, 1 and 3 on rank 1), m = 2, forwards then
  // backwards, each transfer next to its op (tests/data/lowered/stream_fifo_cycle_*.csv).
  // Rank 0 issues SEND_F(0,0), SEND_F(0,1), then RECV_F(2,0), the activation coming back
  // around the loop; rank 1 issues RECV_F(1,0), SEND_F(1,0), RECV_F(1,1). On one stream
  // per rank: SEND_F(0,1) waits for RECV_F(1,1), queued behind SEND_F(1,0), which waits
  // for RECV_F(2,0), queued behind SEND_F(0,1): a cycle. Per direction (all four are
  // activations) and per peer (P = 2: one peer) it is the same stream; per directed edge
  // the SENDs to rank 1 and the RECVs from rank 1 are on different streams of rank 0,
  // and the lists run as simulated.
  const schedule s = read_csv("stream_fifo_cycle_P2_m2_V2.csv");
  const costs c{};
  for (const runtime_model model :
       {runtime_model::stream_rank, runtime_model::stream_peer, runtime_model::stream_direction}) {
    INFO(runtime_model_name(model));
    const execution e = execute(s.view(), c, model);
    REQUIRE_FALSE(e.completed());
    // Rank 0 waits at F(2,0) for RECV_F(2,0), queued behind SEND_F(0,1), whose RECV_F(1,1)
    // rank 1 holds behind its own head SEND_F(1,0): each names what its stream's head
    // needs (the rank it waits on), RECV_F(1,1) and RECV_F(2,0).
    REQUIRE(e.stuck().size() == 2);
    REQUIRE(e.stuck()[0] == validation_issue{fault::deadlock, 0, 5, F(2, 0), recv_f(1, 1)});
    REQUIRE(e.stuck()[1] == validation_issue{fault::deadlock, 1, 4, F(1, 1), recv_f(2, 0)});
    REQUIRE(e.stream_head(e.stream_of(4)) == 3);    // rank 0's stream: SEND_F(0,1) at its head
    REQUIRE(e.stream_head(e.stream_of(23)) == 22);  // rank 1's stream: SEND_F(1,0) at its head
    REQUIRE(e.transfer_partner(3) == 23);           // RECV_F(1,1), issued, behind it
    REQUIRE(agrees_with_reference(s.view(), c, model));
  }
  const std::string cycle = ctpipe::tool::stream_cycle(s.view(), execute(s.view(), c, runtime_model::stream_rank));
  REQUIRE(cycle ==
          "rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream; rank 0's stream: its head 0SEND_F1 needs 1RECV_F1, "
          "queued on rank 1's stream behind 1SEND_F0; rank 1's stream: its head 1SEND_F0 needs 2RECV_F0, queued on "
          "rank 0's stream behind 0SEND_F1; back to rank 0's stream");
  const execution edge = execute(s.view(), c, runtime_model::stream_edge);
  REQUIRE(edge.completed());
  REQUIRE(edge.makespan() == simulate(compute_part(s.view()).view(), c).makespan());
  REQUIRE(agrees_with_reference(s.view(), c, runtime_model::stream_edge));
  REQUIRE(ctpipe::tool::stream_cycle(s.view(), edge).empty());
  // One stream per message would be posted: the lists run under it too.
  REQUIRE(execute(s.view(), c, runtime_model::posted).makespan() == edge.makespan());
}

TEST_CASE("stream models: ctpipe's lower() for them runs under every policy at P = 4, losses as the reference has them",
          "[execute][streams][lower]") {
  // lower(v, c, stream model) is the key order with each RECV moved up to its stream's
  // previous transfer (one order per policy). Without latency it loses nothing for any
  // family (against simulate()); with t_c = 1/2 it loses where a stream must carry two
  // messages closer than t_c, and these losses (docs/runtimes.md) are the reference's
  // too: per family at P = 4, m = 8 (the tool's V), article costs, t_c = 1/2, under
  // stream-rank, -peer, -direction, -edge. `key` is the key order's loss (the lists of
  // rendezvous, which the stream order reorders): never less.
  struct row {
    schedule_family family;
    rational loss[4];
    rational key[4];
    rational bound[4];  // stream_loss_bound(): no order of the transfers loses less
  };
  const rational h{1, 2};
  const row rows[] = {
      {schedule_family::gpipe, {0, 0, 0, 0}, {9, 7, 9, 7}, {0, 0, 0, 0}},
      {schedule_family::one_f_one_b, {0, 0, 0, 0}, {5, 4, 2, 1}, {0, 0, 0, 0}},
      {schedule_family::interleaved_1f1b, {41 * h, 0, 14, 0}, {41 * h, 0, 15, 0}, {3, 0, h, 0}},
      {schedule_family::looped_bfs, {33 * h, 0, 33 * h, 0}, {25, 15 * h, 25, 15 * h}, {7, 0, 7, 0}},
      {schedule_family::zb_h1, {0, 0, 0, 0}, {9 * h, 7 * h, 7 * h, 5 * h}, {0, 0, 0, 0}},
      {schedule_family::zb_h2, {1, 0, 0, 0}, {7, 3, 7 * h, 5 * h}, {0, 0, 0, 0}},
      {schedule_family::zbv, {19 * h, h, 4, 0}, {23 * h, 3 * h, 6, 0}, {7 * h, 0, 0, 0}},
      {schedule_family::interleaved_zb, {11, 5 * h, 8, 0}, {12, 5 * h, 8, 0}, {h, h, h, 0}},
      {schedule_family::dualpipev, {19 * h, 4, 7 * h, 7 * h}, {13, 8, 6, 7 * h}, {1, h, 0, h}},
      {schedule_family::dualpipe, {4, 4, 5 * h, 1}, {13 * h, 6, 9 * h, 2}, {3 * h, 3 * h, h, h}},
      {schedule_family::v_half, {7, 2, 7 * h, 0}, {15 * h, 5 * h, 9 * h, 0}, {h, h, 0, 0}},
      {schedule_family::v_min, {2, 0, 1, 0}, {2, 0, 1, 0}, {0, 0, 0, 0}},
      {schedule_family::combined_1f1b, {17, 0, 7, 0}, {59 * h, 5, 31 * h, h}, {h, 0, 0, 0}},
  };
  REQUIRE(std::size(rows) == std::size(all_families));
  const costs article{}, latency = with_latency(rational{1, 2});
  // DualPipeV read split (each half of a pair its own op) too, at the article's costs.
  const schedule split = split_pairs(generate({schedule_family::dualpipev, {4, 8, 2, placement::v_shape}}).view());
  for (const runtime_model model : stream_models) {
    INFO("dualpipev split " << runtime_model_name(model));
    REQUIRE(agrees_with_reference(lower(split.view(), article, model).view(), article, model));
  }
  for (const row& x : rows) {
    const schedule g = generate({x.family, {4, 8, chunks_default(x.family), natural_placement(x.family)}});
    for (const costs& c : {equal_costs(), article, latency}) {
      const schedule keyed = lower(g.view(), c, runtime_model::rendezvous);
      const rational simulated = simulate(g.view(), c).makespan();
      for (std::size_t p = 0; p < 4; ++p) {
        const runtime_model model = stream_models[p];
        INFO(family_name(x.family) << " " << runtime_model_name(model) << " t_c = " << io::to_string(c.c));
        const schedule own = lower(g.view(), c, model);
        const execution e = execute(own.view(), c, model);
        REQUIRE(e.completed());
        REQUIRE(tests::execution_consistent(e, own.view()));
        REQUIRE(agrees_with_reference(own.view(), c, model));
        REQUIRE(stream_order_consistent(own.view(), model));
        const bool latent = c.c != rational{0};
        REQUIRE(e.makespan() - simulated == (latent ? x.loss[p] : rational{0}));
        REQUIRE(execute(keyed.view(), c, model).makespan() - simulated == (latent ? x.key[p] : rational{0}));
        if (stream_spacing(g.view(), c, model)) REQUIRE(e.makespan() == simulated);
        if (e.makespan() != simulated) REQUIRE_FALSE(stream_spacing(g.view(), c, model));
        REQUIRE(stream_loss_bound(g.view(), c, model) == (latent ? x.bound[p] : rational{0}));
      }
    }
  }
}

TEST_CASE("stream models: the adjacent and posted orders hang on shared streams, and finer policies never run slower",
          "[execute][streams][lower]") {
  // ctpipe's other lowerings are not made for streams. P = 4, m = 8, the tool's V,
  // article costs: which of them hang, as the reference has it. Under stream-rank every
  // family but GPipe hangs with either order (a rank's SEND to the next stage queues
  // ahead of a RECV that the next stage's SEND waits for: the cycle of pytorch#172668);
  // per edge only the V-shape families hang with the adjacent order, whose messages
  // between two ranks come in different orders on the two sides, and nothing hangs with
  // the posted order.
  // Refinement: a policy whose streams split another's (edge of peer; peer and
  // direction of rank) keeps every constraint or drops some, so when the coarser one
  // runs, the finer one runs no slower (a least fixed point of a monotone system; the
  // reference checks each run). Edge refines direction when every rank sends its
  // activations to one peer and its gradients to the other (the loop placement, P > 2).
  const costs c{};
  for (const schedule_family family : all_families) {
    const schedule g = generate({family, {4, 8, chunks_default(family), natural_placement(family)}});
    const bool v_shape = natural_placement(family) == placement::v_shape;
    const bool loop = natural_placement(family) == placement::loop;
    for (const runtime_model order : {runtime_model::blocking, runtime_model::posted, runtime_model::stream_rank}) {
      const schedule l = lower(g.view(), c, order);
      std::vector<execution> runs;
      for (const runtime_model model : stream_models) {
        INFO(family_name(family) << " order " << runtime_model_name(order) << " under " << runtime_model_name(model));
        REQUIRE(agrees_with_reference(l.view(), c, model));
        runs.push_back(execute(l.view(), c, model));
      }
      INFO(family_name(family) << " order " << runtime_model_name(order));
      if (order != runtime_model::stream_rank) {
        REQUIRE(runs[0].completed() == (family == schedule_family::gpipe));
        REQUIRE(runs[3].completed() == (order == runtime_model::posted || !v_shape));
      }
      auto no_slower = [](const execution& finer, const execution& coarser) {
        return !coarser.completed() || (finer.completed() && finer.makespan() <= coarser.makespan());
      };
      REQUIRE(no_slower(runs[1], runs[0]));            // peer, rank
      REQUIRE(no_slower(runs[2], runs[0]));            // direction, rank
      REQUIRE(no_slower(runs[3], runs[1]));            // edge, peer
      if (loop) REQUIRE(no_slower(runs[3], runs[2]));  // edge, direction
    }
  }
  // The shape of pytorch#195760: interleaved 1F1B, P = 4, V = 2, lowered with each
  // transfer next to its op. One forward FIFO per rank (stream-direction) hangs; one
  // stream per directed rank pair runs it as simulated.
  const schedule interleaved = lower(generate({schedule_family::interleaved_1f1b, {4, 8, 2}}).view());
  REQUIRE_FALSE(execute(interleaved.view(), c, runtime_model::stream_direction).completed());
  const execution per_edge = execute(interleaved.view(), c, runtime_model::stream_edge);
  REQUIRE(per_edge.makespan() == simulate(compute_part(interleaved.view()).view(), c).makespan());
}
