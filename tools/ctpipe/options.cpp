// The groups of options the `ctpipe` commands share: declared, converted where CLI11
// reads them, and checked (see options.hpp).
#include "options.hpp"

#include "layout.hpp"
#include "model.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "ctpipe/io/torch_lowering.hpp"

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

/// `items` joined by `separator`.
std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
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

CLI::Option* add_converted(CLI::App& app, const std::string& name, std::function<void(const std::string&)> convert,
                           const std::string& help, const std::string& shown) {
  CLI::Option* option = app.add_option_function<std::string>(name, std::move(convert), help);
  if (!shown.empty()) option->default_str(shown);
  return option;
}

CLI::Option* add_whole(CLI::App& app, const std::string& name, int& target, const std::string& help) {
  const std::string shown_name = name.substr(0, name.find(','));  // "--group,-g": --group in messages
  return add_converted(
      app, name, [&target, shown_name](const std::string& text) { target = parse_whole(text, shown_name.c_str()); },
      help, std::to_string(target));
}

std::string unexpected_arguments(const CLI::App& command) {
  std::string args;
  for (const std::string& a : command.remaining()) args += (args.empty() ? "" : " ") + a;
  const bool sub = command.get_parent() != nullptr;
  return fmt::format("ctpipe: {} does not take '{}' (`ctpipe{}{} --help` lists its options)",
                     sub ? command.get_name() : std::string("the tool"), args, sub ? " " : "",
                     sub ? command.get_name() : std::string());
}

void check_op_limit(long long n, long long limit, std::string_view reader, std::string_view subject,
                    std::string_view what) {
  if (n <= limit) return;
  throw usage_error(fmt::format("ctpipe: {}{}{} {} are too many for {} (at most {})", subject,
                                subject.empty() ? "" : ": ", n, what, reader, limit));
}

void shape_options::declare(CLI::App& app) {
  declare_shape(app);
  declare_placement(app);
}

void shape_options::declare_shape(CLI::App& app) {
  add_whole(app, "-P", P, "pipeline ranks");
  add_whole(app, "-m", m, "micro-batches");
}

void shape_options::declare_placement(CLI::App& app) {
  if (!takes_placement) return;
  const std::vector<choice<placement>> table{
      {"loop", placement::loop}, {"v", placement::v_shape}, {"bidirectional", placement::bidirectional}};
  const std::string help =
      !placement_help.empty()
          ? placement_help
          : "loop, v (V-shape) or bidirectional (two model copies); default v for " +
                schedule_names([](const family_entry& e) { return e.natural_placement == placement::v_shape; }) +
                ", bidirectional for dualpipe, else loop";
  add_converted(
      app, "--placement", [this, table](const std::string& text) { layout = choose(text, table, "--placement"); },
      help);
}

void shape_options::check(const CLI::App& app) { placement_given = takes_placement && app.count("--placement") > 0; }

void schedule_options::declare(CLI::App& app) {
  if (several) {
    families.clear();
    family_names.clear();
    for (const char* name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "zbv"}) {
      family_names.emplace_back(name);
      families.push_back(family_named(name));
    }
    add_converted(
        app, "--schedules",
        [this](const std::string& text) {
          if (text.empty()) {
            throw usage_error(
                fmt::format("ctpipe: --schedules needs at least one schedule (known: {})", known_schedules()));
          }
          families.clear();
          family_names.clear();
          // Every comma separates two names: an empty name (`1f1b,`, `1f1b,,gpipe`) is unknown.
          for (std::size_t start = 0;;) {
            const std::size_t comma = text.find(',', start);
            family_names.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
            families.push_back(family_named(family_names.back()));
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
        },
        "comma-separated schedules: " + known_schedules(), joined(family_names, ","));
  } else {
    add_converted(
        app, "--schedule,-s",
        [this](const std::string& text) {
          families = {family_named(text)};
          family_names = {text};
        },
        "schedule: " + known_schedules(), family_names.front());
  }
  declare_shape(app);
  declare_chunks(app);
  declare_placement(app);
  declare_rules(app);
}

