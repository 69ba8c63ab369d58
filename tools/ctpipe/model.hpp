// The `ctpipe` tool's --model, --memory-limit, --layers and --layout (docs/tool.md): a
// preset or a JSON file as a transformer_model, a limit with or without a byte unit, a
// layer split or a Megatron-LM layout (layout.hpp) per stage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ctpipe/analysis/model.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/io/report.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe::tool {

/// --model: a preset's name (model_presets) or a JSON file. The file is one object whose
/// keys are transformer_model's fields (`layers`, `hidden`, `heads`, `kv_heads`, `ffn`,
/// `swiglu`, `vocab`, `seq`, `micro_batch`, `tp`, `sequence_parallel`, `recompute`:
/// "none", "selective" or "full", `dp`, `distributed_optimizer`, `tied_embeddings`), and
/// `base`, a preset the other keys change. Raises usage_error(`ctpipe: --model takes a
/// preset (gpt3-175b, ...) or a JSON file, not 'X'`), usage_error for a file that is not
/// such an object (naming the key), and check_model()'s messages.
transformer_model parse_model(const std::string& text);

/// A --memory-limit: `80GiB`, `1.5TB`, `640MiB` (units B, KB, MB, GB, TB = 10^3k, KiB,
/// MiB, GiB, TiB = 2^10k; the number exact) is bytes per rank; a plain number is full
/// activations per rank.
struct memory_limit {
  rational value;
  bool bytes = false;
};

/// Parses a --memory-limit. Raises usage_error(`ctpipe: --memory-limit takes a number of
/// full activations per rank (4, 5/2) or of bytes with a unit (80GiB, 1.5TB), not 'X'`).
memory_limit parse_memory_limit(std::string_view text);

/// The layer split of `model` over `shape`'s S stages: `given` (--layers; S entries,
/// each model copy's summing to the model's layers: the bidirectional placement has two
/// copies of P stages) or the even split of each copy (even_split()). Raises
/// usage_error(`ctpipe: --layers needs one entry per stage (N of them, P*V), ...`) and
/// even_split()'s message.
std::vector<std::int64_t> layer_split(const transformer_model& model, const pipeline_shape& shape,
                                      const std::vector<std::int64_t>& given);

struct cost_options;
struct model_options;

/// What each of a shape's S stages holds under --model: its layers, and where the
/// embedding and the loss (with the LM head) sit: `roles` is empty for role_of()'s
/// (stage 0 and S-1 of each model copy), or S entries from a --layout.
struct stage_split {
  std::vector<std::int64_t> layers;
  std::vector<stage_role> roles;
};

/// The stages of `shape` under `opts`: --layout's (check_layout(), placed by
/// Megatron-LM's rule, stage s on rank s mod P, so the loop placement only), else
/// layer_split() of --layers or the even split. Raises layer_split()'s and
/// check_layout()'s errors and usage_error(`ctpipe: --layout is Megatron-LM's, whose stage
/// s runs on rank s mod P: it needs the loop placement (NAME's placement is v)`).
stage_split split_for(const model_options& opts, const pipeline_shape& shape, std::string_view family = {});

/// Counts `rep`'s memory for --model (split_for()) and sets the --memory-limit `limit`
/// when `limit_text` is not empty (io::set_memory(), io::set_memory_limit()). Nothing
/// when neither is given.
void apply_memory(io::report& rep, const model_options& opts, const std::string& limit_text);

/// The tool's check of --stage-scale and --microbatch-scale lengths for `shape`, naming
/// how many were given and how many the shape needs: usage_error(`ctpipe: --stage-scale
/// needs one factor per stage, 8 of them (P*V); 4 given`).
void check_scale_lengths(const std::vector<rational>& stage, const std::vector<rational>& microbatch,
                         const pipeline_shape& shape);

/// --device-flops: an exact number with an optional decimal prefix K, M, G, T, P
/// (10^3k), in FLOP/s (`312T`, the achieved rate of one device). --link-bandwidth: an exact number
/// with a prefix and `b/s` (bits) or `B/s` (bytes), in bytes per second. Raise
/// usage_error(`ctpipe: --device-flops takes FLOP/s such as 312T, not 'X'`) and
/// usage_error(`ctpipe: --link-bandwidth takes a rate such as 400Gb/s or 50GB/s, not 'X'`).
rational parse_device_flops(std::string_view text);
rational parse_link_bandwidth(std::string_view text);

/// The costs and stage factors one schedule runs with (docs/tool.md, docs/memory.md):
/// --costs (`given_costs`) and --stage-scale (`stage_scale`, empty when the command has
/// none) as given; with --model, the keys --costs leaves out come
/// from model_costs() (t_f = one rank's average forward) and, without --stage-scale, the
/// stage factors from model_stage_factors() over the layer split for `spec`'s S stages;
/// with --device-flops, the op costs in seconds, t_c = --costs' c (then the only key it
/// may give) plus, with --link-bandwidth, a message's bytes over the bandwidth. A
/// --layout's stage with no decoder layer and no loss gets the factor 0 (it does no work
/// ctpipe counts: check_scale()). Raises usage_error for --device-flops or
/// --link-bandwidth without --model, --link-bandwidth without --device-flops, --costs
/// keys other than c in seconds, and split_for()'s errors.
struct run_costs {
  costs cost;
  std::vector<rational> stage_scale;
};
run_costs costs_for(const cost_options& given_costs, const model_options& opts, std::vector<rational> stage_scale,
                    const schedule_spec& spec);

}  // namespace ctpipe::tool
