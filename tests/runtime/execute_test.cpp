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

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "options.hpp"  // chunks_default: the tool's V per family
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
  const schedule interleaved = read_csv("interleaved-1f1b_P8_m16_V2_unit-order.csv");
  for (const runtime_model model : all_runtime_models) {
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
