// The `ctpipe` tool's --model, --memory-limit and --layers (docs/tool.md): a preset or a
// JSON file as a transformer_model, a limit with or without a byte unit, a layer split.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ctpipe/analysis/model.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/io/report.hpp"

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

/// The layer split of `model` over `S` stages: `given` (--layers; S entries summing to
/// the model's layers) or the even split (even_split()). Raises usage_error(`ctpipe:
/// --layers needs one entry per stage (P*V of them), each >= 1, summing to the model's N
/// layers`) and even_split()'s message.
std::vector<std::int64_t> layer_split(const transformer_model& model, int S, const std::vector<std::int64_t>& given);

/// Counts `rep`'s memory for --model `name` (`model`, split per layer_split()) and sets
/// the --memory-limit `limit` when `limit_text` is not empty (io::set_memory(),
/// io::set_memory_limit()). Nothing when neither is given.
void apply_memory(io::report& rep, const std::string& name, const transformer_model* model,
                  const std::vector<std::int64_t>& layers, const std::string& limit_text);

}  // namespace ctpipe::tool
