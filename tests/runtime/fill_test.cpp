// Bubble filling and activation rebalancing at run time (docs/spec.md §8): the twin of
// tests/static/proofs_fill.cpp over every family and both methods, the exact methods
// against independent ones (the flow against branch-and-bound on unit pieces, the
// branch-and-bound against the greedy), the rebalancing plans replayed by brute force,
// the issue's values, and the tool's `fill` and `rebalance`.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/report.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "proofs_fill.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::encoder_share;
using ctpipe::tests::family_spec;
using ctpipe::tests::fill_is_sound;
using ctpipe::tests::live_brute_force;
using ctpipe::tests::proof_jobs;
using ctpipe::tests::prove_fill;
using ctpipe::tests::run_tool;

namespace {

/// Every family at P and m where it runs (its own rules), else nothing.
std::vector<schedule_spec> specs_at(int P, int m) {
  std::vector<schedule_spec> out;
  for (const family_entry& e : family_table) {
    const schedule_spec s = family_spec(e.id, P, m);
    if (spec_error(s) == nullptr) out.push_back(s);
  }
  return out;
}

/// Level of every rank over time with `plan`'s moves, by brute force (docs/spec.md §8.2,
/// gamma = 1): at each instant where anything changes, per rank the activations of its
/// own stages alive (F started, last backward piece not ended) and not away, plus those
/// it hosts; an activation is away from its arrival at the host to its arrival back.
/// On timeline `sim` (simulate()'s, or a delayed one) with `moves`.
std::vector<rational> peaks_brute_force(schedule_view v, const simulation& sim, rational move,
                                        const std::vector<activation_move>& moves) {
  std::vector<rational> times{sim.makespan()};
  for (std::size_t k = 0; k < v.size(); ++k) times.push_back(sim.start(k)), times.push_back(sim.end(k));
  for (const activation_move& mv : moves) times.push_back(mv.send + move), times.push_back(mv.back + move);
  std::vector<rational> peak(static_cast<std::size_t>(v.shape.P), rational{0});
  for (const rational& t : times) {
    std::vector<std::int64_t> level(peak.size(), 0);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const op o = v.ops[k];
      if (o.kind() != op_kind::F && o.kind() != op_kind::overlap_f_b) continue;
      std::size_t last = tests::find_op(v, op{op_kind::B, o.stage(), o.microbatch()});
      if (last == v.size()) last = tests::find_op(v, op{op_kind::W, o.stage(), o.microbatch()});
      if (!(sim.start(k) <= t && t < sim.end(last))) continue;
      int where = v.shape.rank_of(o.stage());
      for (const activation_move& mv : moves) {
        if (mv.stage == o.stage() && mv.microbatch == o.microbatch() && mv.send + move <= t && t < mv.back + move)
          where = mv.to;
      }
      ++level[static_cast<std::size_t>(where)];
    }
    for (std::size_t r = 0; r < peak.size(); ++r) peak[r] = max(peak[r], rational{level[r]});
  }
  return peak;
}

std::vector<rational> peaks_brute_force(schedule_view v, const costs& c, const rebalance_plan& plan) {
  return peaks_brute_force(v, simulate(v, c), c.move, plan.moves);
}

/// Calls need(o) for each input of op k of `v` by docs/spec.md §2, restated here apart
/// from the library's tables: F(s, j) needs F(s-1, j) past its first stage; a B or I
/// (s, j) needs F(s, j) and, below its last stage, the backward of (s+1, j), passed as a
/// B (a caller falls back to the I where the schedule splits backwards); a W needs its
/// I; an overlapped pair's word needs the inputs of its F half and of its B half (the
/// word after it).
template <class Need>
void for_each_input(schedule_view v, std::size_t k, Need need) {
  const auto deps = [&](op o) {
    const int s = o.stage(), j = o.microbatch();
    const op_kind kind = o.kind() == op_kind::overlap_f_b ? op_kind::F : o.kind();
    if (kind == op_kind::F && s > v.shape.first_stage(j)) need(op{op_kind::F, s - 1, j});
    if (kind == op_kind::B || kind == op_kind::I) {
      need(op{op_kind::F, s, j});
      if (s < v.shape.last_stage(j)) need(op{op_kind::B, s + 1, j});
    }
    if (kind == op_kind::W) need(op{op_kind::I, s, j});
  };
  deps(v.ops[k]);
  if (v.ops[k].kind() == op_kind::overlap_f_b) deps(v.ops[k + 1]);
}

/// When op k of `v` may start in timeline `d` by docs/spec.md §2, restated here apart from
/// the library's graph: after the op ahead of it on its rank and after its inputs
/// (for_each_input()), t_c added across ranks; nullopt when an input is missing.
std::optional<rational> ready_in(schedule_view v, const costs& c, const simulation& d, std::size_t k) {
  const auto rank_of = [&](std::size_t q) {
    int r = 0;
    while (v.offsets[r + 1] <= q) ++r;
    return r;
  };
  const int r = rank_of(k);
  const bool pair_b = k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b;
  if (pair_b) return d.start(k - 1);  // a pair's B word runs with its word
  rational ready{0};
  if (k > v.offsets[r]) ready = d.end(k - 1);
  std::vector<std::size_t> inputs;
  for_each_input(v, k, [&](op o) {
    const std::size_t q = tests::find_op(v, o);
    inputs.push_back(
        q == v.size() && o.kind() == op_kind::B ? tests::find_op(v, op{op_kind::I, o.stage(), o.microbatch()}) : q);
  });
  for (const std::size_t in : inputs) {
    if (in == v.size()) return std::nullopt;
    if (in == k) continue;  // a pair's B half needs its own F half: the pair itself
    ready = max(ready, d.end(in) + (rank_of(in) != r ? c.c : rational{0}));
  }
  return ready;
}

/// The first problem of delayed timeline `d` of `v` under `c` (empty when none): every op
/// keeps its length, starts no earlier than simulate() says and no earlier than
/// ready_in().
std::string delayed_timeline_problem(schedule_view v, const costs& c, const simulation& d) {
  const simulation base = simulate(v, c);
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (d.end(k) - d.start(k) != base.end(k) - base.start(k)) return "an op changed its length";
    if (d.start(k) < base.start(k)) return "an op starts before simulate() says";
    const std::optional<rational> ready = ready_in(v, c, d, k);
    if (!ready) return "an input is missing";
    if (d.start(k) < *ready) return "an op starts before the op ahead of it on its rank or an input ends";
  }
  return "";
}

/// Checks least_delay()'s result `d` for `v` under `c` at uniform capacity `cap`, apart
/// from the planner: the delayed timeline keeps §2, the moves replay (check_rebalance()
/// and by brute force) within the capacity, the delay is the makespans' difference,
/// and each listed wait is an F held to its delayed start.
void check_delay(schedule_view v, const costs& c, const rebalance_delay& d, rational cap) {
  REQUIRE(d.found);
  CHECK(delayed_timeline_problem(v, c, d.timeline).empty());
  CHECK(d.delay == d.timeline.makespan() - simulate(v, c).makespan());
  CHECK(d.makespan == d.timeline.makespan());
  const rebalance_check replay = check_rebalance(v, d.timeline, c.move, d.moves);
  CHECK(replay.problem == nullptr);
  CHECK(replay.peak == d.peak_after);
  CHECK(peaks_brute_force(v, d.timeline, c.move, d.moves) == d.peak_after);
  for (const rational& p : d.peak_after) CHECK(p <= cap);
  for (const delayed_op& w : d.waits) {  // each listed hold binds: the forward starts later than it could
    CHECK((w.o.kind() == op_kind::F || w.o.kind() == op_kind::overlap_f_b));
    CHECK(w.delayed_start > w.start);
    const std::size_t k = tests::find_op(v, w.o);
    REQUIRE(k < v.size());
    CHECK(d.timeline.start(k) == w.delayed_start);
    CHECK(w.delayed_start > *ready_in(v, c, d.timeline, k));
  }
}

}  // namespace

TEST_CASE("bubble filling: the encoder fits 31/32 into 1F1B at P = 8, m = 32, all of it in the steady state",
          "[fill]") {
  const schedule_spec spec = family_spec(schedule_family::one_f_one_b, 8, 32);
  const tests::encoder_fit one = encoder_share(spec, rational{1, 4}, rational{1, 2});
  CHECK(one.share == rational{31, 32});
  CHECK(one.optimal);
  CHECK(encoder_share(spec, rational{1, 4}, rational{1, 2}, true).share == rational{1});
  const schedule s = generate(spec);
  const detail::buffer<fill_job> jobs = encoder_jobs(s.view(), rational{1, 4}, rational{1, 2});
  const fill_result r = fill_bubbles(s.view(), costs{}, jobs.span());
  // The two jobs without a window: the first forward (F(0, 0) starts at 0) and the last
  // backward (B(0, 31) ends at the makespan).
  CHECK(r.reason[0] == fill_reason::no_window);
  CHECK(r.reason[63] == fill_reason::no_window);
  for (std::size_t j = 1; j < 63; ++j) CHECK(r.reason[j] == fill_reason::placed);
  CHECK(r.makespan == rational{117});
  CHECK(fill_bubbles_optimal(s.view(), costs{}, jobs.span()).total == rational{93, 4});
}

TEST_CASE("bubble filling restated from the spec on every family, both methods, P <= 6", "[fill][proofs]") {
  std::mt19937 rng(16);
  int checked = 0;
  for (int P : {1, 2, 3, 4, 6}) {
    for (int m : {P, 2 * P, 2 * P + 1}) {
      for (const schedule_spec& spec : specs_at(P, m)) {
        const costs c{rational{1}, rational{2}, rational{1}, rational{1},
                      rational{static_cast<std::int64_t>(rng() % 3), 3}};
        const schedule s = generate(spec);
        for (const bool divisible : {false, true}) {
          const detail::buffer<fill_job> jobs = proof_jobs(s.view(), divisible);
          for (const bool steady : {false, true}) {
            CHECK(prove_fill(spec, c, divisible, steady));
            const fill_result greedy = fill_bubbles(s.view(), c, jobs.span(), {steady});
            const fill_result best = fill_bubbles_optimal(s.view(), c, jobs.span(), {steady});
            CHECK(fill_is_sound(s.view(), c, jobs.span(), best, steady));
            CHECK(best.bound <= greedy.bound);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("bubble filling: the flow is optimal for divisible jobs (against branch-and-bound on unit pieces)",
          "[fill]") {
  // Jobs pinned to one rank each, integer times: a divisible job of d units is d unit
  // jobs (one rank: its pieces never run at once), which branch-and-bound places exactly.
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    const schedule s =
        generate(family_spec(round % 2 == 0 ? schedule_family::one_f_one_b : schedule_family::gpipe, 3, 3));
    std::vector<fill_job> whole, units;
    for (int j = 0; j < 3; ++j) {
      const int rank = static_cast<int>(rng() % 3), d = 1 + static_cast<int>(rng() % 3);
      const std::optional<op> after =
          rng() % 2 == 0 ? std::optional<op>{op{op_kind::F, rank, static_cast<int>(rng() % 3)}} : std::nullopt;
      whole.push_back({"j", j, rational{d}, rank, after, std::nullopt, true, rational{0}});
      for (int u = 0; u < d; ++u) units.push_back({"u", j, rational{1}, rank, after, std::nullopt, false, rational{0}});
    }
    const fill_result flow = fill_bubbles_optimal(s.view(), costs{}, whole);
    const fill_result exact = fill_bubbles_optimal(s.view(), costs{}, units);
    REQUIRE(std::string(flow.method) == "max-flow");
    REQUIRE(std::string(exact.method) == "branch-and-bound");
    CHECK(flow.optimal);
    CHECK(flow.total == exact.total);
  }
}

TEST_CASE("bubble filling: branch-and-bound is exact and never below the greedy on small indivisible sets", "[fill]") {
  std::mt19937 rng(11);
  int better = 0;
  for (int round = 0; round < 60; ++round) {
    const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 4));
    std::vector<fill_job> jobs;
    const int n = 2 + static_cast<int>(rng() % 7);
    for (int j = 0; j < n; ++j) {
      const rational d{1 + static_cast<std::int64_t>(rng() % 9), 2};
      const int rank = rng() % 3 == 0 ? any_rank : static_cast<int>(rng() % 4);
      jobs.push_back({"x", j, d, rank, std::nullopt, std::nullopt, false, rational{0}});
    }
    const fill_result greedy = fill_bubbles(s.view(), costs{}, jobs);
    const fill_result exact = fill_bubbles_optimal(s.view(), costs{}, jobs);
    CHECK(exact.exact_method);
    CHECK(exact.total >= greedy.total);
    CHECK(exact.total <= exact.bound);
    better += exact.total > greedy.total ? 1 : 0;
  }
  WARN("rounds where branch-and-bound beat the greedy: " << better << " of 60");
}

TEST_CASE("bubble filling: errors name the bad job", "[fill]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  const auto fails_with = [&](fill_job job, const char* message) {
    const std::vector<fill_job> jobs{job};
    CHECK_THROWS_WITH(fill_bubbles(s.view(), costs{}, jobs), message);
  };
  fails_with({"x", -1, rational{0}}, "ctpipe: a fill job needs a duration > 0");
  fails_with({"x", -1, rational{1}, 4}, "ctpipe: a fill job's rank must be any_rank or a pipeline rank in [0, P)");
  fails_with({"x", -1, rational{1}, any_rank, op{op_kind::F, 0, 8}},
             "ctpipe: a fill job's release or deadline must be a compute op of the schedule");
  fails_with({"x", -1, rational{1}, any_rank, std::nullopt, op{op_kind::I, 0, 1}},
             "ctpipe: a fill job's release or deadline must be a compute op of the schedule");
  fails_with({"x", -1, rational{1}, any_rank, std::nullopt, std::nullopt, true, rational{-1}},
             "ctpipe: a fill job's minimum piece must be >= 0");
}

namespace {

/// The moves of a plan in a fixed order (by activation), for comparing two plans.
std::vector<activation_move> by_activation(std::vector<activation_move> moves) {
  std::sort(moves.begin(), moves.end(), [](const activation_move& a, const activation_move& b) {
    return a.stage != b.stage ? a.stage < b.stage : a.microbatch < b.microbatch;
  });
  return moves;
}

bool same_moves(const std::vector<activation_move>& a, const std::vector<activation_move>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].stage != b[i].stage || a[i].microbatch != b[i].microbatch || a[i].from != b[i].from ||
        a[i].to != b[i].to || a[i].send != b[i].send || a[i].back != b[i].back) {
      return false;
    }
  }
  return true;
}

