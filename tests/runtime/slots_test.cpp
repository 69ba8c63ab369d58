// Activation slots and receive buffers (ctpipe/analysis/slots.hpp) at run time: the grid
// of tests/static/proofs_slots.cpp through the same functions on more points and every
// runtime model, a brute-force count of the overlaps, the relation to in_flight()'s peak,
// hand-derived lists that show the liveness rule, and the errors.
#include <ctpipe/ctpipe.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_slots.hpp"

using namespace ctpipe;

namespace {

/// A schedule of `shape` from per-rank op lists.
schedule lists_of(const pipeline_shape& shape, std::initializer_list<std::vector<op>> ranks) {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.size();
  schedule s{shape, n};
  std::size_t at = 0, r = 0;
  for (const auto& ops : ranks) {
    s.offsets()[r++] = static_cast<std::uint32_t>(at);
    for (const op o : ops) s.ops()[at++] = o;
  }
  s.offsets()[r] = static_cast<std::uint32_t>(at);
  return s;
}

/// The most lifetimes of rank r's kind k that hold one op of its list, by brute force
/// over every pair (the maximum is reached at some lifetime's first op): the ops
/// [first_op, last_op], both included.
int brute_overlap(const slot_plan& p, int r, slot_kind k) {
  int best = 0;
  for (const slot_lifetime& at : p.of(r, k)) {
    int n = 0;
    for (const slot_lifetime& l : p.of(r, k)) n += l.first_op <= at.first_op && at.first_op <= l.last_op;
    best = n > best ? n : best;
  }
  return best;
}

const costs uneven{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};

}  // namespace

TEST_CASE("slots: the static grid holds at run time, on more points and under every runtime model", "[slots][proofs]") {
  for (const schedule_family f : all_families) {
    INFO(family_name(f));
    const int m_hi = f == schedule_family::dualpipe || f == schedule_family::dualpipev ? 16 : 12;
    REQUIRE(ctpipe::tests::prove_slots_grid(f, 2, 6, m_hi, uneven, all_runtime_models));
    REQUIRE(ctpipe::tests::prove_slots_grid(f, 2, 4, m_hi, costs{}, all_runtime_models));
  }
}

TEST_CASE("slots: the count equals a brute-force count of the largest overlap, and for activations in_flight's peak",
          "[slots]") {
  for (const schedule_family f : all_families) {
    for (const int P : {2, 3, 4}) {
      const schedule_spec spec{f, {P, 2 * P + 2, family_of(f).default_V, natural_placement(f)}};
      if (spec_error(spec) != nullptr) continue;
      INFO(family_name(f) << " P = " << P);
      const schedule g = generate(spec);
      const slot_plan sim = plan_slots(g.view(), simulate(g.view(), uneven));
      const in_flight_profile flight = in_flight(g.view());
      for (int r = 0; r < P; ++r) {
        REQUIRE(sim.count(r, slot_kind::activation) == brute_overlap(sim, r, slot_kind::activation));
        // in_flight() counts an activation from its F to its B or W in list order, as
        // the lifetimes do: its peak is the largest overlap.
        REQUIRE(rational{sim.count(r, slot_kind::activation)} == flight.peak(r));
      }
      const schedule l = lower(g.view(), uneven, runtime_model::posted);
      const slot_plan run = plan_slots(l.view(), execute(l.view(), uneven, runtime_model::posted));
      for (int r = 0; r < P; ++r) {
        for (const slot_kind k : {slot_kind::activation, slot_kind::receive})
          REQUIRE(run.count(r, k) == brute_overlap(run, r, k));
      }
    }
  }
}

