// ctpipe/schedules/family.hpp: every schedule family's facts, one entry per family.
//
// Adding a family: its generator and its closed forms (a header of its own in
// schedules/), its enumerator in schedule_family (spec.hpp), and one entry in
// family_table below. Everything that asks about a family (its name, its default V and
// placement, its rules, its warmup, how many ops it writes, its generator, its closed
// forms) reads the entry; the tool and the views ask these functions.
#pragma once

#include <array>        // all_families
#include <cstddef>      // std::size_t
#include <string_view>  // family names
#include <type_traits>  // std::is_same_v

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"  // also detail::shape_rules
#include "ctpipe/schedules/closed_form.hpp"
#include "ctpipe/schedules/combined.hpp"
#include "ctpipe/schedules/controllable_memory.hpp"
#include "ctpipe/schedules/dualpipe.hpp"
#include "ctpipe/schedules/gpipe.hpp"
#include "ctpipe/schedules/interleaved.hpp"
#include "ctpipe/schedules/one_f_one_b.hpp"
#include "ctpipe/schedules/spec.hpp"
#include "ctpipe/schedules/zero_bubble.hpp"

namespace ctpipe {

namespace detail {
/// How a family's rules report the first rule broken: raise it (check_spec) or record it
/// (spec_error). One concrete type, so that the rules can sit in the family table, and
/// each rule calls it with its message literal in view: in a constant expression the
/// compiler's diagnostic shows that call, and so the message.
struct rule_report {
  const char** record = nullptr;  ///< where to record the message; nullptr: raise it
  constexpr void operator()(const char* message) const {
    if (record != nullptr) {
      *record = message;
    } else {
      fail(message);
    }
  }
};
}  // namespace detail

/// One schedule family: what the library and the tool know of it.
struct family_entry {
  schedule_family id{};                           ///< its enumerator (the table is in enumerator order)
  const char* name = "";                          ///< as the tool, JSON and the vectors spell it
  bool splits_backward = false;                   ///< runs I and W instead of B (the Zero Bubble family)
  int default_V = 1;                              ///< model chunks per rank when none is asked for
  bool chunks_free = false;                       ///< V is the caller's choice (else fixed at default_V)
  placement natural_placement = placement::loop;  ///< the placement it runs on
  /// Its own rules, after the shape rules and the interleaved-only parameters: reports
  /// the first one broken (its message literal) and returns false.
  bool (*rules)(const schedule_spec&, detail::rule_report) = nullptr;
  /// Warmup forwards of rank r (see warmup_forwards()).
  int (*warmup)(const schedule_spec&, int r) = nullptr;
  /// Writes rank r's ops, ops_of_rank() of them, from `out` on; returns the end.
  op* (*fill_rank)(const schedule_spec&, int r, op* out) = nullptr;
  /// The ops rank r runs, a closed form (see ops_of_rank()).
  std::size_t (*ops_of_rank)(const schedule_spec&, int r) = nullptr;
  /// Its closed forms (analysis/formulas.hpp documents them all): makespan, bubble
  /// fraction, span bubble under costs; peak in-flight activations of rank r under gamma.
  closed_form (*makespan)(const schedule_spec&, const costs&) = nullptr;
  closed_form (*bubble_fraction)(const schedule_spec&, const costs&) = nullptr;
  closed_form (*span_bubble)(const schedule_spec&, const costs&) = nullptr;
  closed_form (*peak_in_flight)(const schedule_spec&, rational gamma, int r) = nullptr;
  /// For a family built for all ranks at once (a greedy over the whole pipeline):
  /// writes every rank's ops, rank 0's first, from `out` on; returns the end. nullptr
  /// for the families built rank by rank (fill_rank then builds them all and keeps r's).
  op* (*fill_all)(const schedule_spec&, op* out) = nullptr;
};

namespace detail {

constexpr int min_int(int a, int b) { return a < b ? a : b; }

// Rules of each family (messages are part of the API: check_spec() lists them). Each
// calls `report` with its message literal and returns false on the first rule broken.
constexpr bool one_chunk_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V == 1) return true;
  report("ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)");
  return false;
}
constexpr bool zb_one_chunk_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V == 1) return true;
  report("ctpipe: zb-h1 and zb-h2 have one model chunk per rank (V must be 1)");
  return false;
}
constexpr bool zbv_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V == 2 && s.shape.layout == placement::v_shape) return true;
  report("ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)");
  return false;
}
constexpr bool dualpipev_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V != 2 || s.shape.layout != placement::v_shape) {
    report("ctpipe: dualpipev runs two chunks per rank on the V-shape placement (V = 2, placement v)");
    return false;
  }
  if (s.shape.m >= 2 * s.shape.P) return true;
  if (!s.structural_minimum) {
    report("ctpipe: dualpipev needs m >= 2P (DeepSeek's DualPipeV.step asserts num_chunks >= num_ranks * 2)");
    return false;
  }
  if (s.shape.m >= 2 * s.shape.P - 1) return true;
  report("ctpipe: dualpipev needs m >= 2P-1 (its structural minimum)");
  return false;
}
constexpr bool v_memory_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V == 2 && s.shape.layout == placement::v_shape) return true;
  report("ctpipe: v-half and v-min run two chunks per rank on the V-shape placement (V = 2, placement v)");
  return false;
}
constexpr bool dualpipe_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.V != 2 || s.shape.layout != placement::bidirectional) {
    report("ctpipe: dualpipe runs two model copies on the bidirectional placement (V = 2, placement bidirectional)");
    return false;
  }
  if (s.shape.P % 2 != 0) {
    report("ctpipe: dualpipe needs P even (DeepSeek's DualPipe.step asserts num_ranks % 2 == 0)");
    return false;
  }
  if (s.shape.m % 2 == 0 && s.shape.m >= 2 * s.shape.P) return true;
  if (!s.structural_minimum) {
    report(
        "ctpipe: dualpipe needs m even and m >= 2P (DeepSeek's DualPipe.step asserts num_chunks % 2 == 0 and "
        "num_chunks >= num_ranks * 2)");
    return false;
  }
  if (s.shape.m % 2 == 0 && s.shape.m >= 2 * s.shape.P - 2) return true;
  report("ctpipe: dualpipe needs m even and m >= 2P-2 (its structural minimum)");
  return false;
}
constexpr bool loop_rule(const schedule_spec& s, rule_report report) {
  if (s.shape.layout == placement::loop) return true;
  report("ctpipe: interleaved-1f1b, looped-bfs and interleaved-zb run on the loop placement");
  return false;
}
constexpr bool interleaved_zb_rule(const schedule_spec& s, rule_report report) {
  if (!loop_rule(s, report)) return false;
  const int P = s.shape.P, m = s.shape.m;
  if (m % (m / P > 1 ? m / P : 1) == 0) return true;
  report("ctpipe: interleaved-zb (torch) needs m % max(1, m / P) == 0");
  return false;
}
/// interleaved-1f1b's group rules per variant (V > 1, and the torch variant at V = 1 too:
/// PyTorch's ScheduleInterleaved1F1B keeps its rounds and its warmup with one stage per
/// rank; megatron and megatron-legacy at V = 1 are plain 1F1B and the group plays no part).
constexpr bool interleaved_group_rule(const schedule_spec& s, rule_report report) {
  const int P = s.shape.P, m = s.shape.m, g = group_size(s);
  switch (s.variant) {
    case interleaved_variant::megatron:
      if (m < P) {
        report("ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P");
        return false;
      }
      if (g < P || g > m) {
        report("ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m]");
        return false;
      }
      if (m % g != 0 && m % g < P) {
        report("ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or m % group >= P");
        return false;
      }
      return true;
    case interleaved_variant::megatron_legacy:
      if (m % P != 0) {
        report("ctpipe: interleaved-1f1b (megatron-legacy) needs m % P == 0");
        return false;
      }
      if (s.group != 0 && s.group != P) {
        report("ctpipe: interleaved-1f1b (megatron-legacy) groups P micro-batches (group must be 0 or P)");
        return false;
      }
      return true;
    case interleaved_variant::torch:
      if (m % (m / P > 1 ? m / P : 1) != 0) {
        report("ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0");
        return false;
      }
      if (s.group != 0) {
        report("ctpipe: interleaved-1f1b (torch) sets the group to m / max(1, m / P) (group must be 0)");
        return false;
      }
      return true;
  }
  return true;
}
constexpr bool interleaved_rule(const schedule_spec& s, rule_report report) {
  if (!loop_rule(s, report)) return false;
  if (s.warmup_factor != 1 && s.warmup_factor != 2) {
    report("ctpipe: the warmup factor must be 1 or 2");
    return false;
  }
  if (s.group < 0) {
    report("ctpipe: the group size must be >= 0 (0 = the variant's default)");
    return false;
  }
  return (s.shape.V == 1 && s.variant != interleaved_variant::torch) || interleaved_group_rule(s, report);
}