void schedule_options::declare_chunks(CLI::App& app) {
  const std::string chosen = schedule_names([](const family_entry& e) { return e.chunks_free; });
  const std::string fixed = schedule_names([](const family_entry& e) { return !e.chunks_free && e.default_V > 1; });
  add_whole(app, "-V", V,
            scope == chunks_scope::every_family
                ? "model chunks per rank (virtual stages); default 2 for the schedules with several chunks (" + chosen +
                      ", " + fixed + "), else 1"
                : "model chunks per rank of the schedules with several chunks (" + chosen + "), default 2; " + fixed +
                      " always run 2, the others 1")
      ->default_str("");
}

void schedule_options::declare_rules(CLI::App& app) {
  add_choice(app, "--variant", variant,
             {{"megatron", interleaved_variant::megatron},
              {"megatron-legacy", interleaved_variant::megatron_legacy},
              {"torch", interleaved_variant::torch}},
             "interleaved-1f1b: megatron, megatron-legacy or torch");
  add_whole(app, "--group,-g", group,
            "interleaved-1f1b with V > 1, combined-1f1b: micro-batches per group (Megatron's "
            "microbatch_group_size_per_vp_stage); 0 = the default (P, or m / max(1, m/P) for torch)");
  add_whole(app, "--warmup-factor", warmup_factor,
            "interleaved-1f1b with V > 1: warmup forwards added per rank away from the last (2, or 1)");
  app.add_flag("--structural-minimum", structural_minimum,
               "dualpipev, dualpipe: accept the least m their phases run with, m >= 2P-1 (dualpipev) or even m >= "
               "2P-2 (dualpipe); DeepSeek's own rule is m >= 2P");
  add_choice(app, "--pair-model", pairs, {{"fused", pair_model::fused}, {"split", pair_model::split}},
             "dualpipev, dualpipe, combined-1f1b: fused (an overlapped F&B pair waits for both inputs and lasts fb, as "
             "DeepSeek runs it) or split (its two halves are separate ops)");
}

void schedule_options::check(const CLI::App& app) {
  shape_options::check(app);
  V_given = app.count("-V") > 0;
  variant_given = app.count("--variant") > 0;
  group_given = app.count("--group") > 0;
  warmup_given = app.count("--warmup-factor") > 0;
  const auto any = [this](auto pred) { return std::any_of(families.begin(), families.end(), pred); };
  // In compare, -V applies to the families whose V is the caller's choice: given for none
  // of them it would change nothing, so it is refused like any ignored option.
  if (V_given && scope != chunks_scope::every_family &&
      !any([](schedule_family f) { return family_of(f).chunks_free; })) {
    throw usage_error(fmt::format("ctpipe: -V applies to {} only, and --schedules names none of them",
                                  schedule_names([](const family_entry& e) { return e.chunks_free; })));
  }
  const bool interleaved = any([](schedule_family f) { return f == schedule_family::interleaved_1f1b; });
  const bool combined = any([](schedule_family f) { return f == schedule_family::combined_1f1b; });
  if (!interleaved && !combined && (variant_given || group_given || warmup_given)) {
    throw usage_error(
        "ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only (--group also to "
        "combined-1f1b)");
  }
  if (!interleaved && (variant_given || warmup_given)) {
    throw usage_error(
        "ctpipe: --variant and --warmup-factor apply to interleaved-1f1b only (combined-1f1b takes --group)");
  }
  const bool dual =
      any([](schedule_family f) { return f == schedule_family::dualpipev || f == schedule_family::dualpipe; });
  if (structural_minimum && !dual)
    throw usage_error("ctpipe: --structural-minimum applies to dualpipev and dualpipe only");
  if (app.count("--pair-model") > 0 && !dual && !combined)
    throw usage_error("ctpipe: --pair-model applies to dualpipev, dualpipe and combined-1f1b only");
  // A family of one chunk per rank on the loop placement (gpipe, 1f1b, zb-h1, zb-h2): the
  // shape's rule would ask for V = 2 on another placement, and the family's for V = 1.
  for (std::size_t k = 0; k < families.size() && placement_given && layout != placement::loop; ++k) {
    const family_entry& f = family_of(families[k]);
    if (!f.chunks_free && f.default_V == 1 && f.natural_placement == placement::loop) {
      throw usage_error(
          fmt::format("ctpipe: {} runs one model chunk per rank on the loop placement only", family_names[k]));
    }
  }
  // At V = 1 interleaved-1f1b is plain 1F1B (megatron, megatron-legacy) or PyTorch's rounds
  // with its own group and warmup (torch): a group or warmup factor would do nothing or
  // leave PyTorch's rule.
  if (interleaved && (group_given || warmup_given) && spec_for(schedule_family::interleaved_1f1b).shape.V == 1) {
    throw usage_error(
        "ctpipe: --group and --warmup-factor only apply to interleaved schedules with V > 1 "
        "(interleaved-1f1b at V = 1 is plain 1F1B, or PyTorch's own rule with --variant torch)");
  }
}

