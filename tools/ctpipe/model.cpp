// The `ctpipe` tool's --model, --memory-limit and --layers (see model.hpp).
#include "model.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <utility>

#include "options.hpp"

namespace ctpipe::tool {

namespace {

std::string preset_names() {
  std::string out;
  for (const model_preset& p : model_presets) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

/// Reads key `key` of `j` into `out` when present; a value of another type is an error naming the key.
template <class T>
void read_key(const nlohmann::json& j, const char* key, T& out, const std::string& path) {
  if (!j.contains(key)) return;
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw usage_error(fmt::format("ctpipe: {}: key '{}' has the wrong type", path, key));
  }
}

transformer_model read_model_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw usage_error(fmt::format("ctpipe: --model takes a preset ({}) or a JSON file, not '{}'", preset_names(), path));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) throw usage_error(fmt::format("ctpipe: {}: a model file is one JSON object", path));
  static const char* const keys[] = {"base", "layers", "hidden", "heads", "kv_heads", "ffn", "swiglu", "vocab", "seq",
                                     "micro_batch", "tp", "sequence_parallel", "recompute", "dp", "distributed_optimizer",
                                     "tied_embeddings"};
  for (const auto& item : j.items()) {
    if (std::find(std::begin(keys), std::end(keys), item.key()) == std::end(keys)) {
      throw usage_error(fmt::format("ctpipe: {}: unknown key '{}' (docs/tool.md lists the keys)", path, item.key()));
    }
  }
  transformer_model m{};
  if (j.contains("base")) {
    const model_preset* base = j.at("base").is_string() ? find_model_preset(j.at("base").get<std::string>()) : nullptr;
    if (base == nullptr) throw usage_error(fmt::format("ctpipe: {}: 'base' must name a preset ({})", path, preset_names()));
    m = base->model;
  }
  read_key(j, "layers", m.layers, path);
  read_key(j, "hidden", m.hidden, path);
  read_key(j, "heads", m.heads, path);
  read_key(j, "kv_heads", m.kv_heads, path);
  read_key(j, "ffn", m.ffn, path);
  read_key(j, "swiglu", m.swiglu, path);
  read_key(j, "vocab", m.vocab, path);
  read_key(j, "seq", m.seq, path);
  read_key(j, "micro_batch", m.micro_batch, path);
  read_key(j, "tp", m.tp, path);
  read_key(j, "sequence_parallel", m.sequence_parallel, path);
  read_key(j, "dp", m.dp, path);
  read_key(j, "distributed_optimizer", m.distributed_optimizer, path);
  read_key(j, "tied_embeddings", m.tied_embeddings, path);
  std::string recompute = "none";
  read_key(j, "recompute", recompute, path);
  if (recompute != "none" && recompute != "selective" && recompute != "full") {
    throw usage_error(fmt::format("ctpipe: {}: 'recompute' takes none, selective or full, not '{}'", path, recompute));
  }
  m.recompute = recompute == "full" ? recompute_mode::full : recompute == "selective" ? recompute_mode::selective : recompute_mode::none;
  return m;
}

}  // namespace

transformer_model parse_model(const std::string& text) {
  const model_preset* preset = find_model_preset(text);
  const transformer_model m = preset != nullptr ? preset->model : read_model_file(text);
  check_model(m);
  return m;
}

memory_limit parse_memory_limit(std::string_view text) {
  const std::string bad = fmt::format(
      "ctpipe: --memory-limit takes a number of full activations per rank (4, 5/2) or of bytes with a unit (80GiB, 1.5TB), "
      "not '{}'",
      text);
  static const std::pair<const char*, std::int64_t> units[] = {
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"TiB", 1LL << 40}, {"KB", 1000},
      {"MB", 1000000},    {"GB", 1000000000}, {"TB", 1000000000000}, {"B", 1}};
  memory_limit out;
  std::string_view number = text;
  std::int64_t scale = 1;
  for (const auto& [unit, size] : units) {
    const std::string_view u(unit);
    if (text.size() > u.size() && text.substr(text.size() - u.size()) == u) {
      number = text.substr(0, text.size() - u.size());
      scale = size;
      out.bytes = true;
      break;
    }
  }
  try {
    out.value = parse_rational(number) * rational{scale};
  } catch (const ctpipe::error&) {
    throw usage_error(bad);
  }
  return out;
}

std::vector<std::int64_t> layer_split(const transformer_model& model, int S, const std::vector<std::int64_t>& given) {
  if (given.empty()) {
    std::vector<std::int64_t> out;
    for (int s = 0; s < S; ++s) out.push_back(even_split(model.layers, S, s));
    return out;
  }
  const bool positive = std::all_of(given.begin(), given.end(), [](std::int64_t x) { return x >= 1; });
  if (given.size() != static_cast<std::size_t>(S) || !positive ||
      std::accumulate(given.begin(), given.end(), std::int64_t{0}) != model.layers) {
    throw usage_error(fmt::format(
        "ctpipe: --layers needs one entry per stage (P*V of them), each >= 1, summing to the model's {} layers", model.layers));
  }
  return given;
}

void apply_memory(io::report& rep, const std::string& name, const transformer_model* model,
                  const std::vector<std::int64_t>& layers, const std::string& limit_text) {
  if (model != nullptr) io::set_memory(rep, name, *model, layer_split(*model, rep.spec.shape.stages(), layers));
  if (!limit_text.empty()) {
    const memory_limit limit = parse_memory_limit(limit_text);
    io::set_memory_limit(rep, limit.value, limit.bytes);
  }
}

}  // namespace ctpipe::tool
