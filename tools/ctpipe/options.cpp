// The one place that declares and checks the options the `ctpipe` commands share.
#include "options.hpp"

#include "model.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace ctpipe::tool {

/// The names of the families whose table entry passes `keep`, comma-separated.
template <class Keep>
std::string schedule_names(Keep keep) {
  std::string names;
  for (schedule_family f : all_families) {
    if (!keep(family_of(f))) continue;
    if (!names.empty()) names += ", ";
    names += family_name(f);
  }
  return names;
}

std::string known_schedules() {
  return schedule_names([](const family_entry&) { return true; });
}

int parse_whole(const std::string& text, const char* option) {
  long long value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, error] = std::from_chars(first, last, value, 10);
  const bool digits_only = !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
  if (error == std::errc::result_out_of_range && digits_only && end == last) {
    value = text[0] == '-' ? LLONG_MIN : LLONG_MAX;
  } else if (error != std::errc{} || end != last || !digits_only) {
    throw usage_error(fmt::format("ctpipe: {} takes a whole number, not '{}'", option, text));
  }
  return static_cast<int>(std::clamp<long long>(value, INT_MIN, INT_MAX));
}

namespace {

/// The comma-separated list of `items`.
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// The family called `name`, or usage_error naming the known ones.
schedule_family family_named(const std::string& name) {
  schedule_family family{};
  if (!family_from_name(name, family)) {
    throw usage_error(fmt::format("ctpipe: unknown schedule '{}' (known: {})", name, known_schedules()));
  }
  return family;
}

}  // namespace

void options::declare_model_options(CLI::App& app, const option_set& set) {
  if (set.bits & opt_scale) {
    app.add_option("--stage-scale", stage_scale_text,
                   "unequal stages: one exact factor per stage, S = P*V of them (1,1,1,5/4): an op on stage s costs "
                   "its cost times factor s (docs/spec.md §2.2)");
    app.add_option("--microbatch-scale", microbatch_scale_text,
                   "unequal micro-batches: one exact factor per micro-batch, m of them (1,2,1,3,...)");
  }
  if (set.bits & opt_model) {
    app.add_option(
        "--model", model_text,
        "a dense transformer, for memory in bytes per rank and stage costs from its FLOPs: a preset (gpt3-175b, "
        "llama2-7b, llama2-70b) or a JSON file of its shape and parallelism (docs/memory.md)");
    app.add_option("--memory-limit", memory_limit_text,
                   "per rank: bytes with a unit (80GiB, 1.5TB; needs --model) or full activations (a plain number, 4, "
                   "gamma-weighted as the in-flight peaks); marks every rank over it");
    app.add_option("--layers", layers_text,
                   "with --model: the model's layers per stage, S = P*V of them (8,8,7,7); default even");
    app.add_option("--device-flops", device_flops_text,
                   "with --model: one device's achieved FLOP/s (312T): op costs in seconds");
    app.add_option("--link-bandwidth", link_bandwidth_text,
                   "with --model and --device-flops: t_c = a message's bytes (2sbh/t) over this rate (400Gb/s, 50GB/s) "
                   "plus --costs c");
  }
}

