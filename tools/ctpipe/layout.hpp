// The `ctpipe` tool's --layout: Megatron-LM's pipeline layout strings
// (`--pipeline-model-parallel-layout`, megatron/core/transformer/pipeline_parallel_layer_layout.py),
// read and written (docs/memory.md, "Megatron-LM's layout strings").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ctpipe/analysis/model.hpp"

namespace ctpipe::tool {

/// A layout as written: its text and its stages in order (stage s = virtual stage s / P
/// of rank s mod P, Megatron's order), each the string of its entries, `E` the
/// embedding, `t` a decoder layer, `m` an MTP layer, `L` the loss (with the LM head).
struct megatron_layout {
  std::string text;
  std::vector<std::string> stages;
};

/// The largest layout parse_layout() expands: 2^20 entries and separators (Megatron
/// expands `t*n` in memory as well; ctpipe's shapes have at most 4096 stages).
inline constexpr std::int64_t max_layout_entries = std::int64_t{1} << 20;

/// Parses Megatron-LM's layout grammar (commas anywhere are cosmetic and skipped, as
/// Megatron removes them first; positions count from 1 in `text` as given):
///
///     layout := item*            item := atom ('*' count)?     count := digit+
///     atom   := 'E' | 't' | 'm' | 'L' | '|' | '(' item+ ')'    (a group needs '*' count)
///
/// `x*n` repeats one entry (or `|`) n times, n >= 0; `(...)*n` repeats a group, which may
/// hold `|` but no group. Megatron reads the same strings (its two regular-expression
/// passes) except strings with a stray character those passes happen to absorb, which
/// ctpipe refuses: `(tt)*2*3` (Megatron: six t, its second count repeating the last t
/// only), `t)*0`. Raises usage_error(`ctpipe: --layout 'TEXT': ...`) naming the
/// character and its position: not a layer, `(` with no `)`, `)` closing no `(`, a group
/// inside a group, an empty group, a group without `*n`, `*` with no count, `*`
/// repeating nothing or a repetition, a count over max_layout_entries, or an expansion
/// over it.
megatron_layout parse_layout(std::string_view text);

/// What a layout gives each stage of a pipeline: its decoder layers, its role (the
/// embedding E, the loss L), its MTP layers (counted, not costed: ctpipe's model has no
/// MTP module).
struct layout_split {
  std::vector<std::int64_t> layers;  ///< per stage: decoder layers `t`
  std::vector<stage_role> roles;     ///< per stage: first = holds E, last = holds L
  std::vector<std::int64_t> mtp;     ///< per stage: MTP layers `m`
};

/// Megatron-LM's validation of `layout` (validate_layer_layout) for P ranks, V virtual
/// stages per rank and a model of `decoder_layers` layers, with the counts in the
/// messages (usage_error):
/// - `ctpipe: --layout has 7 stages, P*V = 8`
/// - `ctpipe: --layout 'TEXT' holds 2 embeddings (E), Megatron-LM needs exactly 1` (and
///   the loss L)
/// - `ctpipe: --layout 'TEXT': its first entry is 't' (stage 0); Megatron-LM needs the
///   embedding E first` (and the loss L last)
/// - `ctpipe: --layout holds 28 decoder layers, the model has 30`
/// - an MTP layer m before a decoder layer, on a rank's virtual stage other than its last,
///   or MTP layers on more than one stage (Megatron also matches their count with
///   mtp_num_layers; ctpipe's model has none to match).
layout_split check_layout(const megatron_layout& layout, int P, int V, std::int64_t decoder_layers);

/// The layout string of `layers` decoder layers per stage (S entries) with the
/// embedding on the stage `roles` marks first and the loss on the one it marks last
/// (role_of() of one pipeline when `roles` is empty: stage 0 and S-1): each stage `E`,
/// `t*n` (or `t`), `L`; a run of equal stages before the last stage as `(X|)*k`. Parsed
/// back by parse_layout() to the same stages.
std::string layout_of(std::span<const std::int64_t> layers, std::span<const stage_role> roles = {});

}  // namespace ctpipe::tool
