// ctpipe/plan/rebalance.hpp: activation rebalancing (docs/spec.md §8.2). In-flight
// activations form a staircase (1F1B: rank 0 holds P, the last rank 1). Moving saved
// activations from crowded ranks into the memory of idle ones, over copy channels apart
// from compute, flattens it; this header says how flat it can get (live_bound(), at
// compile time too) and plans the moves (rebalance(), at run time), checked by a replay
// of memory and copy channels (check_rebalance()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/analysis/graph.hpp"

namespace ctpipe {

/// The most activations live at once over all ranks, and the bound it gives.
/// - `live`: max over time of the sum over ranks of in-flight activations (chunks,
///   gamma-weighted; docs/spec.md §3's events: an F allocates 1 at its start, a B frees 1,
///   an I 1 - gamma and a W gamma at their ends; at one instant frees come first);
/// - `bound`: live / P, rounded up when gamma = 1 (levels are then whole): no plan,
///   whatever it moves, gets every rank's peak below it (the definition);
/// - `level_bound`: live / P rounded up to a multiple of 1/q (gamma = p/q), the least
///   level at or above `bound` a rank can hold (levels are multiples of 1/q): equal to
///   `bound` when gamma = 1; where least_capacity() starts.
struct live_bound_result {
  rational live{0};
  rational bound{0};
  rational level_bound{0};
};

namespace detail {

/// One memory event of a rank in ticks of `q`-ths of a chunk: at `time` the level
/// changes by `delta`.
struct memory_event {
  std::int64_t time = 0;
  std::int64_t delta = 0;
};

/// Sort order of memory events: by time, frees before allocations.
constexpr bool event_before(const memory_event& a, const memory_event& b) {
  return a.time != b.time ? a.time < b.time : a.delta < b.delta;
}

/// Every memory event of `v` under simulation `sim`, in units of 1/q chunks (gamma =
/// p/q): per op, the F's +q at its start, a B's -q, an I's -(q - p), a W's -p at their
/// ends (an overlapped pair: its word +q at its start, its B word -q at its end).
/// `ranks` receives each event's rank. Linear.
constexpr buffer<memory_event> memory_events(schedule_view v, const simulation& sim, rational gamma,
                                             buffer<int>& ranks) {
  const std::int64_t q = gamma.den, p = gamma.num;
  const std::int64_t delta[16] = {q, -q, p - q, -p, 0, 0, 0, 0, q};  // per kind code (core/engine.hpp)
  buffer<memory_event> out(v.size());
  ranks = buffer<int>(v.size());
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const std::int64_t d = delta[v.ops[k].bits >> 28];
      out[k] = {d > 0 ? sim.start_ticks(k) : sim.end_ticks(k), d};
      ranks[k] = r;
    }
  }
  return out;
}

}  // namespace detail

/// live_bound_result of schedule `v` under costs `c` (scaled by `scale`) for `gamma`.
/// O(ops log ops): a simulation and a sort of the memory events. Usable in constant
/// expressions. Errors: simulate()'s and in_flight()'s messages. Source of the question:
/// BPipe (Kim et al., ICML 2023) balances activations between rank pairs; this bound
/// holds for any set of moves.
constexpr live_bound_result live_bound(schedule_view v, const costs& c, rational gamma = rational{1},
                                       const cost_scale& scale = {}) {
  check_gamma(gamma);
  const simulation sim = simulate(v, c, scale);
  detail::buffer<int> ranks;
  detail::buffer<detail::memory_event> events = detail::memory_events(v, sim, gamma, ranks);
  std::sort(events.data(), events.data() + events.size(), detail::event_before);
  std::int64_t level = 0, most = 0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    level += events[k].delta;
    most = level > most ? level : most;
  }
  const std::int64_t P = v.shape.P;
  const std::int64_t per_rank = (most + P - 1) / P;  // in 1/q chunks, rounded up
  const rational rounded{per_rank, gamma.den};
  return {rational{most, gamma.den}, gamma == rational{1} ? rounded : rational{most, rational::mul(gamma.den, P)},
          rounded};
}

/// One activation moved: chunk `stage` of micro-batch `microbatch`, from its home rank
/// `from` (the rank of its F) to rank `to` and back. Times in time units of `t_f`:
/// - `send`: the outgoing transfer starts (from's outgoing, to's incoming copy channel,
///   for t_move); it arrives at send + t_move, and counts on `from` until then;
/// - `back`: the return starts (to's outgoing, from's incoming channel); it arrives at
///   back + t_move, no later than the activation's first backward (B or I) starts, and
///   counts on `to` until then.
struct activation_move {
  int stage = 0;
  int microbatch = 0;
  int from = 0;
  int to = 0;
  rational send{0};
  rational back{0};
};

/// Which ranks may take a rank's activations: any rank (ctpipe's planner) or only its
/// BPipe partner P-1-x (Kim et al., "BPipe: Memory-Balanced Pipeline Parallelism for
/// Training Large Language Models", ICML 2023).
enum class rebalance_pairing : std::uint8_t { any, bpipe };

/// A rebalancing plan and what it achieves. Shapes: per rank (0..P-1) its capacity,
/// peaks and copy-channel busy time; `moves` in the order planned. Peaks and capacities
/// in chunks (gamma-weighted, in_flight_profile::peak()); times in time units of `t_f`.
struct rebalance_plan {
  std::vector<rational> capacity;      ///< per rank: the limit asked for
  std::vector<rational> peak_before;   ///< per rank: in_flight() peaks, no moves
  std::vector<rational> peak_after;    ///< per rank: peaks with the moves (check_rebalance())
  std::vector<activation_move> moves;  ///< the plan
  std::vector<rational> channel_busy;  ///< per rank: outgoing + incoming copy time
  live_bound_result bound;             ///< live activations and the lower bound
  rational move_cost{0};               ///< t_move
  rational makespan{0};                ///< the compute makespan, unchanged
  bool feasible = false;               ///< every rank stays within its capacity and no compute op waits
  int stuck_rank = -1;                 ///< when not feasible: the first rank the planner could not relieve
  rational stuck_at{0};                ///< and when
};