void options::declare(CLI::App& app, const option_set& set) {
  format = set.formats.front();
  if (set.bits & opt_schedule) {
    app.add_option("--schedule,-s", schedule_text, "schedule: " + known_schedules())->capture_default_str();
  }
  if (set.bits & opt_schedules) {
    app.add_option("--schedules", schedules_text, "comma-separated schedules: " + known_schedules())
        ->capture_default_str();
  }
  if (set.bits & opt_shape) {
    app.add_option("-P", P_text, "pipeline ranks")->capture_default_str();
    app.add_option("-m", m_text, "micro-batches")->capture_default_str();
  }
  if (set.bits & opt_chunks) {
    const std::string chosen = schedule_names([](const family_entry& e) { return e.chunks_free; });
    const std::string fixed = schedule_names([](const family_entry& e) { return !e.chunks_free && e.default_V > 1; });
    app.add_option("-V", V_text,
                   set.scope == chunks_scope::every_family
                       ? "model chunks per rank (virtual stages); default 2 for the schedules with several chunks (" +
                             chosen + ", " + fixed + "), else 1"
                       : "model chunks per rank of the schedules with several chunks (" + chosen + "), default 2; " +
                             fixed + " always run 2, the others 1");
  }
  if (set.bits & opt_placement) {
    app.add_option("--placement", placement_text,
                   "loop, v (V-shape) or bidirectional (two model copies); default v for " +
                       schedule_names([](const family_entry& e) { return e.natural_placement == placement::v_shape; }) +
                       ", bidirectional for dualpipe, else loop");
  }
  if (set.bits & opt_interleaved) {
    app.add_option("--variant", variant_text, "interleaved-1f1b: megatron, megatron-legacy or torch")
        ->capture_default_str();
    app.add_option("--group,-g", group_text,
                   "interleaved-1f1b with V > 1: micro-batches per group (Megatron's "
                   "microbatch_group_size_per_vp_stage); 0 = the variant's default (P, or m / max(1, m/P) for torch)")
        ->capture_default_str();
    app.add_option("--warmup-factor", warmup_text,
                   "interleaved-1f1b with V > 1: warmup forwards added per rank away from the last (2, or 1)")
        ->capture_default_str();
    app.add_flag(
        "--structural-minimum", structural_minimum,
        "dualpipev, dualpipe: accept the least m their phases run with, m >= 2P-1 (dualpipev) or even m >= 2P-2 "
        "(dualpipe); DeepSeek's own rule is m >= 2P");
    app.add_option("--pair-model", pair_model_text,
                   "dualpipev, dualpipe: fused (an overlapped F&B pair waits for both inputs and lasts fb, as DeepSeek "
                   "runs it) "
                   "or split (its two halves are separate ops)")
        ->capture_default_str();
  }
  if (set.bits & opt_costs) {
    app.add_option("--costs", costs_text,
                   "op costs, exact: f=1,b=2,i=1,w=1,c=0,fb=3 (any subset; 1/2 and 0.25 accepted; "
                   "b defaults to i+w when i or w is given; fb, an overlapped F&B pair, to f+b)");
    app.add_option("--gamma", gamma_text, "M_W / M_B of the finer memory model, in [0, 1]")->capture_default_str();
  }
  declare_model_options(app, set);
  app.add_option("--format", format, set.format_help)->capture_default_str();
  if (set.bits & opt_width) {
    app.add_option("--width", width_text, "timeline width in columns (text), 20 to 100000")->capture_default_str();
  }
  if (set.bits & opt_color) {
    app.add_option("--color", color, "auto, always or never (text)")->capture_default_str();
  }
  if (set.bits & opt_runtime) {
    app.add_option("--runtime", runtime_text,
                   "runtime model: blocking, rendezvous, posted or batched (docs/runtimes.md); csv-comms orders the "
                   "transfers for it (default blocking); json and validate run only it (default every model)");
  }
  if (set.bits & opt_lowering) {
    app.add_option("--lowering", lowering_text,
                   "who places the sends and receives of csv-comms and json's executed entry: own (lower(), for the "
                   "--runtime model) or deepseek (dualpipev, dualpipe: DeepSeek's step() with its batches, the same "
                   "lists for every model)")
        ->capture_default_str();
    app.add_option("--torch-passes", torch_passes_text,
                   "the actions of PyTorch's lowering passes csv-comms carries (docs/pytorch.md): all (UNSHARD, "
                   "RESHARD and REDUCE_GRAD, as _add_unshard_reshard and _add_reduce_grad place them), reduce-grad "
                   "(REDUCE_GRAD only: no FSDP) or none")
        ->capture_default_str();
    app.add_option("--max-active-stages", max_active_stages_text,
                   "csv-comms with --torch-passes all: the stages kept unsharded at once (PyTorch's window)")
        ->capture_default_str();
  }
}

