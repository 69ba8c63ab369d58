// ctpipe/schedules/spec.hpp: which schedule, on which shape.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string_view>  // family names

#include "ctpipe/core/error.hpp"
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
enum class schedule_family : std::uint8_t {
  gpipe,
  one_f_one_b,
  interleaved_1f1b,
  looped_bfs,
  zb_h1,
  zb_h2,
  zbv,
  interleaved_zb,
};

/// Every family, in the order the tool lists them.
inline constexpr schedule_family all_families[] = {
    schedule_family::gpipe, schedule_family::one_f_one_b, schedule_family::interleaved_1f1b,
    schedule_family::looped_bfs, schedule_family::zb_h1, schedule_family::zb_h2,
    schedule_family::zbv, schedule_family::interleaved_zb};

/// The family's name as the tool, JSON and the vectors spell it: `gpipe`, `1f1b`,
/// `interleaved-1f1b`, `looped-bfs`, `zb-h1`, `zb-h2`, `zbv`, `interleaved-zb`.
constexpr const char* family_name(schedule_family f) {
  switch (f) {
    case schedule_family::gpipe: return "gpipe";
    case schedule_family::one_f_one_b: return "1f1b";
    case schedule_family::interleaved_1f1b: return "interleaved-1f1b";
    case schedule_family::looped_bfs: return "looped-bfs";
    case schedule_family::zb_h1: return "zb-h1";
    case schedule_family::zb_h2: return "zb-h2";
    case schedule_family::zbv: return "zbv";
    case schedule_family::interleaved_zb: return "interleaved-zb";
  }
  return "?";
}

/// Whether the family splits its backwards into I and W (the Zero Bubble family).
constexpr bool splits_backward(schedule_family f) {
  return f == schedule_family::zb_h1 || f == schedule_family::zb_h2 || f == schedule_family::zbv ||
         f == schedule_family::interleaved_zb;
}

/// The placement a family runs on: the V-shape for ZB-V, the loop for every other.
constexpr placement natural_placement(schedule_family f) {
  return f == schedule_family::zbv ? placement::v_shape : placement::loop;
}

/// The family called `name`, or false if there is none (then `out` is unchanged).
constexpr bool family_from_name(std::string_view name, schedule_family& out) {
  for (schedule_family f : all_families) {
    if (name == family_name(f)) {
      out = f;
      return true;
    }
  }
  return false;
}

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
  for (interleaved_variant v : {interleaved_variant::megatron, interleaved_variant::megatron_legacy,
                                interleaved_variant::torch}) {
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
  /// interleaved-1f1b only: micro-batches per group `g`; 0 = the variant's default
  /// (P for megatron and megatron-legacy, m / max(1, m / P) for torch).
  int group = 0;
  /// interleaved-1f1b only: warmup forwards grow by this many per rank away from the
  /// last rank (Megatron's and PyTorch's 2; 1 gives fewer in-flight chunks and hides no
  /// latency).
  int warmup_factor = 2;

  friend constexpr bool operator==(const schedule_spec&, const schedule_spec&) = default;
};

/// The group size g that schedule `s` runs with (1 for the families without groups).
constexpr int group_size(const schedule_spec& s) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  if (s.family == schedule_family::interleaved_zb) return m / (m / P > 1 ? m / P : 1);
  if (s.family != schedule_family::interleaved_1f1b) return 1;
  if (s.variant == interleaved_variant::torch) return m / (m / P > 1 ? m / P : 1);
  return s.group != 0 ? s.group : P;
}

/// Warmup forwards of rank r in schedule s (the forwards of its warmup phase; the steady
/// phase then starts with one more forward before the first backward):
/// 1F1B and ZB-H1 `min(P-1-r, m)`; ZB-H2 `min(2(P-1-r), m)`; interleaved
/// `min(m*V, (V-1)g + k(P-1-r))` with the warmup factor k (Megatron's
/// `get_pp_rank_microbatches`), `m*V` for megatron-legacy with m == P, and 1F1B's count
/// when V = 1 (as both frameworks then run plain 1F1B); interleaved ZB the same with
/// k = 1 (PyTorch); ZB-V its chunk-0 warmup `min(m, 2(P-r)-1)`; GPipe and looped BFS
/// `m*V` (every forward first).
constexpr int warmup_forwards(const schedule_spec& s, int r) {
  const int P = s.shape.P;
  const int m = s.shape.m;
  const int V = s.shape.V;
  const int total = m * V;
  int warmup = total;
  if (s.family == schedule_family::one_f_one_b || s.family == schedule_family::zb_h1 ||
      (s.family == schedule_family::interleaved_1f1b && V == 1)) {
    warmup = P - 1 - r;
  } else if (s.family == schedule_family::zb_h2) {
    warmup = 2 * (P - 1 - r);
  } else if (s.family == schedule_family::zbv) {
    return 2 * (P - r) - 1 < m ? 2 * (P - r) - 1 : m;
  } else if (s.family == schedule_family::interleaved_zb) {
    warmup = (V - 1) * group_size(s) + (P - 1 - r);
  } else if (s.family == schedule_family::interleaved_1f1b &&
             !(s.variant == interleaved_variant::megatron_legacy && m == P)) {
    warmup = (V - 1) * group_size(s) + s.warmup_factor * (P - 1 - r);
  }
  return warmup < total ? warmup : total;
}