namespace detail {

/// The planner's view of one activation: its rank, stage, micro-batch, when it can leave
/// (F end) and when it must be back (first backward start), in ticks.
struct activation {
  int rank = 0, stage = 0, microbatch = 0;
  std::int64_t alloc = 0, ready = 0, need = 0;
  bool moved = false;
};

/// A move in ticks: activation index, host, outgoing transfer start, return start.
struct tick_move {
  std::size_t act = 0;
  int host = 0;
  std::int64_t send = 0, back = 0;
};

/// When a move's outgoing transfer is sent: as early as the channels allow after its F
/// ends (the activation leaves its rank soonest, and its channel is free again soonest),
/// or as late as still arrives in time (the host holds it for the shortest time); in
/// both, at a start a runtime without a clock reproduces (rebalance_planner::slot()).
enum class send_policy : std::uint8_t { early, late };

/// The greedy planner of rebalance() (its doc comment), in ticks.
class rebalance_planner {
 public:
  rebalance_planner(std::vector<activation> acts, std::vector<std::vector<memory_event>> own,
                    std::vector<std::vector<std::int64_t>> ends, std::vector<std::int64_t> cap, std::int64_t move,
                    std::int64_t q, rebalance_pairing pairing, send_policy policy)
      : acts_(std::move(acts)),
        events_(std::move(own)),
        ends_(std::move(ends)),
        cap_(std::move(cap)),
        move_(move),
        q_(q),
        pairing_(pairing),
        policy_(policy),
        by_rank_(cap_.size()),
        out_(cap_.size()),
        in_(cap_.size()) {
    for (std::size_t a = 0; a < acts_.size(); ++a) by_rank_[static_cast<std::size_t>(acts_[a].rank)].push_back(a);
    for (auto& e : events_) std::sort(e.begin(), e.end(), event_before);
  }

  /// Plans; returns false at the first rank it cannot relieve (stuck_rank, stuck_at).
  bool run() {
    std::vector<std::pair<std::int64_t, int>> checks;  // (time, rank): a min-heap of level rises
    for (std::size_t r = 0; r < events_.size(); ++r) {
      for (const memory_event& e : events_[r]) {
        if (e.delta > 0) checks.push_back({e.time, static_cast<int>(r)});
      }
    }
    const auto later = [](const auto& a, const auto& b) { return a > b; };
    std::make_heap(checks.begin(), checks.end(), later);
    while (!checks.empty()) {
      std::pop_heap(checks.begin(), checks.end(), later);
      const auto [t, r] = checks.back();
      checks.pop_back();
      while (most(r, t, t + 1) > cap_[static_cast<std::size_t>(r)]) {
        if (!relieve(r, t)) return stuck_rank = r, stuck_at = t, false;
        checks.push_back({moves.back().back + move_, r});  // its return raises the level again
        std::push_heap(checks.begin(), checks.end(), later);
      }
    }
    return true;
  }

  std::vector<tick_move> moves;
  int stuck_rank = -1;
  std::int64_t stuck_at = 0;
  const std::vector<activation>& acts() const { return acts_; }

 private:
  using spans = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [lo, hi) intervals