/// Runs `plan` as a runtime would: the lowered lists of `v` for `model` with the moves
/// written in (lower_moves()), executed; checks that the lists validate, the run
/// completes, every compute op keeps its simulated times, the copies run at the planned
/// times, and the executed moves replay to the planned peaks. Returns the lists.
schedule run_plan(schedule_view v, const costs& c, const rebalance_plan& plan, runtime_model model) {
  const schedule plain = lower(v, c, model);
  schedule lists = lower_moves(plain.view(), c, plan.moves);
  REQUIRE(lists.size() == plain.size() + 4 * plan.moves.size());
  CHECK(validate_lowered(lists.view(),
                         model == runtime_model::rendezvous ? send_semantics::rendezvous : send_semantics::buffered)
            .ok());
  const execution run = execute(lists.view(), c, model);
  REQUIRE(run.completed());
  const simulation sim = simulate(v, c);
  CHECK(run.makespan() == sim.makespan());
  const schedule_view lv = lists.view();
  for (int r = 0; r < v.shape.P; ++r) {  // the compute ops, in order, against the simulation's
    std::size_t i = v.offsets[static_cast<std::size_t>(r)];
    for (std::uint32_t k = lv.offsets[static_cast<std::size_t>(r)]; k < lv.offsets[static_cast<std::size_t>(r) + 1];
         ++k) {
      if (is_transfer(lv.ops[k].kind()) || is_move(lv.ops[k].kind())) continue;
      CHECK(run.start(k) == sim.start(i));
      CHECK(run.end(k) == sim.end(i));
      ++i;
    }
  }
  const std::vector<activation_move> ran = executed_moves(lv, run);
  CHECK(same_moves(by_activation(ran), by_activation(plan.moves)));
  const rebalance_check replay = check_rebalance(v, c, ran);
  CHECK(replay.problem == nullptr);
  CHECK(replay.peak == plan.peak_after);
  return lists;
}

}  // namespace

TEST_CASE("rebalancing 1F1B P = 8, m = 32: 36 live, bound 5, reached with t_move = 1/8 and 2 but not with t_move = 4",
          "[rebalance]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 8, 32));
  costs c{};
  c.move = rational{1, 8};
  const live_bound_result b = live_bound(s.view(), c);
  CHECK(b.live == rational{36});
  CHECK(b.bound == rational{5});
  const rational five{5}, four{4};
  const rebalance_plan plan = rebalance(s.view(), c, std::span<const rational>(&five, 1));
  CHECK(plan.feasible);
  CHECK(plan.peak_before == std::vector<rational>{8, 7, 6, 5, 4, 3, 2, 1});
  for (const rational& p : plan.peak_after) CHECK(p <= five);
  CHECK(peaks_brute_force(s.view(), c, plan) == plan.peak_after);
  CHECK(check_rebalance(s.view(), c, plan.moves).problem == nullptr);
  CHECK_FALSE(rebalance(s.view(), c, std::span<const rational>(&four, 1)).feasible);  // below the bound: impossible
  CHECK(least_capacity(s.view(), c).capacity.front() == five);
  CHECK(least_capacity(s.view(), c, rational{1}, rebalance_pairing::bpipe).capacity.front() == five);
  c.move = rational{2};
  CHECK(least_capacity(s.view(), c).capacity.front() == five);
  c.move = rational{4};  // rank 0 must send one activation per 1F1B step of 3: a 4-long send cannot keep up
  CHECK(least_capacity(s.view(), c).capacity.front() == rational{7});
  for (const rational slower : {rational{5, 2}, rational{3}}) {  // docs/bubbles.md: 7 there too
    c.move = slower;
    CHECK(least_capacity(s.view(), c).capacity.front() == rational{7});
  }
}

TEST_CASE(
    "rebalancing: every plan replays by brute force and runs as activation copies at its planned times, on every "
    "family",
    "[rebalance][lower][proofs]") {
  int feasible = 0, plans = 0;
  for (int P : {2, 3, 4}) {
    for (const schedule_spec& spec : specs_at(P, 2 * P)) {
      const schedule s = generate(spec);
      for (const rational move : {rational{0}, rational{1, 4}, rational{1}}) {
        costs c{};
        c.move = move;
        const live_bound_result b = live_bound(s.view(), c);
        CHECK(b.live == live_brute_force(s.view(), c));
        rational least_any{0};
        for (const rebalance_pairing pairing : {rebalance_pairing::any, rebalance_pairing::bpipe}) {
          const rebalance_plan plan = least_capacity(s.view(), c, rational{1}, pairing);
          ++plans;
          REQUIRE(plan.feasible);
          CHECK(plan.capacity.front() >= b.bound);
          CHECK(peaks_brute_force(s.view(), c, plan) == plan.peak_after);
          for (const runtime_model model : {runtime_model::blocking, runtime_model::posted})
            run_plan(s.view(), c, plan, model);
          feasible += plan.capacity.front() == b.level_bound ? 1 : 0;
          if (pairing == rebalance_pairing::any)
            least_any = plan.capacity.front();
          else
            CHECK(least_any <= plan.capacity.front());  // BPipe's plans are plans of any pairing
        }
      }
    }
  }
  INFO(feasible << " of " << plans << " plans reach the bound");
  CHECK(feasible > 0);
}

TEST_CASE("rebalancing: the bound is live / P, rounded up only when gamma = 1", "[rebalance]") {
  const schedule s = generate(family_spec(schedule_family::zb_h1, 4, 8));
  const live_bound_result half = live_bound(s.view(), costs{}, rational{1, 2});
  CHECK(half.bound == half.live / rational{4});
  CHECK(half.level_bound >= half.bound);
  CHECK(half.level_bound - half.bound < rational{1, 2});
  CHECK((half.level_bound * rational{2}).den == 1);
  const live_bound_result one = live_bound(s.view(), costs{});
  CHECK(one.bound == one.level_bound);
  CHECK(one.bound.den == 1);
  CHECK(one.bound >= one.live / rational{4});
}

TEST_CASE("rebalancing: check_rebalance() rejects broken plans", "[rebalance]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  costs c{};
  c.move = rational{1, 2};
  // F(0, 3) on rank 0 runs [3, 4); B(0, 3) starts at 19 (the article's timeline).
  const auto problem = [&](std::vector<activation_move> moves) {
    return std::string(check_rebalance(s.view(), c, moves).problem ? check_rebalance(s.view(), c, moves).problem : "");
  };
  CHECK(problem({{0, 3, 0, 3, rational{4}, rational{12}}}).empty());
  CHECK(problem({{0, 3, 0, 3, rational{3}, rational{12}}}) ==
        "a move leaves before its F ends or comes back after its backward starts");
  CHECK(problem({{0, 3, 0, 3, rational{4}, rational{19}}}) ==
        "a move leaves before its F ends or comes back after its backward starts");
  CHECK(problem({{0, 3, 1, 3, rational{4}, rational{12}}}) ==
        "a move must take an F's activation from its own rank to another, once");
  CHECK(problem({{0, 3, 0, 3, rational{4}, rational{12}}, {0, 2, 0, 3, rational{4}, rational{12}}}) ==
        "two transfers share a copy channel");
}

TEST_CASE("rebalancing: the plan runs as activation copies, 1F1B P = 8, m = 32 at capacity 5", "[rebalance][lower]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 8, 32));
  costs c{};
  c.move = rational{1, 8};
  const rational five{5};
  const rebalance_plan plan = rebalance(s.view(), c, std::span<const rational>(&five, 1));
  REQUIRE(plan.feasible);
  for (const runtime_model model : {runtime_model::blocking, runtime_model::posted}) {
    const schedule lists = run_plan(s.view(), c, plan, model);
    // PyTorch's CSV with the two actions of the extension, read back as written.
    const std::string csv = io::to_csv(lists.view());
    CHECK(csv.find("0SEND_ACT") != std::string::npos);
    CHECK(csv.find("RECV_ACT") != std::string::npos);
    const io::csv_schedule back = io::parse_csv(csv);
    CHECK(std::equal(back.view().ops.begin(), back.view().ops.end(), lists.view().ops.begin(), lists.view().ops.end()));
  }
}

TEST_CASE("bubble filling: durations whose sum leaves 64 bits are an error, never a wrong value (a new user's case)",
          "[fill]") {
  // Ten jobs of 999999999999999999 each: the sums of work and bound overflowed silently
  // (undefined behaviour) before the error was raised.
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  std::vector<fill_job> jobs;
  for (int k = 0; k < 10; ++k)
    jobs.push_back({"x", k, rational{999999999999999999}, any_rank, std::nullopt, std::nullopt, false, rational{0}});
  CHECK_THROWS_WITH(fill_bubbles(s.view(), costs{}, jobs),
                    "ctpipe: rational overflow (64-bit numerator or denominator)");
  CHECK_THROWS_WITH(fill_bubbles_optimal(s.view(), costs{}, jobs),
                    "ctpipe: rational overflow (64-bit numerator or denominator)");
}

TEST_CASE(
    "least delay: 1F1B P = 8, m = 32, t_move = 4 fits capacity 6 with no longer makespan and capacity 5 with 9 more",
    "[rebalance][delay]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 8, 32));
  costs c{};
  c.move = rational{4};
  for (const auto& [cap, delay] : {std::pair{rational{6}, rational{0}}, std::pair{rational{5}, rational{9}}}) {
    INFO("capacity " << cap.num);
    CHECK_FALSE(rebalance(s.view(), c, std::span<const rational>(&cap, 1)).feasible);  // not without waiting
    const rebalance_delay d = least_delay(s.view(), c, std::span<const rational>(&cap, 1));
    check_delay(s.view(), c, d, cap);
    CHECK(d.delay == delay);    // the greedy's value (docs/bubbles.md), not proved least
    CHECK(d.stuck_rank == -1);  // found: no stuck place
    CHECK_FALSE(d.waits.empty());
    CHECK(d.waits.front().rank == 0);
  }
  // At 6 one forward waits in rank 0's warm-up, whose idle time absorbs it: F(0, 7)
  // from 7 to 10, the makespan stays 117.
  const rational six{6};
  const rebalance_delay d6 = least_delay(s.view(), c, std::span<const rational>(&six, 1));
  REQUIRE(d6.waits.size() == 1);
  CHECK(d6.waits[0].o == op{op_kind::F, 0, 7});
  CHECK(d6.waits[0].start == rational{7});
  CHECK(d6.waits[0].delayed_start == rational{10});
  CHECK(d6.makespan == rational{117});
}

