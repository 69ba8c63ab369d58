// ctpipe/analysis/periodic.hpp: the periodic certificate, a schedule's makespan for every
// m from one finite simulation of its periodic program (schedules/program.hpp).
//
// The theorem (docs/proofs.md, "Proofs for every m"). Let a program's steady segments be
// repeated n(m) = n0 + steps(m) times (steps(m) = m, or (m - residue) / g for interleaved
// and combined 1F1B's class of m modulo their group g: then "m + 1" below reads "m + g"),
// and let X(k) be the end times of the ops of repetition k of every rank's steady
// segment. In the simulation of the program at one m_a:
// 1. every steady op of a repetition k in a window [lo, hi) waits (docs/spec.md §2: its
//    inputs and its rank's previous op) only for steady ops of repetitions k - d .. k,
//    by the same (template, offset, latency) edges at every k of the window: so X(k) is
//    one max-plus linear map M of Y(k - 1) = (X(k - d), ..., X(k - 1)), the same map for
//    every k and every m (the program's ops up to the window do not depend on m);
// 2. the ops after the window (the last steady repetitions and the cool-down, the same
//    ops relative to n(m) for every m, each micro-batch shifted by m) wait only for each
//    other and for Y(hi - 1): the makespan is one max-plus map F of Y(hi(m) - 1);
// 3. Y(K + c) = Y(K) + c*lambda for one K >= lo - 1 and c >= 1 (exact ticks).
// M and F are homogeneous (adding a constant to every input adds it to every output):
// by induction Y(k + c) = Y(k) + c*lambda for every k >= K, and so makespan(m + c) =
// makespan(m) + c*lambda for every m with hi(m) - 1 >= K (X(k) also waits for ops of its
// own repetition; those edges form no cycle, so M is that acyclic part solved). The
// certificate checks 1 and 2 edge by edge on the op graph (analysis/graph.hpp), finds 3,
// and reads the first cycle's makespans (base) from the program's simulations at m_a and,
// for a cycle of c steps, the c - 1 steps below; the m below m0 are simulated directly (direct_makespan()). Its cost
// depends on P, V and the costs, not on m. A period that is not balanced (its forwards
// and backwards differ) is refused, and a program whose state does not repeat within
// `max_periods` repetitions gets no certificate, with the reason.
//
// The peaks: one rank's ops never overlap, so its in-flight level follows its list; a
// balanced steady segment returns to the level it started from and repeats its profile,
// so past one repetition the peaks no longer depend on m.
//
// Phased programs (GPipe, looped BFS: several growing segments per rank, one after the
// other; docs/proofs.md "Phased programs"): each phase is certified in turn as the
// steady segment, the ops before it its warm-up and those after it its cool-down; an
// edge from an earlier phase of the same rank (but the predecessor) is implied by the
// rank's order and dropped; an edge from an earlier phase of another rank (looped BFS's
// chunks) is dropped and checked slack, which growing m by a cycle cannot undo. The
// simulations at m_a, m_a - 1, .. cover each class of m modulo the phases' cycles, and
// the peaks, which grow with m, are walked segment by segment as affine functions of m.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint32_t
#include <numeric>      // std::lcm
#include <string_view>  // the final refusal, by content
#include <type_traits>  // std::is_constant_evaluated

#include "ctpipe/analysis/formulas.hpp"
#include "ctpipe/analysis/graph.hpp"
#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"        // max_microbatches
#include "ctpipe/schedules/family.hpp"  // spec_error
#include "ctpipe/schedules/generate.hpp"
#include "ctpipe/schedules/program.hpp"

namespace ctpipe {

/// What periodic_certificate_of() proves of one schedule family at one P (V, rule) and
/// one cost set, for every m >= m0 (see the file comment; below m0, direct_makespan()).
/// Times in time units (t_f).
struct periodic_certificate {
  /// Whether the state repeated within the bound; when false, `reason` says why and the
  /// other fields are empty.
  bool proved = false;
  const char* reason = "";
  int m0 = 0;                           ///< the cycle holds for every m >= m0 of the class
  int cycle = 0;                        ///< micro-batches per cycle (c, a multiple of m_step)
  int m_step = 1;                       ///< the program's: m runs over m0, m0 + m_step, ...
  int m_residue = 0;                    ///< the program's class of m modulo m_step
  detail::buffer<rational> base;        ///< makespans at m0, m0 + m_step, .. m0 + cycle - m_step
  rational increment;                   ///< the makespan's growth per cycle (c * lambda)
  detail::buffer<rational> busy_base;   ///< per rank: busy time at m = 0 of its affine form
  detail::buffer<rational> busy_per_m;  ///< per rank: busy time added per micro-batch
  detail::buffer<rational> peak;        ///< per rank: peak in-flight activations at m0 (chunks)
  detail::buffer<rational> peak_per_m;  ///< per rank: added per micro-batch past m0 (GPipe, looped BFS; else 0)
  int state_index = 0;                  ///< K: the repetition from which the state repeats (the latest phase's)
  int state_width = 0;                  ///< d: repetitions the state holds (the widest phase's)
  int phases = 1;                       ///< the program's growing segments per rank (GPipe 2, looped BFS 2V)
  int P = 0;
  /// An unbalanced period (`reason` says so): its rank, and per repetition its forwards
  /// and its backwards (B or I); or its I and W when those differ. -1 otherwise.
  int unbalanced_rank = -1;
  int unbalanced_forwards = 0, unbalanced_backwards = 0;
  /// When the state did not repeat within the bound: X(k + 1) - X(k) at the last k the
  /// search reached (per steady op, time units), the last state differences.
  detail::buffer<rational> last_differences;