  /// Adds event `e` to rank r's sorted events (frees first at one instant).
  void add_event(std::size_t r, memory_event e) {
    events_[r].insert(std::upper_bound(events_[r].begin(), events_[r].end(), e, event_before), e);
  }
  /// Most level of rank r over [lo, hi), each instant taken after all its events: the
  /// level at lo (its events summed), then each instant up to hi. O(events of r).
  std::int64_t most(int r, std::int64_t lo, std::int64_t hi) const {
    const std::vector<memory_event>& e = events_[static_cast<std::size_t>(r)];
    std::int64_t l = 0;
    std::size_t k = 0;
    for (; k < e.size() && e[k].time <= lo; ++k) l += e[k].delta;
    std::int64_t m = l;
    for (; k < e.size() && e[k].time < hi; ++k) {
      l += e[k].delta;
      if (k + 1 == e.size() || e[k + 1].time != e[k].time) m = std::max(m, l);
    }
    return m;
  }
  /// The earliest time at or after t (`never` when none) / the latest at or before t
  /// (-1 when none) at which a runtime without a clock can start a copy from rank a to
  /// rank b (docs/spec.md §8.3): 0, the end of a compute op of a or b that lasts (a
  /// zero-length op ending there may itself wait for the copy), or the end of a copy on
  /// channel ca or cb (a's outgoing, b's incoming). O(log ops of a rank + copies on the
  /// two channels).
  static constexpr std::int64_t never = INT64_MAX / 4;
  std::int64_t start_after(int a, int b, const spans& ca, const spans& cb, std::int64_t t) const {
    std::int64_t best = never;
    for (const int r : {a, b}) {
      const std::vector<std::int64_t>& e = ends_[static_cast<std::size_t>(r)];
      const auto it = std::lower_bound(e.begin(), e.end(), t);
      if (it != e.end()) best = std::min(best, *it);
    }
    for (const spans* ch : {&ca, &cb}) {
      for (const auto& [x, y] : *ch) best = y >= t ? std::min(best, y) : best;
    }
    return best;
  }
  std::int64_t start_before(int a, int b, const spans& ca, const spans& cb, std::int64_t t) const {
    std::int64_t best = -1;
    for (const int r : {a, b}) {
      const std::vector<std::int64_t>& e = ends_[static_cast<std::size_t>(r)];
      const auto it = std::upper_bound(e.begin(), e.end(), t);
      if (it != e.begin()) best = std::max(best, *(it - 1));
    }
    for (const spans* ch : {&ca, &cb}) {
      for (const auto& [x, y] : *ch) best = y <= t ? std::max(best, y) : best;
    }
    return best;
  }
  /// A start s in [lo, hi - move] for a transfer from rank ra to rank rb, with [s, s +
  /// move) free on channels a (ra's outgoing) and b (rb's incoming): the earliest
  /// (send_policy::early) or the latest; -1 when there is none. s is a time a runtime
  /// starts the copy at without a clock (docs/spec.md §8.3): the end of a compute op of
  /// ra or rb (or 0), where its op is posted, or the end of a transfer on channel a or
  /// b, whose successor it is.
  std::int64_t slot(const spans& a, const spans& b, int ra, int rb, std::int64_t lo, std::int64_t hi,
                    bool earliest) const {
    std::int64_t s = earliest ? start_after(ra, rb, a, b, lo) : start_before(ra, rb, a, b, hi - move_);
    for (bool clash = true; clash && s >= lo && s + move_ <= hi;) {
      clash = false;
      for (const spans* ch : {&a, &b}) {
        for (const auto& [x, y] : *ch) {
          if (x < s + move_ && s < y && (move_ > 0 || x == s))
            s = earliest ? y : start_before(ra, rb, a, b, x - move_), clash = true;
        }
      }
    }
    return s >= lo && s + move_ <= hi ? s : -1;
  }
  /// Moves one activation off rank r so that it has left by time t; false when no
  /// activation and host can be found.
  bool relieve(int r, std::int64_t t);

  std::vector<activation> acts_;
  std::vector<std::vector<memory_event>> events_;  // per rank, sorted: its own and those of the moves so far
  std::vector<std::vector<std::int64_t>>
      ends_;  // per rank, sorted: 0 and the end of each of its compute ops that lasts
  std::vector<std::int64_t> cap_;
  std::int64_t move_, q_;
  rebalance_pairing pairing_;
  send_policy policy_;
  std::vector<std::vector<std::size_t>> by_rank_;  // per rank, its activations
  std::vector<spans> out_, in_;
};

inline bool rebalance_planner::relieve(int r, std::int64_t t) {
  // The candidates: home on r at t and able to have arrived elsewhere by t, needed last
  // first (Belady's rule: the furthest next use); the first that finds a host and free
  // channels moves.
  const std::size_t ri = static_cast<std::size_t>(r);
  std::vector<std::size_t> candidates;
  for (const std::size_t a : by_rank_[ri]) {
    const activation& x = acts_[a];
    if (!x.moved && x.alloc <= t && x.need > t && x.ready + move_ <= t && x.need - x.ready >= 2 * move_)
      candidates.push_back(a);
  }
  std::sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
    return acts_[a].need != acts_[b].need ? acts_[a].need > acts_[b].need : a < b;
  });
  const int P = static_cast<int>(cap_.size());
  for (const std::size_t victim : candidates) {
    activation& x = acts_[victim];
    long best_host = -1;
    std::int64_t best_slack = 0, best_send = 0, best_back = 0;
    for (int h = 0; h < P; ++h) {
      if (h == r || (pairing_ == rebalance_pairing::bpipe && h != P - 1 - r)) continue;
      const std::size_t hi = static_cast<std::size_t>(h);
      const std::int64_t send = slot(out_[ri], in_[hi], r, h, x.ready, t, policy_ == send_policy::early);
      if (send < 0) continue;
      const std::int64_t back = slot(out_[hi], in_[ri], h, r, send + move_, x.need, false);
      if (back < 0) continue;
      const std::int64_t slack = cap_[hi] - most(h, send + move_, back + move_) - q_;
      if (slack >= 0 && (best_host < 0 || slack > best_slack))
        best_host = h, best_slack = slack, best_send = send, best_back = back;
    }
    if (best_host < 0) continue;
    const std::size_t hi = static_cast<std::size_t>(best_host);
    x.moved = true;
    add_event(ri, {best_send + move_, -q_}), add_event(ri, {best_back + move_, q_});
    add_event(hi, {best_send + move_, q_}), add_event(hi, {best_back + move_, -q_});
    out_[ri].push_back({best_send, best_send + move_}), in_[hi].push_back({best_send, best_send + move_});
    out_[hi].push_back({best_back, best_back + move_}), in_[ri].push_back({best_back, best_back + move_});
    moves.push_back({victim, static_cast<int>(best_host), best_send, best_back});
    return true;
  }
  return false;
}

/// The activations of `v` (one per F, or per overlapped pair word) with their times in
/// ticks of `tick` (simulation ticks times `factor`).
inline std::vector<activation> activations_of(schedule_view v, const simulation& sim, std::int64_t factor) {
  const op_index index(v);
  std::vector<activation> out;
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const op o = v.ops[k];
      if (o.kind() != op_kind::F && o.kind() != op_kind::overlap_f_b) continue;
      const std::uint32_t b = index.find(op{op_kind::B, o.stage(), o.microbatch()});
      const std::uint32_t first_back = b != 0 ? b : index.find(op{op_kind::I, o.stage(), o.microbatch()});
      const std::int64_t need =
          first_back != 0 ? sim.start_ticks(first_back - 1) * factor : sim.makespan_ticks() * factor;
      out.push_back(
          {r, o.stage(), o.microbatch(), sim.start_ticks(k) * factor, sim.end_ticks(k) * factor, need, false});
    }
  }
  return out;
}