TEST_CASE("least delay: no op waits exactly where rebalance() fits, on every family", "[rebalance][delay]") {
  int waited = 0, delayed = 0, found = 0, not_found = 0;
  for (int P : {2, 3, 4}) {
    for (const schedule_spec& spec : specs_at(P, 2 * P)) {
      const schedule s = generate(spec);
      for (const rational move : {rational{1}, rational{4}}) {
        for (const rational t_c : {rational{0}, rational{1, 2}}) {
          costs c{};
          c.move = move, c.c = t_c;
          const in_flight_profile before = in_flight(s.view());
          for (rational cap = live_bound(s.view(), c).level_bound; cap <= before.largest_peak(); cap += rational{1}) {
            INFO(family_name(spec.family) << " P = " << P << " t_move = " << move.num << " t_c = " << t_c.num << "/"
                                          << t_c.den << " capacity " << cap.num);
            const rebalance_plan plan = rebalance(s.view(), c, std::span<const rational>(&cap, 1));
            const rebalance_delay d = least_delay(s.view(), c, std::span<const rational>(&cap, 1));
            if (plan.feasible) {  // the first planning is rebalance()'s: same moves, nothing held
              REQUIRE(d.found);
              CHECK(d.rounds == 1);
              CHECK(d.waits.empty());
              CHECK(d.delay == rational{0});
              CHECK(d.moves.size() == plan.moves.size());
              CHECK(d.peak_after == plan.peak_after);
              continue;
            }
            if (!d.found) {
              ++not_found;
              CHECK(d.why_not != nullptr);
              continue;
            }
            ++found;
            check_delay(s.view(), c, d, cap);
            CHECK_FALSE(d.waits.empty());
            waited += 1;
            delayed += d.delay > rational{0} ? 1 : 0;
          }
        }
      }
    }
  }
  INFO(found << " delayed plans found (" << delayed << " with a longer makespan), " << not_found << " not found");
  CHECK(found > 0);
  CHECK(delayed > 0);
  CHECK(waited == found);
}

TEST_CASE("least delay: what it does not find, and why", "[rebalance][delay]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  costs c{};
  c.move = rational{1};
  const rational half{1, 2}, two{2};
  const rebalance_delay under = least_delay(s.view(), c, std::span<const rational>(&half, 1));
  CHECK_FALSE(under.found);
  CHECK(std::string(under.why_not) == "a capacity under one chunk: a forward holds its own activation");
  // Below the live bound (10 over 4 ranks: 3) the planner's long stays find no host
  // however long compute waits: the default budget, 4 x 8 forwards + 64 plannings, is
  // spent; with a larger one the greedy gives up past a serial run's length.
  const rebalance_delay two_each = least_delay(s.view(), c, std::span<const rational>(&two, 1));
  CHECK_FALSE(two_each.found);
  CHECK(two_each.rounds == 96);
  CHECK(std::string(two_each.why_not) == "the planning budget (max_rounds) is spent");
  const rebalance_delay serial =
      least_delay(s.view(), c, std::span<const rational>(&two, 1), rational{1}, rebalance_pairing::any, {}, 1000);
  CHECK_FALSE(serial.found);
  CHECK(serial.rounds < 1000);
  CHECK(std::string(serial.why_not) ==
        "the delay passed a serial run's length (every op's length and t_c, one after another)");
  const rebalance_delay budget =
      least_delay(s.view(), c, std::span<const rational>(&two, 1), rational{1}, rebalance_pairing::any, {}, 3);
  CHECK(budget.rounds == 3);
  CHECK(std::string(budget.why_not) == "the planning budget (max_rounds) is spent");
  CHECK_THROWS_WITH(least_delay(s.view(), c, std::span<const rational>(&half, 0)),
                    "ctpipe: rebalance takes one capacity per rank (P of them) or one for all");
  CHECK(under.stuck_rank == -1);  // nothing planned
  // One rank: nothing to move to, and waiting frees nothing (a new user's case looped
  // until the serial length).
  const schedule one = generate(family_spec(schedule_family::gpipe, 1, 8));
  const rational three{3};
  const rebalance_delay alone = least_delay(one.view(), c, std::span<const rational>(&three, 1));
  CHECK_FALSE(alone.found);
  CHECK(alone.rounds == 1);
  CHECK(std::string(alone.why_not) == "one rank: no other rank to take an activation, and waiting frees nothing");
  // Times with t_move past 64 bits: an error, never a wrong value (a new user's case ran
  // into signed overflow).
  costs huge{rational{10000000000000000, 9}, rational{20000000000000000, 9}};
  huge.move = rational{999999999999999999};
  CHECK_THROWS_WITH(least_delay(s.view(), huge, std::span<const rational>(&three, 1)),
                    "ctpipe: rational overflow (64-bit numerator or denominator)");
  CHECK_THROWS_WITH(rebalance(s.view(), huge, std::span<const rational>(&three, 1)),
                    "ctpipe: rational overflow (64-bit numerator or denominator)");
}

TEST_CASE("least delay: only the holds that bind are listed as waits (a new user's case)", "[rebalance][delay]") {
  // Interleaved ZB, P = 6, m = 6, V = 2 with t_c = 1/2 and gamma = 1/2: a held forward
  // whose inputs arrived after its hold (other holds pushed them) was listed as waiting.
  schedule_spec spec = family_spec(schedule_family::interleaved_zb, 6, 6);
  spec.shape.V = 2;
  REQUIRE(spec_error(spec) == nullptr);
  const schedule s = generate(spec);
  costs c{};
  c.move = rational{2}, c.c = rational{1, 2};
  const rational cap{253, 24};
  const rebalance_delay d = least_delay(s.view(), c, std::span<const rational>(&cap, 1), rational{1, 2});
  REQUIRE(d.found);
  CHECK(delayed_timeline_problem(s.view(), c, d.timeline).empty());
  CHECK_FALSE(d.waits.empty());
  for (const delayed_op& w : d.waits)
    CHECK(w.delayed_start > *ready_in(s.view(), c, d.timeline, tests::find_op(s.view(), w.o)));
  const rebalance_check replay = check_rebalance(s.view(), d.timeline, c.move, d.moves, rational{1, 2});
  CHECK(replay.problem == nullptr);
  for (const rational& p : replay.peak) CHECK(p <= cap);
}