  /// The makespan under m >= m0 micro-batches of the class: base[((m - m0) mod cycle) /
  /// m_step] + floor((m - m0) / cycle) * increment. (Below m0, simulate m directly:
  /// direct_makespan().)
  constexpr rational makespan(int m) const {
    const int j = (m - m0) % cycle / m_step;
    return base[static_cast<std::size_t>(j)] + rational{(m - m0) / cycle} * increment;
  }
  /// Rank r's busy time under m >= m0 micro-batches (exact, affine in m).
  constexpr rational busy(int r, int m) const {
    return busy_base[static_cast<std::size_t>(r)] + rational{m} * busy_per_m[static_cast<std::size_t>(r)];
  }
  /// Rank r's peak in-flight activations under m >= m0 (chunks): peak + (m - m0) *
  /// peak_per_m, constant but for the phased programs.
  constexpr rational peak_at(int r, int m) const {
    return peak[static_cast<std::size_t>(r)] + rational{m - m0} * peak_per_m[static_cast<std::size_t>(r)];
  }
  /// Rank r's idle time under m >= m0: makespan - busy.
  constexpr rational idle(int r, int m) const { return makespan(m) - busy(r, m); }
  /// The bubble fraction under m >= m0: total idle / (P * makespan).
  constexpr rational bubble_fraction(int m) const {
    rational idle_sum{0};
    for (int r = 0; r < P; ++r) idle_sum = idle_sum + idle(r, m);
    return idle_sum / (rational{P} * makespan(m));
  }
};

/// Steps 1 and 2 of the certificate (see the file comment) for a program of one phase
/// simulated at m_min + `periods` steps: the window [lo, hi) of its steady repetitions
/// and the state's width d. They depend on the program's op graph only, not on the
/// costs: periodic_structure_of() finds them, and periodic_certificate_of() given them
/// searches the repeat (step 3) alone, so that a proof can take the two in separate
/// constant evaluations (tests/static/proofs_periodic.hpp, every_m_apart). lo = hi = 0:
/// the graph has no such structure at `periods`.
struct periodic_structure {
  int periods = 0, lo = 0, hi = 0, width = 0;
  friend constexpr bool operator==(const periodic_structure&, const periodic_structure&) = default;
};

/// The makespan of `s` at m micro-batches, simulated directly (generate, simulate): the
/// certificate's values below its m0.
constexpr rational direct_makespan(schedule_spec s, int m, const costs& c, std::span<const rational> stage_scale = {}) {
  s.shape.m = m;
  return simulate(generate(s).view(), c, cost_scale{stage_scale, {}}).makespan();
}

namespace detail {

/// How far the micro-batches of template `o` move when m grows by one step, `per_step +
/// per_m * m_step`.
constexpr int shift_per_step(const periodic_program& p, const op_template& o) {
  return o.per_step + o.per_m * p.m_step;
}

/// The model copy stage `s` belongs to: DualPipe's down (0) or up (1) pipeline on the
/// bidirectional placement, else 0. Micro-batches depend on each other within a copy only.
constexpr int copy_of(const pipeline_shape& shape, int s) {
  return shape.layout == placement::bidirectional && s >= shape.P ? 1 : 0;
}

/// Refuses (raises) a program whose steady segments are not one per rank, or whose
/// micro-batches do not move with m as the theorem needs: per model copy a base shift
/// beta, and one rho > 0 for the program, such that growing m by a step moves every
/// warm-up and steady op of the copy by beta, adds a steady repetition whose ops advance
/// rho each, and moves every cool-down op by beta + rho. (Relabelling each copy's
/// micro-batches by beta per step, the warm-up is then the same at every m and the
/// cool-down moves as the steady state does: 1F1B has beta 0, rho 1; interleaved 1F1B
/// beta 0, rho g; DualPipe's up pipeline, whose micro-batches start at m/2, beta 1, rho 1.)
constexpr void check_program(const periodic_program& p) {
  int rho = 0, beta[2] = {0, 0};
  bool seen[2] = {false, false}, ok = true;
  const op_template* tp = p.templates.data();
  const bool two = p.shape.layout == placement::bidirectional;
  for (int r = 0; r < p.shape.P; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const std::uint32_t steady = p.steady[ru];
    const program_segment& st = p.segments[steady];
    if (st.count > 0 && rho == 0) rho = tp[st.first].per_repetition;
    for (std::uint32_t g = p.rank_segments[ru]; g < p.rank_segments[ru + 1]; ++g) {
      const program_segment& seg = p.segments[g];
      require(seg.repetitions_per_step == (g == steady ? 1 : 0),
              "ctpipe: a periodic program needs one steady segment per rank (repeated n0 + steps(m) times)");
      // Per template (copy_of(), shift_per_step() inline: few statements per template).
      for (std::uint32_t t = seg.first, cool = g > steady ? 1 : 0; t < seg.first + seg.count; ++t) {
        const int copy = two && tp[t].stage >= p.shape.P ? 1 : 0,
                  shift = tp[t].per_step + tp[t].per_m * p.m_step - static_cast<int>(cool) * rho;
        if (!seen[copy]) seen[copy] = true, beta[copy] = shift;
        ok = ok && rho > 0 && shift == beta[copy] && (g != steady || tp[t].per_repetition == rho);
      }
    }
  }
  require(ok,
          "ctpipe: a periodic program's steady ops advance the same number of micro-batches per repetition, and per "
          "step of m its warm-up and steady ops move alike and its cool-down that much more");
}

/// Whether every rank's steady segment is balanced (F = B + I and I = W per
/// repetition), so that the in-flight level it ends at is the one it starts at; else
/// the first rank that is not and its counts, in `out`.
constexpr bool balanced(const periodic_program& p, periodic_certificate& out) {
  for (int r = 0; r < p.shape.P; ++r) {
    int f = 0, b = 0, i = 0, w = 0;
    const program_segment& seg = p.segments[p.steady[static_cast<std::size_t>(r)]];
    const op_template* tp = p.templates.data();
    for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t)  // a pair's word is its forward
      f += tp[t].kind == op_kind::F || tp[t].kind == op_kind::overlap_f_b ? 1 : 0,
          b += tp[t].kind == op_kind::B ? 1 : 0, i += tp[t].kind == op_kind::I ? 1 : 0,
          w += tp[t].kind == op_kind::W ? 1 : 0;
    if (f != b + i || i != w) {
      out.reason = f != b + i ? "an unbalanced period: its forwards differ from its backwards (B or I)"
                              : "an unbalanced period: its I differ from its W";
      out.unbalanced_rank = r;
      out.unbalanced_forwards = f != b + i ? f : i;
      out.unbalanced_backwards = f != b + i ? b + i : w;
      return false;
    }
  }
  return true;
}

/// The certificate's work (see the file comment), one step per member function: the
/// program's simulation at m_a = m_min + (max_periods - below) * m_step, its ops
/// labelled by segment and repetition for one phase at a time (label(h); programs of one
/// phase have phase 0 only), the op graph's edges into each op, the window, the structure's checks and
/// the repeat (complete() then reads the result). Linear in the ops at m_a, except the
/// repeat's search: O(cycles tried x repetitions x steady ops), bounded by max_periods
/// and independent of m (cycle 1 is found in one pass).
struct certifier {
  const periodic_program& prog;
  const costs& cost;
  std::span<const rational> stage_scale;
  rational gamma;
  int m_a;
  schedule sched;
  simulation sim;
  std::size_t N = 0, W = 0;                // ops; steady ops per repetition (all ranks)
  detail::buffer<int> position;            // phased: per op, 2h + 1 in phase h's segment, 2h before it
  detail::buffer<int> rep;                 // per op: steady repetition, -1 warm-up, -2 cool-down
  detail::buffer<std::uint32_t> tmpl;      // per op: its template
  detail::buffer<std::uint32_t> slot;      // per template: its place among the steady ones, or W
  detail::buffer<std::uint32_t> node;      // [k * W + slot]: the op of steady repetition k
  detail::buffer<std::uint32_t> in_first;  // N + 1: the edges into each op, in in_from
  detail::buffer<std::uint32_t> in_from;
  detail::buffer<std::uint32_t> driven_from, driven_to;  // the driven edges (dropped()): drivens of them
  std::size_t drivens = 0;
  detail::buffer<int> op_rank;    // per op: its rank
  int reps = 0;                   // repetitions every rank's steady segment runs at m_a
  int lo = 0, hi = 0, width = 1;  // the window [lo, hi) and the state's width d

  /// What a certifier computes: everything; the graph only (for periodic_structure_of(),
  /// no simulation); the times only (for a structure given apart, no graph).
  enum class parts : std::uint8_t { all, graph, times };

  constexpr certifier(const periodic_program& p, const costs& c, std::span<const rational> scale, rational g,
                      int max_periods, int below = 0, parts what = parts::all)
      : prog(p),
        cost(c),
        stage_scale(scale),
        gamma(g),
        m_a(p.m_min + (max_periods - below) * p.m_step),
        sched(expand(p, m_a)),
        sim(simulated(what, sched, c, scale)),
        N(sched.size()) {
    if (p.phases > 1) positions();
    if (what != parts::times) in_edges();
    label(0);
  }

  /// The simulation of `sched`, none for the graph only. Not `?:`: GCC 12 frees the
  /// buffers of a class prvalue chosen by a conditional operator in a constant
  /// expression.
  static constexpr simulation simulated(parts what, const schedule& sched, const costs& c,
                                        std::span<const rational> scale) {
    if (what == parts::graph) return simulation{};
    return simulate(sched.view(), c, cost_scale{scale, {}});
  }

  /// A phased program's op positions (position: 2h + 1 in its rank's h-th growing
  /// segment, 2h in a fixed segment before it), for dropped().
  constexpr void positions() {
    position = buffer<int>(N);
    std::size_t k = 0;
    for (int r = 0; r < prog.shape.P; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      int grown = 0;
      for (std::uint32_t g = prog.rank_segments[ru]; g < prog.rank_segments[ru + 1]; ++g) {
        const program_segment& seg = prog.segments[g];
        const int pos = 2 * grown + seg.repetitions_per_step;
        grown += seg.repetitions_per_step;
        const std::size_t n = static_cast<std::size_t>(seg.times(prog.steps(m_a))) * seg.count;
        for (std::size_t j = 0; j < n; ++j) position[k++] = pos;
      }
    }
  }