/// combined-1f1b's rules: Megatron-LM's for `overlap_moe_expert_parallel_comm`. With P > 1
/// Megatron runs `forward_backward_pipelining_with_interleaving`, which needs virtual
/// pipelining (`TransformerConfig` asserts it is set; Megatron's arguments turn a virtual
/// size of 1 into none) and its group rules; with P = 1 it runs
/// `forward_backward_no_pipelining`, which takes one model chunk.
constexpr bool combined_rule(const schedule_spec& s, rule_report report) {
  const int P = s.shape.P, m = s.shape.m, V = s.shape.V, g = group_size(s);
  if (s.shape.layout != placement::loop) {
    report("ctpipe: combined-1f1b runs on the loop placement");
    return false;
  }
  if (s.group < 0) {
    report("ctpipe: the group size must be >= 0 (0 = the variant's default)");
    return false;
  }
  if (P == 1) {
    if (V == 1) return true;
    report("ctpipe: combined-1f1b with P = 1 needs V = 1 (Megatron's no-pipelining schedule asserts len(model) == 1)");
    return false;
  }
  if (V < 2) {
    report(
        "ctpipe: combined-1f1b with P > 1 needs V >= 2 (Megatron's TransformerConfig asserts "
        "virtual_pipeline_model_parallel_size is not None when pipeline_model_parallel_size > 1)");
    return false;
  }
  if (g < P || g > m) {
    report(
        "ctpipe: combined-1f1b needs the group size in [P, m] (Megatron raises unless "
        "PP <= microbatch_group_size_per_vp_stage <= M)");
    return false;
  }
  if (m % g != 0 && m % g < P) {
    report(
        "ctpipe: combined-1f1b needs m % group == 0 or m % group >= P (Megatron raises when "
        "0 < M % microbatch_group_size_per_vp_stage < PP)");
    return false;
  }
  return true;
}