TEST_CASE("ctpipe rebalance reports the least delay where no plan fits without one", "[tool][rebalance][delay]") {
  const auto text = run_tool("rebalance -s 1f1b -P 8 -m 32 --capacity 5 --costs f=1,b=2,move=4");
  REQUIRE(text.exit_code == 0);
  CHECK(
      text.out.find(
          "with forwards waiting for room (least_delay): fits with makespan 117 -> 126 (delay 9; the least this greedy "
          "reaches, not proved least)") != std::string::npos);
  CHECK(text.out.find("11 forwards wait: rank 0 0F6 6 -> 9, rank 0 0F7 7 -> 13,") != std::string::npos);
  const auto json = run_tool("rebalance -s 1f1b -P 8 -m 32 --capacity 5 --costs f=1,b=2,move=4 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json d = nlohmann::json::parse(json.out)["rebalance"]["delay"];
  CHECK(d["found"] == true);
  CHECK(d["delay"] == "9");
  CHECK(d["makespan"] == "126");
  CHECK(d["waits"].size() == 11);
  CHECK(d["waits"][0] ==
        nlohmann::json::parse(R"({"rank":0,"kind":"F","stage":0,"microbatch":6,"start":"6","delayed_start":"9"})"));
  CHECK(d["peak_in_flight"].size() == 8);
  for (const auto& p : d["peak_in_flight"]) CHECK(rational{std::stoll(p.get<std::string>())} <= rational{5});
  CHECK(d["moves"].size() > 0);
  // Delay 0 with a forward that waits in idle time: the least possible (a new user read
  // the former "none" beside the waits as a contradiction).
  const auto six = run_tool("rebalance -s 1f1b -P 8 -m 32 --capacity 6 --costs f=1,b=2,move=4");
  CHECK(six.out.find("fits with makespan 117 -> 117 (delay 0, the least possible: the forwards below wait in idle "
                     "time)\n    1 forward "
                     "waits: rank 0 0F7 7 -> 10\n") != std::string::npos);
  // A plan that fits: no delay object.
  CHECK(nlohmann::json::parse(
            run_tool("rebalance -P 8 -m 32 --capacity 5 --costs move=1/8 --format json").out)["rebalance"]["delay"]
            .is_null());
  // None found: the reason.
  const auto none = run_tool("rebalance -P 4 -m 8 --capacity 2 --costs move=1");
  CHECK(none.out.find("with forwards waiting for room (least_delay): no delayed plan found: the planning budget "
                      "(max_rounds) is spent "
                      "(last stuck at rank ") != std::string::npos);
  const nlohmann::json nd = nlohmann::json::parse(
      run_tool("rebalance -P 4 -m 8 --capacity 2 --costs move=1 --format json").out)["rebalance"]["delay"];
  CHECK(nd["found"] == false);
  CHECK(nd["why_not"] == "the planning budget (max_rounds) is spent");
  CHECK(nd["rounds"] == 96);
  CHECK(nd["stuck"]["rank"].is_number());
  // Nothing planned (a capacity under one chunk): no stuck place (a new user saw rank -1).
  const auto zero = run_tool("rebalance -P 4 -m 8 --capacity 0");
  CHECK(zero.out.find("no delayed plan found: a capacity under one chunk: a forward holds its own activation\n") !=
        std::string::npos);
  CHECK(zero.out.find("(a capacity under one chunk: a forward holds its own activation)") != std::string::npos);
  CHECK(nlohmann::json::parse(
            run_tool("rebalance -P 4 -m 8 --capacity 0 --format json").out)["rebalance"]["delay"]["stuck"]
            .is_null());
  const auto alone = run_tool("rebalance -s gpipe -P 1 -m 8 --capacity 3");
  CHECK(alone.out.find("over 1 rank:") != std::string::npos);
  CHECK(alone.out.find("BPipe") == std::string::npos);
  CHECK(alone.out.find("(no other rank to take an activation)") != std::string::npos);
}

TEST_CASE("simulation::delayed() keeps every op's length and reads the starts given", "[rebalance][delay]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 2, 2));
  costs c{};
  c.f = rational{1, 2};
  const simulation base = simulate(s.view(), c);  // tick 1/2
  std::vector<std::int64_t> start;
  for (std::size_t k = 0; k < s.view().size(); ++k)
    start.push_back(base.start_ticks(k) * 3 + (k == 0 ? 0 : 1));  // ticks of 1/6, all but the first later by 1/6
  const simulation d = base.delayed(s.view(), rational{1, 6}, start);
  CHECK(d.makespan() == base.makespan() + rational{1, 6});
  CHECK(d.busy(0) == base.busy(0));
  for (std::size_t k = 0; k < s.view().size(); ++k) CHECK(d.end(k) - d.start(k) == base.end(k) - base.start(k));
  CHECK_THROWS_WITH(base.delayed(s.view(), rational{1, 3}, start),
                    "ctpipe: a delayed timeline's tick must divide the simulation's tick");
  CHECK_THROWS_WITH(base.delayed(s.view(), rational{1, 6}, std::span<const std::int64_t>(start.data(), 1)),
                    "ctpipe: a delayed timeline needs one start per op");
}

TEST_CASE("activation copies: the runtime rule, by hand (1F1B P = 2, m = 2, t_move = 1/2)", "[rebalance][lower]") {
  // Rank 0 offloads both activations to rank 1 and fetches them back before B0 (at 4)
  // and B1 (at 7). A copy starts when both its ops are reached and the copies before
  // them on their channels (and, for a copy back, its copy out) have arrived.
  costs c{};
  c.move = rational{1, 2};
  const std::string lists =
      "0F0,0SEND_F0,0SEND_ACT0,0F1,0SEND_F1,0SEND_ACT1,0RECV_ACT0,0RECV_ACT1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "0RECV_ACT0,0RECV_ACT1,0SEND_ACT0,0SEND_ACT1,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n";
  const io::csv_schedule file = io::parse_csv(lists);
  const schedule_view v = file.view();
  REQUIRE(validate_lowered(v, send_semantics::buffered).ok());
  const execution run = execute(v, c, runtime_model::blocking);
  REQUIRE(run.completed());
  const auto at = [&](int r, int step) {
    return run.start(v.offsets[static_cast<std::size_t>(r)] + static_cast<std::size_t>(step));
  };
  CHECK(at(0, 2) == rational{1});     // out 0: SEND_ACT0 reached when F0 ends
  CHECK(at(0, 5) == rational{2});     // out 1: reached when F1 ends (the channel is free from 3/2)
  CHECK(at(0, 6) == rational{2});     // back 0: its RECV_ACT reached at 2, after out 0 arrived at 3/2
  CHECK(at(0, 7) == rational{5, 2});  // back 1: after back 0 on both channels, and out 1
  CHECK(at(1, 0) == at(0, 2));        // both ops of a copy carry its times (0RECV_ACT0 on rank 1)
  CHECK(run.end(v.offsets[0] + 7) == rational{3});
  CHECK(at(0, 9) == rational{4});  // B0 as without the moves
  CHECK(run.makespan() == rational{9});
  const std::vector<activation_move> ran = executed_moves(v, run);
  REQUIRE(ran.size() == 2);
  CHECK(same_moves(ran, {{0, 0, 0, 1, rational{1}, rational{2}}, {0, 1, 0, 1, rational{2}, rational{5, 2}}}));
  // The host takes the two copies in the other order than rank 0 sends them: each waits
  // for the other on a channel, so the copy back of activation 0 never runs and B0 waits
  // for it. validate_lowered() runs the lists without the copies; execute() names it.
  const io::csv_schedule crossed = io::parse_csv(
      "0F0,0SEND_F0,0SEND_ACT0,0F1,0SEND_F1,0SEND_ACT1,0RECV_ACT0,0RECV_ACT1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "0RECV_ACT1,0RECV_ACT0,0SEND_ACT0,0SEND_ACT1,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const execution hung = execute(crossed.view(), c, runtime_model::blocking);
  REQUIRE_FALSE(hung.completed());
  REQUIRE(hung.stuck().size() == 1);
  CHECK(hung.stuck()[0] == validation_issue{fault::deadlock, 0, 9, op{op_kind::B, 0, 0}, op{op_kind::recv_act, 0, 0}});
}

TEST_CASE("activation copies: zero-length ops at a copy's start neither hang the lists nor move the copy (t_move = 0)",
          "[rebalance][lower]") {
  // Found by a new-user test: with t_move = 0 and zero-cost backwards a copy could be
  // planned at the end of a zero-length op that itself waits for the copy (the lists
  // hung), or at the end of the zero-length backward it must precede (it ran early and
  // its host went over capacity).
  struct zero_case {
    schedule_family family;
    int P, m;
    rational f, b, i, w, latency, gamma;
    std::vector<rational> capacity;
  };
  const std::vector<zero_case> cases{
      {schedule_family::gpipe, 2, 2, {1, 2}, {0}, {1}, {1}, {0}, {1}, {{11, 2}, {3, 2}}},
      {schedule_family::zb_h2, 5, 2, {2, 3}, {0}, {0}, {1, 3}, {1, 2}, {1, 3}, {{3}, {9, 2}, {3, 2}, {5}, {3, 2}}},
      {schedule_family::zb_h1, 4, 5, {2, 3}, {2}, {0}, {1}, {1, 5}, {1}, {{5, 2}, {2}, {11, 2}, {1}}},
  };
  for (const zero_case& z : cases) {
    const schedule s = generate(family_spec(z.family, z.P, z.m));
    costs c{};
    c.f = z.f, c.b = z.b, c.i = z.i, c.w = z.w, c.c = z.latency;
    const rebalance_plan plan = rebalance(s.view(), c, z.capacity, z.gamma);
    INFO(family_name(z.family) << " P = " << z.P << ", m = " << z.m << ", moves " << plan.moves.size());
    for (const runtime_model model : {runtime_model::blocking, runtime_model::posted}) {
      const executed_plan run = run_moves(s.view(), c, plan, model, z.gamma);
      CHECK(run.completed);
      CHECK(run.as_planned);
      CHECK(run.peak == plan.peak_after);
    }
  }
}

TEST_CASE("activation copies: a zero-length pair word's activation leaves after the pair (t_fb = 0)",
          "[rebalance][lower]") {
  // DualPipeV's overlapped pairs with t_fb = 0 end where they start: the home's SEND_ACT
  // of a pair's forward activation still comes after the pair (and its B word).
  const schedule s = generate(family_spec(schedule_family::dualpipev, 4, 8));
  costs c{};
  c.fb = rational{0};
  const simulation sim = simulate(s.view(), c);
  std::size_t pair = s.size();
  for (std::size_t k = 0; k < s.size() && pair == s.size(); ++k)
    pair = s.view().ops[k].kind() == op_kind::overlap_f_b ? k : pair;
  REQUIRE(pair < s.size());
  const op f = s.view().ops[pair];
  const int home = s.view().shape.rank_of(f.stage());
  std::size_t b = tests::find_op(s.view(), op{op_kind::B, f.stage(), f.microbatch()});
  if (b == s.size()) b = tests::find_op(s.view(), op{op_kind::I, f.stage(), f.microbatch()});  // its first backward
  REQUIRE(b < s.size());
  REQUIRE(sim.start(pair) == sim.end(pair));
  const std::vector<activation_move> one{
      {f.stage(), f.microbatch(), home, (home + 1) % 4, sim.end(pair), sim.start(b)}};
  REQUIRE(check_rebalance(s.view(), c, one).problem == nullptr);
  const schedule lists = lower_moves(lower(s.view(), c, runtime_model::blocking).view(), c, one);
  CHECK(validate_lowered(lists.view(), send_semantics::buffered).ok());
  const execution run = execute(lists.view(), c, runtime_model::blocking);
  REQUIRE(run.completed());
  CHECK(run.makespan() == sim.makespan());
  CHECK(same_moves(executed_moves(lists.view(), run), one));
}

TEST_CASE("activation copies: under batched, copies inside a run of transfers do not split its group",
          "[rebalance][lower]") {
  // Rank 0 sends activation 1 away between its SEND_F1 and RECV_B0, rank 1 takes it in
  // between its SEND_B0 and RECV_F1: the groups stay {0SEND_F1, 0RECV_B0} and
  // {1SEND_B0, 1RECV_F1}, as without the copies, and the lists run.
  const io::csv_schedule plain = io::parse_csv(
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const io::csv_schedule moved = io::parse_csv(
      "0F0,0SEND_F0,0F1,0SEND_F1,0SEND_ACT1,0RECV_B0,0B0,0RECV_ACT1,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1B0,1SEND_B0,0RECV_ACT1,1RECV_F1,1F1,0SEND_ACT1,1B1,1SEND_B1\n");
  costs c{};
  c.c = rational{1};
  c.move = rational{1, 4};
  const execution before = execute(plain.view(), c, runtime_model::batched);
  const execution after = execute(moved.view(), c, runtime_model::batched);
  REQUIRE(before.completed());
  REQUIRE(after.completed());
  CHECK(after.makespan() == before.makespan());
  const std::vector<activation_move> ran = executed_moves(moved.view(), after);
  REQUIRE(ran.size() == 1);
  CHECK(ran[0].send == after.start(4));  // 0SEND_ACT1, posted with its group
}

TEST_CASE("lower_moves() rejects plans check_rebalance() rejects, and lists it cannot take", "[rebalance][lower]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  costs c{};
  c.move = rational{1, 2};
  const schedule lowered = lower(s.view(), c, runtime_model::blocking);
  const auto fails = [&](std::vector<activation_move> moves, const char* message) {
    CHECK_THROWS_WITH(lower_moves(lowered.view(), c, moves), message);
  };
  fails({{0, 3, 0, 3, rational{3}, rational{12}}},
        "ctpipe: lower_moves() takes a plan check_rebalance() accepts: a move leaves before its F ends or comes back "
        "after its backward starts");
  fails({{-1, 3, 0, 3, rational{4}, rational{12}}},
        "ctpipe: lower_moves() takes a plan check_rebalance() accepts: a move must take an F's activation from its own "
        "rank to another, once");
  fails({{0, 3, 0, 3, rational{4}, rational{12}}, {0, 2, 0, 3, rational{4}, rational{12}}},
        "ctpipe: lower_moves() takes a plan check_rebalance() accepts: two transfers share a copy channel");
  const std::vector<activation_move> one{{0, 3, 0, 3, rational{4}, rational{12}}};
  const schedule twice = lower_moves(lowered.view(), c, one);
  CHECK_THROWS_WITH(lower_moves(twice.view(), c, one),
                    "ctpipe: lower_moves() takes lowered lists without activation copies");
  CHECK_THROWS_WITH(lower_moves(s.view(), c, one),
                    "ctpipe: lower_moves() takes lowered lists that validate_lowered_ops() accepts (lower()'s)");
}

TEST_CASE("activation copies: validate_lowered() names broken copies", "[rebalance][lower]") {
  const auto first = [](const char* text) {
    const io::csv_schedule file = io::parse_csv(text);
    return validate_lowered(file.view(), send_semantics::buffered).first;
  };
  const char* rank1 = "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n";
  // The host's RECV_ACT is missing (rank = the host, step -1).
  CHECK(first((std::string("0F0,0SEND_F0,0SEND_ACT0,0F1,0SEND_F1,0RECV_ACT0,0RECV_B0,0B0,0RECV_B1,0B1\n") +
               "0SEND_ACT0," + rank1)
                  .c_str()) ==
        validation_issue{fault::missing, 1, -1, op{op_kind::recv_act, 0, 0}, op{op_kind::recv_act, 0, 0}});
  // The home sends the activation before its F.
  CHECK(first((std::string("0SEND_ACT0,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_ACT0,0RECV_B0,0B0,0RECV_B1,0B1\n") +
               "0RECV_ACT0,0SEND_ACT0," + rank1)
                  .c_str()) ==
        validation_issue{fault::out_of_order, 0, 0, op{op_kind::send_act, 0, 0}, op{op_kind::F, 0, 0}});
  // The copy back comes after the backward that needs it.
  CHECK(first((std::string("0F0,0SEND_F0,0SEND_ACT0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_ACT0,0RECV_B1,0B1\n") +
               "0RECV_ACT0,0SEND_ACT0," + rank1)
                  .c_str())
            .what == fault::out_of_order);
  // A second copy of one role.
  CHECK(first((std::string("0F0,0SEND_F0,0SEND_ACT0,0SEND_ACT0,0F1,0SEND_F1,0RECV_ACT0,0RECV_B0,0B0,0RECV_B1,0B1\n") +
               "0RECV_ACT0,0SEND_ACT0," + rank1)
                  .c_str())
            .what == fault::duplicate);
}

TEST_CASE("ctpipe fill and ctpipe rebalance: the issue's commands", "[tool][fill][rebalance]") {
  const auto fill = run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2 --steady-state");
  REQUIRE(fill.exit_code == 0);
  CHECK(fill.out.find("one iteration: filled 93/4 of 24 (96.9%), bound 93/4: optimal") != std::string::npos);
  CHECK(fill.out.find("steady state (back-to-back iterations): filled 24 of 24 (100.0%)") != std::string::npos);
  CHECK(fill.out.find("not placed: encoder F 0, 1/4 of 1/4: no window") != std::string::npos);
  const auto fj = run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2 --format json");
  REQUIRE(fj.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(fj.out);
  CHECK(j["fill"]["total"] == "93/4");
  CHECK(j["fill"]["unplaced"].size() == 2);
  CHECK(j["fill"]["placed"][0].contains("rank"));
  CHECK(j["fill"]["filled"].size() == 8);
  CHECK(j["fill"]["steady_state"].is_null());
  const auto rb = run_tool("rebalance -s 1f1b -P 8 -m 32 --capacity 5 --costs f=1,b=2,move=1/8 --format json");
  REQUIRE(rb.exit_code == 0);
  const nlohmann::json k = nlohmann::json::parse(rb.out)["rebalance"];
  CHECK(k["lower_bound"] == "5");
  CHECK(k["live"] == "36");
  CHECK(k["feasible"] == true);
  CHECK(k["peak_in_flight_before"][0] == "8");
  CHECK(k["moves"].size() > 0);
  CHECK(k["moves"][0].contains("send"));
  CHECK(k["bpipe"]["least_capacity"] == "5");
  // The plan run as activation copies in the blocking lowering, exactly as planned.
  CHECK(k["executed"]["runtime"] == "blocking");
  CHECK(k["executed"]["completed"] == true);
  CHECK(k["executed"]["as_planned"] == true);
  CHECK(k["executed"]["makespan"] == "117");
  CHECK(k["executed"]["copy_ops"] == 4 * k["moves"].size());
  CHECK(k["executed"]["peak_in_flight"] == k["peak_in_flight"]);
  // Under unequal stages too (execute()'s per-op durations), and its lists as a CSV file.
  const auto scaled =
      run_tool("rebalance -P 4 -m 8 --costs move=1/4 --stage-scale 1,1,1,5/4 --runtime posted --format json");
  REQUIRE(scaled.exit_code == 0);
  const nlohmann::json ks = nlohmann::json::parse(scaled.out)["rebalance"];
  CHECK(ks["executed"]["runtime"] == "posted");
  CHECK(ks["executed"]["as_planned"] == true);
  CHECK(ks["moves"].size() > 0);
  const auto comms = run_tool("rebalance -P 4 -m 8 --costs move=1/4 --format csv-comms");
  REQUIRE(comms.exit_code == 0);
  const io::csv_schedule lists = io::parse_csv(comms.out);
  std::size_t sends = 0;
  for (const op o : lists.view().ops) sends += o.kind() == op_kind::send_act ? 1 : 0;
  CHECK(sends == 2 * nlohmann::json::parse(
                         run_tool("rebalance -P 4 -m 8 --costs move=1/4 --format json").out)["rebalance"]["moves"]
                         .size());
  const tests::temp_file comms_file(comms.out);  // ctpipe validate reads it back, with the rebalanced peaks
  const auto checked = run_tool("validate --costs move=1/4 " + comms_file.path);
  REQUIRE(checked.exit_code == 0);
  CHECK(checked.out.find(
            "activation copies, blocking: 3 moves; in-flight peak per rank with them 3 3 3 2 (chunks, gamma = 1)") !=
        std::string::npos);
  costs quarter{};
  quarter.move = rational{1, 4};
  CHECK(execute(lists.view(), quarter, runtime_model::blocking).makespan() == rational{33});
  // ctpipe validate on lists whose copy channels wait on each other (the host takes the
  // copies out in the other order): the backward that waits, and why.
  const tests::temp_file crossed(
      "0F0,0SEND_F0,0SEND_ACT0,0F1,0SEND_F1,0SEND_ACT1,0RECV_ACT0,0RECV_ACT1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "0RECV_ACT1,0RECV_ACT0,0SEND_ACT0,0SEND_ACT1,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const auto hung = run_tool("validate --costs move=1/2 --runtime blocking " + crossed.path);
  CHECK(hung.exit_code != 0);
  CHECK(hung.err ==
        "ctpipe: " + crossed.path +
            ": hangs under blocking: rank 0, step 9, op 0B0: deadlock: this op waits for an op that never runs (needs "
            "0RECV_ACT0); waits for its activation's copy back, which the copy channels' orders never run\n");
  const auto svg = run_tool("fill -P 4 -m 8 --fill encoder:f=1/4,b=1/2 --format svg");
  CHECK(svg.out.find("class=\"fill\"") != std::string::npos);
  CHECK(svg.out.find("filled (independent work in the bubbles)") != std::string::npos);
  const auto trace = run_tool("fill -P 4 -m 8 --fill encoder:f=1/4,b=1/2 --format trace");
  const nlohmann::json events = nlohmann::json::parse(trace.out)["traceEvents"];
  int pieces = 0;
  for (const auto& e : events) pieces += e.value("cat", "") == "fill" ? 1 : 0;
  CHECK(pieces ==
        static_cast<int>(nlohmann::json::parse(
                             run_tool("fill -P 4 -m 8 --fill encoder:f=1/4,b=1/2 --format json").out)["fill"]["placed"]
                             .size()));
  const auto rsvg = run_tool("rebalance -P 8 -m 32 --capacity 5 --costs move=1/8 --format svg");
  CHECK(rsvg.out.find("8 -&gt; 5 rebalanced") != std::string::npos);
  const auto text = run_tool("rebalance -s 1f1b -P 8 -m 32 --costs f=1,b=2,move=4");
  CHECK(text.out.find("the bound is not reached") != std::string::npos);
  CHECK(text.out.find("= formula min(m, P-r); 7 after rebalancing") != std::string::npos);
}

TEST_CASE("ctpipe fill and rebalance reject bad requests", "[tool][fill][rebalance]") {
  const auto err = [](const std::string& args) {
    const auto r = run_tool(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK(err("fill --fill encoder:f=1/4") ==
        "ctpipe: --fill encoder takes f=T,b=T[,piece=T] (e.g. encoder:f=1/4,b=1/2)\n");
  CHECK(err("fill --fill job:t=1,after=0F9") == "ctpipe: --fill after=0F9 is not an op of this schedule\n");
  CHECK(err("fill --fill job:t=0") == "ctpipe: a fill job needs a duration > 0\n");
  CHECK(err("fill --fill blob:t=1").rfind("ctpipe: --fill takes encoder", 0) == 0);
  CHECK(err("fill --fill encoder:f=1,b=1 --fill-method fast") ==
        "ctpipe: --fill-method takes best or greedy, not 'fast'\n");
  CHECK(err("rebalance --capacity 1,2") ==
        "ctpipe: --capacity takes one number for every rank, or one per rank (P of them)\n");
  CHECK(err("rebalance --capacity -1") == "ctpipe: a capacity must be >= 0\n");
  CHECK(err("rebalance --costs move=-1") == "ctpipe: costs must be >= 0\n");
}

TEST_CASE("fill_bubbles_optimal is never below fill_bubbles, with minimum pieces, latency and the steady state",
          "[fill]") {
  // Found by a new user's random runs: the flow dropped a whole job shorter than its
  // minimum piece, joined two pieces across a steady-state deadline, and its steady
  // state could fill less than one iteration.
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  const std::vector<fill_job> short_job{
      {"x", -1, rational{1, 7}, any_rank, std::nullopt, std::nullopt, true, rational{1, 4}}};
  CHECK(fill_bubbles_optimal(s.view(), costs{}, short_job).total == rational{1, 7});
  std::mt19937 rng(21);
  for (int round = 0; round < 120; ++round) {
    const schedule_spec spec = specs_at(round % 3 + 2, 2 * (round % 3 + 2))[static_cast<std::size_t>(round) % 5];
    const schedule g = generate(spec);
    const costs c{rational{1}, rational{2}, rational{1}, rational{1},
                  rational{static_cast<std::int64_t>(rng() % 3), 3}};
    std::vector<fill_job> jobs;
    for (int j = 0; j < 4; ++j) {
      const std::optional<op> before =
          rng() % 2 == 0 ? std::optional<op>{op{op_kind::F, 0, static_cast<int>(rng() % 3)}} : std::nullopt;
      jobs.push_back({"y", j, rational{1 + static_cast<std::int64_t>(rng() % 9), 2}, any_rank, std::nullopt, before,
                      true, rational{static_cast<std::int64_t>(rng() % 3), 4}});
    }
    for (const bool steady : {false, true}) {
      const fill_result greedy = fill_bubbles(g.view(), c, jobs, {steady});
      const fill_result best = fill_bubbles_optimal(g.view(), c, jobs, {steady});
      CHECK(fill_is_sound(g.view(), c, jobs, best, steady));
      CHECK(best.total >= greedy.total);
      if (steady) CHECK(best.total >= fill_bubbles_optimal(g.view(), c, jobs).total);
    }
  }
  // Branch-and-bound proves its optimum: the bound it reports is the total.
  const std::vector<fill_job> whole{{"e", 0, rational{1}}, {"e", 1, rational{2}}, {"e", 2, rational{7}}};
  const fill_result exact =
      fill_bubbles_optimal(generate(family_spec(schedule_family::one_f_one_b, 3, 6)).view(), costs{}, whole);
  CHECK(exact.exact_method);
  CHECK(exact.bound == exact.total);
}

namespace {

/// A stretch (stretch_fill()) of `fill` checked apart from the library, restated from
/// docs/spec.md §2 and §8.1: every pipeline op keeps its length and starts no earlier
/// than each dependency (found by identity) ends, plus t_c across ranks; the fill's
/// pieces keep their rank and length; every job with time left has one remainder of
/// that length on a rank it may use, or is listed impossible or blocked (then its
/// release op does not end before its deadline op starts; a blocked one's blockers are
/// inserted, and it is never `least`); pieces and remainders start
/// after their release op ends and end before their deadline op starts (t_c across
/// ranks), a job's pieces never overlap and its remainder comes after them; no two
/// nodes overlap on a rank; every node starts as soon as its rank and inputs allow (the
/// latest end before it on its rank, or an input's ready time); the makespan is the last
/// end and the stretch its growth over simulate()'s. Returns what is wrong, or "".
/// Quadratic: test-only.
std::string stretch_problem(schedule_view v, const costs& c, std::span<const fill_job> jobs, const fill_result& fill,
                            const stretch_result& st, const cost_scale& scale = {}) {
  const simulation sim = simulate(v, c, scale);
  const std::size_t n = v.size();
  if (st.old_makespan != sim.makespan()) return "old makespan";
  if (st.op_start.size() != n || st.op_end.size() != n || st.pieces.size() != fill.pieces.size()) return "shapes";
  struct node {
    int rank;
    rational start, end, ready;
    const char* what;
    std::size_t before;
  };  // before: deadline op, or n
  std::vector<node> nodes;
  const auto lat = [&](int a, int b) { return a != b ? c.c : rational{0}; };
  const auto rank_of = [&](std::size_t k) { return tests::rank_at(v, k); };
  rational last{0};
  std::vector<std::size_t> op_node(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const bool pair_b = k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b;
    if (st.op_end[k] - st.op_start[k] != sim.end(k) - sim.start(k)) return "op length";
    last = max(last, st.op_end[k]);
    if (pair_b) {  // its pair word's node stands for it
      op_node[k] = op_node[k - 1];
      continue;
    }
    rational ready{0};
    const auto need = [&](op o) {
      std::size_t d = tests::find_op(v, o);
      if (d == n && o.kind() == op_kind::B) d = tests::find_op(v, op{op_kind::I, o.stage(), o.microbatch()});
      if (d == n) return;
      ready = max(ready, st.op_end[d] + lat(rank_of(d), rank_of(k)));
    };
    for_each_input(v, k, need);
    if (st.op_start[k] < ready) return "op before its input";
    nodes.push_back({rank_of(k), st.op_start[k], st.op_end[k], ready, "op", n});
    op_node[k] = nodes.size() - 1;
  }
  // Pieces and remainders: windows, their job's order.
  std::vector<std::vector<fill_piece>> of_job(jobs.size());
  const auto job_node = [&](const fill_piece& x, rational ready, const char* what) -> std::string {
    const fill_job& job = jobs[x.job];
    if (job.rank != any_rank && job.rank != x.rank) return "rank not allowed";
    if (job.after) {
      const std::size_t k = tests::find_op(v, *job.after);
      ready = max(ready, st.op_end[k] + lat(rank_of(k), x.rank));
    }
    if (x.start < ready) return std::string(what) + " before its release";
    std::size_t before = n;
    if (job.before) {
      before = tests::find_op(v, *job.before);
      if (x.end + lat(rank_of(before), x.rank) > st.op_start[before]) return std::string(what) + " after its deadline";
    }
    nodes.push_back({x.rank, x.start, x.end, ready, what, before});
    last = max(last, x.end);
    return "";
  };
  for (std::size_t q = 0; q < fill.pieces.size(); ++q) {
    const fill_piece& x = st.pieces[q];
    if (x.job != fill.pieces[q].job || x.rank != fill.pieces[q].rank ||
        x.end - x.start != fill.pieces[q].end - fill.pieces[q].start) {
      return "piece changed";
    }
    of_job[x.job].push_back(x);
  }
  for (std::vector<fill_piece>& pieces : of_job) {
    std::sort(pieces.begin(), pieces.end(), [](const fill_piece& a, const fill_piece& b) { return a.start < b.start; });
    for (std::size_t q = 0; q < pieces.size(); ++q) {
      if (q > 0 && pieces[q].start < pieces[q - 1].end) return "a job's pieces overlap";
      const std::string bad = job_node(pieces[q], q > 0 ? pieces[q - 1].end : rational{0}, "piece");
      if (!bad.empty()) return bad;
    }
  }
  std::vector<int> seen(jobs.size(), 0);
  for (const fill_piece& x : st.placed) {
    if (x.end - x.start != jobs[x.job].duration - fill.placed[x.job]) return "remainder length";
    ++seen[x.job];
    const rational after = of_job[x.job].empty() ? rational{0} : of_job[x.job].back().end;
    const std::string bad = job_node(x, after, "remainder");
    if (!bad.empty()) return bad;
  }
  const auto out_of_order = [&](std::uint32_t j) {  // its release op cannot end before its deadline op starts
    return jobs[j].after && jobs[j].before &&
           st.op_end[tests::find_op(v, *jobs[j].after)] >= st.op_start[tests::find_op(v, *jobs[j].before)];
  };
  for (const std::uint32_t j : st.impossible) {
    ++seen[j];
    if (!out_of_order(j)) return "impossible yet in order";
  }
  for (const stretch_blocked& b : st.blocked) {
    ++seen[b.job];
    if (!out_of_order(b.job)) return "blocked yet in order";
    if (b.by.empty()) return "blocked by nothing";
    for (const std::uint32_t k : b.by) {
      if (std::none_of(st.placed.begin(), st.placed.end(), [&](const fill_piece& x) { return x.job == k; }))
        return "blocked by a job not inserted";
    }
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (seen[j] != (fill.placed[j] < jobs[j].duration ? 1 : 0)) return "a remainder missing or twice";
  }
  // A deadline op waits for its jobs' pieces and remainders.
  for (const node& x : nodes) {
    if (x.before < n) {
      node& d = nodes[op_node[x.before]];
      d.ready = max(d.ready, x.end + lat(x.rank, d.rank));
    }
  }
  // Ranks: no overlap; every node as soon as its rank and inputs allow.
  for (const node& a : nodes) {
    rational prev{0};
    for (const node& b : nodes) {
      if (&a == &b || a.rank != b.rank) continue;
      if (a.start < b.end && b.start < a.end)
        return std::string("two nodes overlap on a rank: ") + a.what + ", " + b.what;
      if (b.end <= a.start) prev = max(prev, b.end);
    }
    if (a.start != max(prev, a.ready)) return std::string("a node could start earlier: ") + a.what;
  }
  if (st.makespan != last || st.stretch != st.makespan - st.old_makespan) return "makespan";
  if (st.bound > st.makespan || st.bound < st.old_makespan ||
      st.least != (st.bound == st.makespan && st.blocked.empty()))
    return "bound";
  return "";
}

/// `st` with one thing broken, for the check above to catch: `what` 0 moves the first
/// remainder 1/8 earlier, 1 the first op 1/8 later, 2 a piece to the next rank, 3 drops
/// a remainder.
stretch_result broken(stretch_result st, int what) {
  if (what == 0) st.placed.front().start -= rational{1, 8}, st.placed.front().end -= rational{1, 8};
  if (what == 1) st.op_start.front() += rational{1, 8}, st.op_end.front() += rational{1, 8};
  if (what == 2) st.pieces.front().rank = (st.pieces.front().rank + 1) % 4;
  if (what == 3) st.placed.pop_back();
  return st;
}

/// The least makespan of any stretch that inserts the remainders of `which` (jobs with
/// time left), by exhaustive search apart from the library: every rank each may use and
/// every position in that rank's list (the pipeline ops in their order, the fill's
/// pieces among them by start), each arrangement run by docs/spec.md §2 and §8.1's
/// rule (every node as soon as the node before it on its rank and its inputs allow, t_c
/// across ranks; a piece or remainder after its release op and its job's earlier pieces,
/// its deadline op after it); nullopt when every arrangement has a cycle. Exponential:
/// a few remainders on tiny schedules only.
std::optional<rational> least_stretch_brute_force(schedule_view v, const costs& c, std::span<const fill_job> jobs,
                                                  const fill_result& fill, const std::vector<std::uint32_t>& which) {
  const simulation sim = simulate(v, c);
  const std::size_t n = v.size(), none = n + 1;
  struct edge {
    std::size_t from, to;
    bool latency;
  };
  std::vector<rational> dur;
  std::vector<int> rank;
  std::vector<edge> edges;
  std::vector<std::size_t> node_of_op(n);  // a pair's B word: its pair's node
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b) {
      node_of_op[k] = node_of_op[k - 1];
      continue;
    }
    node_of_op[k] = dur.size();
    dur.push_back(sim.end(k) - sim.start(k)), rank.push_back(tests::rank_at(v, k));
  }
  const auto node = [&](op o) {
    std::size_t d = tests::find_op(v, o);
    if (d == n && o.kind() == op_kind::B) d = tests::find_op(v, op{op_kind::I, o.stage(), o.microbatch()});
    return d == n ? none : node_of_op[d];
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b) continue;
    const auto need = [&](op o) {
      const std::size_t d = node(o);
      if (d != none && d != node_of_op[k]) edges.push_back({d, node_of_op[k], true});
    };
    for_each_input(v, k, need);
  }
  // A piece or remainder of job j: its release and deadline ops' edges, after its job's latest.
  std::vector<std::size_t> latest(jobs.size(), none);
  const auto job_node = [&](std::uint32_t j, rational length, int on) {
    const std::size_t u = dur.size();
    dur.push_back(length), rank.push_back(on);
    if (jobs[j].after) edges.push_back({node(*jobs[j].after), u, true});
    if (jobs[j].before) edges.push_back({u, node(*jobs[j].before), true});
    if (latest[j] != none) edges.push_back({latest[j], u, false});
    latest[j] = u;
    return u;
  };
  std::vector<std::size_t> by_time(fill.pieces.size()), piece_node(fill.pieces.size());
  for (std::size_t q = 0; q < by_time.size(); ++q) by_time[q] = q;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](std::size_t a, std::size_t b) { return fill.pieces[a].start < fill.pieces[b].start; });
  for (const std::size_t q : by_time)
    piece_node[q] = job_node(fill.pieces[q].job, fill.pieces[q].end - fill.pieces[q].start, fill.pieces[q].rank);
  std::vector<std::vector<std::size_t>> lists(static_cast<std::size_t>(v.shape.P));
  for (int r = 0; r < v.shape.P; ++r) {
    std::vector<std::pair<rational, std::size_t>> items;  // (start, node); ops before pieces at one start
    for (std::size_t k = 0; k < n; ++k) {
      if (tests::rank_at(v, k) == r && !(k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b))
        items.push_back({sim.start(k), node_of_op[k]});
    }
    for (std::size_t q = 0; q < fill.pieces.size(); ++q) {
      if (fill.pieces[q].rank == r) items.push_back({fill.pieces[q].start, piece_node[q]});
    }
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& x : items) lists[static_cast<std::size_t>(r)].push_back(x.second);
  }
  std::vector<std::size_t> rem;
  for (const std::uint32_t j : which) rem.push_back(job_node(j, jobs[j].duration - fill.placed[j], 0));
  const std::size_t N = dur.size();
  std::optional<rational> best;
  const auto run = [&] {  // Kahn's order over the edges and the ranks' lists
    std::vector<std::vector<std::pair<std::size_t, rational>>> out(N);
    std::vector<int> pending(N, 0);
    for (const edge& e : edges)
      out[e.from].push_back({e.to, e.latency && rank[e.from] != rank[e.to] ? c.c : rational{0}}), ++pending[e.to];
    for (const std::vector<std::size_t>& list : lists) {
      for (std::size_t i = 0; i + 1 < list.size(); ++i)
        out[list[i]].push_back({list[i + 1], rational{0}}), ++pending[list[i + 1]];
    }
    std::vector<rational> start(N, rational{0});
    std::vector<std::size_t> queue;
    for (std::size_t u = 0; u < N; ++u) {
      if (pending[u] == 0) queue.push_back(u);
    }
    rational T{0};
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const std::size_t u = queue[h];
      T = max(T, start[u] + dur[u]);
      for (const auto& [w, latency] : out[u]) {
        start[w] = max(start[w], start[u] + dur[u] + latency);
        if (--pending[w] == 0) queue.push_back(w);
      }
    }
    if (queue.size() == N && (!best || T < *best)) best = T;
  };
  const auto place = [&](const auto& self, std::size_t i) -> void {
    if (i == which.size()) return run();
    for (int r = 0; r < v.shape.P; ++r) {
      if (jobs[which[i]].rank != any_rank && jobs[which[i]].rank != r) continue;
      rank[rem[i]] = r;
      std::vector<std::size_t>& list = lists[static_cast<std::size_t>(r)];
      for (std::size_t at = 0; at <= list.size(); ++at) {
        list.insert(list.begin() + static_cast<std::ptrdiff_t>(at), rem[i]);
        self(self, i + 1);
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(at));
      }
    }
  };
  place(place, 0);
  return best;
}

}  // namespace