schedule_spec schedule_options::spec_for(schedule_family family) const {
  schedule_spec spec{};
  spec.family = family;
  const bool takes_V = scope == chunks_scope::every_family || family_of(family).chunks_free;
  spec.shape = {P, m, V_given && takes_V ? V : chunks_default(family),
                placement_given ? layout : natural_placement(family)};
  const bool dual = family == schedule_family::dualpipev || family == schedule_family::dualpipe;
  spec.structural_minimum = dual && structural_minimum;
  spec.pairs = dual || family == schedule_family::combined_1f1b ? pairs : pair_model::fused;
  if (family == schedule_family::combined_1f1b) spec.group = group;
  if (family == schedule_family::interleaved_1f1b) {
    spec.variant = variant;
    spec.group = group;
    spec.warmup_factor = warmup_factor;
  }
  return spec;
}

void cost_options::declare(CLI::App& app) {
  add_converted(
      app, "--costs",
      [this](const std::string& text) {
        cost = parse_costs(text);
        costs_text = text;
      },
      "op costs, exact: f=1,b=2,i=1,w=1,c=0,fb=3 (any subset; 1/2 and 0.25 accepted; b defaults to i+w when i or w "
      "is given; fb, an overlapped F&B pair, to f+b)");
  add_converted(
      app, "--gamma",
      [this](const std::string& text) {
        gamma = parse_number(text, "--gamma");
        check_gamma(gamma);
      },
      "M_W / M_B of the finer memory model, in [0, 1]", "1");
}

void scale_options::declare(CLI::App& app) {
  add_converted(
      app, "--stage-scale", [this](const std::string& text) { stage_scale = parse_factors(text, "--stage-scale"); },
      "unequal stages: one exact factor per stage, S = P*V of them (1,1,1,5/4): an op on stage s costs its cost "
      "times factor s (docs/spec.md §2.2)");
  add_converted(
      app, "--microbatch-scale",
      [this](const std::string& text) { microbatch_scale = parse_factors(text, "--microbatch-scale"); },
      "unequal micro-batches: one exact factor per micro-batch, m of them (1,2,1,3,...)");
}

void model_options::declare(CLI::App& app) {
  add_converted(
      app, "--model",
      [this](const std::string& text) {
        model_text = text;
        model_given = !text.empty();
        if (model_given) model = parse_model(text);
      },
      "a dense transformer, for memory in bytes per rank and stage costs from its FLOPs: a preset (gpt3-175b, "
      "llama2-7b, llama2-70b) or a JSON file of its shape and parallelism (docs/memory.md)");
  add_converted(
      app, "--memory-limit",
      [this](const std::string& text) {
        memory_limit_text = text;
        if (!text.empty() && parse_memory_limit(text).value <= rational{0})
          throw usage_error("ctpipe: a memory limit must be > 0");
      },
      "per rank: bytes with a unit (80GiB, 1.5TB; needs --model) or full activations (a plain number, 4, "
      "gamma-weighted as the in-flight peaks); marks every rank over it");
  add_converted(
      app, "--layers",
      [this](const std::string& text) {
        layers.clear();
        for (const rational& x : parse_factors(text, "--layers")) {
          if (x.den != 1) throw usage_error("ctpipe: --layers takes whole numbers of layers (8,8,7,7)");
          layers.push_back(x.num);
        }
      },
      "with --model: the model's layers per stage, S = P*V of them (8,8,7,7); default even");
  add_converted(
      app, "--layout",
      [this](const std::string& text) {
        parse_layout(text);
        layout_text = text;
        layout_given = true;
      },
      "with --model: Megatron-LM's --pipeline-model-parallel-layout (Et*8|(t*8|)*2,t*8L), each stage's layers, "
      "embedding E and loss L; P*V stages (docs/memory.md)");
  if (!takes_device) return;
  add_converted(
      app, "--device-flops",
      [this](const std::string& text) {
        if (!text.empty()) parse_device_flops(text);
        device_flops_text = text;
      },
      "with --model: one device's achieved FLOP/s (312T): op costs in seconds");
  add_converted(
      app, "--link-bandwidth",
      [this](const std::string& text) {
        if (!text.empty()) parse_link_bandwidth(text);
        link_bandwidth_text = text;
      },
      "with --model and --device-flops: t_c = a message's bytes (2sbh/t) over this rate (400Gb/s, 50GB/s) plus "
      "--costs c");
}