  /// Rank r's h-th growing segment (its steady one in a program of one phase).
  constexpr const program_segment& growing(int r, int h) const {
    const auto ru = static_cast<std::size_t>(r);
    if (prog.phases == 1) return prog.segments[prog.steady[ru]];
    std::uint32_t g = prog.rank_segments[ru];
    for (int seen = prog.segments[g].repetitions_per_step - 1; seen < h;)
      seen += prog.segments[++g].repetitions_per_step;
    return prog.segments[g];
  }

  /// Labels the ops for phase h (0 in a program of one phase): each op's template; the
  /// rank's h-th growing segment's ops are the steady ones (rep: their repetition), the
  /// ops before it -1 (warm-up), the ops after it -2 (cool-down); the steady ops by
  /// repetition.
  constexpr void label(int h) {
    rep = buffer<int>(N);
    tmpl = buffer<std::uint32_t>(N);
    slot = buffer<std::uint32_t>(prog.templates.size());
    W = 0;
    reps = m_a;
    for (int r = 0; r < prog.shape.P; ++r) {
      const program_segment& seg = growing(r, h);
      reps = seg.times(prog.steps(m_a)) < reps ? seg.times(prog.steps(m_a)) : reps;
      for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t) slot[t] = static_cast<std::uint32_t>(W++);
    }
    node = buffer<std::uint32_t>(static_cast<std::size_t>(reps) * W + 1);  // + 1: where the others' go
    int* r_of = rep.data();
    std::uint32_t *t_of = tmpl.data(), *at = node.data();
    const std::uint32_t* slots = slot.data();
    const int n = prog.steps(m_a);
    std::uint32_t k = 0;
    for (int r = 0; r < prog.shape.P; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      int grown = 0;  // growing segments passed on this rank
      for (std::uint32_t g = prog.rank_segments[ru]; g < prog.rank_segments[ru + 1]; ++g) {
        const program_segment& seg = prog.segments[g];
        const bool grows = seg.repetitions_per_step != 0;
        const int part = grown < h || (!grows && grown == h) ? -1 : grown == h ? 0 : -2;
        grown += grows ? 1 : 0;
        for (int i = 0, times = seg.times(n); i < times; ++i) {
          for (std::uint32_t t = seg.first, end = seg.first + seg.count; t < end; ++t, ++k)
            r_of[k] = part == 0 ? i : part, t_of[k] = t,
            at[part == 0 && i < reps ? static_cast<std::size_t>(i) * W + slots[t]
                                     : static_cast<std::size_t>(reps) * W] = k;
        }
      }
    }
    lo = hi = 0;
    width = 1;
  }

  /// The op graph's edges (docs/spec.md §2's dependencies, op_inputs, then each rank's
  /// order) by the op they enter (in_first, in_from), a pair's B word folded into its
  /// word; in a phased program without the dropped() edges, the driven ones apart. One
  /// pass in core/engine.hpp's discipline (built as op_edges and sorted, the graph put
  /// ZB-H2's certificate at P = 13 near Clang 14's step limit).
  constexpr void in_edges() {
    const schedule_view v = sched.view();
    const op_index index(v);
    const op_inputs inputs(v, index);
    op_rank = op_ranks(v);
    const buffer<std::uint8_t> pair_b = pair_b_words(v);
    in_first = buffer<std::uint32_t>(N + 1);
    in_from = buffer<std::uint32_t>(5 * N);
    driven_from = buffer<std::uint32_t>(prog.phases > 1 ? 4 * N : 0);
    driven_to = buffer<std::uint32_t>(prog.phases > 1 ? 4 * N : 0);
    const op* ops = v.ops.data();
    const std::uint8_t* pb = pair_b.data();
    const int* rank = op_rank.data();
    std::uint32_t *first = in_first.data(), *from = in_from.data();
    std::uint32_t found[5] = {}, e = 0;
    int n = 0;
    const bool phased = prog.phases > 1;
    for (std::size_t k = 0; k < N; first[++k] = e) {
      if (pb[k]) continue;
      n = inputs.of(ops[k].bits, found), n += ops[k].bits >> 28 == 8 ? inputs.of(ops[k + 1].bits, found + n) : 0,
      n += k > 0 && rank[k - 1] == rank[k] ? (found[n] = static_cast<std::uint32_t>(k), 1) : 0;  // op k - 1, + 1
      if (phased) e = keep(found, n, k, e), n = 0;
      for (int i = 0; i < n; ++i) from[e++] = pb[found[i] - 1] ? found[i] - 2 : found[i] - 1;
    }
  }

  /// in_edges() of a phased program: of the `n` inputs `found` (flat index + 1) of op k,
  /// those not dropped() go to in_from from `e` on (returns the new end), the driven ones
  /// to driven_from and driven_to.
  constexpr std::uint32_t keep(const std::uint32_t* found, int n, std::size_t k, std::uint32_t e) {
    for (int i = 0; i < n; ++i) {
      const std::size_t d = found[i] - 1,
                        u = d > 0 && sched.view().ops[d - 1].kind() == op_kind::overlap_f_b ? d - 1 : d;
      const int drop = dropped(u, k);
      if (drop == 0) in_from[e++] = static_cast<std::uint32_t>(u);
      if (drop == 2)
        driven_from[drivens] = static_cast<std::uint32_t>(u), driven_to[drivens++] = static_cast<std::uint32_t>(k);
    }
    return e;
  }

  /// What becomes of the edge from op u into op v: 0 kept; in a phased program, 1 when
  /// it comes from an earlier part of the same rank other than the op's predecessor
  /// (implied by the rank's order: the ops between last >= 0), 2 when from an earlier
  /// part of another rank (driven: looped BFS's chunk c+1 waits for chunk c on the last
  /// rank), checked slack instead (drivens_slack()).
  constexpr int dropped(std::size_t u, std::size_t v) const {
    if (!(position[u] < position[v])) return 0;
    if (op_rank[u] != op_rank[v]) return 2;
    return u + 1 != v ? 1 : 0;
  }

  /// Whether every driven edge is slack in the simulation: its input arrives no later
  /// than the latest input of its op over the kept edges, so that the times are those of
  /// the program without the driven edges; and it joins two growing segments' templates
  /// that move alike with m (so that it recurs at the same offsets at every m).
  constexpr bool drivens_slack() const {
    const rational ticks = cost.c / sim.tick();
    for (std::size_t n = 0; n < drivens; ++n) {
      const std::uint32_t u = driven_from[n], v = driven_to[n];
      const op_template &a = prog.templates[tmpl[u]], &b = prog.templates[tmpl[v]];
      if (position[u] % 2 == 0 || position[v] % 2 == 0 || shift_per_step(prog, a) != shift_per_step(prog, b) ||
          a.per_repetition != b.per_repetition)
        return false;
      std::int64_t kept = 0;
      for (std::uint32_t e = in_first[v]; e < in_first[v + 1]; ++e) {
        const std::uint32_t w = in_from[e];
        const std::int64_t arrives = sim.end_ticks(w) + (op_rank[w] != op_rank[v] ? ticks.num : 0);
        kept = arrives > kept ? arrives : kept;
      }
      if (sim.end_ticks(u) + ticks.num > kept) return false;
    }
    return true;
  }

  /// Step 1's window: lo after the last steady op that waits for a warm-up op (at least
  /// 1), hi at the first that waits for a later op (a cool-down op or a later
  /// repetition). Visits the steady ops (node) only.
  constexpr void window() {
    lo = 1;  // repetition 0 follows the warm-up (or starts its rank) in each rank's order
    hi = reps;
    const int* r = rep.data();
    const std::uint32_t *first = in_first.data(), *from = in_from.data(), *at = node.data();
    int a = 0;
    for (int k = 0; k < reps; ++k) {
      for (std::size_t j = 0, v = at[static_cast<std::size_t>(k) * W]; j < W;
           v = at[static_cast<std::size_t>(k) * W + ++j]) {
        for (std::uint32_t e = first[v]; e < first[v + 1]; ++e)
          a = r[from[e]], lo = a == -1 && k + 1 > lo ? k + 1 : lo, hi = (a == -2 || a > k) && k < hi ? k : hi;
      }
    }
  }