TEST_CASE("stretching: the encoder's rest on 1F1B P = 8, m = 32 costs 3/4, by hand", "[fill][stretch]") {
  // By hand (f = 1, b = 2, t_c = 0): T = (m+P-1)(t_f+t_b) = 39 x 3 = 117. The fill leaves
  // the first encoder forward (it must end before F(0, 0), which starts at 0) and the last
  // encoder backward (it starts after B(0, 31), which ends at T). F(0, 0) is the only op
  // with no input, and every op depends on it (each rank's list starts with F(r, 0),
  // which needs F(r-1, 0)); so the forward inserted before it on rank 0 delays
  // everything by exactly 1/4, and B(0, 31) then ends at 117 + 1/4. The backward runs
  // after it on rank 0 (any other rank adds t_c, 0 here): 117 + 1/4 + 1/2 = 471/4. No
  // stretch does better: the forward, F(0, 0) ... B(0, 31) (a chain of 117) and the
  // backward lie on one path, so T' >= 1/4 + 117 + 1/2; the library's bound says the same.
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 8, 32));
  const detail::buffer<fill_job> jobs = encoder_jobs(s.view(), rational{1, 4}, rational{1, 2});
  for (const bool best : {false, true}) {
    const fill_result fill =
        best ? fill_bubbles_optimal(s.view(), costs{}, jobs.span()) : fill_bubbles(s.view(), costs{}, jobs.span());
    REQUIRE(fill.total == rational{93, 4});
    const stretch_result st = stretch_fill(s.view(), costs{}, jobs.span(), fill);
    CHECK(st.old_makespan == rational{117});
    CHECK(st.makespan == rational{471, 4});
    CHECK(st.stretch == rational{3, 4});
    CHECK(st.bound == rational{471, 4});
    CHECK(st.least);
    REQUIRE(st.placed.size() == 2);
    CHECK(st.placed[0].job == 0);  // encoder F 0, first on rank 0
    CHECK(st.placed[0].rank == 0);
    CHECK(st.placed[0].start == rational{0});
    CHECK(st.placed[0].end == rational{1, 4});
    CHECK(st.placed[1].job == 63);  // encoder B 31, last on rank 0
    CHECK(st.placed[1].rank == 0);
    CHECK(st.placed[1].start == rational{469, 4});
    CHECK(st.placed[1].end == rational{471, 4});
    CHECK(st.impossible.empty());
    const std::size_t f00 = tests::find_op(s.view(), op{op_kind::F, 0, 0}),
                      b031 = tests::find_op(s.view(), op{op_kind::B, 0, 31});
    CHECK(st.op_start[f00] == rational{1, 4});
    CHECK(st.op_end[b031] == rational{469, 4});
    CHECK(stretch_problem(s.view(), costs{}, jobs.span(), fill, st).empty());
    for (int what = 0; what < 4; ++what)
      CHECK(!stretch_problem(s.view(), costs{}, jobs.span(), fill, broken(st, what)).empty());
  }
  // With t_c = 1/2 the numbers change, not the stretch: T = 151 (simulate()'s), and both
  // remainders sit on rank 0, the rank of F(0, 0) and of B(0, 31), so no latency is
  // added: 151 + 3/4.
  costs latency{};
  latency.c = rational{1, 2};
  const fill_result fill = fill_bubbles(s.view(), latency, jobs.span());
  const stretch_result st = stretch_fill(s.view(), latency, jobs.span(), fill);
  CHECK(st.old_makespan == rational{151});
  CHECK(st.makespan == rational{607, 4});
  CHECK(st.least);
  CHECK(stretch_problem(s.view(), latency, jobs.span(), fill, st).empty());
}