/// rebalance()'s planning of moves on timeline `sim` of `v` (simulate()'s, or a delayed
/// one): `capacity` per rank (P entries) as levels in 1/q-ths (floored), ticks of
/// `tick` (the timeline's tick refined to divide t_move `move`), and the planner that
/// relieved every rise (`done`), else the one stuck latest. Both send policies are
/// tried, and for `pairing::any` BPipe's pairing too (its plans are plans of any
/// pairing, and its narrower choice sometimes fits where the wider one got stuck).
struct move_planning {
  rational tick{1};
  rebalance_planner planner;
  bool done = false;

  /// The planner's moves in time units.
  std::vector<activation_move> moves() const {
    std::vector<activation_move> out;
    for (const tick_move& mv : planner.moves) {
      const activation& a = planner.acts()[mv.act];
      out.push_back({a.stage, a.microbatch, a.rank, mv.host, tick * rational{mv.send}, tick * rational{mv.back}});
    }
    return out;
  }
};

inline move_planning plan_moves(schedule_view v, const simulation& sim, rational move,
                                std::span<const rational> capacity, rational gamma, rebalance_pairing pairing) {
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  const std::int64_t den = lcm(sim.tick().den, move.den), factor = den / sim.tick().den;
  const std::int64_t move_ticks = (move * rational{den}).num;
  // every time the planner forms (an op's end, plus up to two moves) stays within 64 bits
  rational::add(rational::mul(rational::add(sim.makespan_ticks(), 1), factor), rational::mul(move_ticks, 4));
  buffer<int> ranks;
  const buffer<memory_event> ev = memory_events(v, sim, gamma, ranks);
  std::vector<std::vector<memory_event>> own(P);
  for (std::size_t k = 0; k < ev.size(); ++k) {
    if (ev[k].delta != 0) own[static_cast<std::size_t>(ranks[k])].push_back({ev[k].time * factor, ev[k].delta});
  }
  std::vector<std::int64_t> cap;
  for (std::size_t r = 0; r < P; ++r) {
    const rational units = capacity[r] * rational{gamma.den};
    cap.push_back(units.num / units.den);  // levels are whole 1/q-ths: floor
  }
  const std::vector<activation> acts = activations_of(v, sim, factor);
  std::vector<std::vector<std::int64_t>> ends(P, std::vector<std::int64_t>{0});
  for (std::size_t r = 0; r < P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      if (sim.end_ticks(k) > sim.start_ticks(k)) ends[r].push_back(sim.end_ticks(k) * factor);
    }
    std::sort(ends[r].begin(), ends[r].end());
  }
  move_planning out{rational{1, den},
                    rebalance_planner(acts, own, ends, cap, move_ticks, gamma.den, pairing, send_policy::early), false};
  out.done = out.planner.run();
  for (int attempt = 1; attempt < (pairing == rebalance_pairing::any ? 4 : 2) && !out.done; ++attempt) {
    const rebalance_pairing with = attempt < 2 ? pairing : rebalance_pairing::bpipe;
    rebalance_planner other(acts, own, ends, cap, move_ticks, gamma.den, with,
                            attempt % 2 == 1 ? send_policy::late : send_policy::early);
    if (other.run() || other.stuck_at > out.planner.stuck_at)
      out.done = other.stuck_rank < 0, out.planner = std::move(other);
  }
  return out;
}

}  // namespace detail

/// What check_rebalance() found: per rank the peak with the moves and the copy-channel
/// busy time, and the first problem (nullptr when there is none).
struct rebalance_check {
  std::vector<rational> peak;
  std::vector<rational> channel_busy;
  const char* problem = nullptr;
};