void model_options::check(const CLI::App&) {
  if (!memory_limit_text.empty() && parse_memory_limit(memory_limit_text).bytes && !model_given) {
    throw usage_error("ctpipe: a memory limit in bytes needs --model (a plain number is full activations per rank)");
  }
  if (!layers.empty() && !model_given) throw usage_error("ctpipe: --layers needs --model");
  if (layout_given && !model_given) throw usage_error("ctpipe: --layout needs --model");
  if (layout_given && !layers.empty())
    throw usage_error("ctpipe: --layout and --layers both give the layers per stage; give one");
}

void view_options::declare(CLI::App& app) {
  format = formats.front();
  std::vector<choice<std::string>> table;
  for (const std::string& f : formats) table.push_back({f.c_str(), f});
  add_converted(
      app, "--format", [this, table](const std::string& text) { format = choose(text, table, "--format", command); },
      format_help, format);
  if (takes_width) add_whole(app, "--width", width, "timeline width in columns (text), 20 to 100000");
  if (takes_color) {
    add_choice(app, "--color", color,
               {{"auto", color_mode::automatic}, {"always", color_mode::always}, {"never", color_mode::never}},
               "auto, always or never (text)");
  }
}

void view_options::check(const CLI::App& app) {
  if (takes_width && (width < 20 || width > 100000)) throw usage_error("ctpipe: --width must lie in [20, 100000]");
  // --color and --width shape the text view only: with another format they would be
  // ignored, and an ignored option reads as if it had been applied.
  const bool color_given = takes_color && app.count("--color") > 0;
  const bool width_given = takes_width && app.count("--width") > 0;
  if ((color_given || width_given) && format != "text") {
    throw usage_error(fmt::format("ctpipe: {} applies to --format text only", color_given ? "--color" : "--width"));
  }
}

bool view_options::colored() const {
  if (color != color_mode::automatic) return color == color_mode::always;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(fileno(stdout)) != 0 && (no_color == nullptr || *no_color == '\0') &&
         !(term != nullptr && std::string_view(term) == "dumb");
}

void runtime_options::declare(CLI::App& app) {
  std::vector<choice<runtime_model>> table;
  for (runtime_model r : all_runtime_models) table.push_back({runtime_model_name(r), r});
  add_choice(app, "--runtime", runtime, table,
             "runtime model: blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction or "
             "stream-edge (docs/runtimes.md); csv-comms orders the "
             "transfers for it (default blocking); json and validate run only it (default every model)")
      ->default_str("");
}

void runtime_options::check(const CLI::App& app) { runtime_given = app.count("--runtime") > 0; }