  /// Steps 1 and 2 hold: every steady op of the window waits by its template's edges
  /// (the ops of repetitions lo + 1 .. hi - 1 compared with those of lo, whose reach back
  /// is then the state's width d), and the ops after the window (each rank's suffix)
  /// wait for no warm-up op and for no steady repetition more than the state's width
  /// back (which grows to cover them). Else the reason. Visits the window's steady ops
  /// and the ops after it only.
  constexpr const char* check_structure() {
    if (lo >= hi) {
      return "the steady segments never run free of the warm-up and the cool-down within the bound (raise "
             "max_periods)";
    }
    const int* r = rep.data();
    const std::uint32_t *first = in_first.data(), *from = in_from.data(), *at = node.data(), *t = tmpl.data();
    const std::uint32_t* ref = at + static_cast<std::size_t>(lo) * W;
    for (std::size_t j = 0; j < W; ++j) {
      for (std::uint32_t e = first[ref[j]]; e < first[ref[j] + 1]; ++e)
        width = lo - r[from[e]] > width ? lo - r[from[e]] : width;
    }
    for (int k = lo + 1; k < hi; ++k) {  // repetition k against lo: the same templates, k - lo later
      for (std::size_t j = 0, v = at[static_cast<std::size_t>(k) * W], u = ref[0]; j < W;
           ++j, v = at[static_cast<std::size_t>(k) * W + j], u = ref[j]) {
        if (first[v + 1] - first[v] != first[u + 1] - first[u])
          return "the steady ops do not wait alike at every repetition";
        for (std::uint32_t e = first[v], f = first[u]; e < first[v + 1]; ++e, ++f) {
          if (t[from[e]] != t[from[f]] || k - r[from[e]] != lo - r[from[f]])
            return "the steady ops do not wait alike at every repetition";
        }
      }
    }
    const std::span<const std::uint32_t> offsets = sched.view().offsets;
    int a = 0;
    for (int q = 0; q < prog.shape.P; ++q) {
      for (std::size_t v = offsets[static_cast<std::size_t>(q) + 1];
           v-- > offsets[static_cast<std::size_t>(q)] && (r[v] == -2 || r[v] >= hi);) {
        for (std::uint32_t e = first[v]; e < first[v + 1]; ++e) {
          if ((a = r[from[e]]) == -1) return "the cool-down waits for the warm-up within the bound";
          width = a >= 0 && a < hi && hi - a > width ? hi - a : width;
        }
      }
    }
    return hi - width < 0 ? "the steady segments never run free of the warm-up and the cool-down within the bound "
                            "(raise max_periods)"
                          : nullptr;
  }

  /// End tick of steady slot `j` at repetition k.
  constexpr std::int64_t end(int k, std::size_t j) const {
    return sim.end_ticks(node[static_cast<std::size_t>(k) * W + j]);
  }
  /// Whether X(k + c) - X(k) is one constant `delta` (set from its first slot).
  constexpr bool shifted(int k, int c, std::int64_t& delta) const {
    const std::int64_t* e = sim.end_ticks_data();
    const std::uint32_t *a = node.data() + static_cast<std::size_t>(k) * W, *b = a + static_cast<std::size_t>(c) * W;
    delta = e[b[0]] - e[a[0]];
    std::size_t j = 1;
    while (j < W && e[b[j]] - e[a[j]] == delta) ++j;
    return j >= W;
  }

  /// Whether, at the end of the window, every steady slot advances by its own constant
  /// per repetition but not all by the same: ranks running at different rates (a phased
  /// program's unequal stages), which no repeat as one shift covers.
  constexpr bool uneven_rates() const {
    const int k = hi - 2;
    if (k < 1 || W == 0) return false;
    bool uneven = false;
    for (std::size_t j = 0; j < W; ++j) {
      const std::int64_t d = end(k + 1, j) - end(k, j);
      if (d != end(k, j) - end(k - 1, j)) return false;
      uneven = uneven || d != end(k + 1, 0) - end(k, 0);
    }
    return uneven;
  }

  /// Step 3: the least cycle c, and for it the least K with Y(K + c) = Y(K) + delta (width
  /// consecutive repetitions shifted alike), K + 1 >= lo (the recursion holds from the
  /// next repetition on) and K + c < hi. Returns false when none is found.
  constexpr bool find_repeat(int& K, int& c, std::int64_t& delta) const {
    const int least = lo - 1 > width - 1 ? lo - 1 : width - 1;
    for (c = 1; least + c < hi; ++c) {
      int run = 0;
      std::int64_t last = 0;
      for (int k = 0; k + c < hi; ++k) {
        std::int64_t d = 0;
        const bool ok = shifted(k, c, d);
        run = ok && (run == 0 || d == last) ? run + 1 : ok ? 1 : 0;
        last = d;
        if (run >= width && k >= least) {
          K = k;
          delta = d;
          return true;
        }
      }
    }
    return false;
  }
};

/// Ticks that one step of m adds to rank r's busy time in the simulation at m_a: the
/// durations (end - start: a pair lasts its whole length on both words, counted once)
/// of one repetition of each growing segment, times its repetitions per step. An op's
/// duration depends on its kind and stage only (the certificate scales per stage), so
/// busy(r, m) is affine in the steps of m with this slope.
constexpr std::int64_t busy_per_step(const certifier& w, int r) {
  const periodic_program& p = w.prog;
  const auto ru = static_cast<std::size_t>(r);
  const int n = p.steps(w.m_a);
  const schedule_view v = w.sched.view();
  std::int64_t out = 0;
  std::size_t k = v.offsets[ru];
  for (std::uint32_t g = p.rank_segments[ru]; g < p.rank_segments[ru + 1]; ++g) {
    const program_segment& seg = p.segments[g];
    for (std::size_t j = k; seg.repetitions_per_step != 0 && j < k + seg.count; ++j) {
      const bool pair_b = j > 0 && v.ops[j - 1].kind() == op_kind::overlap_f_b;
      out += pair_b ? 0 : seg.repetitions_per_step * (w.sim.end_ticks(j) - w.sim.start_ticks(j));
    }
    k += static_cast<std::size_t>(seg.times(n)) * seg.count;
  }
  return out;
}

/// The certificate's values once the repeat is found: m0, the increment, the base cycle
/// (from the simulations of the program at m_a - (c-1)*step .. m_a, step = m_step: each
/// m is m0 + j*step + k*cycle, so base[j] is its makespan less k increments), busy per
/// rank (affine in m: busy_per_step()), the peaks (at m_a >= m0). A cycle of one step
/// simulates nothing more.
constexpr void complete(periodic_certificate& out, const certifier& w, int K, int c, std::int64_t delta) {
  const int step = w.prog.m_step;
  out.proved = true;
  out.P = w.prog.shape.P;
  out.m_step = step;
  out.m_residue = w.prog.m_residue;
  out.cycle = c * step;
  out.state_index = K;
  out.state_width = w.width;
  out.increment = w.sim.tick() * rational{delta};
  const int m0 = w.m_a - (w.hi - 1 - K) * step;
  out.m0 = m0 > w.prog.m_min ? m0 : w.prog.m_min;
  out.base = buffer<rational>(static_cast<std::size_t>(c));
  const auto P = static_cast<std::size_t>(out.P);
  out.busy_base = buffer<rational>(P);
  out.busy_per_m = buffer<rational>(P);
  out.peak = buffer<rational>(P);
  out.peak_per_m = buffer<rational>(P);
  const in_flight_profile memory = in_flight(w.sched.view(), w.gamma);
  for (int r = 0; r < out.P; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    out.busy_per_m[ru] = w.sim.tick() * rational{busy_per_step(w, r), step};
    out.busy_base[ru] = w.sim.busy(r) - rational{w.m_a} * out.busy_per_m[ru];
    out.peak[ru] = memory.peak(r);
  }
  const auto take = [&](int m, const simulation& at) {
    out.base[static_cast<std::size_t>((m - out.m0) % out.cycle / step)] =
        at.makespan() - rational{(m - out.m0) / out.cycle} * out.increment;
  };
  take(w.m_a, w.sim);
  for (int j = 1; j < c; ++j) {
    const schedule shorter = expand(w.prog, w.m_a - j * step);
    take(w.m_a - j * step, simulate(shorter.view(), w.cost, cost_scale{w.stage_scale, {}}));
  }
}

}  // namespace detail

