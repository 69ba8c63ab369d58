// Proofs of memory in bytes (ctpipe/analysis/model.hpp, docs/memory.md), shared by the
// compile-time proofs (proofs_model.cpp) and their run-time twin
// (tests/runtime/model_test.cpp).
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// A model small enough to count by hand: L = 4, h = 8, a = 2, FFN 4h with GeLU,
/// v = 16, s = 4, b = 1, no tensor parallelism; 1F1B with P = 2, m = 4, two layers per
/// stage.
/// - One layer keeps sbh(34 + 5as/h) = 32 (34 + 5) = 1248 bytes.
/// - Stage 0 keeps 2 x 1248 + 8sb (token ids) 32 + sbh (embedding dropout) 32 = 2560;
///   stage 1, 2 x 1248 + 4sbh 128 + 4sbv 256 = 2880.
/// - A layer has 2h² + 2h·(h/a·a) + 2h·4h + 4h = 128 + 128 + 512 + 32 = 800 parameters;
///   stage 0 holds 2 x 800 + vh 128 = 1728, stage 1 2 x 800 + 2h 16 + vh 128 = 1744;
///   at 18 bytes: 31104 and 31392.
/// - 1F1B's rank 0 holds 2 micro-batches at once, rank 1 one: peaks 31104 + 5120 =
///   36224 and 31392 + 2880 = 34272. With gamma irrelevant (no I/W).
constexpr bool tiny_by_hand() {
  const transformer_model tiny{.layers = 4, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4};
  if (layer_activation_bytes(tiny) != rational{1248}) return false;
  if (stage_activation_bytes(tiny, 2, 0, 2) != rational{2560} ||
      stage_activation_bytes(tiny, 2, 1, 2) != rational{2880})
    return false;
  if (layer_parameters(tiny) != 800) return false;
  if (stage_static_bytes(tiny, 2, 0, 2) != rational{31104} || stage_static_bytes(tiny, 2, 1, 2) != rational{31392})
    return false;
  const std::int64_t split[] = {even_split(4, 2, 0), even_split(4, 2, 1)};
  const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, {2, 4, 1, placement::loop}});
  const model_memory mm = memory_of(g.view(), tiny, split, rational{1});
  return mm.peak_bytes(0) == rational{36224} && mm.peak_bytes(1) == rational{34272};
}

/// Korthikanti et al. 2022, Table 2, per layer for their GPT layer (FFN 4h, GeLU,
/// multi-head attention), against layer_activation_bytes():
/// no parallelism sbh(34 + 5as/h); tensor parallelism sbh(10 + 24/t + 5as/(ht)); with
/// sequence parallelism sbh(34 + 5as/h)/t; selective recompute with sequence parallelism
/// 34sbh/t; full recompute 2sbh, and 2sbh/t with sequence parallelism.
constexpr bool korthikanti_formulas(std::int64_t s, std::int64_t b, std::int64_t h, std::int64_t a, std::int64_t t) {
  transformer_model m{.layers = 1, .hidden = h, .heads = a, .vocab = 1, .seq = s, .micro_batch = b};
  const rational sbh{s * b * h};
  const rational T{t};
  const rational attention = rational{5 * a * s, h};
  if (layer_activation_bytes(m) != sbh * (rational{34} + attention)) return false;
  m.tp = t;
  if (layer_activation_bytes(m) != sbh * (rational{10} + rational{24} / T + attention / T)) return false;
  m.sequence_parallel = true;
  if (layer_activation_bytes(m) != sbh * (rational{34} + attention) / T) return false;
  m.recompute = recompute_mode::selective;
  if (layer_activation_bytes(m) != rational{34} * sbh / T) return false;
  m.recompute = recompute_mode::full;
  if (layer_activation_bytes(m) != rational{2} * sbh / T) return false;
  m.sequence_parallel = false;
  return layer_activation_bytes(m) == rational{2} * sbh;
}

/// Megatron-LM's estimate of the first stage's activations, megatron/training/
/// theoretical_memory_usage.py, compute_activation_memory(), in stage-equivalents (one
/// micro-batch's activations of one stage, L/P layers): it counts all L layers (P
/// micro-batches in flight on the first stage) times 1 + (P-1)/(PV) with an interleaved
/// schedule, or times min(1, m/P) without: P + (P-1)/V, or min(P, m). It ignores m and
/// the group size with interleaving.
constexpr rational megatron_stage_equivalents(int P, int V, int m) {
  if (V > 1) return rational{P} * (rational{1} + rational{P - 1, P * V});
  return rational{P < m ? P : m};
}

/// What the schedule itself holds on rank 0 of Megatron's interleaved 1F1B, P = 4,
/// V = 2, m = 8 with group size g (0: the default, P), in stage-equivalents (full
/// activations): peak_activations(0) (docs/memory.md: m = 8 with g = 8 holds 15/2,
/// m = 4 with the default g holds 4).
constexpr rational megatron_against_schedule(int m, int g) {
  const schedule_spec spec{
      schedule_family::interleaved_1f1b, {4, m, 2, placement::loop}, interleaved_variant::megatron, g};
  return in_flight(generate(spec).view()).peak_activations(0);
}

}  // namespace ctpipe::tests