// Warmup forwards of each family (see warmup_forwards()).
constexpr int all_forwards_first(const schedule_spec& s, int) { return s.shape.m * s.shape.V; }
constexpr int one_f_one_b_warmup(const schedule_spec& s, int r) { return min_int(s.shape.P - 1 - r, s.shape.m); }
constexpr int zb_h2_warmup(const schedule_spec& s, int r) { return min_int(2 * (s.shape.P - 1 - r), s.shape.m); }
constexpr int zbv_warmup(const schedule_spec& s, int r) { return min_int(2 * (s.shape.P - r) - 1, s.shape.m); }
constexpr int interleaved_warmup(const schedule_spec& s, int r) {
  const int P = s.shape.P, m = s.shape.m, V = s.shape.V;
  if (V == 1 && s.variant != interleaved_variant::torch) return one_f_one_b_warmup(s, r);
  if (s.variant == interleaved_variant::megatron_legacy && m == P) return m * V;
  return min_int((V - 1) * group_size(s) + s.warmup_factor * (P - 1 - r), m * V);
}
constexpr int dualpipev_warmup(const schedule_spec& s, int) { return 2 * s.shape.P; }
constexpr int dualpipe_warmup(const schedule_spec& s, int) { return s.shape.P; }
constexpr int interleaved_zb_warmup(const schedule_spec& s, int r) {
  return min_int((s.shape.V - 1) * group_size(s) + (s.shape.P - 1 - r), s.shape.m * s.shape.V);
}