TEST_CASE("stretching with latency and pinned jobs, by hand", "[fill][stretch]") {
  costs latency{};
  latency.c = rational{1, 2};
  {
    // GPipe, P = 4, m = 8, t_c = 1/2: T = (m+P-1)(t_f+t_b) + 2(P-1)t_c = 33 + 3 = 36
    // (formulas.hpp). As for 1F1B, only the first encoder forward and the last encoder
    // backward have no window; F(0, 0) is the only source and B(0, 7) ends at T, so
    // T' = 1/4 + 36 + 1/2 = 147/4, both on rank 0, and no stretch does better.
    const schedule s = generate(family_spec(schedule_family::gpipe, 4, 8));
    const detail::buffer<fill_job> jobs = encoder_jobs(s.view(), rational{1, 4}, rational{1, 2});
    const fill_result fill = fill_bubbles_optimal(s.view(), latency, jobs.span());
    const stretch_result st = stretch_fill(s.view(), latency, jobs.span(), fill);
    CHECK(st.old_makespan == rational{36});
    CHECK(st.makespan == rational{147, 4});
    CHECK(st.least);
    REQUIRE(st.placed.size() == 2);
    CHECK(st.placed[0].rank == 0);
    CHECK(st.placed[1].rank == 0);
    CHECK(stretch_problem(s.view(), latency, jobs.span(), fill, st).empty());
  }
  // 1F1B, P = 4, m = 8, t_c = 1/2 (T = 41, simulate()'s): a job of 1/4 pinned to rank 1
  // before F(0, 0) has no window (it would have to end by -1/2); inserted first on rank
  // 1, it ends at 1/4 and F(0, 0), on rank 0, waits for it plus t_c: everything moves by
  // 3/4. A job of 1/4 pinned to rank 2 after B(0, 7) (which now ends at 41 + 3/4) starts
  // t_c later and ends at 41 + 3/4 + 1/2 + 1/4 = 85/2. The bound charges t_c for a
  // pinned job on another rank than its op, so it is reached.
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  const std::vector<fill_job> jobs{{"early", -1, rational{1, 4}, 1, std::nullopt, op{op_kind::F, 0, 0}},
                                   {"late", -1, rational{1, 4}, 2, op{op_kind::B, 0, 7}, std::nullopt},
                                   // B(0, 0) needs F(0, 0): no order admits this one
                                   {"never", -1, rational{1}, any_rank, op{op_kind::B, 0, 0}, op{op_kind::F, 0, 0}}};
  const fill_result fill = fill_bubbles(s.view(), latency, jobs);
  const stretch_result st = stretch_fill(s.view(), latency, jobs, fill);
  CHECK(st.old_makespan == rational{41});
  CHECK(st.makespan == rational{85, 2});
  CHECK(st.stretch == rational{3, 2});
  CHECK(st.least);
  REQUIRE(st.placed.size() == 2);
  CHECK(st.placed[0].job == 0);
  CHECK(st.placed[0].rank == 1);
  CHECK(st.placed[0].start == rational{0});
  CHECK(st.placed[1].job == 1);
  CHECK(st.placed[1].rank == 2);
  CHECK(st.placed[1].start == rational{169, 4});
  CHECK(st.impossible == std::vector<std::uint32_t>{2});
  CHECK(st.op_start[tests::find_op(s.view(), op{op_kind::F, 0, 0})] == rational{3, 4});
  CHECK(stretch_problem(s.view(), latency, jobs, fill, st).empty());
}