/// The default bound of periodic_certificate_of(): steady repetitions searched at most.
constexpr int default_max_periods(const periodic_program& p) { return 16 * p.shape.stages() + 64; }

/// The certificate's first attempt, in steady repetitions past m_min; each later attempt
/// doubles it, as latency's longer cycles need. A larger first attempt costs every
/// certificate ops (at steps(m_min) + 8 interleaved 1F1B's at P = 16, V = 2 passed Clang
/// 14's step limit); the first attempts below certify at the article's costs (tested
/// for P <= 16, V <= 4: tests/runtime/periodic_test.cpp), those of phased programs the
/// least that do (measured).
/// - One phase: steps(m_min) + 2, the warm-up's reach and then room for a cycle of one
///   step.
/// - Two phases (GPipe; looped BFS at V = 1): 1. Its phases hand over on each rank only.
/// - More (looped BFS at V >= 2): the least m_a >= P, and 2 at least. Chunk c + 1 starts
///   on rank 0 when micro-batch 0 has come round the P ranks through chunk c, a driven
///   edge (docs/proofs.md, "Phased programs"), slack only once rank 0's m forwards of
///   chunk c take as long (m >= P at equal stage costs); m0 is then m_a.
constexpr int first_search_periods(const periodic_program& p) {
  if (p.phases == 1) return p.steps(p.m_min) + 2;
  if (p.phases == 2) return 1;
  const int to_P = (p.shape.P - p.m_min + p.m_step - 1) / p.m_step;
  return to_P > 2 ? to_P : 2;
}

/// The ops the certificate simulates when it searches `periods` steady repetitions of
/// `p` (at m = m_min + periods * m_step), in 64 bits (periods up to 2^31 - 1; the ops
/// grow linearly with the repetitions).
constexpr long long certificate_search_ops(const periodic_program& p, int periods) {
  const auto first = static_cast<long long>(p.total_ops(p.m_min));
  const auto per_period = static_cast<long long>(p.total_ops(p.m_min + p.m_step)) - first;
  return first + static_cast<long long>(periods) * per_period;
}

/// The largest bound of steady repetitions, at most `periods`, whose search simulates
/// at most `ops_limit` ops (certificate_search_ops()) at an m of at most
/// max_microbatches; 0 when even one repetition passes either. A tool passes it as
/// periodic_certificate_of()'s max_periods, so that the search, which starts small and
/// doubles, runs as far as the limits allow.
constexpr int max_periods_within(const periodic_program& p, int periods, long long ops_limit) {
  const long long first = certificate_search_ops(p, 0);
  const long long per_period = certificate_search_ops(p, 1) - first;
  long long most = (max_microbatches - p.m_min) / p.m_step;
  if (per_period > 0 && (ops_limit - first) / per_period < most) most = (ops_limit - first) / per_period;
  if (most < 1) return 0;
  return most < periods ? static_cast<int>(most) : periods;
}

namespace detail {

/// X(k + 1) - X(k) at the last k of the search window, per steady op, time units: what
/// a certificate that was not found reports.
constexpr buffer<rational> last_differences(const certifier& w) {
  buffer<rational> out(w.W);
  const int k = w.hi - 2 > 0 ? w.hi - 2 : 0;
  for (std::size_t j = 0; j < w.W && k + 1 < w.reps; ++j)
    out[j] = w.sim.tick() * rational{w.end(k + 1, j) - w.end(k, j)};
  return out;
}

/// One attempt at `periods` steady repetitions: the certificate, or `proved` false with
/// the reason.
constexpr periodic_certificate certify_within(const periodic_program& p, const costs& c,
                                              std::span<const rational> stage_scale, rational gamma, int periods) {
  certifier w(p, c, stage_scale, gamma, periods);
  periodic_certificate out;
  w.window();
  if (const char* why = w.check_structure()) {
    out.reason = why;
    return out;
  }
  int K = 0, cycle = 0;
  std::int64_t delta = 0;
  if (!w.find_repeat(K, cycle, delta)) {
    out.reason = "the state does not repeat within the bound (raise max_periods)";
    out.last_differences = last_differences(w);
    return out;
  }
  complete(out, w, K, cycle, delta);
  return out;
}

/// check_program() of a phased program (periodic_program::phases > 1): every rank runs
/// `phases` growing segments, each repeated n0 + steps(m) times; per phase h one rho_h
/// != 0 and one beta_h for all its templates (growing m by a step moves each of the
/// phase's micro-batches by beta_h and adds a repetition whose ops advance rho_h each:
/// GPipe's phases and looped BFS's forwards beta 0, rho 1; looped BFS's backwards, in
/// reverse, beta 1, rho -1), and a fixed segment moves as the phase before it ends,
/// beta + rho (before phase 0: beta_0). Raises otherwise.
constexpr void check_phased_program(const periodic_program& p) {
  buffer<int> beta(static_cast<std::size_t>(p.phases)), rho(static_cast<std::size_t>(p.phases));
  for (int pass = 0; pass < 2; ++pass) {  // the phases' rho and beta, then the fixed segments
    for (int r = 0; r < p.shape.P; ++r) {
      int h = -1;
      for (std::uint32_t g = p.rank_segments[static_cast<std::size_t>(r)];
           g < p.rank_segments[static_cast<std::size_t>(r) + 1]; ++g) {
        const program_segment& seg = p.segments[g];
        h += seg.repetitions_per_step;
        require((seg.repetitions_per_step == 0 || seg.repetitions_per_step == 1) && h < p.phases,
                "ctpipe: a phased program has `phases` growing segments on every rank");
        for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t) {
          const op_template& o = p.templates[t];
          const auto hu = static_cast<std::size_t>(h < 0 ? 0 : h);
          if (pass == 0 && seg.repetitions_per_step == 1 && rho[hu] == 0) {
            rho[hu] = o.per_repetition;
            beta[hu] = shift_per_step(p, o);
          }
          if (pass == 0) continue;
          const int moves = seg.repetitions_per_step == 1 || h < 0 ? beta[hu] : beta[hu] + rho[hu];
          require(shift_per_step(p, o) == moves &&
                      (seg.repetitions_per_step == 0 || (rho[hu] != 0 && o.per_repetition == rho[hu])),
                  "ctpipe: a phased program's steady ops advance the same number of micro-batches per repetition "
                  "within each phase, and per step of m each phase's ops move alike and a fixed segment as the phase "
                  "before it ends");
        }
      }
      require(h == p.phases - 1, "ctpipe: a phased program has `phases` growing segments on every rank");
    }
  }
}

/// The in-flight level an op of kind `k` adds (analysis/memory.hpp: F +1, B -1, I -(1 -
/// gamma), W -gamma). Raises for another kind.
constexpr rational level_change(op_kind k, rational gamma) {
  require(k == op_kind::F || k == op_kind::B || k == op_kind::I || k == op_kind::W,
          "ctpipe: a phased program takes F, B, I and W ops only");
  return k == op_kind::F ? rational{1} : k == op_kind::B ? rational{-1} : k == op_kind::I ? gamma - 1 : -gamma;
}

/// a + b * n.
struct affine {
  rational a, b;
};