/// Replays plan `moves` on schedule `v` with timeline `sim` (simulate()'s, or a delayed
/// one, simulation::delayed()) and t_move `move` for `gamma`, independently of the
/// planner, in exact rationals (docs/spec.md §8.2):
/// - each move takes a forward's activation (stage, micro-batch) from its rank to
///   another, once: "a move must take an F's activation from its own rank to another,
///   once";
/// - it leaves after its F ends, its return starts after it arrived, and it is back
///   before its first backward (B or I) starts: "a move leaves before its F ends or comes
///   back after its backward starts";
/// - no copy channel (one outgoing, one incoming per rank) carries two transfers at once:
///   "two transfers share a copy channel";
/// - the peak of each rank, counting an activation on its sender until it arrives.
/// Compute keeps `sim`'s times (no op waits for a move when the checks pass). O(n log n)
/// in memory events plus moves per rank (channel overlaps by sorting).
inline rebalance_check check_rebalance(schedule_view v, const simulation& sim, rational move,
                                       std::span<const activation_move> moves, rational gamma = rational{1}) {
  const detail::op_index index(v);
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  std::vector<std::vector<std::pair<rational, rational>>> events(P), out_ch(P), in_ch(P);  // (time, delta) / intervals
  const rational delta[4] = {rational{1}, rational{-1}, gamma - rational{1}, -gamma};      // per kind code F, B, I, W
  for (std::size_t r = 0; r < P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const std::uint32_t kind = detail::op_index::code_of(v.ops[k]);  // a pair word as its F
      if (kind <= detail::code_w)
        events[r].push_back({kind == detail::code_f ? sim.start(k) : sim.end(k), delta[kind]});
    }
  }
  rebalance_check out;
  std::vector<char> moved(index.at.size(), 0);
  for (const activation_move& mv : moves) {
    const bool inside = mv.stage >= 0 && mv.stage < v.shape.stages() && mv.microbatch >= 0 && mv.microbatch < v.shape.m;
    const std::uint32_t fk = inside ? index.find(op{op_kind::F, mv.stage, mv.microbatch}) : 0;
    const bool own = fk != 0 && v.shape.rank_of(mv.stage) == mv.from && mv.to >= 0 && mv.to < v.shape.P &&
                     mv.to != mv.from && !moved[fk - 1];
    if (!own) return out.problem = "a move must take an F's activation from its own rank to another, once", out;
    moved[fk - 1] = 1;
    const std::uint32_t b = index.find(op{op_kind::B, mv.stage, mv.microbatch});
    const std::uint32_t back_op = b != 0 ? b : index.find(op{op_kind::I, mv.stage, mv.microbatch});
    const rational need = back_op != 0 ? sim.start(back_op - 1) : sim.makespan();
    if (mv.send < sim.end(fk - 1) || mv.back < mv.send + move || mv.back + move > need) {
      return out.problem = "a move leaves before its F ends or comes back after its backward starts", out;
    }
    const std::size_t from = static_cast<std::size_t>(mv.from), to = static_cast<std::size_t>(mv.to);
    events[from].push_back({mv.send + move, rational{-1}}), events[from].push_back({mv.back + move, rational{1}});
    events[to].push_back({mv.send + move, rational{1}}), events[to].push_back({mv.back + move, rational{-1}});
    out_ch[from].push_back({mv.send, mv.send + move}), in_ch[to].push_back({mv.send, mv.send + move});
    out_ch[to].push_back({mv.back, mv.back + move}), in_ch[from].push_back({mv.back, mv.back + move});
  }
  for (std::size_t r = 0; r < P; ++r) {
    std::sort(events[r].begin(), events[r].end());  // by time, frees (negative) first
    rational level{0}, peak{0};
    for (const auto& e : events[r]) level += e.second, peak = max(peak, level);
    out.peak.push_back(peak);
    rational busy{0};
    for (auto* ch : {&out_ch[r], &in_ch[r]}) {
      std::sort(ch->begin(), ch->end());
      for (std::size_t k = 0; k < ch->size(); ++k) {
        busy += (*ch)[k].second - (*ch)[k].first;
        if (k > 0 && (*ch)[k].first < (*ch)[k - 1].second)
          return out.problem = "two transfers share a copy channel", out;
      }
    }
    out.channel_busy.push_back(busy);
  }
  return out;
}

/// check_rebalance() on the timeline simulate(v, c, scale) with t_move = c.move.
inline rebalance_check check_rebalance(schedule_view v, const costs& c, std::span<const activation_move> moves,
                                       rational gamma = rational{1}, const cost_scale& scale = {}) {
  return check_rebalance(v, simulate(v, c, scale), c.move, moves, gamma);
}

/// Plans moves of activations between ranks so that no rank's in-flight activations
/// (chunks, gamma-weighted, counted as check_rebalance() does) exceed `capacity`
/// (P entries, or one for every rank), without delaying any compute op (docs/spec.md
/// §8.2). Moves cost `c.move` each way on copy channels apart from compute (one
/// outgoing, one incoming per rank).
///
/// The planner: in time order, at each rise of a rank's level above its capacity, it
/// moves off that rank the activation needed last among those that can have arrived
/// elsewhere by then (Belady's rule; the next one when that one finds no host and free
/// channels), to the rank with the most room over its stay
/// (`pairing::bpipe`: only to rank P-1-x), returning as late as the channels allow
/// while arriving by the time its backward starts. Each return is a rise in turn. It
/// runs again if it must: sending each move as early as the channels allow after its F,
/// then, if that gets stuck, as late as still arrives in time, then (for
/// `pairing::any`) both again with BPipe's pairing; it keeps the first plan that fits
/// (else the one stuck latest). Every start it plans is one a runtime without a clock
/// reproduces (docs/spec.md §8.3): the end of a compute op of the sending or the
/// receiving rank (or 0), or the end of the copy before it on one of its two channels;
/// so lower_moves() and execute() run the plan at exactly these times. Not proved
/// optimal; rebalance_plan::bound is the floor no plan goes below, and least_capacity()
/// searches the least uniform capacity it reaches.
/// Cost: O(rises x (activations of a rank + P x events of a rank)) at run time.
///
/// The result is replayed by check_rebalance(); `feasible` when the planner relieved
/// every rise and the replay passed. Errors: simulate()'s messages; `ctpipe: rebalance
/// takes one capacity per rank (P of them) or one for all`, `ctpipe: a capacity must be
/// >= 0`; `ctpipe: rebalance's replay rejected its own plan (a bug)`.
inline rebalance_plan rebalance(schedule_view v, const costs& c, std::span<const rational> capacity,
                                rational gamma = rational{1}, rebalance_pairing pairing = rebalance_pairing::any,
                                const cost_scale& scale = {}) {
  check_gamma(gamma);
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  detail::require(capacity.size() == 1 || capacity.size() == P,
                  "ctpipe: rebalance takes one capacity per rank (P of them) or one for all");
  for (const rational x : capacity) detail::require(x >= rational{0}, "ctpipe: a capacity must be >= 0");
  const simulation sim = simulate(v, c, scale);
  rebalance_plan plan;
  for (std::size_t r = 0; r < P; ++r) plan.capacity.push_back(capacity[capacity.size() == 1 ? 0 : r]);
  const detail::move_planning mp = detail::plan_moves(v, sim, c.move, plan.capacity, gamma, pairing);
  plan.moves = mp.moves();
  const in_flight_profile before = in_flight(v, gamma);
  for (int r = 0; r < v.shape.P; ++r) plan.peak_before.push_back(before.peak(r));
  const rebalance_check replay = check_rebalance(v, sim, c.move, plan.moves, gamma);
  detail::require(replay.problem == nullptr, "ctpipe: rebalance's replay rejected its own plan (a bug)");
  plan.peak_after = replay.peak, plan.channel_busy = replay.channel_busy;
  plan.bound = live_bound(v, c, gamma, scale);
  plan.move_cost = c.move, plan.makespan = sim.makespan();
  plan.feasible = mp.done;
  for (std::size_t r = 0; r < P && mp.done; ++r)
    detail::require(plan.peak_after[r] <= plan.capacity[r], "ctpipe: rebalance's replay rejected its own plan (a bug)");
  if (!mp.done) plan.stuck_rank = mp.planner.stuck_rank, plan.stuck_at = mp.tick * rational{mp.planner.stuck_at};
  return plan;
}

