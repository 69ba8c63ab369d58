// ctpipe: the command-line tool. Generates a schedule with the library's functions (the
// same ones a static_assert evaluates), simulates it exactly and shows the article's
// views: the timeline with its bubbles, the bubble readout against the closed form, and
// the in-flight activations per rank. `ctpipe` alone shows the article's default:
// 1F1B, P = 4, m = 8.
//
// Exit codes: 0 on success, 2 on bad input (one line starting `ctpipe:` on stderr,
// nothing on stdout).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ctpipe/io/json.hpp"
#include "ctpipe/io/text.hpp"
#include "options.hpp"

namespace {

/// Largest schedule the tool analyses (ops over all ranks): about 1 GiB of working
/// memory. The library itself has no such limit.
constexpr long long max_tool_ops = 1LL << 24;

std::string known_schedules() {
  std::string names;
  for (ctpipe::schedule_family f : ctpipe::all_families) names += (names.empty() ? "" : ", ") + std::string(ctpipe::family_name(f));
  return names;
}

int run(int argc, char** argv) {
  CLI::App app{"ctpipe: pipeline-parallel schedules, simulated exactly.\n"
               "With no options it shows the article's default: 1F1B, P = 4, m = 8."};
  app.name("ctpipe");
  std::string schedule_name = "1f1b";
  long long P = 4;
  long long m = 8;
  long long V = 0;  // 0: the schedule's own (2 for zbv, else 1)
  std::string variant_text = "megatron";
  long long group = 0;
  long long warmup_factor = 2;
  std::string costs_text;
  std::string gamma_text = "1";
  std::string format = "text";
  std::string color = "auto";
  int width = 100;
  app.add_option("--schedule,-s", schedule_name, "schedule: " + known_schedules())->capture_default_str();
  app.add_option("-P", P, "pipeline ranks (stages for V = 1)")->capture_default_str();
  app.add_option("-m", m, "micro-batches")->capture_default_str();
  app.add_option("-V", V, "model chunks per rank (virtual stages); default 2 for zbv, else 1");
  std::string placement_text;
  app.add_option("--placement", placement_text, "loop or v (V-shape); default v for zbv, else loop");
  app.add_option("--variant", variant_text, "interleaved-1f1b: megatron, megatron-legacy or torch")
      ->capture_default_str();
  app.add_option("--group,-g", group,
                 "interleaved-1f1b: micro-batches per group (Megatron's microbatch_group_size_per_vp_stage); "
                 "0 = the variant's default (P, or m / max(1, m/P) for torch)")
      ->capture_default_str();
  app.add_option("--warmup-factor", warmup_factor,
                 "interleaved-1f1b: warmup forwards added per rank away from the last (2, or 1)")
      ->capture_default_str();
  app.add_option("--costs", costs_text,
                 "op costs, exact: f=1,b=2,i=1,w=1,c=0 (any subset; 1/2 and 0.25 accepted; "
                 "b defaults to i+w when i or w is given)");
  app.add_option("--gamma", gamma_text, "M_W / M_B of the finer memory model, in [0, 1]")->capture_default_str();
  app.add_option("--format", format, "text or json")->capture_default_str();
  app.add_option("--width", width, "timeline width in columns (text)")->capture_default_str();
  app.add_option("--color", color, "auto, always or never (text)")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ctpipe: {}\n", e.what());
    return 2;
  }

  ctpipe::schedule_spec spec{};
  if (!ctpipe::family_from_name(schedule_name, spec.family)) {
    fmt::print(stderr, "ctpipe: unknown schedule '{}' (known: {})\n", schedule_name, known_schedules());
    return 2;
  }
  if (format != "text" && format != "json") {
    fmt::print(stderr, "ctpipe: unknown format '{}' (known: text, json)\n", format);
    return 2;
  }
  if (color != "auto" && color != "always" && color != "never") {
    fmt::print(stderr, "ctpipe: --color takes auto, always or never, not '{}'\n", color);
    return 2;
  }
  if (width < 20 || width > 100000) {
    fmt::print(stderr, "ctpipe: --width must lie in [20, 100000]\n");
    return 2;
  }
  if (!ctpipe::variant_from_name(variant_text, spec.variant)) {
    fmt::print(stderr, "ctpipe: unknown variant '{}' (known: megatron, megatron-legacy, torch)\n", variant_text);
    return 2;
  }
  const bool interleaved = spec.family == ctpipe::schedule_family::interleaved_1f1b;
  if (!interleaved && (app.count("--variant") + app.count("--group") + app.count("--warmup-factor")) > 0) {
    fmt::print(stderr, "ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only\n");
    return 2;
  }
  ctpipe::placement layout = ctpipe::natural_placement(spec.family);
  if (!placement_text.empty()) {
    if (placement_text != "loop" && placement_text != "v") {
      fmt::print(stderr, "ctpipe: --placement takes loop or v, not '{}'\n", placement_text);
      return 2;
    }
    layout = placement_text == "v" ? ctpipe::placement::v_shape : ctpipe::placement::loop;
  }
  if (app.count("-V") == 0) V = spec.family == ctpipe::schedule_family::zbv ? 2 : 1;
  auto narrow = [](long long x) { return static_cast<int>(std::clamp<long long>(x, INT_MIN, INT_MAX)); };
  spec.shape = {narrow(P), narrow(m), narrow(V), layout};
  spec.group = narrow(group);
  spec.warmup_factor = narrow(warmup_factor);
  ctpipe::check_spec(spec);  // throws ctpipe::error with the library's message
  if (3LL * P * m * V > max_tool_ops) {
    fmt::print(stderr, "ctpipe: P*m*V too large for the tool (at most {} ops)\n", max_tool_ops);
    return 2;
  }
  const ctpipe::costs cost = ctpipe::tool::parse_costs(costs_text);
  const ctpipe::rational gamma = ctpipe::parse_rational(gamma_text);
  const ctpipe::io::report rep = ctpipe::io::analyze(spec, cost, gamma);

  std::string out;
  if (format == "json") {
    out = ctpipe::io::to_json(rep).dump(2) + "\n";
  } else {
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    const bool tty = isatty(fileno(stdout)) != 0 && (no_color == nullptr || *no_color == '\0') &&
                     !(term != nullptr && std::string_view(term) == "dumb");
    out = ctpipe::io::render_text(rep, {width, color == "always" || (color == "auto" && tty)});
  }
  fmt::print("{}", out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ctpipe::error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ctpipe: {}\n", e.what());
    return 2;
  }
}