/// Rank r's peak in flight under phased program `p`, as a + b * steps(m) for every m
/// with steps(m) >= `from` (set here, at least n_min): the level walks the rank's
/// segments as an affine function of n = steps(m); within a segment the highest point is
/// in its first repetition or, when a repetition raises the level, in its last; the peak
/// is the highest of these candidates, which past `from` is the one that grows fastest.
constexpr affine phased_peak(const periodic_program& p, int r, rational gamma, int n_min, int& from) {
  const auto ru = static_cast<std::size_t>(r);
  buffer<affine> candidate(p.rank_segments[ru + 1] - p.rank_segments[ru] + 1);
  std::size_t n = 1;  // candidate[0]: level 0 before the first op
  affine level{};
  for (std::uint32_t g = p.rank_segments[ru]; g < p.rank_segments[ru + 1]; ++g) {
    const program_segment& seg = p.segments[g];
    rational within{0}, top{0};
    for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t) {
      within = within + level_change(p.templates[t].kind, gamma);
      top = t == seg.first || within > top ? within : top;
    }
    if (seg.count == 0 || seg.times(n_min) < 1) continue;
    require(seg.repetitions + seg.repetitions_per_step * n_min >= 1,
            "ctpipe: a phased program's segments run at least once at m_min");
    const bool rising = within > rational{0};
    candidate[n++] = {level.a + top + (rising ? rational{seg.repetitions - 1} * within : rational{0}),
                      level.b + (rising ? rational{seg.repetitions_per_step} * within : rational{0})};
    level = {level.a + rational{seg.repetitions} * within, level.b + rational{seg.repetitions_per_step} * within};
  }
  affine best = candidate[0];
  for (std::size_t k = 1; k < n; ++k) {
    if (candidate[k].b > best.b || (candidate[k].b == best.b && candidate[k].a > best.a)) best = candidate[k];
  }
  from = n_min;
  for (std::size_t k = 0; k < n; ++k) {
    if (!(candidate[k].b < best.b)) continue;
    const rational x = (candidate[k].a - best.a) / (best.b - candidate[k].b);  // best is higher from n >= x on
    const std::int64_t up = x.num >= 0 ? (x.num + x.den - 1) / x.den : -((-x.num) / x.den);
    from = up > from ? static_cast<int>(up) : from;
  }
  return best;
}

/// floor(a / b) for b > 0.
constexpr int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// What the phases of one simulation give (certify_phases()): the reason when one is
/// not certified; else the makespan's growth per step of m (the phases' lambdas
/// summed), the lcm of their cycles, the steps of m by which m_a may go down in its
/// class with every phase still past its repeat, and the makespan at m_a.
struct phased_class {
  const char* why = nullptr;
  rational grow;
  int cycle = 1;
  int margin = 0;
  rational makespan;
  bool driven = false;  ///< whether driven edges were dropped (and found slack)
};

/// The refusal of a phase whose ranks run at different rates: final, the search does not
/// go on to a larger bound (a tester's finding: GPipe at P = 16 with one stage 1001/1000
/// and --max-periods 9999999 doubled for 79 s to this same answer).
inline constexpr const char* uneven_rates_reason =
    "the ranks of a phase run at different rates where the search ends (unequal stages: the ranks ahead of its "
    "slowest stage keep their own pace), so its state never repeats as one shift: no bound changes that in phases "
    "whose ranks feed each other one way, as GPipe's and looped BFS's";

/// Certifies each phase of `w`'s simulation in turn (labelled as the steady segment,
/// the ops before it as the warm-up and the ops after it as the cool-down: the same
/// window, structure and repeat as a program of one phase), recording the widest state
/// and latest repeat in `out`.
constexpr phased_class certify_phases(certifier& w, periodic_certificate& out) {
  phased_class k;
  k.margin = w.reps;
  for (int h = 0; h < w.prog.phases; ++h) {
    if (h > 0) w.label(h);
    w.window();
    if ((k.why = w.check_structure()) != nullptr) return k;
    int K = 0, c = 0;
    std::int64_t delta = 0;
    if (!w.find_repeat(K, c, delta)) {
      k.why = w.uneven_rates() ? uneven_rates_reason : "the state does not repeat within the bound (raise max_periods)";
      out.last_differences = last_differences(w);
      return k;
    }
    k.cycle = std::lcm(k.cycle, c);
    k.grow = k.grow + w.sim.tick() * rational{delta, c};
    k.margin = w.hi - 1 - K < k.margin ? w.hi - 1 - K : k.margin;
    out.state_index = K > out.state_index ? K : out.state_index;
    out.state_width = w.width > out.state_width ? w.width : out.state_width;
  }
  k.makespan = w.sim.makespan();
  k.driven = w.drivens > 0;
  if (!w.drivens_slack()) {
    k.why =
        "an earlier phase on another rank holds a later one up (a driven edge binds) at the m the search reached "
        "(raise max_periods: it may stop binding at a larger m; with t_b = 0 and t_c > 0 it did not up to the "
        "search's limit)";
  }
  return k;
}

/// The phased certificate's m0, base, busy and peaks (certify_phased()): `makespan[j]`
/// and `margin[j]` of the simulation at m_a - j * step for j < C (C = out.cycle / step,
/// `grow` per step), `busy_hi` and `busy_lo` per rank at m_a and m_a - step. Each class
/// j holds from m_a - j step less margin[j] rounded down to whole cycles (`driven`: from
/// m_a - j step); m0 is the least m past which every class holds, and past each rank's
/// peak threshold.
constexpr void complete_phased(periodic_certificate& out, const periodic_program& p, int m_a, bool driven,
                               rational gamma, rational grow, const buffer<rational>& makespan,
                               const buffer<int>& margin, const buffer<rational>& busy_hi,
                               const buffer<rational>& busy_lo) {
  const int step = p.m_step, C = out.cycle / step;
  const auto P = static_cast<std::size_t>(p.shape.P);
  out.proved = true;
  out.P = p.shape.P;
  out.phases = p.phases;
  out.m_step = step;
  out.m_residue = p.m_residue;
  out.busy_base = buffer<rational>(P);
  out.busy_per_m = buffer<rational>(P);
  out.peak = buffer<rational>(P);
  out.peak_per_m = buffer<rational>(P);
  int least = p.m_min;
  for (int j = 0; j < C; ++j) {
    const int m_j = m_a - j * step;
    least = m_j - margin[static_cast<std::size_t>(j)] / C * C * step > least
                ? m_j - margin[static_cast<std::size_t>(j)] / C * C * step
                : least;
  }
  out.m0 = least - (C - 1) * step > p.m_min ? least - (C - 1) * step : p.m_min;
  // With driven edges it holds from the simulated m up (where each was found slack).
  out.m0 = driven && m_a - (C - 1) * step > out.m0 ? m_a - (C - 1) * step : out.m0;
  buffer<affine> peak(static_cast<std::size_t>(p.shape.P));
  for (int r = 0; r < p.shape.P; ++r) {
    int from = 0;
    peak[static_cast<std::size_t>(r)] = phased_peak(p, r, gamma, p.steps(p.m_min), from);
    const int m_from = p.m_residue + from * step;
    out.m0 = m_from > out.m0 ? m_from : out.m0;
  }
  out.increment = rational{C} * grow;
  out.base = buffer<rational>(static_cast<std::size_t>(C));
  for (int j = 0; j < C; ++j) {
    const int d = (m_a - j * step - out.m0) / step;  // steps past m0 (may be negative: the law holds there)
    out.base[static_cast<std::size_t>((d % C + C) % C)] =
        makespan[static_cast<std::size_t>(j)] - rational{floor_div(d, C)} * out.increment;
  }
  for (int r = 0; r < p.shape.P; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    out.busy_per_m[ru] = (busy_hi[ru] - busy_lo[ru]) / rational{step};
    out.busy_base[ru] = busy_hi[ru] - rational{m_a} * out.busy_per_m[ru];
    out.peak_per_m[ru] = peak[ru].b / rational{step};
    out.peak[ru] = peak[ru].a + rational{p.steps(out.m0)} * peak[ru].b;
  }
}