TEST_CASE("stretching: every stretch re-checked from the spec, four families, P <= 4 with m < P, both methods",
          "[fill][stretch]") {
  std::mt19937 rng(16);
  int runs = 0, inserted = 0, least = 0, impossible = 0, stretched = 0;
  for (const schedule_family family : {schedule_family::gpipe, schedule_family::one_f_one_b,
                                       schedule_family::interleaved_1f1b, schedule_family::zb_h1}) {
    for (int P : {1, 2, 3, 4}) {
      for (int m : {1, 2, 3, 4, 8}) {
        const schedule_spec spec = family_spec(family, P, m);
        if (spec_error(spec) != nullptr) continue;
        const schedule s = generate(spec);
        const schedule_view v = s.view();
        for (int round = 0; round < 4; ++round) {
          costs c{};
          c.c = rational{round % 3, 3};
          std::vector<fill_job> jobs;
          if (round % 2 == 0) {
            const detail::buffer<fill_job> encoder =
                encoder_jobs(v, rational{1, 4}, rational{1, 2});  // kept alive over the loop
            for (const fill_job& job : encoder.span()) jobs.push_back(job);
          }
          for (int j = 0; j < 5; ++j) {  // random jobs: pinned or not, release, deadline, divisible
            fill_job job{"x", j, rational{1 + static_cast<std::int64_t>(rng() % 8), 2}};
            if (rng() % 3 == 0) job.rank = static_cast<int>(rng() % static_cast<unsigned>(P));
            if (rng() % 2 == 0) job.after = v.ops[rng() % v.size()];
            if (rng() % 2 == 0) job.before = v.ops[rng() % v.size()];
            if (rng() % 2 == 0) job.divisible = true, job.min_piece = rational{static_cast<std::int64_t>(rng() % 3), 4};
            jobs.push_back(job);
          }
          const std::vector<rational> factors(static_cast<std::size_t>(v.shape.stages()), rational{1});
          std::vector<rational> stage = factors;
          stage.back() = rational{5, 4};  // the last stage 5/4 as long in odd rounds
          const cost_scale scale = round % 2 == 1 ? cost_scale{stage, {}} : cost_scale{};
          for (const bool best : {false, true}) {
            const fill_result fill =
                best ? fill_bubbles_optimal(v, c, jobs, {}, scale) : fill_bubbles(v, c, jobs, {}, scale);
            const stretch_result st = stretch_fill(v, c, jobs, fill, scale);
            const std::string problem = stretch_problem(v, c, jobs, fill, st, scale);
            CAPTURE(family_name(family), P, m, round, best, problem);
            CHECK(problem.empty());
            ++runs, inserted += static_cast<int>(st.placed.size()), least += st.least ? 1 : 0;
            impossible += static_cast<int>(st.impossible.size()), stretched += st.stretch > rational{0} ? 1 : 0;
          }
        }
      }
    }
  }
  CHECK(runs > 400);
  CHECK(inserted > 1000);
  CHECK(stretched > runs / 2);
  CHECK(least > 0);
  CHECK(impossible > 0);
}

TEST_CASE("stretching: a fill with nothing left stretches by 0, and the errors", "[fill][stretch]") {
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 4, 8));
  const std::vector<fill_job> small{{"s", -1, rational{1, 2}, any_rank, op{op_kind::F, 0, 0}, std::nullopt}};
  const fill_result fill = fill_bubbles(s.view(), costs{}, small);
  REQUIRE(fill.total == rational{1, 2});
  const stretch_result none = stretch_fill(s.view(), costs{}, small, fill);
  CHECK(none.makespan == rational{33});
  CHECK(none.stretch == rational{0});
  CHECK(none.placed.empty());
  CHECK(none.pieces.size() == 1);
  constexpr const char* not_a_fill =
      "ctpipe: stretch_fill takes a one-iteration fill of these jobs on this schedule (fill_bubbles() or "
      "fill_bubbles_optimal() without "
      "steady_state)";
  // The steady state's pieces of the encoder lie outside one iteration's windows.
  const detail::buffer<fill_job> encoder = encoder_jobs(s.view(), rational{1, 4}, rational{1, 2});
  const fill_result steady = fill_bubbles(s.view(), costs{}, encoder.span(), {true});
  CHECK_THROWS_WITH(stretch_fill(s.view(), costs{}, encoder.span(), steady), not_a_fill);
  CHECK_THROWS_WITH(stretch_fill(s.view(), costs{}, encoder.span(), fill), not_a_fill);  // another fill's
  CHECK_THROWS_WITH(stretch_fill(s.view(), costs{rational{1}, rational{3}}, small, fill), not_a_fill);  // other costs
  CHECK_THROWS_WITH(stretch_fill(s.view(), costs{}, encoder.span(), fill_bubbles(s.view(), costs{}, encoder.span()), {},
                                 stretch_limits{1000}),
                    "ctpipe: stretch_fill would take more work than stretch_limits::work allows (remainders x ranks x "
                    "4 positions x graph size)");
  // The refusal is a stretch_limit_error with its numbers: 2 remainders (the first encoder
  // forward and the last backward), each on 4 ranks.
  try {
    static_cast<void>(stretch_fill(s.view(), costs{}, encoder.span(), fill_bubbles(s.view(), costs{}, encoder.span()),
                                   {}, stretch_limits{1000}));
    FAIL("no stretch_limit_error");
  } catch (const stretch_limit_error& e) {
    CHECK(e.remainders == 2);
    CHECK(e.work > 1000);
    CHECK(e.work % 32 == 0);  // 2 remainders x 4 ranks x 4 positions x the graph's size
    CHECK(e.limit == 1000);
  }
}

TEST_CASE("stretching: a job blocked by the greedy's own insertion is retried, not impossible (GPipe P = 3, m = 3)",
          "[fill][stretch]") {
  // By hand (f = 1, b = 2, t_c = 0): T = (m+P-1)(t_f+t_b) = 15; GPipe runs stage s on rank
  // s, every forward first. Job a (3, any rank) after F(2, 1) (rank 2, 3 to 4) and
  // before F(1, 2) (rank 1, 3 to 4); job b (3, rank 1) after F(0, 2) (ends at 3) and
  // before F(2, 0) (starts at 2): neither has a window, so the fill places nothing. In
  // the schedule F(2, 1) does not depend on F(1, 2) (nor F(0, 2) on F(2, 0)), so neither
  // is impossible. The first pass takes b first (its deadline is earlier) and puts it
  // after F(1, 2) on rank 1; then F(1, 2) -> b -> F(2, 0) -> F(2, 1) makes a's release
  // depend on its deadline: a is blocked by b (the tool used to call it impossible). The
  // second pass takes a first and inserts both: makespan 23, which an exhaustive search
  // over every rank and position confirms is the least, and the bound reaches.
  const schedule s = generate(family_spec(schedule_family::gpipe, 3, 3));
  const std::vector<fill_job> jobs{{"a", -1, rational{3}, any_rank, op{op_kind::F, 2, 1}, op{op_kind::F, 1, 2}},
                                   {"b", -1, rational{3}, 1, op{op_kind::F, 0, 2}, op{op_kind::F, 2, 0}}};
  const fill_result fill = fill_bubbles_optimal(s.view(), costs{}, jobs);
  REQUIRE(fill.total == rational{0});
  const stretch_result st = stretch_fill(s.view(), costs{}, jobs, fill);
  CHECK(st.old_makespan == rational{15});
  CHECK(st.makespan == rational{23});
  CHECK(st.bound == rational{23});
  CHECK(st.least);
  CHECK(st.passes == 2);
  CHECK(st.impossible.empty());
  CHECK(st.blocked.empty());
  REQUIRE(st.placed.size() == 2);
  CHECK(st.placed[1].rank == 1);
  CHECK(stretch_problem(s.view(), costs{}, jobs, fill, st).empty());
  CHECK(least_stretch_brute_force(s.view(), costs{}, jobs, fill, {0, 1}) == rational{23});
  // One pass only: a is reported blocked by b, not impossible, not proved (both fit),
  // and the bound (of b alone) is not called least.
  stretch_limits one;
  one.passes = 1;
  const stretch_result first = stretch_fill(s.view(), costs{}, jobs, fill, {}, one);
  CHECK(first.passes == 1);
  CHECK(first.impossible.empty());
  REQUIRE(first.blocked.size() == 1);
  CHECK(first.blocked[0].job == 0);
  CHECK(first.blocked[0].by == std::vector<std::uint32_t>{1});
  CHECK(!first.blocked[0].proved);
  CHECK(first.makespan == rational{20});
  CHECK(!first.least);
  CHECK(stretch_problem(s.view(), costs{}, jobs, fill, first).empty());
  stretch_limits zero;
  zero.passes = 0;
  CHECK_THROWS_WITH(stretch_fill(s.view(), costs{}, jobs, fill, {}, zero),
                    "ctpipe: stretch_limits::passes must be >= 1");
}

TEST_CASE("stretching: two jobs whose windows exclude each other: one inserted, the other blocked by it, proved",
          "[fill][stretch]") {
  // 1F1B, P = 2, m = 2 (T = 9): a after B(0, 0), before F(1, 1); b after F(1, 1), before
  // B(0, 0). In the schedule neither op depends on the other, so neither job is
  // impossible; but both together close the cycle B(0, 0) -> a -> F(1, 1) -> b -> B(0, 0)
  // whatever the lists: one is inserted and the other blocked by it, proved so (an
  // exhaustive search finds no arrangement of both). The bound covers the one inserted
  // only, so the result is never least.
  const schedule s = generate(family_spec(schedule_family::one_f_one_b, 2, 2));
  const std::vector<fill_job> jobs{{"a", -1, rational{1}, any_rank, op{op_kind::B, 0, 0}, op{op_kind::F, 1, 1}},
                                   {"b", -1, rational{1}, any_rank, op{op_kind::F, 1, 1}, op{op_kind::B, 0, 0}}};
  const fill_result fill = fill_bubbles_optimal(s.view(), costs{}, jobs);
  REQUIRE(fill.total == rational{0});
  const stretch_result st = stretch_fill(s.view(), costs{}, jobs, fill);
  CHECK(st.impossible.empty());
  REQUIRE(st.placed.size() == 1);
  REQUIRE(st.blocked.size() == 1);
  const std::uint32_t in = st.placed[0].job, out = st.blocked[0].job;
  CHECK(in != out);
  CHECK(st.blocked[0].by == std::vector<std::uint32_t>{in});
  CHECK(st.blocked[0].proved);
  CHECK(st.makespan == rational{10});
  CHECK(st.bound == rational{10});
  CHECK(!st.least);
  CHECK(stretch_problem(s.view(), costs{}, jobs, fill, st).empty());
  CHECK(!least_stretch_brute_force(s.view(), costs{}, jobs, fill, {0, 1}));
  CHECK(least_stretch_brute_force(s.view(), costs{}, jobs, fill, {0}));
  CHECK(least_stretch_brute_force(s.view(), costs{}, jobs, fill, {1}));
}