void options::check_families(const option_set& set) {
  if (set.bits & opt_schedule) {
    families = {family_named(schedule_text)};
    family_names = {schedule_text};
  }
  if (set.bits & opt_schedules) {
    if (schedules_text.empty()) {
      throw usage_error(fmt::format("ctpipe: --schedules needs at least one schedule (known: {})", known_schedules()));
    }
    // Every comma separates two names: an empty name (`1f1b,`, `1f1b,,gpipe`) is unknown.
    const std::string_view text = schedules_text;
    for (std::size_t start = 0;;) {
      const std::size_t comma = text.find(',', start);
      family_names.emplace_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
      families.push_back(family_named(family_names.back()));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
}

void options::check_output(const option_set& set) {
  if (std::find(set.formats.begin(), set.formats.end(), format) == set.formats.end()) {
    throw usage_error(fmt::format("ctpipe: unknown format '{}'{} (known: {})", format,
                                  set.command.empty() ? "" : " for " + set.command, joined(set.formats)));
  }
  if ((set.bits & opt_color) && color != "auto" && color != "always" && color != "never") {
    throw usage_error(fmt::format("ctpipe: --color takes auto, always or never, not '{}'", color));
  }
  if (set.bits & opt_width) {
    width = parse_whole(width_text, "--width");
    if (width < 20 || width > 100000) throw usage_error("ctpipe: --width must lie in [20, 100000]");
  }
}

void options::check_text_only(const CLI::App& app, const option_set& set) {
  // --color and --width shape the text view only: with another format they would be
  // ignored, and an ignored option reads as if it had been applied.
  const bool color_given = (set.bits & opt_color) && app.count("--color") > 0;
  const bool width_given = (set.bits & opt_width) && app.count("--width") > 0;
  if ((color_given || width_given) && format != "text") {
    throw usage_error(fmt::format("ctpipe: {} applies to --format text only", color_given ? "--color" : "--width"));
  }
}

void options::check_interleaved_names(const CLI::App& app) {
  variant_given = app.count("--variant") > 0;
  group_given = app.count("--group") > 0;
  warmup_given = app.count("--warmup-factor") > 0;
  if (!variant_from_name(variant_text, variant)) {
    throw usage_error(
        fmt::format("ctpipe: unknown variant '{}' (known: megatron, megatron-legacy, torch)", variant_text));
  }
  const bool interleaved =
      std::find(families.begin(), families.end(), schedule_family::interleaved_1f1b) != families.end();
  if (!interleaved && (variant_given || group_given || warmup_given)) {
    throw usage_error("ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only");
  }
  const bool dualpipev = std::any_of(families.begin(), families.end(), [](schedule_family f) {
    return f == schedule_family::dualpipev || f == schedule_family::dualpipe;
  });
  if (structural_minimum && !dualpipev)
    throw usage_error("ctpipe: --structural-minimum applies to dualpipev and dualpipe only");
  if (pair_model_text != "fused" && pair_model_text != "split") {
    throw usage_error(fmt::format("ctpipe: --pair-model takes fused or split, not '{}'", pair_model_text));
  }
  pairs = pair_model_text == "split" ? pair_model::split : pair_model::fused;
  if (app.count("--pair-model") > 0 && !dualpipev)
    throw usage_error("ctpipe: --pair-model applies to dualpipev and dualpipe only");
}

void options::check_interleaved_numbers(const option_set& set) {
  group = parse_whole(group_text, "--group");
  warmup_factor = parse_whole(warmup_text, "--warmup-factor");
  // At V = 1 interleaved-1f1b is plain 1F1B (megatron, megatron-legacy) or PyTorch's rounds
  // with its own group and warmup (torch): a group or warmup factor would do nothing or
  // leave PyTorch's rule.
  if ((group_given || warmup_given) && spec_for(schedule_family::interleaved_1f1b, set.scope).shape.V == 1) {
    throw usage_error(
        "ctpipe: --group and --warmup-factor only apply to interleaved schedules with V > 1 "
        "(interleaved-1f1b at V = 1 is plain 1F1B, or PyTorch's own rule with --variant torch)");
  }
}

void options::check_model_options(const option_set& set) {
  if (set.bits & opt_model) {
    model_given = !model_text.empty();
    if (model_given) model = parse_model(model_text);
    if (!memory_limit_text.empty()) {
      const memory_limit limit = parse_memory_limit(memory_limit_text);
      if (limit.bytes && !model_given) {
        throw usage_error(
            "ctpipe: a memory limit in bytes needs --model (a plain number is full activations per rank)");
      }
      if (limit.value <= rational{0}) throw usage_error("ctpipe: a memory limit must be > 0");
    }
    for (const rational& x : parse_factors(layers_text, "--layers")) {
      if (x.den != 1) throw usage_error("ctpipe: --layers takes whole numbers of layers (8,8,7,7)");
      layers.push_back(x.num);
    }
    if (!layers.empty() && !model_given) throw usage_error("ctpipe: --layers needs --model");
    if (!device_flops_text.empty()) parse_device_flops(device_flops_text);
    if (!link_bandwidth_text.empty()) parse_link_bandwidth(link_bandwidth_text);
  }
  if (set.bits & opt_scale) {
    stage_scale = parse_factors(stage_scale_text, "--stage-scale");
    microbatch_scale = parse_factors(microbatch_scale_text, "--microbatch-scale");
  }
}

void options::check(const CLI::App& app, const option_set& set) {
  const auto given = [&](const char* name) { return app.count(name) > 0; };
  check_families(set);
  check_output(set);
  check_text_only(app, set);
  if (set.bits & opt_interleaved) check_interleaved_names(app);
  if (set.bits & opt_placement) {
    placement_given = !placement_text.empty();
    if (placement_given && placement_text != "loop" && placement_text != "v" && placement_text != "bidirectional") {
      throw usage_error(fmt::format("ctpipe: --placement takes loop, v or bidirectional, not '{}'", placement_text));
    }
    layout = placement_text == "v"               ? placement::v_shape
             : placement_text == "bidirectional" ? placement::bidirectional
                                                 : placement::loop;
  }
  if (set.bits & opt_chunks) {
    V_given = given("-V");
    if (V_given) V = parse_whole(V_text, "-V");
    // In compare, -V applies to the families whose V is the caller's choice: given for
    // none of them it would change nothing, so it is refused like any ignored option.
    const bool any_takes_V =
        std::any_of(families.begin(), families.end(), [](schedule_family f) { return family_of(f).chunks_free; });
    if (V_given && set.scope != chunks_scope::every_family && !any_takes_V) {
      throw usage_error(fmt::format("ctpipe: -V applies to {} only, and --schedules names none of them",
                                    schedule_names([](const family_entry& e) { return e.chunks_free; })));
    }
  }
  if (set.bits & opt_shape) {
    P = parse_whole(P_text, "-P");
    m = parse_whole(m_text, "-m");
  }
  if (set.bits & opt_interleaved) check_interleaved_numbers(set);
  if (set.bits & opt_costs) {
    cost = parse_costs(costs_text);
    gamma = parse_rational(gamma_text);
    check_gamma(gamma);
  }
  check_model_options(set);
  if (set.bits & opt_lowering) {
    if (lowering_text != "own" && lowering_text != "deepseek") {
      throw usage_error(fmt::format("ctpipe: --lowering takes own or deepseek, not '{}'", lowering_text));
    }
    deepseek_lowering = lowering_text == "deepseek";
    lowering_given = given("--lowering");
    if (torch_passes_text != "all" && torch_passes_text != "reduce-grad" && torch_passes_text != "none") {
      throw usage_error(
          fmt::format("ctpipe: --torch-passes takes all, reduce-grad or none, not '{}'", torch_passes_text));
    }
    passes.unshard_reshard = torch_passes_text == "all";
    passes.reduce_grad = torch_passes_text != "none";
    passes.max_active_stages = parse_whole(max_active_stages_text, "--max-active-stages");
    if (passes.max_active_stages < 1) throw usage_error("ctpipe: --max-active-stages must be >= 1");
    torch_passes_given = given("--torch-passes") || given("--max-active-stages");
  }
  if ((set.bits & opt_runtime) && given("--runtime")) {
    runtime_given = true;
    if (!runtime_model_from_name(runtime_text, runtime)) {
      throw usage_error(
          fmt::format("ctpipe: --runtime takes blocking, rendezvous, posted or batched, not '{}'", runtime_text));
    }
  }
}

schedule_spec options::spec_for(schedule_family family, chunks_scope scope) const {
  schedule_spec spec{};
  spec.family = family;
  const bool takes_V = scope == chunks_scope::every_family || family_of(family).chunks_free;
  spec.shape = {P, m, V_given && takes_V ? V : chunks_default(family),
                placement_given ? layout : natural_placement(family)};
  const bool dual = family == schedule_family::dualpipev || family == schedule_family::dualpipe;
  spec.structural_minimum = dual && structural_minimum;
  spec.pairs = dual ? pairs : pair_model::fused;
  if (family == schedule_family::interleaved_1f1b) {
    spec.variant = variant;
    spec.group = group;
    spec.warmup_factor = warmup_factor;
  }
  return spec;
}

bool options::colored() const {
  if (color != "auto") return color == "always";
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(fileno(stdout)) != 0 && (no_color == nullptr || *no_color == '\0') &&
         !(term != nullptr && std::string_view(term) == "dumb");
}

std::vector<rational> parse_factors(std::string_view text, const char* option) {
  std::vector<rational> out;
  if (text.empty()) return out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (item.empty())
      throw usage_error(fmt::format("ctpipe: {} takes exact numbers separated by commas (e.g. 1,1,1,5/4)", option));
    out.push_back(parse_rational(item));
    if (comma == std::string_view::npos) return out;
    text = text.substr(comma + 1);
  }
}

}  // namespace ctpipe::tool