namespace detail {
/// The rules of a schedule request (after the shape rules): on the first broken rule
/// calls `on_error("ctpipe: ...")` with the message literal and returns false.
template <class OnError>
constexpr bool spec_rules(const schedule_spec& s, OnError&& on_error) {
  if (static_cast<int>(s.family) > static_cast<int>(schedule_family::interleaved_zb) ||
      static_cast<int>(s.variant) > static_cast<int>(interleaved_variant::torch)) {
    on_error("ctpipe: unknown schedule family or interleaved variant");
    return false;
  }
  if (!shape_rules(s.shape, on_error)) return false;
  const int P = s.shape.P;
  const int m = s.shape.m;
  const bool interleaved = s.family == schedule_family::interleaved_1f1b;
  if (!interleaved && (s.group != 0 || s.variant != interleaved_variant::megatron || s.warmup_factor != 2)) {
    on_error("ctpipe: only interleaved-1f1b takes a group, variant or warmup factor");
    return false;
  }
  if (s.family == schedule_family::gpipe || s.family == schedule_family::one_f_one_b) {
    if (s.shape.V != 1) { on_error("ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)"); return false; }
    return true;
  }
  if (s.family == schedule_family::zb_h1 || s.family == schedule_family::zb_h2) {
    if (s.shape.V != 1) { on_error("ctpipe: zb-h1 and zb-h2 have one model chunk per rank (V must be 1)"); return false; }
    return true;
  }
  if (s.family == schedule_family::zbv) {
    if (s.shape.V != 2 || s.shape.layout != placement::v_shape) {
      on_error("ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)");
      return false;
    }
    return true;
  }
  if (s.shape.layout != placement::loop) {
    on_error("ctpipe: interleaved-1f1b, looped-bfs and interleaved-zb run on the loop placement");
    return false;
  }
  if (s.family == schedule_family::interleaved_zb) {
    if (m % (m / P > 1 ? m / P : 1) != 0) { on_error("ctpipe: interleaved-zb (torch) needs m % max(1, m / P) == 0"); return false; }
    return true;
  }
  if (!interleaved) return true;
  if (s.warmup_factor != 1 && s.warmup_factor != 2) { on_error("ctpipe: the warmup factor must be 1 or 2"); return false; }
  if (s.group < 0) { on_error("ctpipe: the group size must be >= 0 (0 = the variant's default)"); return false; }
  if (s.shape.V == 1) return true;  // plain 1F1B: the group plays no part
  const int g = group_size(s);
  switch (s.variant) {
    case interleaved_variant::megatron:
      if (m < P) { on_error("ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P"); return false; }
      if (g < P || g > m) { on_error("ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m]"); return false; }
      if (m % g != 0 && m % g < P) {
        on_error("ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or m % group >= P");
        return false;
      }
      return true;
    case interleaved_variant::megatron_legacy:
      if (m % P != 0) { on_error("ctpipe: interleaved-1f1b (megatron-legacy) needs m % P == 0"); return false; }
      if (s.group != 0 && s.group != P) {
        on_error("ctpipe: interleaved-1f1b (megatron-legacy) groups P micro-batches (group must be 0 or P)");
        return false;
      }
      return true;
    case interleaved_variant::torch:
      if (m % (m / P > 1 ? m / P : 1) != 0) { on_error("ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0"); return false; }
      if (s.group != 0) {
        on_error("ctpipe: interleaved-1f1b (torch) sets the group to m / max(1, m / P) (group must be 0)");
        return false;
      }
      return true;
  }
  return true;
}
}  // namespace detail

/// The gate of every generator. Raises `ctpipe: unknown schedule family or interleaved
/// variant`, the
/// check_shape() messages, and:
/// - `ctpipe: only interleaved-1f1b takes a group, variant or warmup factor`
/// - `ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)`
/// - `ctpipe: zb-h1 and zb-h2 have one model chunk per rank (V must be 1)`
/// - `ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)`
/// - `ctpipe: interleaved-1f1b, looped-bfs and interleaved-zb run on the loop placement`
/// - `ctpipe: interleaved-zb (torch) needs m % max(1, m / P) == 0`
/// - `ctpipe: the warmup factor must be 1 or 2`
/// - `ctpipe: the group size must be >= 0 (0 = the variant's default)`
/// - `ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P`
/// - `ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m]`
/// - `ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or m % group >= P`
/// - `ctpipe: interleaved-1f1b (megatron-legacy) needs m % P == 0`
/// - `ctpipe: interleaved-1f1b (megatron-legacy) groups P micro-batches (group must be 0 or P)`
/// - `ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0`
/// - `ctpipe: interleaved-1f1b (torch) sets the group to m / max(1, m / P) (group must be 0)`
/// The group rules apply for V > 1 only: with V = 1 every variant is plain 1F1B and the
/// group is ignored.
constexpr void check_spec(const schedule_spec& s) { detail::spec_rules(s, detail::raise); }

/// The message check_spec() would raise for `s`, or nullptr when `s` is valid: lets a
/// caller (a grid proof, the tool) test a configuration without an error.
constexpr const char* spec_error(const schedule_spec& s) {
  const char* error = nullptr;
  detail::spec_rules(s, [&error](const char* message) { error = message; });
  return error;
}

/// Ops each rank runs: every one of its `m*V` (micro-batch, chunk) pairs has an F and a
/// B, or an F, an I and a W for the split-backward families. A closed form: generate()
/// proves each generator writes exactly this many.
constexpr std::size_t ops_per_rank(const schedule_spec& s) {
  return static_cast<std::size_t>(s.shape.m) * static_cast<std::size_t>(s.shape.V) *
         (splits_backward(s.family) ? 3 : 2);
}

}  // namespace ctpipe