/// The certificate of a phased program (docs/proofs.md, "Phased programs"): each
/// phase certified in the simulations at m_a, m_a - step, .. (one per class of m modulo
/// the phases' cycles, whose starting states differ), the makespan's growth per step the
/// same in each. `proved` false with the reason otherwise. Cost per class: one
/// simulation, and each phase's labels, window and structure over every op, so
/// O(phases x ops at m_a) (looped BFS: 2V passes), plus the repeats' search; none of it
/// grows with m.
constexpr periodic_certificate certify_phased(const periodic_program& p, const costs& c,
                                              std::span<const rational> stage_scale, rational gamma, int periods) {
  constexpr int most_classes = 64;
  periodic_certificate out;
  const auto P = static_cast<std::size_t>(p.shape.P);
  buffer<rational> makespan(most_classes), busy_hi(P), busy_lo(P), peak_hi(P);
  buffer<int> margin(most_classes);
  int C = 1;
  rational grow;
  bool driven = false;
  for (int j = 0; j < C || j < 2; ++j) {
    if (j >= most_classes || j > periods) {  // m_a - j * step below m_min, or too many classes
      out.reason = j > periods ? "the phases' cycles pass the bound (raise max_periods)"
                               : "the phases' cycles pass 64 classes of m";
      return out;
    }
    if (j >= C) {  // only the busy time below m_a
      const simulation at =
          simulate(expand(p, p.m_min + (periods - j) * p.m_step).view(), c, cost_scale{stage_scale, {}});
      for (std::size_t r = 0; r < P; ++r) busy_lo[r] = at.busy(static_cast<int>(r));
      continue;
    }
    certifier w(p, c, stage_scale, gamma, periods, j);
    const phased_class k = certify_phases(w, out);
    out.reason = k.why != nullptr          ? k.why
                 : j > 0 && k.grow != grow ? "the phases grow at different rates in different classes of m"
                                           : "";
    if (out.reason[0] != '\0') return out;
    grow = k.grow;
    driven = driven || k.driven;
    C = std::lcm(C, k.cycle);
    makespan[static_cast<std::size_t>(j)] = k.makespan;
    margin[static_cast<std::size_t>(j)] = k.margin;
    for (std::size_t r = 0; r < P && j == 1; ++r) busy_lo[r] = w.sim.busy(static_cast<int>(r));
    if (j > 0) continue;
    const in_flight_profile memory = in_flight(w.sched.view(), gamma);
    for (std::size_t r = 0; r < P; ++r) busy_hi[r] = w.sim.busy(static_cast<int>(r));
    for (std::size_t r = 0; r < P; ++r) peak_hi[r] = memory.peak(static_cast<int>(r));
  }
  for (int j = 0; driven && j < C; ++j) {  // the driven edges' induction starts a cycle and a state past K
    if (margin[static_cast<std::size_t>(j)] < C + out.state_width) {
      out.reason = "the state does not repeat within the bound (raise max_periods)";
      return out;
    }
  }
  out.cycle = C * p.m_step;
  const int m_a = p.m_min + periods * p.m_step;
  complete_phased(out, p, m_a, driven, gamma, grow, makespan, margin, busy_hi, busy_lo);
  for (int r = 0; r < out.P && m_a >= out.m0; ++r) {
    require(out.peak_at(r, m_a) == peak_hi[static_cast<std::size_t>(r)],
            "ctpipe: the periodic certificate disagrees with a direct simulation (a bug: please report it)");
  }
  return out;
}

}  // namespace detail

/// The periodic certificate of program `p` (a family's, program_of(), or one written by
/// hand) under costs `c` (t_c included), per-stage factors `stage_scale` (S entries, or
/// none) and `gamma` for the peaks: the makespan, idle, bubble fraction and peaks for
/// every m >= m0, and m0 itself (see the file comment; below m0, simulate directly).
/// Simulates the program at m_min plus first_search_periods() steady repetitions (of
/// m_step micro-batches each), then twice as many repetitions until the
/// state repeats or `max_periods` (default_max_periods() when 0) is passed. Not proved
/// (`proved` false, `reason` saying why) for an unbalanced period (with its rank and
/// counts), steady ops that do not wait alike at every repetition (the program does
/// not match the dependencies), or no repeat within the bound (with the last state
/// differences). Raises check_program()'s messages for a malformed program. Its cost
/// depends on P, V and the costs, not on m.
constexpr periodic_certificate periodic_certificate_of(const periodic_program& p, const costs& c,
                                                       std::span<const rational> stage_scale = {},
                                                       rational gamma = rational{1}, int max_periods = 0) {
  if (p.phases > 1) {
    detail::check_phased_program(p);
  } else {
    detail::check_program(p);
    periodic_certificate unbalanced;
    if (!detail::balanced(p, unbalanced)) return unbalanced;
  }
  const int most = max_periods > 0 ? max_periods : default_max_periods(p);
  const int first = first_search_periods(p);
  int periods = first < most ? first : most;
  while (true) {
    // Not `?:`: GCC 12 frees the buffers of a class prvalue chosen by a conditional
    // operator in a constant expression ("use of allocated storage after deallocation").
    periodic_certificate out;
    if (p.phases > 1) {
      out = detail::certify_phased(p, c, stage_scale, gamma, periods);
    } else {
      out = detail::certify_within(p, c, stage_scale, gamma, periods);
    }
    // By content: pointers to different literals do not compare in a constant expression.
    if (out.proved || periods >= most || std::string_view(out.reason) == detail::uneven_rates_reason) return out;
    periods = 2 * periods < most ? 2 * periods : most;
  }
}

/// The periodic_structure of program `p` (one phase) at `periods` steady repetitions
/// past m_min: lo = hi = 0 when its steady ops do not wait alike at every repetition or
/// its steady segments never run free of the warm-up and the cool-down. Raises
/// check_program()'s messages for a malformed program, and for a phased one.
constexpr periodic_structure periodic_structure_of(const periodic_program& p, int periods) {
  detail::require(p.phases == 1, "ctpipe: periodic_structure_of() takes a program of one phase");
  detail::require(periods >= 1, "ctpipe: periodic_structure_of() needs periods >= 1");
  detail::check_program(p);
  detail::certifier w(p, costs{}, {}, rational{1}, periods, 0, detail::certifier::parts::graph);
  w.window();
  if (w.check_structure() != nullptr) return {periods, 0, 0, 0};
  return {periods, w.lo, w.hi, w.width};
}

/// periodic_certificate_of() of program `p` (one phase) with its steps 1 and 2 given:
/// `known`, periodic_structure_of(p, known.periods), proved apart (a compile-time proof
/// asserts that equality in a constant evaluation of its own: tests/static/
/// proofs_periodic.hpp); the repeat is searched in the simulation at known.periods only.
/// In a constant evaluation `known` is trusted (the point: the graph is not built); at
/// run time it is checked, and raises `ctpipe: the structure given is not the program's
/// (periodic_structure_of())` when it differs. Not proved (`reason`) for an unbalanced
/// period, a structure with lo >= hi, or no repeat within its window.
constexpr periodic_certificate periodic_certificate_of(const periodic_program& p, const costs& c,
                                                       const periodic_structure& known,
                                                       std::span<const rational> stage_scale = {},
                                                       rational gamma = rational{1}) {
  detail::require(p.phases == 1, "ctpipe: a periodic structure is given for a program of one phase only");
  detail::check_program(p);
  periodic_certificate out;
  if (!detail::balanced(p, out)) return out;
  if (!std::is_constant_evaluated()) {
    detail::require(periodic_structure_of(p, known.periods) == known,
                    "ctpipe: the structure given is not the program's (periodic_structure_of())");
  }
  if (known.lo >= known.hi) {
    out.reason =
        "the steady segments never run free of the warm-up and the cool-down within the bound (raise "
        "max_periods)";
    return out;
  }
  detail::certifier w(p, c, stage_scale, gamma, known.periods, 0, detail::certifier::parts::times);
  w.lo = known.lo, w.hi = known.hi, w.width = known.width;
  int K = 0, cycle = 0;
  std::int64_t delta = 0;
  if (!w.find_repeat(K, cycle, delta)) {
    out.reason = "the state does not repeat within the bound (raise max_periods)";
    out.last_differences = detail::last_differences(w);
    return out;
  }
  detail::complete(out, w, K, cycle, delta);
  return out;
}

