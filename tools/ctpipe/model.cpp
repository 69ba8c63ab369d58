// The `ctpipe` tool's --model, --memory-limit and --layers (see model.hpp).
#include "model.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <type_traits>
#include <iterator>
#include <numeric>
#include <utility>

#include "layout.hpp"
#include "options.hpp"

namespace ctpipe::tool {

namespace {

std::string preset_names() {
  std::string out;
  for (const model_preset& p : model_presets) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

/// Reads key `key` of `j` into `out` when present: a whole number for an integer field,
/// true or false for a flag, a string for a name; another type (4096.5 for a size) is an
/// error naming the key.
template <class T>
void read_key(const nlohmann::json& j, const char* key, T& out, const std::string& path) {
  if (!j.contains(key)) return;
  const nlohmann::json& value = j.at(key);
  bool typed = false;
  if constexpr (std::is_same_v<T, bool>) {
    typed = value.is_boolean();
  } else if constexpr (std::is_same_v<T, std::string>) {
    typed = value.is_string();
  } else {
    typed = value.is_number_integer();
  }
  if (!typed) throw usage_error(fmt::format("ctpipe: {}: key '{}' has the wrong type", path, key));
  out = value.get<T>();
}

transformer_model read_model_file(const std::string& path) {
  std::error_code ignored;
  std::ifstream in(path);
  if (!std::filesystem::is_regular_file(path, ignored) || !in) {
    throw usage_error(
        fmt::format("ctpipe: --model takes a preset ({}) or a JSON file, not '{}'", preset_names(), path));
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw usage_error(fmt::format("ctpipe: {}: not valid JSON", path));
  if (!j.is_object()) throw usage_error(fmt::format("ctpipe: {}: a model file is one JSON object", path));
  static const char* const keys[] = {"base",           "layers",   "hidden",
                                     "heads",          "kv_heads", "ffn",
                                     "swiglu",         "vocab",    "seq",
                                     "micro_batch",    "tp",       "sequence_parallel",
                                     "recompute",      "dp",       "distributed_optimizer",
                                     "tied_embeddings"};
  for (const auto& item : j.items()) {
    if (std::find(std::begin(keys), std::end(keys), item.key()) == std::end(keys)) {
      throw usage_error(fmt::format("ctpipe: {}: unknown key '{}' (docs/tool.md lists the keys)", path, item.key()));
    }
  }
  transformer_model m{};
  if (j.contains("base")) {
    const model_preset* base = j.at("base").is_string() ? find_model_preset(j.at("base").get<std::string>()) : nullptr;
    if (base == nullptr)
      throw usage_error(fmt::format("ctpipe: {}: 'base' must name a preset ({})", path, preset_names()));
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
  m.recompute = recompute == "full"        ? recompute_mode::full
                : recompute == "selective" ? recompute_mode::selective
                                           : recompute_mode::none;
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
      "ctpipe: --memory-limit takes a number of full activations per rank (4, 5/2) or of bytes with a unit (80GiB, "
      "1.5TB), "
      "not '{}'",
      text);
  static const std::pair<const char*, std::int64_t> units[] = {
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20},    {"GiB", 1LL << 30},
      {"TiB", 1LL << 40}, {"KB", 1000},          {"MB", 1000000},
      {"GB", 1000000000}, {"TB", 1000000000000}, {"B", 1}};
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
  if (out.bytes && out.value.den != 1)
    throw usage_error(fmt::format("ctpipe: --memory-limit {} is not a whole number of bytes", text));
  return out;
}

std::vector<std::int64_t> layer_split(const transformer_model& model, const pipeline_shape& shape,
                                      const std::vector<std::int64_t>& given) {
  const int S = shape.stages(), per = copy_stages(shape);
  if (given.empty()) {
    std::vector<std::int64_t> out;
    for (int s = 0; s < S; ++s) out.push_back(even_split(model.layers, per, s % per));
    return out;
  }
  bool ok = given.size() == static_cast<std::size_t>(S) &&
            std::all_of(given.begin(), given.end(), [](std::int64_t x) { return x >= 1; });
  for (int copy = 0; ok && copy < S / per; ++copy) {
    std::int64_t sum = 0;
    for (int i = 0; i < per; ++i) sum += given[static_cast<std::size_t>(copy * per + i)];
    ok = sum == model.layers;
  }
  if (!ok) {
    throw usage_error(
        fmt::format("ctpipe: --layers needs one entry per stage ({} of them, P*V), each >= 1, {} to the "
                    "model's {} layers (given {})",
                    S, S == per ? "summing" : "each model copy's P summing", model.layers, given.size()));
  }
  return given;
}

stage_split split_for(const model_options& opts, const pipeline_shape& shape, std::string_view family) {
  if (!opts.layout_given) return {layer_split(opts.model, shape, opts.layers), {}};
  if (shape.layout != placement::loop) {
    throw usage_error(fmt::format(
        "ctpipe: --layout is Megatron-LM's, whose stage s runs on rank s mod P: it needs the loop placement ({}'s "
        "placement is {})",
        family.empty() ? "the schedule" : family, placement_name(shape.layout)));
  }
  layout_split split = check_layout(parse_layout(opts.layout_text), shape.P, shape.V, opts.model.layers);
  return {std::move(split.layers), std::move(split.roles)};
}

void apply_memory(io::report& rep, const model_options& opts, const std::string& limit_text) {
  if (opts.model_given) {
    stage_split split = split_for(opts, rep.spec.shape, family_name(rep.spec.family));
    io::set_memory(rep, opts.model_text, opts.model, std::move(split.layers), split.roles);
  }
  if (!limit_text.empty()) {
    const memory_limit limit = parse_memory_limit(limit_text);
    io::set_memory_limit(rep, limit.value, limit.bytes);
  }
}

namespace {

/// `text` without its decimal prefix (K, M, G, T, P) times that prefix's power of 1000.
rational with_prefix(std::string_view text, const std::string& bad) {
  static const std::pair<char, std::int64_t> prefixes[] = {
      {'K', 1000}, {'M', 1000000}, {'G', 1000000000}, {'T', 1000000000000}, {'P', 1000000000000000}};
  std::int64_t scale = 1;
  for (const auto& [prefix, size] : prefixes) {
    if (!text.empty() && text.back() == prefix) {
      text.remove_suffix(1);
      scale = size;
    }
  }
  try {
    const rational value = parse_rational(text) * rational{scale};
    if (value <= rational{0}) throw usage_error(bad);
    return value;
  } catch (const ctpipe::error&) {
    throw usage_error(bad);
  }
}

/// The --costs keys given, with b when i or w is given (parse_costs() derives it).
std::vector<std::string> cost_keys(std::string_view text) {
  std::vector<std::string> keys;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    keys.emplace_back(item.substr(0, item.find('=')));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  const auto has = [&keys](const char* k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  if (has("i") || has("w")) keys.emplace_back("b");
  return keys;
}

}  // namespace

void check_scale_lengths(const std::vector<rational>& stage, const std::vector<rational>& microbatch,
                         const pipeline_shape& shape) {
  if (!stage.empty() && stage.size() != static_cast<std::size_t>(shape.stages())) {
    throw usage_error(fmt::format("ctpipe: --stage-scale needs one factor per stage, {} of them (P*V); {} given",
                                  shape.stages(), stage.size()));
  }
  if (!microbatch.empty() && microbatch.size() != static_cast<std::size_t>(shape.m)) {
    throw usage_error(
        fmt::format("ctpipe: --microbatch-scale needs one factor per micro-batch, {} of them (m); {} given", shape.m,
                    microbatch.size()));
  }
}

rational parse_device_flops(std::string_view text) {
  return with_prefix(text, fmt::format("ctpipe: --device-flops takes FLOP/s such as 312T, not '{}'", text));
}

rational parse_link_bandwidth(std::string_view text) {
  const std::string bad =
      fmt::format("ctpipe: --link-bandwidth takes a rate such as 400Gb/s or 50GB/s, not '{}'", text);
  if (text.size() < 3 || text.substr(text.size() - 2) != "/s") throw usage_error(bad);
  const char unit = text[text.size() - 3];
  if (unit != 'b' && unit != 'B') throw usage_error(bad);
  const rational rate = with_prefix(text.substr(0, text.size() - 3), bad);
  return unit == 'b' ? rate / rational{8} : rate;
}

run_costs costs_for(const cost_options& given_costs, const model_options& opts, std::vector<rational> stage_scale,
                    const schedule_spec& spec) {
  run_costs out{given_costs.cost, std::move(stage_scale)};
  const bool link = !opts.link_bandwidth_text.empty();
  const bool seconds = !opts.device_flops_text.empty();
  if ((link || seconds) && !opts.model_given) {
    throw usage_error("ctpipe: --device-flops and --link-bandwidth need --model (its FLOPs and message bytes)");
  }
  if (link && !seconds)
    throw usage_error("ctpipe: --link-bandwidth needs --device-flops (the compute's time in seconds)");
  if (!opts.model_given) return out;
  const std::vector<std::string> given = cost_keys(given_costs.costs_text);
  const auto is_given = [&given](const char* k) { return std::find(given.begin(), given.end(), k) != given.end(); };
  if (seconds && std::any_of(given.begin(), given.end(), [](const std::string& k) { return k != "c"; })) {
    throw usage_error(
        "ctpipe: with --device-flops the model gives the op costs in seconds; --costs takes only c, the latency in "
        "seconds");
  }
  const costs model = model_costs(opts.model);
  rational* mine[] = {&out.cost.f, &out.cost.b, &out.cost.i, &out.cost.w};
  const rational theirs[] = {model.f, model.b, model.i, model.w};
  const char* keys[] = {"f", "b", "i", "w"};
  for (int k = 0; k < 4; ++k) {
    if (!is_given(keys[k])) *mine[k] = theirs[k];
  }
  // A full backward is its two halves when only they are given (docs/spec.md §1).
  if ((is_given("i") || is_given("w")) && given_costs.costs_text.find("b=") == std::string::npos)
    out.cost.b = out.cost.i + out.cost.w;
  const int S = spec.shape.stages();
  const stage_split split = split_for(opts, spec.shape, family_name(spec.family));
  const std::vector<std::int64_t>& layers = split.layers;
  if (out.stage_scale.empty()) {
    out.stage_scale.resize(static_cast<std::size_t>(S));
    model_stage_factors(opts.model, spec.shape, layers, out.stage_scale, split.roles);
  }
  if (seconds) {
    // One time unit, a rank's average forward: its share of the forward FLOPs over the
    // device's rate (tensor parallelism divides the work by t).
    const std::int64_t units = model_forward_flops(opts.model, spec.shape, layers, split.roles);
    const rational flops = rational{units} *
                           rational{detail::product({2, opts.model.seq, opts.model.micro_batch, opts.model.hidden})} /
                           rational{detail::product({spec.shape.P, opts.model.tp})};
    const rational second = flops / parse_device_flops(opts.device_flops_text);
    for (rational* x : mine) *x = *x * second;
    if (out.cost.fb != rational{-1}) out.cost.fb = out.cost.fb * second;
    const rational link_time =
        link ? message_bytes(opts.model) / parse_link_bandwidth(opts.link_bandwidth_text) : rational{0};
    out.cost.c = link_time + (is_given("c") ? given_costs.cost.c : rational{0});
  }
  return out;
}

}  // namespace ctpipe::tool