void lowering_options::declare(CLI::App& app) {
  // `ctpipe validate` lowers a compute-only file for json's executed entry and its runs:
  // its own text, without deepseek (refused there) and csv-comms (not a format of it).
  const bool validate = app.get_name() == "validate";
  const std::string help =
      validate ? "a compute-only file's lowering, run under every runtime model (or --runtime's): own (lower() per "
                 "model, json's executed entry), least-loss (under a stream model the fastest of ctpipe's three "
                 "orders, docs/runtimes.md), or PyTorch's orders (docs/pytorch.md): torch-asap, torch-warmup, "
                 "torch-consumer, torch-parity, whose runs are shown and whose hangs are reported, not refused"
               : "who places the sends and receives of csv-comms and json's executed entry: own (lower(), for the "
                 "--runtime model), least-loss (under a stream model the fastest of ctpipe's three orders, "
                 "docs/runtimes.md; own under the others), deepseek (dualpipev, dualpipe: DeepSeek's step() with its "
                 "batches, the same lists for every model), or PyTorch's orders (docs/pytorch.md): torch-asap "
                 "(_add_send_recv, torch 2.13's default), torch-warmup (PR 165664), torch-consumer (PR 172833), "
                 "torch-parity (_defer_recv_ops, defer_pp_recv=True)";
  add_choice(app, "--lowering", lowering,
             {{"own", lowering_choice::own},
              {"deepseek", lowering_choice::deepseek},
              {"torch-asap", lowering_choice::torch_asap},
              {"torch-warmup", lowering_choice::torch_warmup},
              {"torch-consumer", lowering_choice::torch_consumer},
              {"torch-parity", lowering_choice::torch_parity},
              {"least-loss", lowering_choice::least_loss}},
             help);
  add_converted(
      app, "--torch-passes",
      [this](const std::string& text) {
        const int kept = choose<int>(text, {{"all", 2}, {"reduce-grad", 1}, {"none", 0}}, "--torch-passes");
        passes.unshard_reshard = kept == 2;
        passes.reduce_grad = kept >= 1;
      },
      validate ? "with a torch-* --lowering: the actions of PyTorch's lowering passes in the lists (each takes a round "
                 "of _add_send_recv, so they change the order): all (UNSHARD, RESHARD and REDUCE_GRAD), reduce-grad "
                 "or none"
               : "the actions of PyTorch's lowering passes csv-comms carries (docs/pytorch.md): all (UNSHARD, "
                 "RESHARD and REDUCE_GRAD, as _add_unshard_reshard and _add_reduce_grad place them), reduce-grad "
                 "(REDUCE_GRAD only: no FSDP) or none",
      "all");
  add_whole(app, "--max-active-stages", passes.max_active_stages,
            validate ? "with a torch-* --lowering and --torch-passes all: the stages kept unsharded at once"
                     : "csv-comms with --torch-passes all: the stages kept unsharded at once (PyTorch's window)");
}

bool torch_order_of(lowering_choice choice, io::torch_lowering& out) {
  switch (choice) {
    case lowering_choice::torch_asap: out = io::torch_lowering::asap; return true;
    case lowering_choice::torch_warmup: out = io::torch_lowering::warmup; return true;
    case lowering_choice::torch_consumer: out = io::torch_lowering::consumer; return true;
    case lowering_choice::torch_parity: out = io::torch_lowering::parity; return true;
    default: return false;
  }
}

void lowering_options::check(const CLI::App& app) {
  if (passes.max_active_stages < 1) throw usage_error("ctpipe: --max-active-stages must be >= 1");
  if (app.count("--max-active-stages") > 0 && !passes.unshard_reshard) {
    throw usage_error("ctpipe: --max-active-stages applies to --torch-passes all only (the UNSHARD/RESHARD window)");
  }
  lowering_given = app.count("--lowering") > 0;
  torch_passes_given = app.count("--torch-passes") > 0 || app.count("--max-active-stages") > 0;
}

show_options::show_options() {
  formats = {"text", "json", "svg", "trace", "csv", "csv-comms"};
  format_help =
      "text, json, svg (the timeline and in-flight views), trace (Chrome trace-event JSON for Perfetto), csv "
      "(PyTorch's CSV schedule, compute ops) or csv-comms (with the SEND/RECV ops of lower() for --runtime, under "
      "--costs, and the UNSHARD, RESHARD and REDUCE_GRAD of --torch-passes)";
}

std::vector<rational> parse_factors(std::string_view text, const char* option) {
  std::vector<rational> out;
  if (text.empty()) return out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (item.empty())
      throw usage_error(fmt::format("ctpipe: {} takes exact numbers separated by commas (e.g. 1,1,1,5/4)", option));
    out.push_back(parse_number(item, option));
    if (comma == std::string_view::npos) return out;
    text = text.substr(comma + 1);
  }
}

}  // namespace ctpipe::tool
