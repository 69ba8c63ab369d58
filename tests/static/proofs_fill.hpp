// Proofs of bubble filling and of the rebalancing bound (docs/spec.md §8), shared by the
// compile-time proofs (proofs_fill.cpp) and their run-time twin (tests/runtime/
// fill_test.cpp), which evaluate the same functions. Every check here is restated from
// the spec, apart from the library's own checks: the idle time from simulate()'s op
// times, the windows from the ops' times, the live count by brute force.
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// `family` at P ranks and m micro-batches with its default V and its own placement.
constexpr schedule_spec family_spec(schedule_family family, int P, int m) {
  const family_entry& e = family_of(family);
  return {family, {P, m, e.default_V, e.natural_placement}};
}

/// Flat index of op `o` in `v` (an F also matches the overlapped pair word holding it),
/// or v.size(). Linear scan: test-only.
constexpr std::size_t find_op(schedule_view v, op o) {
  for (std::size_t k = 0; k < v.size(); ++k) {
    const op x = v.ops[k];
    const bool pair_f = x.kind() == op_kind::overlap_f_b && o.kind() == op_kind::F && x.stage() == o.stage() &&
                        x.microbatch() == o.microbatch();
    if (x == o || pair_f) return k;
  }
  return v.size();
}

/// The rank whose list holds flat index k.
constexpr int rank_at(schedule_view v, std::size_t k) {
  int r = 0;
  while (v.offsets[static_cast<std::size_t>(r) + 1] <= k) ++r;
  return r;
}

/// A fill of `jobs` into `v` under `c` checked against docs/spec.md §8.1, restated:
/// - the makespan is simulate()'s;
/// - every piece lies in [0, T), has positive length, on a rank its job may use, and
///   overlaps no op of that rank (simulated times);
/// - one iteration: it starts after its job's release op ends and ends before its
///   deadline op starts, t_c added across ranks;
/// - pieces on one rank, and pieces of one job, never overlap; an indivisible job is
///   one piece;
/// - per job the pieces add up to `placed`, at most its duration, and the reason is
///   `placed` exactly when all of it is; per rank `filled` adds up its pieces and
///   `remaining_idle` is simulate()'s idle time less it; total <= bound <= work.
/// Quadratic: test-only.
constexpr bool fill_is_sound(schedule_view v, const costs& c, std::span<const fill_job> jobs, const fill_result& r,
                             bool steady) {
  const simulation sim = simulate(v, c);
  const rational T = sim.makespan();
  if (r.makespan != T) return false;
  const std::span<const fill_piece> p = r.pieces.span();
  rational total{0};
  for (std::size_t a = 0; a < p.size(); ++a) {
    const fill_piece& x = p[a];
    const fill_job& job = jobs[x.job];
    if (x.rank < 0 || x.rank >= v.shape.P || !(x.start < x.end) || x.start < rational{0} || x.end > T) return false;
    if (job.rank != any_rank && job.rank != x.rank) return false;
    for (std::size_t k = v.offsets[static_cast<std::size_t>(x.rank)];
         k < v.offsets[static_cast<std::size_t>(x.rank) + 1]; ++k) {
      if (x.start < sim.end(k) && sim.start(k) < x.end) return false;  // over an op
    }
    if (!steady && job.after) {
      const std::size_t k = find_op(v, *job.after);
      if (x.start < sim.end(k) + (rank_at(v, k) != x.rank ? c.c : rational{0})) return false;
    }
    if (!steady && job.before) {
      const std::size_t k = find_op(v, *job.before);
      if (x.end > sim.start(k) - (rank_at(v, k) != x.rank ? c.c : rational{0})) return false;
    }
    for (std::size_t b = 0; b < a; ++b) {
      const bool overlap = p[b].start < x.end && x.start < p[b].end;
      if (overlap && (p[b].rank == x.rank || p[b].job == x.job)) return false;
      if (p[b].job == x.job && !job.divisible) return false;
    }
    total = total + (x.end - x.start);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    rational got{0};
    for (const fill_piece& x : p) got = got + (x.job == j ? x.end - x.start : rational{0});
    if (got != r.placed[j] || got > jobs[j].duration ||
        ((got == jobs[j].duration) != (r.reason[j] == fill_reason::placed)))
      return false;
  }
  for (int q = 0; q < v.shape.P; ++q) {
    rational filled{0};
    for (const fill_piece& x : p) filled = filled + (x.rank == q ? x.end - x.start : rational{0});
    if (filled != r.filled[static_cast<std::size_t>(q)] ||
        r.remaining_idle[static_cast<std::size_t>(q)] != sim.idle(q) - filled)
      return false;
  }
  return total == r.total && r.total <= r.bound && r.bound <= r.work &&
         (r.optimal == (r.total == r.bound) || r.exact_method);
}

