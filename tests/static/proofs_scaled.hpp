// Proofs of the scaled cost model (cost_scale, docs/spec.md §2.2 and §4.2), shared by
// the compile-time proofs (proofs_scaled.cpp) and their run-time twin
// (tests/runtime/scaled_test.cpp), which evaluate the same functions.
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// Op k's cost under `scale`, restated from docs/spec.md §2.2 for the proofs: an F, B, I
/// or W costs t/V times its stage's and micro-batch's factors; an overlapped pair word
/// t_fb/(t_f+t_b) times the sum of its halves' scaled costs (its B word then adds
/// nothing).
constexpr rational spec_cost(schedule_view v, const costs& c, const cost_scale& scale, std::size_t k) {
  const int V = v.shape.cost_chunks();
  const auto scaled = [&](op_kind kind, op o) {
    return c.of(kind, V) * scale.of_stage(o.stage()) * scale.of_microbatch(o.microbatch());
  };
  const op o = v.ops[k];
  if (o.kind() == op_kind::overlap_f_b)
    return c.pair() / (c.f + c.b) * (scaled(op_kind::F, o) + scaled(op_kind::B, v.ops[k + 1]));
  if (k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b) return rational{0};
  return scaled(o.kind(), o);
}

/// At one point: simulate(v, c, scale)
/// - gives every rank its busy time as the sum of its ops' spec_cost();
/// - makes each op last its spec_cost() (an overlapped pair its pair cost);
/// - has the makespan of makespan_formula(spec, c, scale) and the bubble fraction of
///   bubble_fraction_formula() wherever they hold;
/// and the lists lower(v, c, model, scale) makes for blocking and posted run under
/// execute(..., scale) with the simulated start and end of every compute op (zero loss,
/// two engines agreeing), and complete under rendezvous and batched.
constexpr bool prove_scaled(const schedule_spec& spec, const costs& c, const cost_scale& scale) {
  const schedule g = generate(spec);
  const schedule_view v = g.view();
  const simulation sim = simulate(v, c, scale);
  for (int r = 0; r < spec.shape.P; ++r) {
    rational busy{0};
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      busy = busy + spec_cost(v, c, scale, k);
      const bool pair_b = k > 0 && v.ops[k - 1].kind() == op_kind::overlap_f_b;
      if (!pair_b && sim.end(k) - sim.start(k) != spec_cost(v, c, scale, k)) return false;
    }
    if (busy != sim.busy(r)) return false;
  }
  const closed_form T = makespan_formula(spec, c, scale);
  if (T.holds && T.value != sim.makespan()) return false;
  const closed_form bubble = bubble_fraction_formula(spec, c, scale);
  if (bubble.holds && bubble.value != sim.bubble_fraction()) return false;
  for (const runtime_model model : transfer_models) {  // (the stream models: tests/runtime/execute_test.cpp)
    const schedule lowered = lower(v, c, model, scale);
    const execution run = execute(lowered.view(), c, model, scale);
    if (!run.completed()) return false;
    if (model != runtime_model::blocking && model != runtime_model::posted) continue;
    if (run.makespan() != sim.makespan()) return false;
    std::size_t k = 0;  // the compute ops of the lowered lists, in their order
    for (std::size_t q = 0; q < lowered.size(); ++q) {
      if (is_transfer(lowered.view().ops[q].kind())) continue;
      if (run.start(q) != sim.start(k) || run.end(q) != sim.end(k)) return false;
      ++k;
    }
  }
  return true;
}

/// The closed forms of GPipe, and of 1F1B with the last stage's factor the largest
/// (docs/spec.md §4.2), against the simulation: every stage-factor tuple over P stages
/// drawn from `factors` (n of them), each m in [m_lo, m_hi], under costs `c` (t_c = 0).
/// For 1F1B, tuples whose last factor is not the largest must report no closed form.
/// Returns false unless every point holds and at least one formula was compared.
constexpr bool prove_scaled_formulas(schedule_family family, int P, int m_lo, int m_hi, const rational* factors, int n,
                                     const costs& c) {
  rational stage[8]{};
  int compared = 0;
  int total = 1;
  for (int s = 0; s < P; ++s) total *= n;
  for (int code = 0; code < total; ++code) {
    int rest = code;
    for (int s = 0; s < P; ++s, rest /= n) stage[s] = factors[rest % n];
    const cost_scale scale{std::span<const rational>(stage, static_cast<std::size_t>(P)), {}};
    for (int m = m_lo; m <= m_hi; ++m) {
      const schedule_spec spec{family, {P, m, 1, placement::loop}};
      const closed_form T = makespan_formula(spec, c, scale);
      const rational simulated = simulate(generate(spec).view(), c, scale).makespan();
      if (T.holds) {
        if (T.value != simulated) return false;
        ++compared;
      } else if (family == schedule_family::gpipe || scale.uniform()) {
        return false;  // GPipe's holds for every stage tuple; a uniform scale has the plain one
      }
    }
  }
  return compared > 0;
}

}  // namespace ctpipe::tests