// Generators, each writing through a cursor.
constexpr op* fill_gpipe(const schedule_spec& s, int r, op* out) {
  schedules::gpipe(s.shape, r, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_one_f_one_b(const schedule_spec& s, int r, op* out) {
  schedules::one_f_one_b(s.shape, r, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_interleaved(const schedule_spec& s, int r, op* out) {
  schedules::interleaved_1f1b(s.shape, r, group_size(s), interleaved_warmup(s, r), [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_looped_bfs(const schedule_spec& s, int r, op* out) {
  schedules::looped_bfs(s.shape, r, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_zb_h1(const schedule_spec& s, int r, op* out) {
  schedules::zb_handcrafted(s.shape, r, 1, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_zb_h2(const schedule_spec& s, int r, op* out) {
  schedules::zb_handcrafted(s.shape, r, 2, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_zbv(const schedule_spec& s, int r, op* out) {
  schedules::zbv(s.shape, r, [&out](op o) { *out++ = o; });
  return out;
}
constexpr op* fill_interleaved_zb(const schedule_spec& s, int r, op* out) {
  schedules::interleaved_zero_bubble(s.shape, r, group_size(s), interleaved_zb_warmup(s, r),
                                     [&out](op o) { *out++ = o; });
  return out;
}

constexpr op* fill_combined(const schedule_spec& s, int r, op* out) {
  schedules::combined_1f1b(
      s.shape, r, group_size(s), schedules::combined_warmup(s, r), [&out](op o) { *out++ = o; },
      s.pairs == pair_model::fused);
  return out;
}

constexpr op* fill_dualpipev(const schedule_spec& s, int r, op* out) {
  schedules::dualpipev(
      s.shape, r, [&out](op o) { *out++ = o; }, s.pairs == pair_model::fused);
  return out;
}
constexpr op* fill_dualpipe(const schedule_spec& s, int r, op* out) {
  schedules::dualpipe(
      s.shape, r, [&out](op o) { *out++ = o; }, s.pairs == pair_model::fused);
  return out;
}

/// Every rank's ops of V-Half or V-Min, rank 0's first (the greedy builds them together).
constexpr op* fill_v_all(const schedule_spec& s, op* out) {
  schedules::v_schedule(s.shape.P, s.shape.m, s.family == schedule_family::v_half, [&out](int, op o) { *out++ = o; });
  return out;
}
/// Rank r's ops of V-Half or V-Min: the greedy builds every rank; r's are kept.
constexpr op* fill_v_rank(const schedule_spec& s, int r, op* out) {
  schedules::v_schedule(s.shape.P, s.shape.m, s.family == schedule_family::v_half, [&out, r](int rank, op o) {
    if (rank == r) *out++ = o;
  });
  return out;
}
/// Warmup forwards of V-Half and V-Min: read off the generated order (the forwards
/// before rank r's first I), as the greedy has no rule for them.
constexpr int v_warmup(const schedule_spec& s, int r) {
  int forwards = 0;
  bool backward_seen = false;
  schedules::v_schedule(s.shape.P, s.shape.m, s.family == schedule_family::v_half, [&](int rank, op o) {
    if (rank != r || backward_seen) return;
    if (o.kind() == op_kind::F)
      ++forwards;
    else
      backward_seen = true;
  });
  return forwards;
}

/// Ops of rank r for the families whose ranks all run the same count: each of its `m*V`
/// (micro-batch, chunk) pairs has an F and a B (fb_ops_of_rank), or an F, an I and a W
/// (fiw_ops_of_rank).
constexpr std::size_t fb_ops_of_rank(const schedule_spec& s, int) {
  return 2 * static_cast<std::size_t>(s.shape.m) * static_cast<std::size_t>(s.shape.V);
}
constexpr std::size_t fiw_ops_of_rank(const schedule_spec& s, int) {
  return 3 * static_cast<std::size_t>(s.shape.m) * static_cast<std::size_t>(s.shape.V);
}

}  // namespace detail

/// Every family, in schedule_family's order (docs/spec.md §4 gives the sources): name,
/// splits backward, default V, V free, placement, rules, warmup, generator, closed forms.
inline constexpr family_entry family_table[] = {
    {schedule_family::gpipe, "gpipe", false, 1, false, placement::loop, detail::one_chunk_rule,
     detail::all_forwards_first, detail::fill_gpipe, detail::fb_ops_of_rank, schedules::gpipe_makespan,
     schedules::gpipe_bubble_fraction, schedules::gpipe_span_bubble, schedules::gpipe_peak_in_flight},
    {schedule_family::one_f_one_b, "1f1b", false, 1, false, placement::loop, detail::one_chunk_rule,
     detail::one_f_one_b_warmup, detail::fill_one_f_one_b, detail::fb_ops_of_rank, schedules::one_f_one_b_makespan,
     schedules::one_f_one_b_bubble_fraction, schedules::one_f_one_b_span_bubble, schedules::one_f_one_b_peak_in_flight},
    {schedule_family::interleaved_1f1b, "interleaved-1f1b", false, 2, true, placement::loop, detail::interleaved_rule,
     detail::interleaved_warmup, detail::fill_interleaved, detail::fb_ops_of_rank, schedules::chunked_makespan,
     schedules::chunked_bubble_fraction, schedules::chunked_span_bubble, schedules::interleaved_peak_in_flight},
    {schedule_family::looped_bfs, "looped-bfs", false, 2, true, placement::loop, detail::loop_rule,
     detail::all_forwards_first, detail::fill_looped_bfs, detail::fb_ops_of_rank, schedules::chunked_makespan,
     schedules::chunked_bubble_fraction, schedules::chunked_span_bubble, schedules::looped_peak_in_flight},
    {schedule_family::zb_h1, "zb-h1", true, 1, false, placement::loop, detail::zb_one_chunk_rule,
     detail::one_f_one_b_warmup, detail::fill_zb_h1, detail::fiw_ops_of_rank, schedules::zb_h1_makespan,
     schedules::zb_h1_bubble_fraction, schedules::zb_h1_span_bubble, schedules::zb_h1_peak_in_flight},
    {schedule_family::zb_h2, "zb-h2", true, 1, false, placement::loop, detail::zb_one_chunk_rule, detail::zb_h2_warmup,
     detail::fill_zb_h2, detail::fiw_ops_of_rank, schedules::zb_h2_makespan, schedules::zb_h2_bubble_fraction,
     schedules::zb_h2_span_bubble, schedules::zb_h2_peak_in_flight},
    {schedule_family::zbv, "zbv", true, 2, false, placement::v_shape, detail::zbv_rule, detail::zbv_warmup,
     detail::fill_zbv, detail::fiw_ops_of_rank, schedules::zbv_makespan, schedules::zbv_bubble_fraction,
     schedules::zbv_span_bubble, schedules::zbv_peak_in_flight},
    {schedule_family::interleaved_zb, "interleaved-zb", true, 2, true, placement::loop, detail::interleaved_zb_rule,
     detail::interleaved_zb_warmup, detail::fill_interleaved_zb, detail::fiw_ops_of_rank,
     schedules::interleaved_zb_timing, schedules::interleaved_zb_timing, schedules::interleaved_zb_span_bubble,
     schedules::interleaved_zb_peak_in_flight},
    {schedule_family::dualpipev, "dualpipev", true, 2, false, placement::v_shape, detail::dualpipev_rule,
     detail::dualpipev_warmup, detail::fill_dualpipev, schedules::dualpipev_ops_of_rank, schedules::dual_makespan,
     schedules::dual_bubble_fraction, schedules::dual_span_bubble, schedules::dualpipev_peak_in_flight},
    {schedule_family::dualpipe, "dualpipe", true, 2, false, placement::bidirectional, detail::dualpipe_rule,
     detail::dualpipe_warmup, detail::fill_dualpipe, schedules::dualpipe_ops_of_rank, schedules::dual_makespan,
     schedules::dual_bubble_fraction, schedules::dual_span_bubble, schedules::dualpipe_peak_in_flight},
    {schedule_family::v_half, "v-half", true, 2, false, placement::v_shape, detail::v_memory_rule, detail::v_warmup,
     detail::fill_v_rank, detail::fiw_ops_of_rank, schedules::v_memory_makespan, schedules::v_memory_bubble_fraction,
     schedules::v_memory_span_bubble, schedules::v_memory_peak_in_flight, detail::fill_v_all},
    {schedule_family::v_min, "v-min", true, 2, false, placement::v_shape, detail::v_memory_rule, detail::v_warmup,
     detail::fill_v_rank, detail::fiw_ops_of_rank, schedules::v_memory_makespan, schedules::v_memory_bubble_fraction,
     schedules::v_memory_span_bubble, schedules::v_memory_peak_in_flight, detail::fill_v_all},
    {schedule_family::combined_1f1b, "combined-1f1b", false, 2, true, placement::loop, detail::combined_rule,
     schedules::combined_warmup, detail::fill_combined, detail::fb_ops_of_rank, schedules::combined_makespan,
     schedules::combined_bubble_fraction, schedules::combined_span_bubble, schedules::combined_peak_in_flight},
};

namespace detail {
constexpr bool table_in_order() {
  std::size_t k = 0;
  for (const family_entry& e : family_table) {
    if (static_cast<std::size_t>(e.id) != k++) return false;
  }
  return true;
}
static_assert(table_in_order(), "family_table must list the families in schedule_family's order");
}  // namespace detail

/// Every family, in the order the tool lists them (the table's).
inline constexpr std::array<schedule_family, sizeof(family_table) / sizeof(family_table[0])> all_families = [] {
  std::array<schedule_family, sizeof(family_table) / sizeof(family_table[0])> ids{};
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = family_table[k].id;
  return ids;
}();

/// Whether `f` is a family of the table (a value cast from another number is not).
constexpr bool known_family(schedule_family f) {
  return static_cast<std::size_t>(f) < sizeof(family_table) / sizeof(family_table[0]);
}

/// The entry of family `f`. Needs known_family(f).
constexpr const family_entry& family_of(schedule_family f) { return family_table[static_cast<std::size_t>(f)]; }

/// The family's name as the tool, JSON and the vectors spell it: `gpipe`, `1f1b`,
/// `interleaved-1f1b`, `looped-bfs`, `zb-h1`, `zb-h2`, `zbv`, `interleaved-zb`, `dualpipev`,
/// `dualpipe`, `v-half`, `v-min`, `combined-1f1b`; `?` for a value that is no family.
constexpr const char* family_name(schedule_family f) { return known_family(f) ? family_of(f).name : "?"; }

/// Whether the family splits its backwards into I and W (the Zero Bubble family); false
/// for a value that is no family.
constexpr bool splits_backward(schedule_family f) { return known_family(f) && family_of(f).splits_backward; }

/// The placement a family runs on: the V-shape for ZB-V, DualPipeV, V-Half and V-Min, the
/// bidirectional placement for DualPipe, the loop for every other (and for a value that
/// is no family).
constexpr placement natural_placement(schedule_family f) {
  return known_family(f) ? family_of(f).natural_placement : placement::loop;
}

/// The family called `name`, or false if there is none (then `out` is unchanged).
constexpr bool family_from_name(std::string_view name, schedule_family& out) {
  for (const family_entry& e : family_table) {
    if (name == e.name) {
      out = e.id;
      return true;
    }
  }
  return false;
}

/// Warmup forwards of rank r in schedule s (the forwards of its warmup phase; the steady
/// phase then starts with one more forward before the first backward):
/// 1F1B and ZB-H1 `min(P-1-r, m)`; ZB-H2 `min(2(P-1-r), m)`; interleaved
/// `min(m*V, (V-1)g + k(P-1-r))` with the warmup factor k (Megatron's
/// `get_pp_rank_microbatches`), `m*V` for megatron-legacy with m == P, and 1F1B's count
/// when V = 1 (as both frameworks then run plain 1F1B); interleaved ZB the same with
/// k = 1 (PyTorch); ZB-V its chunk-0 warmup `min(m, 2(P-r)-1)`; DualPipeV `2P` (both
/// chunks, phases 1 and 2 of DualPipeV.step), DualPipe `P`; V-Half and V-Min the
/// forwards before rank r's first I in the generated order (the greedy has no rule for
/// them; this generates the schedule); combined 1F1B interleaved's count at k = 2 plus
/// one, `min(m*V, (V-1)g + 2(P-1-r) + 1)` (Megatron's `get_pp_rank_microbatches` with
/// `overlap_moe_expert_parallel_comm`); GPipe and looped BFS `m*V` (every forward
/// first). Needs a valid spec.
constexpr int warmup_forwards(const schedule_spec& s, int r) { return family_of(s.family).warmup(s, r); }

namespace detail {
/// The rules of a schedule request (after the shape rules): on the first broken rule
/// calls `on_error("ctpipe: ...")` with the message literal and returns false.
template <class OnError>
constexpr bool spec_rules(const schedule_spec& s, OnError&& on_error) {
  if (!known_family(s.family) || static_cast<int>(s.variant) > static_cast<int>(interleaved_variant::torch)) {
    on_error("ctpipe: unknown schedule family or interleaved variant");
    return false;
  }
  if (!shape_rules(s.shape, on_error)) return false;
  const bool combined = s.family == schedule_family::combined_1f1b;
  if (s.family != schedule_family::interleaved_1f1b && !combined &&
      (s.group != 0 || s.variant != interleaved_variant::megatron || s.warmup_factor != 2)) {
    on_error("ctpipe: only interleaved-1f1b takes a group, variant or warmup factor");
    return false;
  }
  if (combined && (s.variant != interleaved_variant::megatron || s.warmup_factor != 2)) {
    on_error("ctpipe: combined-1f1b takes a group but no variant or warmup factor (it is Megatron's, factor 2)");
    return false;
  }
  const bool dual = s.family == schedule_family::dualpipev || s.family == schedule_family::dualpipe;
  if (s.structural_minimum && !dual) {
    on_error("ctpipe: only dualpipev and dualpipe take the structural minimum");
    return false;
  }
  if (s.pairs != pair_model::fused && (s.pairs != pair_model::split || !(dual || combined))) {
    on_error(
        "ctpipe: only dualpipev, dualpipe and combined-1f1b have overlapped pairs to split (pair model fused or "
        "split)");
    return false;
  }
  // Raising, the family's rule raises itself (its message literal then shows in the
  // compiler's diagnostic); else it records the message for on_error.
  const char* broken = nullptr;
  const bool raising = std::is_same_v<std::remove_cvref_t<OnError>, raise_error>;
  if (family_of(s.family).rules(s, rule_report{raising ? nullptr : &broken})) return true;
  on_error(broken);
  return false;
}
}  // namespace detail

/// The gate of every generator. Raises `ctpipe: unknown schedule family or interleaved
/// variant`, the
/// check_shape() messages, and:
/// - `ctpipe: only interleaved-1f1b takes a group, variant or warmup factor`
/// - `ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)`
/// - `ctpipe: zb-h1 and zb-h2 have one model chunk per rank (V must be 1)`
/// - `ctpipe: zbv runs two chunks per rank on the V-shape placement (V = 2, placement v)`
/// - `ctpipe: dualpipev runs two chunks per rank on the V-shape placement (V = 2, placement v)`
/// - `ctpipe: dualpipev needs m >= 2P (DeepSeek's DualPipeV.step asserts num_chunks >= num_ranks * 2)`
/// - `ctpipe: dualpipev needs m >= 2P-1 (its structural minimum)`
/// - `ctpipe: dualpipe runs two model copies on the bidirectional placement (V = 2, placement bidirectional)`
/// - `ctpipe: dualpipe needs P even (DeepSeek's DualPipe.step asserts num_ranks % 2 == 0)`
/// - `ctpipe: dualpipe needs m even and m >= 2P (DeepSeek's DualPipe.step asserts num_chunks % 2 == 0 and num_chunks >=
/// num_ranks * 2)`
/// - `ctpipe: dualpipe needs m even and m >= 2P-2 (its structural minimum)`
/// - `ctpipe: v-half and v-min run two chunks per rank on the V-shape placement (V = 2, placement v)`
/// - `ctpipe: only dualpipev and dualpipe take the structural minimum`
/// - `ctpipe: only dualpipev, dualpipe and combined-1f1b have overlapped pairs to split (pair model fused or split)`
/// - `ctpipe: combined-1f1b takes a group but no variant or warmup factor (it is Megatron's, factor 2)`
/// - `ctpipe: combined-1f1b runs on the loop placement`
/// - `ctpipe: combined-1f1b with P = 1 needs V = 1 (Megatron's no-pipelining schedule asserts len(model) == 1)`
/// - `ctpipe: combined-1f1b with P > 1 needs V >= 2 (Megatron's TransformerConfig asserts
///   virtual_pipeline_model_parallel_size is not None when pipeline_model_parallel_size > 1)`
/// - `ctpipe: combined-1f1b needs the group size in [P, m] (Megatron raises unless PP <=
///   microbatch_group_size_per_vp_stage <= M)`
/// - `ctpipe: combined-1f1b needs m % group == 0 or m % group >= P (Megatron raises when 0 < M %
///   microbatch_group_size_per_vp_stage < PP)`
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
/// The group rules apply for V > 1, and at V = 1 for the torch variant (PyTorch's rounds);
/// with V = 1 megatron and megatron-legacy are plain 1F1B and the group is ignored.
constexpr void check_spec(const schedule_spec& s) { detail::spec_rules(s, detail::raise); }

/// The message check_spec() would raise for `s`, or nullptr when `s` is valid: lets a
/// caller (a grid proof, the tool) test a configuration without an error.
constexpr const char* spec_error(const schedule_spec& s) {
  const char* error = nullptr;
  detail::spec_rules(s, [&error](const char* message) { error = message; });
  return error;
}

/// Ops rank r (0 <= r < P) runs in schedule s, a closed form from the family's entry:
/// `2mV` (an F and a B per (micro-batch, chunk) pair) or `3mV` (an F, an I and a W) for
/// every family but dualpipev, whose rank r runs `4m + 2P - 1 - r` (its Ws, one per
/// backward split into I and W, differ by rank), and dualpipe (`2m + P - 1 - h`, h =
/// min(r, P-1-r)). generate() proves each generator writes exactly this many (for V-Half
/// and V-Min, built for all ranks at once: that rank r's are its). Needs a valid spec.
constexpr std::size_t ops_of_rank(const schedule_spec& s, int r) { return family_of(s.family).ops_of_rank(s, r); }

/// The most ops any rank runs: ops_of_rank() of rank 0 (every family runs as many or
/// fewer on the later ranks). Needs a valid spec.
constexpr std::size_t ops_per_rank(const schedule_spec& s) { return ops_of_rank(s, 0); }

/// Ops of the whole schedule: ops_of_rank() summed over the P ranks. O(P). Needs a valid
/// spec.
constexpr std::size_t total_ops(const schedule_spec& s) {
  std::size_t n = 0;
  for (int r = 0; r < s.shape.P; ++r) n += ops_of_rank(s, r);
  return n;
}

}  // namespace ctpipe