/// Jobs for the proofs on `v`: the encoder preset (f = 1/4, b = 1/2; `divisible` with no
/// minimum piece, else whole), then three of one's own: 3/2 pinned to the last rank after
/// the first stage's F of micro-batch 0; 1 on any rank before the last B/I of the first
/// stage; 5/2 anywhere, divisible with pieces of at least 1/2.
constexpr detail::buffer<fill_job> proof_jobs(schedule_view v, bool divisible) {
  const detail::buffer<fill_job> encoder =
      encoder_jobs(v, rational{1, 4}, rational{1, 2}, divisible ? std::optional<rational>{rational{0}} : std::nullopt);
  detail::buffer<fill_job> out(encoder.size() + 3);
  for (std::size_t k = 0; k < encoder.size(); ++k) out[k] = encoder[k];
  const int m = v.shape.m, first = v.shape.first_stage(m - 1);
  const op last_back =
      find_op(v, op{op_kind::B, first, m - 1}) < v.size() ? op{op_kind::B, first, m - 1} : op{op_kind::I, first, m - 1};
  out[encoder.size()] = {"pinned",     -1,    rational{3, 2}, v.shape.P - 1, op{op_kind::F, v.shape.first_stage(0), 0},
                         std::nullopt, false, rational{0}};
  out[encoder.size() + 1] = {"due", -1, rational{1}, any_rank, std::nullopt, last_back, false, rational{0}};
  out[encoder.size() + 2] = {"free", -1, rational{5, 2}, any_rank, std::nullopt, std::nullopt, true, rational{1, 2}};
  return out;
}

/// fill_bubbles() of proof_jobs() on `spec` under `c` (encoder jobs whole or
/// `divisible`; one iteration or `steady`): the result fill_is_sound().
constexpr bool prove_fill(const schedule_spec& spec, const costs& c, bool divisible, bool steady) {
  const schedule s = generate(spec);
  const detail::buffer<fill_job> jobs = proof_jobs(s.view(), divisible);
  const fill_result r = fill_bubbles(s.view(), c, jobs.span(), {steady});
  return fill_is_sound(s.view(), c, jobs.span(), r, steady);
}

/// The share of the encoder work (forward `f`, backward `b` per micro-batch, whole jobs)
/// fill_bubbles() places in `spec`'s bubbles under the default costs, and whether it
/// reached its bound (so no placement does better).
struct encoder_fit {
  rational share{0};
  bool optimal = false;
};
constexpr encoder_fit encoder_share(const schedule_spec& spec, rational f, rational b, bool steady = false) {
  const schedule s = generate(spec);
  const detail::buffer<fill_job> jobs = encoder_jobs(s.view(), f, b);
  const fill_result r = fill_bubbles(s.view(), costs{}, jobs.span(), {steady});
  return {r.total / r.work, r.optimal};
}

/// The most activations live at once over all ranks, by brute force (docs/spec.md §8.2,
/// gamma = 1): at each op's start and end, the (stage, micro-batch) pairs whose F has
/// started and whose last backward piece (B, or W) has not ended. Quadratic: test-only.
constexpr rational live_brute_force(schedule_view v, const costs& c) {
  const simulation sim = simulate(v, c);
  detail::buffer<rational> from(v.size()), until(v.size());  // per activation (at its F's index)
  std::size_t n = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const op o = v.ops[k];
    if (o.kind() != op_kind::F && o.kind() != op_kind::overlap_f_b) continue;
    std::size_t last = find_op(v, op{op_kind::B, o.stage(), o.microbatch()});
    if (last == v.size()) last = find_op(v, op{op_kind::W, o.stage(), o.microbatch()});
    from[n] = sim.start(k), until[n++] = sim.end(last);
  }
  std::int64_t most = 0;
  for (std::size_t t = 0; t < 2 * v.size(); ++t) {
    const rational at = t % 2 == 0 ? sim.start(t / 2) : sim.end(t / 2);
    std::int64_t live = 0;
    for (std::size_t a = 0; a < n; ++a) live += from[a] <= at && at < until[a] ? 1 : 0;
    most = live > most ? live : most;
  }
  return rational{most};
}

/// live_bound() of `spec` under `c`, for static_asserts (a schedule cannot outlive a
/// constant expression).
constexpr live_bound_result live_of(const schedule_spec& spec, const costs& c) {
  return live_bound(generate(spec).view(), c);
}

/// live_brute_force() of `spec` under `c`.
constexpr rational live_brute_force(const schedule_spec& spec, const costs& c) {
  return live_brute_force(generate(spec).view(), c);
}

}  // namespace ctpipe::tests