/// The least uniform capacity (a multiple of 1/q chunks, gamma = p/q) at which
/// rebalance() finds a feasible plan, from the bound up to the largest peak before any
/// move (always feasible: nothing to move), and that plan. Errors: rebalance()'s.
inline rebalance_plan least_capacity(schedule_view v, const costs& c, rational gamma = rational{1},
                                     rebalance_pairing pairing = rebalance_pairing::any, const cost_scale& scale = {}) {
  const live_bound_result b = live_bound(v, c, gamma, scale);
  const in_flight_profile before = in_flight(v, gamma);
  const rational top = before.largest_peak();
  for (rational cap = b.level_bound; cap < top; cap += rational{1, gamma.den}) {
    rebalance_plan plan = rebalance(v, c, std::span<const rational>(&cap, 1), gamma, pairing, scale);
    if (plan.feasible) return plan;
  }
  return rebalance(v, c, std::span<const rational>(&top, 1), gamma, pairing, scale);
}

/// A compute op that waits for room in a delayed plan (least_delay()): the op (a
/// forward, or an overlapped pair's word), its rank, and its start without delay
/// (simulate()) and in the delayed timeline. Times in time units of `t_f`.
struct delayed_op {
  op o{};
  int rank = 0;
  rational start{0};
  rational delayed_start{0};
};

/// What least_delay() found. Shapes: `waits` in the order the gate added them, one per
/// forward it holds back (the latest hold of each); `moves` in the order planned; per
/// rank (0..P-1) `peak_after` and `channel_busy`; `timeline` indexed like the
/// schedule's flat op array. Peaks in chunks (gamma-weighted); times in time units of
/// `t_f`. `waits` lists the binding holds only: a forward whose hold is later than its
/// rank and inputs would let it start.
struct rebalance_delay {
  bool found = false;             ///< a plan fits the capacity on the delayed timeline
  rational delay{0};              ///< the delayed makespan minus simulate()'s (0: no op waits)
  rational makespan{0};           ///< the delayed timeline's makespan
  std::vector<delayed_op> waits;  ///< the forwards the gate holds back (their start is their hold)
  std::vector<activation_move>
      moves;                         ///< the plan on the delayed timeline (check_rebalance() of `timeline` accepts it)
  std::vector<rational> peak_after;  ///< per rank: peaks with the moves on the delayed timeline
  std::vector<rational> channel_busy;  ///< per rank: outgoing + incoming copy time
  simulation timeline;                 ///< when found: the delayed timeline (simulation::delayed()); move-only
  int rounds = 0;                      ///< plannings run (one per hold, and the last)
  int stuck_rank = -1;                 ///< when not found: where the last planning stuck
  rational stuck_at{0};                ///< and when
  const char* why_not = nullptr;       ///< when not found: the reason, a literal
};

namespace detail {

/// Every op's start in a timeline where op (node) k may not start before `hold[k]`
/// (ticks), else as §2 says: at the latest of the end of the op ahead of it on its rank
/// and its inputs' ends (+ `latency` across ranks), which `ready` receives (per op: the
/// start it would have without its own hold). `dur`: each op's length; an overlapped
/// pair's B word starts with its word. The op graph of graph.hpp (its dependency edges
/// and each rank's order) run by earliest_starts(). Linear.
inline std::vector<std::int64_t> held_starts(schedule_view v, const op_index& index, const buffer<int>& ranks,
                                             const buffer<std::uint8_t>& pair_b, std::int64_t latency,
                                             const std::vector<std::int64_t>& dur,
                                             const std::vector<std::int64_t>& hold, std::vector<std::int64_t>& ready) {
  const std::size_t n = v.size();
  op_edges g(5 * n + 1);
  add_dependency_edges(v, index, ranks, pair_b, latency, g);
  add_rank_order_edges(v, pair_b, g);
  std::vector<std::int64_t> start(n, 0);
  ready.assign(n, 0);
  earliest_starts(timed_graph(g, n, dur.data(), hold.data(), pair_b), start, ready);
  for (std::size_t k = 1; k < n; ++k) {
    if (pair_b[k]) start[k] = start[k - 1], ready[k] = ready[k - 1];
  }
  return start;
}

/// least_delay()'s search (its doc comment) on schedule `v`: the timeline without delay
/// (`base`), the ticks of the copies (`den`: the timeline's tick refined to divide t_move;
/// `move`, `latency` in them), per op its length and its hold (ticks), the ops held in the
/// order first held, and the op graph's facts (graph.hpp). Run time.
struct delay_search {
  schedule_view v;
  const costs& c;
  std::vector<rational> cap;  ///< per rank (P entries), chunks
  rational gamma;
  rebalance_pairing pairing;
  simulation base;
  std::int64_t den = 1, factor = 1, move = 0, latency = 0, serial = 0;
  rational tick{1};
  op_index index;
  buffer<int> ranks;
  buffer<std::uint8_t> pair_b;
  std::vector<std::int64_t> dur, hold, ready;
  std::vector<std::size_t> held;  ///< ops held, in the order first held