TEST_CASE("slots: GPipe's m and 1F1B's P - r, in_flight's peaks, whatever the times", "[slots]") {
  // GPipe runs every F of a rank before its first B: all m lifetimes hold its last F.
  const schedule gpipe = generate({schedule_family::gpipe, {4, 6}});
  const slot_plan g = plan_slots(gpipe.view(), simulate(gpipe.view(), costs{}));
  for (int r = 0; r < 4; ++r) {
    REQUIRE(g.count(r, slot_kind::activation) == 6);
    REQUIRE(rational{g.count(r, slot_kind::activation)} == in_flight(gpipe.view()).peak(r));
  }
  // 1F1B at t_f = 1, t_b = 2, t_c = 0 (m >= P): in the steady phase a B ends at the
  // instant the next F starts; they are two ops of the list, so the F takes the B's slot:
  // P - r slots. Read in time with closed intervals the two would touch and need one more.
  const schedule ofob = generate({schedule_family::one_f_one_b, {4, 8}});
  const slot_plan o = plan_slots(ofob.view(), simulate(ofob.view(), costs{}));
  for (int r = 0; r < 4; ++r) {
    REQUIRE(in_flight(ofob.view()).peak(r) == rational{4 - r});
    REQUIRE(o.count(r, slot_kind::activation) == 4 - r);
  }
}

TEST_CASE("slots: F starts a lifetime, B ends it, I does not, W does, and endpoints are inclusive", "[slots]") {
  const costs c{rational{1}, rational{2}, rational{1}, rational{1}, rational{0}};
  // P = 1, m = 2, F0 B0 F1 B1: ops [0, 1] and [2, 3]: one slot, reused (B0 ends at 3 as
  // F1 starts: different ops). F0 F1 B0 B1: [0, 2] and [1, 3] share ops 1 and 2: two.
  const schedule full =
      lists_of({1, 2}, {{op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::B, 0, 1}}});
  const slot_plan a = plan_slots(full.view(), simulate(full.view(), c));
  REQUIRE(a.count(0, slot_kind::activation) == 1);
  REQUIRE(a.largest_overlap(0, slot_kind::activation) == 1);
  REQUIRE(a.start(0) == rational{0});
  REQUIRE(a.end(0) == rational{3});
  REQUIRE(a.start(1) == rational{3});
  REQUIRE(a.end(1) == rational{6});
  REQUIRE(a.lifetimes()[0].slot == 0);
  REQUIRE(a.lifetimes()[1].slot == 0);
  const schedule both =
      lists_of({1, 2}, {{op{op_kind::F, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::B, 0, 0}, op{op_kind::B, 0, 1}}});
  const slot_plan a2 = plan_slots(both.view(), simulate(both.view(), c));
  REQUIRE(a2.count(0, slot_kind::activation) == 2);
  REQUIRE(a2.lifetimes()[1].slot == 1);
  // P = 1, m = 3, F I F I F I W W W at 1 each: with W ending the lifetimes, all three hold
  // F2 (op 4): three slots. Had I ended them (ops [0, 1], [2, 3], [4, 5]) one would do.
  std::vector<op> split;
  for (int j = 0; j < 3; ++j) split.insert(split.end(), {op{op_kind::F, 0, j}, op{op_kind::I, 0, j}});
  for (int j = 0; j < 3; ++j) split.push_back(op{op_kind::W, 0, j});
  const schedule zb = lists_of({1, 3}, {split});
  const slot_plan b = plan_slots(zb.view(), simulate(zb.view(), c));
  REQUIRE(b.count(0, slot_kind::activation) == 3);
  for (std::size_t j = 0; j < 3; ++j) {
    REQUIRE(zb.view().ops[b.lifetimes()[j].last_op].kind() == op_kind::W);
    REQUIRE(b.end(j) == rational{7 + static_cast<std::int64_t>(j)});  // W_j ends at 6 + j + 1
  }
}