/// periodic_certificate_of() of `s`'s family's program at its P (its m is not read);
/// raises program_of()'s message for a family without one. At run time it also checks
/// the family's generate() at m0 .. m0 + 2 cycles - 1 against the certificate (a bug's
/// alarm: `ctpipe: the periodic certificate disagrees with a direct simulation`).
constexpr periodic_certificate periodic_certificate_of(const schedule_spec& s, const costs& c,
                                                       std::span<const rational> stage_scale = {},
                                                       rational gamma = rational{1}, int max_periods = 0) {
  const periodic_program p = program_of(s);
  periodic_certificate out = periodic_certificate_of(p, c, stage_scale, gamma, max_periods);
  if (!std::is_constant_evaluated()) {
    schedule_spec any = s;
    // DualPipe(V)'s programs hold from the structural minimum on.
    any.structural_minimum = s.family == schedule_family::dualpipev || s.family == schedule_family::dualpipe;
    for (int m = out.m0; out.proved && m < out.m0 + 2 * out.cycle; m += out.m_step) {
      detail::require(direct_makespan(any, m, c, stage_scale) == out.makespan(m),
                      "ctpipe: the periodic certificate disagrees with a direct simulation (a bug: please report it)");
    }
  }
  return out;
}

/// What a certificate proves of one closed form of analysis/formulas.hpp over every m:
/// `correct`, it equals the simulated value wherever it says it holds; `from`, the least
/// m from which it holds at every larger m (0: it does not hold for every m >= m0).
struct closed_form_range {
  bool correct = true;
  int from = 0;
};

/// The ranges of a family's makespan, bubble fraction and peak closed forms.
struct every_m_result {
  closed_form_range makespan;
  closed_form_range bubble_fraction;
  closed_form_range peaks;  ///< every rank's peak_in_flight_formula() at once
  /// Whether all three are correct wherever they hold and hold for every m from some m on.
  constexpr explicit operator bool() const {
    return makespan.correct && bubble_fraction.correct && peaks.correct && makespan.from > 0 &&
           bubble_fraction.from > 0 && peaks.from > 0;
  }
};

namespace detail {

/// Adds closed form `f` at m against `value` to `range`: a form that holds must equal
/// it; `from` becomes m when it holds at m and held at every later m checked so far
/// (callers go down in m by `step`), else it stays.
constexpr void add_point(closed_form_range& range, bool holds, bool equal, int m, int step) {
  range.correct = range.correct && (!holds || equal);
  if (holds && range.from == m + step) range.from = m;
}

/// The three closed forms of `s` at m (its shape's m is replaced) against `makespan`,
/// `bubble` and the per-rank `peak` (P entries), under costs `c`, stage factors `scale`
/// and `gamma`; the points go down in m by `step`.
constexpr void check_point(every_m_result& out, schedule_spec s, int m, int step, const costs& c,
                           const cost_scale& scale, rational gamma, rational makespan, rational bubble,
                           const buffer<rational>& peak) {
  s.shape.m = m;
  const closed_form T = makespan_formula(s, c, scale);
  const closed_form B = bubble_fraction_formula(s, c, scale);
  add_point(out.makespan, T.holds, T.value == makespan, m, step);
  add_point(out.bubble_fraction, B.holds, B.value == bubble, m, step);
  bool holds = true, equal = true;
  for (int r = 0; r < s.shape.P; ++r) {
    const closed_form f = peak_in_flight_formula(s, gamma, r);
    holds = holds && f.holds;
    equal = equal && (!f.holds || f.value == peak[static_cast<std::size_t>(r)]);
  }
  out.peaks.correct = out.peaks.correct && equal;
  if (holds && equal && out.peaks.from == m + step) out.peaks.from = m;
}

}  // namespace detail

/// Checks `s`'s family's closed forms against certificate `cert` (made for the same P,
/// costs `c`, stage factors `stage_scale` and gamma) for every m >= m0 of its class: for
/// each residue j, at m0 + j*m_step + k*cycle for k = 2, 1, 0. `from` is m0 when each holds and agrees at
/// all of them, else 0. That covers every k: the certificate's makespan is affine in k
/// and its bubble fraction a ratio of affine functions of k, as are the closed forms of
/// makespan and bubble fraction (polynomials of degree 1 in m, and their ratios with the
/// busy time, docs/schedules.md), so two such functions equal at three points are equal
/// everywhere; the peaks are constant past m0 and so are the closed forms' there
/// (min(m, P-r), (P-r) + r*gamma, 2P-1: constant past their thresholds), or affine in m
/// for GPipe and looped BFS (m, mV) as their certificates' are. No simulation.
constexpr every_m_result closed_forms_hold_from_m0(const periodic_certificate& cert, const schedule_spec& s,
                                                   const costs& c, rational gamma = rational{1},
                                                   std::span<const rational> stage_scale = {}) {
  every_m_result out;
  if (!cert.proved) return out;
  const int last = cert.m0 + 3 * cert.cycle - cert.m_step;
  out.makespan.from = out.bubble_fraction.from = out.peaks.from = last + cert.m_step;
  // Peaks that grow with m (phased programs) per m; the others as they are (a copy per
  // m would cost ZB-H2's certificate at P = 13 its place within Clang 14's step limit).
  bool grows = false;
  for (int r = 0; r < cert.P; ++r) grows = grows || cert.peak_per_m[static_cast<std::size_t>(r)] != rational{0};
  detail::buffer<rational> peak(grows ? static_cast<std::size_t>(cert.P) : 0);
  for (int m = last; m >= cert.m0; m -= cert.m_step) {
    for (int r = 0; grows && r < cert.P; ++r) peak[static_cast<std::size_t>(r)] = cert.peak_at(r, m);
    detail::check_point(out, s, m, cert.m_step, c, cost_scale{stage_scale, {}}, gamma, cert.makespan(m),
                        cert.bubble_fraction(m), grows ? peak : cert.peak);
  }
  for (closed_form_range* r : {&out.makespan, &out.bubble_fraction, &out.peaks})
    r->from = r->from == cert.m0 ? r->from : 0;
  return out;
}

/// Checks the three closed forms against direct simulations (generate, simulate,
/// in_flight) at m = m_hi - step, m_hi - 2*step, ... >= m_lo, going down and stopping
/// at the first m the family refuses (interleaved 1F1B's classes below its group):
/// each equal where it holds; `from` the least m checked from which each holds up to
/// m_hi - step (m_hi when it does not hold there). A simulation per m: a long range may
/// be split over several constant evaluations.
constexpr every_m_result closed_forms_hold_directly(const schedule_spec& s, const costs& c, int m_lo, int m_hi,
                                                    rational gamma = rational{1},
                                                    std::span<const rational> stage_scale = {}, int step = 1) {
  every_m_result out;
  out.makespan.from = out.bubble_fraction.from = out.peaks.from = m_hi;
  for (int m = m_hi - step; m >= m_lo; m -= step) {
    schedule_spec at = s;
    at.shape.m = m;
    if (spec_error(at) != nullptr) break;
    const schedule sched = generate(at);
    const simulation sim = simulate(sched.view(), c, cost_scale{stage_scale, {}});
    const in_flight_profile memory = in_flight(sched.view(), gamma);
    detail::buffer<rational> peak(static_cast<std::size_t>(s.shape.P));
    for (int r = 0; r < s.shape.P; ++r) peak[static_cast<std::size_t>(r)] = memory.peak(r);
    detail::check_point(out, s, m, step, c, cost_scale{stage_scale, {}}, gamma, sim.makespan(), sim.bubble_fraction(),
                        peak);
  }
  return out;
}

/// Both: for each closed form of `s`'s family, whether it is correct wherever it holds
/// for every m >= 1 of the certificate's class that the family accepts (directly below
/// m0, by the certificate from m0 on) and the least m from which it holds at every
/// larger m of the class (0 when it does not hold for every m >= m0).
constexpr every_m_result closed_forms_hold_for_every_m(const periodic_certificate& cert, const schedule_spec& s,
                                                       const costs& c, rational gamma = rational{1},
                                                       std::span<const rational> stage_scale = {}) {
  const every_m_result past = closed_forms_hold_from_m0(cert, s, c, gamma, stage_scale);
  const every_m_result below = closed_forms_hold_directly(s, c, 1, cert.m0, gamma, stage_scale, cert.m_step);
  const auto both = [](closed_form_range p, closed_form_range b) {
    return closed_form_range{p.correct && b.correct, p.from == 0 ? 0 : b.from};
  };
  return {both(past.makespan, below.makespan), both(past.bubble_fraction, below.bubble_fraction),
          both(past.peaks, below.peaks)};
}

}  // namespace ctpipe