TEST_CASE("stretching against an exhaustive search: tiny schedules, jobs with narrow or no windows",
          "[fill][stretch]") {
  // Per case, apart from the library: a job called impossible fits no arrangement even
  // alone; a blocked job called proved fits none beside the inserted ones; no
  // arrangement of the inserted remainders ends before the bound, the greedy's makespan
  // is one of them (>= the least), `least` means it is the least; and a job is left
  // blocked only where no arrangement takes every job that is not impossible.
  std::mt19937 rng(8);
  int runs = 0, impossible = 0, blocked = 0, proved = 0, retried = 0, least = 0, two_jobs_conflict = 0;
  for (const schedule_family family : {schedule_family::gpipe, schedule_family::one_f_one_b, schedule_family::zb_h1}) {
    for (int P : {2, 3}) {
      for (int m : {2, 3}) {
        const schedule_spec spec = family_spec(family, P, m);
        if (spec_error(spec) != nullptr) continue;
        const schedule s = generate(spec);
        const schedule_view v = s.view();
        for (int round = 0; round < 40; ++round) {
          costs c{};
          c.c = rational{round % 2, 2};
          const simulation sim = simulate(v, c);
          std::vector<fill_job> jobs;
          const int count = 2 + static_cast<int>(rng() % 2);
          for (int j = 0; j < count; ++j) {
            fill_job job{"x", j, rational{1 + static_cast<std::int64_t>(rng() % 4)}};
            if (rng() % 3 == 0) job.rank = static_cast<int>(rng() % static_cast<unsigned>(P));
            for (int tries = 0; tries < 50; ++tries) {  // a release and a deadline close together: little or no window
              const std::size_t a = rng() % v.size(), b = rng() % v.size();
              if (sim.start(a) < sim.end(b) && sim.start(b) <= sim.end(a) + rational{2} &&
                  sim.end(a) <= sim.start(b) + rational{4}) {
                job.after = v.ops[a], job.before = v.ops[b];
                break;
              }
            }
            if (rng() % 6 == 0) job.after.reset();
            if (rng() % 6 == 0) job.before.reset();
            jobs.push_back(job);
          }
          const fill_result fill = fill_bubbles_optimal(v, c, jobs);
          const stretch_result st = stretch_fill(v, c, jobs, fill);
          const std::string problem = stretch_problem(v, c, jobs, fill, st);
          CAPTURE(family_name(family), P, m, round, problem);
          CHECK(problem.empty());
          std::vector<std::uint32_t> inserted, possible;
          for (const fill_piece& x : st.placed) inserted.push_back(x.job);
          for (std::uint32_t j = 0; j < jobs.size(); ++j) {
            if (fill.placed[j] < jobs[j].duration &&
                std::find(st.impossible.begin(), st.impossible.end(), j) == st.impossible.end()) {
              possible.push_back(j);
            }
          }
          for (const std::uint32_t j : st.impossible) CHECK(!least_stretch_brute_force(v, c, jobs, fill, {j}));
          const std::optional<rational> best = least_stretch_brute_force(v, c, jobs, fill, inserted);
          REQUIRE(best);
          CHECK(st.bound <= *best);
          CHECK(*best <= st.makespan);
          if (st.least) CHECK(*best == st.makespan);
          if (!st.blocked.empty()) CHECK(!least_stretch_brute_force(v, c, jobs, fill, possible));
          for (const stretch_blocked& b : st.blocked) {
            std::vector<std::uint32_t> beside = inserted;
            beside.push_back(b.job);
            if (b.proved) CHECK(!least_stretch_brute_force(v, c, jobs, fill, beside));
            proved += b.proved ? 1 : 0;
          }
          ++runs, impossible += static_cast<int>(st.impossible.size()), blocked += static_cast<int>(st.blocked.size());
          retried += st.passes > 1 ? 1 : 0, least += st.least ? 1 : 0, two_jobs_conflict += !st.blocked.empty() ? 1 : 0;
        }
      }
    }
  }
  CHECK(runs > 300);
  CHECK(impossible > 0);
  CHECK(blocked > 0);
  CHECK(proved > 0);
  CHECK(retried > 0);
  CHECK(least > 0);
}

TEST_CASE("ctpipe fill --allow-stretch: text and JSON", "[tool][fill][stretch]") {
  const auto text = run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2 --allow-stretch");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("stretched to take the rest (--allow-stretch): makespan 117 -> 471/4, stretch 3/4; bound 471/4: "
                      "least; method "
                      "greedy insertion\n  inserted: encoder F 0, 1/4 on rank 0 at 0 to 1/4\n  inserted: encoder B 31, "
                      "1/2 on rank 0 "
                      "at 469/4 to 471/4\n") != std::string::npos);
  const auto json_run = run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2 --allow-stretch --format json");
  REQUIRE(json_run.exit_code == 0);
  const nlohmann::json st = nlohmann::json::parse(json_run.out)["fill"]["stretch"];
  CHECK(st["makespan"] == "471/4");
  CHECK(st["stretch"] == "3/4");
  CHECK(st["bound"] == "471/4");
  CHECK(st["least"] == true);
  CHECK(st["impossible"].empty());
  REQUIRE(st["placed"].size() == 2);
  CHECK(
      st["placed"][1] ==
      nlohmann::json::parse(R"({"job": "encoder B", "microbatch": 31, "rank": 0, "start": "469/4", "end": "471/4"})"));
  const auto plain = run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2 --format json");
  CHECK(nlohmann::json::parse(plain.out)["fill"]["stretch"].is_null());
  CHECK(run_tool("fill -s 1f1b -P 8 -m 32 --fill encoder:f=1/4,b=1/2").out.find("stretched") == std::string::npos);
  // A pinned job with latency, and one no order admits.
  const auto pinned = run_tool(
      "fill -P 4 -m 8 --costs c=1/2 --fill job:t=1/4,name=early,rank=1,before=0F0 --fill "
      "job:t=1,name=never,after=0B0,before=0F0 --allow-stretch");
  REQUIRE(pinned.exit_code == 0);
  CHECK(pinned.out.find("makespan 41 -> 167/4, stretch 3/4; bound 167/4: reached, no stretch of the jobs some order "
                        "admits ends earlier; "
                        "method greedy insertion\n") != std::string::npos);
  CHECK(pinned.out.find("  inserted: early, 1/4 on rank 1 at 0 to 1/4\n  not placed even so: never: its release op "
                        "depends on its deadline op\n") != std::string::npos);
}

TEST_CASE("ctpipe fill --allow-stretch: jobs blocked, not impossible, and never least while one is left out",
          "[tool][fill][stretch]") {
  // The GPipe case above: both inserted on the second pass (it used to call a impossible).
  const std::string both =
      "fill -s gpipe -P 3 -m 3 --fill job:t=3,name=a,after=2F1,before=1F2 --fill "
      "job:t=3,name=b,rank=1,after=0F2,before=2F0 "
      "--allow-stretch";
  const auto text = run_tool(both);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("stretched to take the rest (--allow-stretch): makespan 15 -> 23, stretch 8; bound 23: least; "
                      "method greedy insertion (2 "
                      "orders tried)\n") != std::string::npos);
  CHECK(text.out.find("not placed even so") == std::string::npos);
  const nlohmann::json st = nlohmann::json::parse(run_tool(both + " --format json").out)["fill"]["stretch"];
  CHECK(st["makespan"] == "23");
  CHECK(st["least"] == true);
  CHECK(st["passes"] == 2);
  CHECK(st["placed"].size() == 2);
  CHECK(st["impossible"].empty());
  CHECK(st["blocked"].empty());
  // Two jobs that exclude each other: one inserted, the other blocked by it (proved), and
  // the bound is for the one inserted only.
  const std::string pair =
      "fill -P 2 -m 2 --fill job:t=1,name=a,after=0B0,before=1F1 --fill job:t=1,name=b,after=1F1,before=0B0 "
      "--allow-stretch";
  const auto conflict = run_tool(pair);
  REQUIRE(conflict.exit_code == 0);
  const std::string line = conflict.out.substr(conflict.out.find("stretched to take the rest"));
  CHECK(line.substr(0, line.find('\n')) ==
        "stretched to take the rest (--allow-stretch): makespan 9 -> 10, stretch 1; bound 10 for the remainders "
        "inserted only, not for all: 1 "
        "blocked below; method greedy insertion (2 orders tried)");
  CHECK(conflict.out.find("its release op depends on its deadline op\n") == std::string::npos);
  CHECK(conflict.out.find(": blocked by the remainders inserted before it (") != std::string::npos);
  CHECK(conflict.out.find("no stretch inserts it beside all those inserted (proved)\n") != std::string::npos);
  const nlohmann::json pj = nlohmann::json::parse(run_tool(pair + " --format json").out)["fill"]["stretch"];
  CHECK(pj["least"] == false);
  CHECK(pj["impossible"].empty());
  REQUIRE(pj["placed"].size() == 1);
  REQUIRE(pj["blocked"].size() == 1);
  CHECK(pj["blocked"][0]["by"] == nlohmann::json::array({{{"job", pj["placed"][0]["job"]}, {"microbatch", nullptr}}}));
  CHECK(pj["blocked"][0]["by_total"] == 1);
  CHECK(pj["blocked"][0]["proved"] == true);
  CHECK(pj["blocked"][0]["job"] != pj["placed"][0]["job"]);
  // 30 copies of each: the JSON lists 20 blockers per blocked job and says how many.
  const nlohmann::json many =
      nlohmann::json::parse(run_tool("fill -P 2 -m 2 --fill job:t=1,name=a,after=0B0,before=1F1,count=30 --fill "
                                     "job:t=1,name=b,after=1F1,before=0B0,count=30 --allow-stretch --format json")
                                .out)["fill"]["stretch"];
  REQUIRE(many["blocked"].size() == 30);
  CHECK(many["placed"].size() == 30);
  CHECK(many["least"] == false);
  CHECK(many["passes"].get<int>() > 1);
  CHECK(many["blocked"][0]["by"].size() == 20);
  CHECK(many["blocked"][0]["by_total"] == 30);
  CHECK(many["blocked"][0]["proved"] == true);
}

TEST_CASE("ctpipe fill --allow-stretch: too large to stretch keeps the fill, and svg and trace refuse it",
          "[tool][fill][stretch]") {
  for (const char* shape : {"-s zbv -P 32 -m 128", "-s interleaved-1f1b -V 4 -P 32 -m 128", "-s dualpipev -P 32 -m 128",
                            "-s looped-bfs -V 8 -P 32 -m 128"}) {
    CAPTURE(shape);
    const std::string args = std::string("fill ") + shape + " --fill encoder:f=2,b=4 --allow-stretch";
    const auto text = run_tool(args);
    CHECK(text.exit_code == 0);
    CHECK(text.err.empty());
    CHECK(text.out.find("one iteration: filled ") != std::string::npos);
    CHECK(text.out.find("stretch not computed (--allow-stretch): too large: inserting the ") != std::string::npos);
    CHECK(text.out.find("ask for fewer jobs (fewer --fill requests or a smaller count=) or a smaller shape (fewer "
                        "ranks, micro-batches or "
                        "chunks)\n") != std::string::npos);
    CHECK(text.out.find("stretch_limits") == std::string::npos);
    const auto json_run = run_tool(args + " --format json");
    REQUIRE(json_run.exit_code == 0);
    const nlohmann::json fill = nlohmann::json::parse(json_run.out)["fill"];
    CHECK(fill["stretch"].is_null());
    CHECK(fill["stretch_not_computed"]["reason"] == "too large");
    CHECK(fill["stretch_not_computed"]["remainders"].get<int>() > 0);
    CHECK(fill["stretch_not_computed"]["over_limit"].get<int>() > 1);
    CHECK(!fill["placed"].empty());
  }
  // the one rounding both views print: work over limit, rounded up
  CHECK(ctpipe::io::stretch_refusal{3, 10, 4}.over_limit() == 3);
  CHECK(ctpipe::io::stretch_refusal{3, 8, 4}.over_limit() == 2);
  CHECK(ctpipe::io::stretch_refusal{3, 8, 0}.over_limit() == 0);
  CHECK(nlohmann::json::parse(run_tool("fill -P 4 -m 8 --fill encoder:f=1/4,b=1/2 --allow-stretch --format json")
                                  .out)["fill"]["stretch_not_computed"]
            .is_null());
  for (const char* format : {"svg", "trace"}) {
    const auto r =
        run_tool(std::string("fill -P 4 -m 8 --fill encoder:f=1/4,b=1/2 --allow-stretch --format ") + format);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == std::string("ctpipe: --allow-stretch shows in --format text and json only (--format ") + format +
                       " draws the unstretched timeline)\n");
  }
}
