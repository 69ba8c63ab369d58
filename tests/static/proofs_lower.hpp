// The lowering proofs shared by tests/static/proofs_lower.cpp (inside static_assert) and
// tests/runtime/lower_test.cpp (inside Catch2 test cases): one function, so a fact
// proved at compile time is checked at run time through the same code.
#pragma once

#include <ctpipe/ctpipe.hpp>
#include <ctpipe/lower/execute.hpp>
#include <ctpipe/lower/lower.hpp>
#include <ctpipe/lower/streams.hpp>
#include <ctpipe/lower/validate.hpp>

#include <cstddef>  // std::size_t

namespace ctpipe::tests {

/// Executed = proved, for compute schedule `v`, runtime model `model` and costs `c`:
/// lower(v, c, model) runs to completion under `model`, and loses nothing where
/// docs/spec.md §7.2 says so: execute()'s makespan equals simulate()'s under `blocking`
/// and `posted` for every cost set, under `rendezvous` with equal op costs and t_c = 0.
/// The times of a completed run `e` of lowered lists `l` agree with one another: each op
/// is reached no later than it starts and ends no earlier; a compute op is reached once
/// every earlier op of its rank has ended, except an overlapped pair's B word, which
/// spans exactly its pair's word; each rank's stall intervals lie in its transfer ops, do
/// not overlap and add up to stall(r).
constexpr bool execution_consistent(const execution& e, schedule_view l) {
  for (int r = 0; r < l.shape.P; ++r) {
    std::int64_t ended = 0;
    for (std::uint32_t k = l.offsets[static_cast<std::size_t>(r)]; k < l.offsets[static_cast<std::size_t>(r) + 1];
         ++k) {
      if (e.reached_ticks(k) > e.start_ticks(k) || e.start_ticks(k) > e.end_ticks(k)) return false;
      if (k > l.offsets[static_cast<std::size_t>(r)] && l.ops[k - 1].kind() == op_kind::overlap_f_b) {
        if (e.start_ticks(k) != e.start_ticks(k - 1) || e.end_ticks(k) != e.end_ticks(k - 1)) return false;
        continue;
      }
      if (!is_transfer(l.ops[k].kind()) && e.reached_ticks(k) < ended) return false;
      ended = e.end_ticks(k) > ended ? e.end_ticks(k) : ended;
    }
  }
  detail::buffer<std::int64_t> sum(static_cast<std::size_t>(l.shape.P)), last_end(static_cast<std::size_t>(l.shape.P));
  for (const stall_interval& i : e.stall_intervals()) {
    const std::size_t r = static_cast<std::size_t>(i.rank);
    if (!is_transfer(l.ops[i.op_index].kind()) || i.start_ticks < last_end[r] || i.start_ticks >= i.end_ticks)
      return false;
    last_end[r] = i.end_ticks, sum[r] += i.end_ticks - i.start_ticks;
  }
  for (int r = 0; r < l.shape.P; ++r) {
    if (e.stall(r) != e.tick() * rational{sum[static_cast<std::size_t>(r)]}) return false;
  }
  return true;
}

/// Executed = proved under a stream model, for the completed run `run` of `lowered` =
/// lower(v, c, model): each stream's messages come in one order on both of its ends; the
/// run is never slower than the key order it reorders (lower(v, c, rendezvous) under the
/// same model, which completes); and where stream_spacing(v, c, model) holds (always at
/// t_c = 0) every compute op starts at simulate()'s time.
constexpr bool prove_streamed(schedule_view v, const costs& c, runtime_model model, schedule_view lowered,
                              const execution& run) {
  if (!stream_order_consistent(lowered, model)) return false;
  const execution keyed = execute(lower(v, c, runtime_model::rendezvous).view(), c, model);
  if (!keyed.completed() || run.makespan() > keyed.makespan()) return false;
  const bool spaced = stream_spacing(v, c, model);
  if (c.c == rational{0} && !spaced) return false;
  if (!spaced) return true;
  const simulation sim = simulate(v, c);
  std::size_t k = 0;
  for (std::size_t q = 0; q < lowered.size(); ++q) {
    if (is_transfer(lowered.ops[q].kind())) continue;
    if (run.start(q) != sim.start(k++)) return false;
  }
  return run.makespan() == sim.makespan();
}

/// Executed = proved for `v` lowered for `model` under `c`: the run completes, is
/// consistent, keeps each rank pair's message order (but blocking), and has the simulated
/// makespan where lower() claims zero loss: blocking and posted always; rendezvous at equal
/// op costs with t_c = 0 and no fused pair (a fused pair lasts two ops: a rendezvous can
/// find its receiver inside one; combined-1f1b, P = 6, m = 6, V = 2 at t_f = t_b = 1
/// runs 35/2 against 17).
constexpr bool prove_executed(schedule_view v, const costs& c, runtime_model model) {
  const schedule lowered = lower(v, c, model);
  const execution run = execute(lowered.view(), c, model);
  if (!run.completed() || !execution_consistent(run, lowered.view())) return false;
  if (is_stream_model(model)) return prove_streamed(v, c, model, lowered.view(), run);
  if (model != runtime_model::blocking && !directed_order_consistent(lowered.view())) return false;
  const bool equal_costs = c.c == rational{0} && c.b == c.f && c.i == c.f && c.w == c.f && !has_pairs(v);
  const bool zero_loss = model == runtime_model::blocking || model == runtime_model::posted ||
                         (model == runtime_model::rendezvous && equal_costs);
  return !zero_loss || run.makespan() == simulate(v, c).makespan();
}

/// prove_executed(generate(spec), c, model) over P in [1, P_hi], m in [1, m_hi], V in
/// [1, V_hi] for family `fam` (Megatron's rule for interleaved); rejected points are
/// skipped, and the proof fails if every point was skipped.
constexpr bool prove_executed_grid(schedule_family fam, int P_hi, int m_hi, int V_hi, const costs& c,
                                   runtime_model model) {
  int proved = 0;
  for (int P = 1; P <= P_hi; ++P) {
    for (int m = 1; m <= m_hi; ++m) {
      for (int V = 1; V <= V_hi; ++V) {
        const schedule_spec spec{fam, {P, m, V, natural_placement(fam)}};
        if (spec_error(spec) != nullptr) continue;
        if (!prove_executed(generate(spec).view(), c, model)) return false;
        ++proved;
      }
    }
  }
  return proved > 0;
}

/// Lowering proof at one point, for runtime model `model` under costs `c`:
/// lower(generate(spec), c, model)
/// - has one SEND and one RECV per message of messages() (and of messages_formula()
///   where it holds) and keeps every compute op in its order (compute_part gives back
///   the compute schedule);
/// - runs to completion under `model` (execute), under buffered sends (validate_lowered;
///   a stream model's lists, whose RECVs are issued early, under `posted` instead), and,
///   for the orders made for `rendezvous` and `batched`, under rendezvous sends,
///   with the messages between any two ranks in the same order on both;
/// - prove_executed() holds.
constexpr bool prove_lowering(const schedule_spec& spec, const costs& c = costs{},
                              runtime_model model = runtime_model::blocking) {
  const schedule compute = generate(spec);
  const schedule lowered = lower(compute.view(), c, model);
  const schedule_view l = lowered.view();
  std::size_t sends = 0, receives = 0;
  for (const op o : l.ops) {
    sends += is_send(o.kind()) ? 1 : 0;
    receives += is_transfer(o.kind()) && !is_send(o.kind()) ? 1 : 0;
  }
  const std::size_t count = messages(compute.view());
  if (sends != count || receives != count || l.size() != compute.size() + 2 * count) return false;
  const closed_form formula = messages_formula(spec);
  if (formula.holds && formula.value != rational{static_cast<std::int64_t>(count)}) return false;
  const schedule back = compute_part(l);
  for (std::size_t k = 0; k < compute.size(); ++k) {
    if (back.view().ops[k] != compute.view().ops[k]) return false;
  }
  for (int r = 0; r <= spec.shape.P; ++r) {
    if (back.view().offsets[static_cast<std::size_t>(r)] != compute.view().offsets[static_cast<std::size_t>(r)])
      return false;
  }
  // Lists for a stream model issue RECVs early, as the stream runtimes (and PyTorch's
  // posted irecv) do; a blocking RECV there could wait ahead of the rank's own sends.
  if (is_stream_model(model) ? !execute(l, c, runtime_model::posted).completed()
                             : !validate_lowered(l, send_semantics::buffered).ok())
    return false;
  const bool keyed = model == runtime_model::rendezvous || model == runtime_model::batched;
  if (keyed && (!validate_lowered(l, send_semantics::rendezvous).ok() || !peer_order_consistent(l))) return false;
  if (model != runtime_model::blocking && !is_stream_model(model) && !directed_order_consistent(l)) return false;
  return prove_executed(compute.view(), c, model);
}

/// prove_lowering(spec, c, model) over P in [P_lo, P_hi], m in [m_lo, m_hi], V in [1, V_hi], for family
/// `fam` (and interleaved variant `variant`): points the family's rule rejects are
/// skipped (spec_error), and the proof fails if every point was skipped.
constexpr bool prove_lowering_grid(schedule_family fam, interleaved_variant variant, int P_lo, int P_hi, int m_lo,
                                   int m_hi, int V_hi, const costs& c = costs{},
                                   runtime_model model = runtime_model::blocking) {
  int proved = 0;
  for (int P = P_lo; P <= P_hi; ++P) {
    for (int m = m_lo; m <= m_hi; ++m) {
      for (int V = 1; V <= V_hi; ++V) {
        const schedule_spec spec{fam, {P, m, V, natural_placement(fam)}, variant};
        if (spec_error(spec) != nullptr) continue;
        if (!prove_lowering(spec, c, model)) return false;
        ++proved;
      }
    }
  }
  return proved > 0;
}

}  // namespace ctpipe::tests