  delay_search(schedule_view view, const costs& costs_, std::vector<rational> capacity, rational gamma_,
               rebalance_pairing pairing_, const cost_scale& scale)
      : v(view), c(costs_), cap(std::move(capacity)), gamma(gamma_), pairing(pairing_), base(simulate(v, c, scale)) {}

  /// The ticks, lengths and the serial run's length (past it the greedy gives up);
  /// rational overflow where times with t_move leave 64 bits.
  void prepare() {
    const std::size_t n = v.size();
    den = lcm(base.tick().den, c.move.den), factor = den / base.tick().den;
    rational::mul(rational::add(base.makespan_ticks(), 1), factor);
    tick = rational{1, den};
    move = (c.move * rational{den}).num;
    index = op_index(v), ranks = op_ranks(v), pair_b = pair_b_words(v);
    dur.assign(n, 0), hold.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) dur[k] = (base.end_ticks(k) - base.start_ticks(k)) * factor;
    latency = (c.c * rational{den}).num;  // t_c in ticks (den counts t_c's denominator)
    // A run where every op waits for all ops before it lasts at most every op's length
    // plus t_c each.
    for (std::size_t k = 0; k < n; ++k) serial = rational::add(serial, rational::add(dur[k], latency));
    rational::add(rational::add(serial, rational::mul(move, 4)), 1);  // every time below stays within 64 bits
  }

  /// The default budget (`max_rounds` <= 0): 4 plannings per forward of the rank with
  /// the most, and 64, at most 2^22 ops re-simulated over all rounds.
  int budget(int max_rounds) const {
    std::size_t most_forwards = 0;  // forwards (and pair words) of the rank with the most
    for (int r = 0; r < v.shape.P; ++r) {
      std::size_t f = 0;
      for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k)
        f += v.ops[k].kind() == op_kind::F || v.ops[k].kind() == op_kind::overlap_f_b;
      most_forwards = std::max(most_forwards, f);
    }
    const std::size_t by_work = std::max<std::size_t>(64, (std::size_t{1} << 22) / std::max<std::size_t>(v.size(), 1));
    return max_rounds > 0 ? max_rounds : static_cast<int>(std::min(4 * most_forwards + 64, by_work));
  }

  /// The start (ticks of `sim`) of the first backward of op k's activation.
  std::int64_t backward_start(const simulation& sim, std::size_t k) const {
    const op o = v.ops[k];
    const std::uint32_t b = index.find(op{op_kind::B, o.stage(), o.microbatch()});
    const std::uint32_t first_back = b != 0 ? b : index.find(op{op_kind::I, o.stage(), o.microbatch()});
    return first_back != 0 ? sim.start_ticks(first_back - 1) : sim.makespan_ticks();
  }

  /// The found plan `mp` on timeline `sim` into `out`, replayed by check_rebalance().
  void found(rebalance_delay& out, simulation sim, const move_planning& mp) const {
    out.found = true, out.stuck_rank = -1, out.stuck_at = rational{0};  // stuck places of earlier rounds are moot
    out.moves = mp.moves();
    const rebalance_check replay = check_rebalance(v, sim, c.move, out.moves, gamma);
    require(replay.problem == nullptr, "ctpipe: least_delay's replay rejected its own plan (a bug)");
    for (std::size_t r = 0; r < cap.size(); ++r)
      require(replay.peak[r] <= cap[r], "ctpipe: least_delay's replay rejected its own plan (a bug)");
    out.peak_after = replay.peak, out.channel_busy = replay.channel_busy;
    out.makespan = sim.makespan(), out.delay = sim.makespan() - base.makespan();
    for (const std::size_t k : held) {  // the holds that bind: the forward would start earlier without its own
      if (hold[k] > ready[k]) out.waits.push_back({v.ops[k], ranks[k], base.start(k), sim.start(k)});
    }
    out.timeline = std::move(sim);
  }

  /// The forward of rank r that allocated last at or before t and is still live at t
  /// (`v.size()` when none).
  std::size_t blamed(int r, std::int64_t t, const std::vector<std::int64_t>& start, const simulation& sim) const {
    std::size_t out = v.size();
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k) {
      const op_kind kind = v.ops[k].kind();
      if ((kind == op_kind::F || kind == op_kind::overlap_f_b) && start[k] <= t && backward_start(sim, k) > t) {
        if (out == v.size() || start[k] >= start[out]) out = k;
      }
    }
    return out;
  }

  /// The next instant after `after` at which room can appear: a compute op's end (any
  /// rank), or t_move after one; INT64_MAX when none.
  std::int64_t next_room(std::int64_t after, const std::vector<std::int64_t>& start) const {
    std::int64_t next = INT64_MAX;
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (dur[k] == 0) continue;
      const std::int64_t e = start[k] + dur[k];
      if (e > after) next = std::min(next, e);
      if (e + move > after) next = std::min(next, e + move);
    }
    return next;
  }

  /// One round: re-simulate with the holds, plan, and either finish `out` (found, or
  /// `why_not`; returns true) or hold one more forward back (returns false).
  bool round(rebalance_delay& out) {
    const std::vector<std::int64_t> start = held_starts(v, index, ranks, pair_b, latency, dur, hold, ready);
    simulation sim = base.delayed(v, tick, start);
    if (sim.makespan_ticks() > serial)
      return out.why_not = "the delay passed a serial run's length (every op's length and t_c, one after another)",
             true;
    const move_planning mp = plan_moves(v, sim, c.move, cap, gamma, pairing);
    if (mp.done) return found(out, std::move(sim), mp), true;
    // mp's ticks are sim's tick refined by t_move's denominator: already `den`.
    const int r = mp.planner.stuck_rank;
    const std::int64_t t = mp.planner.stuck_at;
    out.stuck_rank = r, out.stuck_at = tick * rational{t};
    if (v.shape.P == 1)  // a rank's own level at a forward's start is its order's, whenever it starts
      return out.why_not = "one rank: no other rank to take an activation, and waiting frees nothing", true;
    const std::size_t k = blamed(r, t, start, sim);
    if (k == v.size()) return out.why_not = "no forward to hold back where the planner is stuck", true;
    const std::int64_t next = next_room(start[k], start);
    if (next == INT64_MAX) return out.why_not = "no later instant at which room can appear", true;
    if (hold[k] == 0) held.push_back(k);
    hold[k] = next;
    return false;
  }
};

}  // namespace detail

