// ctpipe/schedules/spec.hpp: which schedule, on which shape. What each family is and
// which requests it accepts: ctpipe/schedules/family.hpp.
#pragma once

#include <cstdint>      // std::uint8_t
#include <string_view>  // family names

#include "ctpipe/core/op.hpp"     // pair_model
#include "ctpipe/core/shape.hpp"  // also detail::shape_rules

namespace ctpipe {

/// The schedule families ctpipe generates (docs/spec.md §4).
/// - `gpipe`: GPipe (Huang et al. 2019), PyTorch's `ScheduleGPipe`.
/// - `one_f_one_b`: 1F1B / PipeDream-Flush (Narayanan et al. 2021), Megatron-LM's
///   `forward_backward_pipelining_without_interleaving`, PyTorch's `Schedule1F1B`.
/// - `interleaved_1f1b`: interleaved 1F1B with V model chunks per rank (Narayanan et al.
///   2021), Megatron-LM's `forward_backward_pipelining_with_interleaving`, PyTorch's
///   `ScheduleInterleaved1F1B` (see interleaved_variant).
/// - `looped_bfs`: breadth-first looping (Lamy-Poirier 2023), PyTorch's
///   `ScheduleLoopedBFS`.
/// - `zb_h1`, `zb_h2`: Zero Bubble's handcrafted schedules (Qi et al., ICLR 2024), split
///   backward I/W, one chunk per rank; ZB-H1 keeps 1F1B's memory, ZB-H2 doubles the
///   warmup to remove the bubble.
/// - `zbv`: ZB-V, V-shape placement with two chunks per rank (Qi et al. 2024, §6),
///   PyTorch's `ScheduleZBVZeroBubble`.
/// - `interleaved_zb`: PyTorch's `ScheduleInterleavedZeroBubble` (ZB1P on the loop
///   placement with V chunks).
/// - `dualpipev`: DualPipeV (DeepSeek-V3 report; deepseek-ai/DualPipe `DualPipeV`),
///   PyTorch's `ScheduleDualPipeV`: V-shape placement, two chunks per rank, some
///   backwards split into I and W (schedules/dualpipe.hpp).
/// - `dualpipe`: DualPipe (DeepSeek-V3 report; deepseek-ai/DualPipe `DualPipe`): two
///   copies of the model on the bidirectional placement, micro-batches fed from both
///   ends (schedules/dualpipe.hpp).
/// - `v_half`, `v_min`: V-Half and V-Min ("Pipeline Parallelism with Controllable
///   Memory", Qi et al., NeurIPS 2024), the Zero Bubble authors' greedy V schedules
///   with about a half and a third of 1F1B's activation memory: V-shape placement, two
///   chunks per rank, split backward (schedules/controllable_memory.hpp).
/// - `combined_1f1b`: Megatron-LM's "combined 1F1B", interleaved 1F1B with the
///   expert-parallel all-to-all overlap (`overlap_moe_expert_parallel_comm`): one more
///   warmup forward per rank, then each steady step's forward and backward as one
///   overlapped F&B pair (schedules/combined.hpp).
enum class schedule_family : std::uint8_t {
  gpipe,
  one_f_one_b,
  interleaved_1f1b,
  looped_bfs,
  zb_h1,
  zb_h2,
  zbv,
  interleaved_zb,
  dualpipev,
  dualpipe,
  v_half,
  v_min,
  combined_1f1b,
};

/// Which framework's interleaved 1F1B to reproduce. All three run a table of
/// (micro-batch, chunk) pairs built group by group (inside a group of `g` micro-batches,
/// every one through chunk 0, then chunk 1, ...; the last group takes the remainder);
/// rank r runs `min(m*V, (V-1)g + 2(P-1-r))` warmup forwards, then alternates the next
/// forward and the oldest backward (the backward of table entry (j, c) runs chunk V-1-c),
/// then cools down. They differ in the group size and in what they accept:
/// - `megatron` (current Megatron-LM, `get_schedule_table`): g is
///   `microbatch_group_size_per_vp_stage`, default P; needs `P <= g <= m` and
///   (`m % g == 0` or `m % g >= P`).
/// - `megatron_legacy` (Megatron-Core up to 0.9): g = P, needs `m % P == 0`; when
///   `m == P` every rank runs all its forwards first.
/// - `torch` (PyTorch `ScheduleInterleaved1F1B`): `rounds = max(1, m / P)` (rounded
///   down), needs `m % rounds == 0`, and g = `m / rounds` (so g < P when m < P).
enum class interleaved_variant : std::uint8_t { megatron, megatron_legacy, torch };

/// The variant's name as the tool and the vectors spell it: `megatron`,
/// `megatron-legacy`, `torch`.
constexpr const char* variant_name(interleaved_variant v) {
  switch (v) {
    case interleaved_variant::megatron: return "megatron";
    case interleaved_variant::megatron_legacy: return "megatron-legacy";
    case interleaved_variant::torch: return "torch";
  }
  return "?";
}

/// The variant called `name`, or false if there is none (then `out` is unchanged).
constexpr bool variant_from_name(std::string_view name, interleaved_variant& out) {
  for (interleaved_variant v :
       {interleaved_variant::megatron, interleaved_variant::megatron_legacy, interleaved_variant::torch}) {
    if (name == variant_name(v)) {
      out = v;
      return true;
    }
  }
  return false;
}

/// A schedule request: family, shape and the interleaved schedule's parameters. A
/// structural type, so it is the template argument of schedule_v:
/// `schedule_v<schedule_spec{schedule_family::gpipe, {4, 8}}>`.
struct schedule_spec {
  schedule_family family = schedule_family::one_f_one_b;  ///< which schedule
  pipeline_shape shape{};                                 ///< P, m, V, placement
  /// interleaved-1f1b only: which framework's rules (see interleaved_variant).
  interleaved_variant variant = interleaved_variant::megatron;
  /// interleaved-1f1b and combined-1f1b only: micro-batches per group `g`; 0 = the
  /// default (P for megatron, megatron-legacy and combined-1f1b, m / max(1, m / P) for
  /// torch).
  int group = 0;
  /// interleaved-1f1b only: warmup forwards grow by this many per rank away from the
  /// last rank (Megatron's and PyTorch's 2; 1 gives fewer in-flight chunks and hides no
  /// latency).
  int warmup_factor = 2;
  /// dualpipev and dualpipe only: accept the least m their eight phases run with instead
  /// of DeepSeek's own rule m >= 2P (`step()` asserts `num_chunks >= num_ranks * 2`):
  /// m >= 2P-1 for dualpipev, where rank 0 peaks at 2P chunks and the others at 2P+1;
  /// even m >= 2P-2 for dualpipe, where ranks 0 and P-1 peak at P and the others at P+1.
  bool structural_minimum = false;
  /// dualpipev, dualpipe and combined-1f1b only (the families with overlapped pairs):
  /// `fused` (the default) writes each of DeepSeek's `_forward_backward_chunk` calls, or
  /// each of Megatron's combined steps, as an op_kind::overlap_f_b word and its B;
  /// `split` writes it as a plain F and B (the same order, each half its own op:
  /// split_pairs() of the fused schedule).
  pair_model pairs = pair_model::fused;

  friend constexpr bool operator==(const schedule_spec&, const schedule_spec&) = default;
};

/// The group size g that schedule `s` runs with (1 for the families without groups).
constexpr int group_size(const schedule_spec& s) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  if (s.family == schedule_family::interleaved_zb) return m / (m / P > 1 ? m / P : 1);
  if (s.family == schedule_family::combined_1f1b) return s.group != 0 ? s.group : P;
  if (s.family != schedule_family::interleaved_1f1b) return 1;
  if (s.variant == interleaved_variant::torch) return m / (m / P > 1 ? m / P : 1);
  return s.group != 0 ? s.group : P;
}

}  // namespace ctpipe