TEST_CASE("slots: a receive buffer lives from its RECV's start to the end of the op that consumes it", "[slots]") {
  const schedule g = generate({schedule_family::zb_h1, {3, 6}});
  for (const runtime_model model : all_runtime_models) {
    INFO(runtime_model_name(model));
    const schedule l = lower(g.view(), uneven, model);
    const schedule_view v = l.view();
    const execution run = execute(v, uneven, model);
    const slot_plan p = plan_slots(v, run);
    std::size_t receives = 0;
    for (std::size_t i = 0; i < p.lifetimes().size(); ++i) {
      const slot_lifetime& life = p.lifetimes()[i];
      if (life.kind != slot_kind::receive) continue;
      ++receives;
      const op recv = v.ops[life.first_op];
      // The consumer, found by a scan of the rank's list: the next compute op of the
      // same (stage, micro-batch) that takes the message (F for RECV_F, B or I for RECV_B).
      std::size_t consumer = v.size();
      for (std::size_t k = life.first_op + 1; k < v.offsets[static_cast<std::size_t>(life.rank) + 1]; ++k) {
        const op o = v.ops[k];
        const bool takes = recv.kind() == op_kind::recv_f ? o.kind() == op_kind::F || o.kind() == op_kind::overlap_f_b
                                                          : o.kind() == op_kind::B || o.kind() == op_kind::I;
        if (takes && o.stage() == recv.stage() && o.microbatch() == recv.microbatch()) {
          consumer = k;
          break;
        }
      }
      REQUIRE(life.last_op == consumer);
      REQUIRE(p.start(i) == run.start(life.first_op));
      REQUIRE(p.end(i) == run.end(consumer));
    }
    REQUIRE(receives > 0);
  }
}

TEST_CASE("slots: bad input raises the library's ctpipe: messages", "[slots]") {
  const costs c{};
  const schedule no_backward = lists_of({1, 1}, {{op{op_kind::F, 0, 0}}});
  REQUIRE_THROWS_WITH(plan_slots(no_backward.view(), simulate(no_backward.view(), c)),
                      Catch::Matchers::StartsWith("ctpipe: plan_slots takes a complete schedule"));
  const schedule twice = lists_of({1, 1}, {{op{op_kind::F, 0, 0}, op{op_kind::F, 0, 0}, op{op_kind::B, 0, 0}}});
  REQUIRE_THROWS_WITH(plan_slots(twice.view(), simulate(twice.view(), c)),
                      Catch::Matchers::StartsWith("ctpipe: plan_slots takes a complete schedule"));
  const schedule other = generate({schedule_family::gpipe, {2, 2}});
  const schedule g = generate({schedule_family::gpipe, {2, 3}});
  REQUIRE_THROWS_WITH(plan_slots(g.view(), simulate(other.view(), c)),
                      "ctpipe: plan_slots needs a timeline of the view's ops");
  // Lists that hang under rendezvous (each rank sends before it receives).
  const schedule crossed = lists_of(
      {2, 2}, {{op{op_kind::F, 0, 0}, op{op_kind::send_f, 0, 0}, op{op_kind::F, 0, 1}, op{op_kind::send_f, 0, 1},
                op{op_kind::recv_b, 0, 0}, op{op_kind::B, 0, 0}, op{op_kind::recv_b, 0, 1}, op{op_kind::B, 0, 1}},
               {op{op_kind::recv_f, 1, 1}, op{op_kind::F, 1, 1}, op{op_kind::recv_f, 1, 0}, op{op_kind::F, 1, 0},
                op{op_kind::B, 1, 0}, op{op_kind::send_b, 1, 0}, op{op_kind::B, 1, 1}, op{op_kind::send_b, 1, 1}}});
  const execution hung = execute(crossed.view(), c, runtime_model::rendezvous);
  REQUIRE_FALSE(hung.completed());
  REQUIRE_THROWS_WITH(plan_slots(crossed.view(), hung),
                      Catch::Matchers::StartsWith("ctpipe: plan_slots needs a run that completed"));
  // The same lists complete under blocking (tool_test's `crossed` file): planned.
  REQUIRE(ctpipe::tests::plan_minimal(plan_slots(crossed.view(), execute(crossed.view(), c, runtime_model::blocking))));
}