/// The smallest delay of compute this planner needs to fit `capacity` (P entries, or
/// one for every rank; chunks, gamma-weighted) when rebalance() cannot fit it with no
/// compute op delayed (docs/spec.md §8.2, "delay"). The model is a memory-gated
/// runtime: a forward may wait for room (its rank under its capacity), every op keeps
/// its rank's order and its length, and starts as soon as its rank, its inputs and its
/// hold allow; the moves run on the copy channels as in rebalance().
///
/// The method: plan the moves with rebalance()'s planner on the timeline; where it
/// cannot relieve rank r at time t, hold back the forward of r that allocated last at
/// or before t (and is still live at t) to the next instant after its start at which
/// room can appear (the end of a compute op of any rank, or one t_move after it: when a
/// copy can start or arrive), re-simulate with that hold, and plan again; stop at the
/// first timeline the planner fits. Each step is the smallest, to the next instant room
/// can appear at, so the delay is the least this greedy reaches; it is not proved least
/// over every plan and timeline (the planner itself is not proved optimal), except a
/// delay of 0. With no hold at all it is rebalance()'s plan: `waits` is empty exactly
/// when rebalance() fits (a delay of 0 with waits is a forward waiting in idle time).
/// `max_rounds` bounds the plannings (0 or less: the default, 4 per forward of the rank
/// with the most and 64, but no more than 2^22 / ops and at least 64): a budget in
/// plannings, not seconds, so the result does not depend on the machine. The delayed plan is checked
/// by check_rebalance() on the delayed timeline, apart from the planner.
///
/// Not found (`why_not`, a literal; `stuck_rank` -1 where nothing was planned): a
/// capacity under one chunk (a forward holds its own activation); one rank (P = 1: no
/// other rank, and a rank's level at a forward's start is its order's whenever it
/// starts); the delayed makespan past a serial run's length (every op's length and
/// t_c, one after another), where the greedy gives up; the planning budget spent; no
/// forward to hold back where the planner is stuck. The planner returns each moved
/// activation as late as the channels allow, so a host needs room over a long stay:
/// below the levels it reaches without delay it often finds none, however long compute
/// waits (1F1B, P = 4, m = 8 at capacity 2: a test).
/// Cost: rounds x (a linear re-simulation + rebalance()'s planning), run time only: 1F1B
/// at P = 16, m = 64 takes about 1 ms a round (15 rounds where moves of 4 are too slow
/// for capacity 9; the whole budget, 320 rounds, at capacity 6).
/// Errors: rebalance()'s (`ctpipe: rebalance takes one capacity per rank (P of them) or
/// one for all`, `ctpipe: a capacity must be >= 0`), simulate()'s, `ctpipe: rational
/// overflow (64-bit numerator or denominator)` where times with t_move leave 64 bits, and `ctpipe: least_delay's replay
/// rejected its own plan (a bug)`.
inline rebalance_delay least_delay(schedule_view v, const costs& c, std::span<const rational> capacity,
                                   rational gamma = rational{1}, rebalance_pairing pairing = rebalance_pairing::any,
                                   const cost_scale& scale = {}, int max_rounds = 0) {
  check_gamma(gamma);
  const std::size_t P = static_cast<std::size_t>(v.shape.P);
  detail::require(capacity.size() == 1 || capacity.size() == P,
                  "ctpipe: rebalance takes one capacity per rank (P of them) or one for all");
  for (const rational x : capacity) detail::require(x >= rational{0}, "ctpipe: a capacity must be >= 0");
  std::vector<rational> cap;
  for (std::size_t r = 0; r < P; ++r) cap.push_back(capacity[capacity.size() == 1 ? 0 : r]);
  detail::delay_search search(v, c, std::move(cap), gamma, pairing, scale);
  rebalance_delay out;
  if (std::any_of(search.cap.begin(), search.cap.end(), [](rational x) { return x < rational{1}; })) {
    out.why_not = "a capacity under one chunk: a forward holds its own activation";
    return out;
  }
  search.prepare();
  const int budget = search.budget(max_rounds);
  while (out.rounds < budget) {
    ++out.rounds;
    if (search.round(out)) return out;
  }
  out.why_not = "the planning budget (max_rounds) is spent";
  return out;
}

}  // namespace ctpipe
