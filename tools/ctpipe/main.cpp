// ctpipe: the command-line tool. Generates a schedule with the library's functions (the
// same ones a static_assert evaluates), simulates it exactly and shows the article's
// views: the timeline with its bubbles, the bubble readouts against their closed forms,
// and the in-flight activations per rank. `ctpipe` alone shows the article's default:
// 1F1B, P = 4, m = 8. `ctpipe validate FILE.csv` checks and simulates a schedule written
// by hand or by another framework (PyTorch's CSV format).
//
// Exit codes: 0 on success; 2 on bad input (one line starting `ctpipe:` on stderr,
// nothing on stdout); 1 when the output cannot be written.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/json.hpp"
#include "ctpipe/io/svg.hpp"
#include "ctpipe/io/text.hpp"
#include "ctpipe/io/trace.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/validate.hpp"
#include "executed.hpp"
#include "options.hpp"

namespace {

/// Largest schedule the tool analyses (ops over all ranks), by format: measured working
/// memory at each limit is 0.6 to 2 GiB (bench/tool_limits.sh). The library itself has no
/// such limit.
constexpr long long max_text_ops = 1LL << 24;
constexpr long long max_json_ops = 1LL << 21;   // also SVG: every op is an element
constexpr long long max_trace_ops = 1LL << 19;  // a trace event is four times a JSON op
// CSV (compute ops; the lowered file has at most 3 times as many): as JSON, so that every
// file the tool writes stays below the reader's limit (io::max_csv_bytes).
constexpr long long max_csv_ops = max_json_ops;

/// The tool's op limit for `format` (text, json, svg, trace, csv, csv-comms).
long long max_ops(const std::string& format) {
  if (format == "text") return max_text_ops;
  if (format == "trace") return max_trace_ops;
  if (format == "csv" || format == "csv-comms") return max_csv_ops;
  return max_json_ops;
}

/// Bad input: the message becomes the one `ctpipe:` line on stderr, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An invalid schedule with several problems: one `ctpipe:` line each on stderr, exit
/// code 2.
struct invalid_schedule : std::runtime_error {
  std::vector<std::string> lines;
  explicit invalid_schedule(std::vector<std::string> l) : std::runtime_error("ctpipe: invalid schedule"), lines(std::move(l)) {}
};

/// Prints one line on stderr, control characters of echoed input escaped (so a value
/// holding a newline cannot make it two lines). Never throws: it runs inside handlers.
void print_error(std::string_view message) noexcept {
  std::string line;
  for (char ch : message) {
    if (ch == '\n') line += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) line += '?';
    else line += ch;
  }
  line += '\n';
  std::fputs(line.c_str(), stderr);
}

std::string known_schedules() {
  std::string names;
  for (ctpipe::schedule_family f : ctpipe::all_families) names += (names.empty() ? "" : ", ") + std::string(ctpipe::family_name(f));
  return names;
}

/// A whole number in decimal: an optional '-', then digits; nothing else (no spaces,
/// no '+', no 0x). Values beyond int are clamped so that the library's range checks
/// reject them with their own message.
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

/// Parses the command line into `app`; `--help` prints the help. Returns true to go on,
/// false when the help was printed (exit code in `code`). Parse errors are bad input.
bool parse_command_line(CLI::App& app, int argc, char** argv, int& code);

/// `--width`: 20 to 100000 columns.
int parse_width(const std::string& text) {
  const int width = parse_whole(text, "--width");
  if (width < 20 || width > 100000) throw usage_error("ctpipe: --width must lie in [20, 100000]");
  return width;
}

/// Writes everything or reports that it could not (exit code 1).
bool write_stdout(const std::string& out) {
  const bool written = std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  return std::fflush(stdout) == 0 && written && std::ferror(stdout) == 0;
}

bool parse_command_line(CLI::App& app, int argc, char** argv, int& code) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
    code = write_stdout(app.help()) ? 0 : 1;
    return false;
  } catch (const CLI::ParseError& e) {
    throw usage_error(fmt::format("ctpipe: {}", e.what()));
  }
}

/// Writes the output, or says it could not: exit code 0 or 1.
int finish(const std::string& out) {
  if (write_stdout(out)) return 0;
  print_error("ctpipe: cannot write to standard output");
  return 1;
}

/// `ctpipe compare`: several schedules for the same P and m (and V where it applies) on
/// one time axis, with a table of their bubble, span bubble, peak and messages.
int run_compare(int argc, char** argv) {
  CLI::App app{"ctpipe compare: several schedules on one time axis, with a table of their bubble, peak and messages."};
  app.name("ctpipe compare");
  std::string schedules_text = "gpipe,1f1b,interleaved-1f1b,zb-h1,zb-h2,zbv";
  std::string P_text = "4";
  std::string m_text = "8";
  std::string V_text = "2";
  std::string costs_text;
  std::string gamma_text = "1";
  std::string format = "text";
  std::string width_text = "100";
  app.add_option("--schedules", schedules_text, "comma-separated schedules: " + known_schedules())->capture_default_str();
  app.add_option("-P", P_text, "pipeline ranks")->capture_default_str();
  app.add_option("-m", m_text, "micro-batches")->capture_default_str();
  app.add_option("-V", V_text, "model chunks per rank, for the schedules that take several (zbv always 2)")
      ->capture_default_str();
  app.add_option("--costs", costs_text, "op costs, exact: f=1,b=2,i=1,w=1,c=0");
  app.add_option("--gamma", gamma_text, "M_W / M_B of the finer memory model, in [0, 1]")->capture_default_str();
  app.add_option("--format", format, "text or svg")->capture_default_str();
  app.add_option("--width", width_text, "timeline width in columns (text), 20 to 100000")->capture_default_str();
  if (int code = 0; !parse_command_line(app, argc, argv, code)) return code;
  if (format != "text" && format != "svg") {
    throw usage_error(fmt::format("ctpipe: unknown format '{}' for compare (known: text, svg)", format));
  }
  const int width = parse_width(width_text);
  const int P = parse_whole(P_text, "-P");
  const int m = parse_whole(m_text, "-m");
  const int chunks = parse_whole(V_text, "-V");
  const ctpipe::costs cost = ctpipe::tool::parse_costs(costs_text);
  const ctpipe::rational gamma = ctpipe::parse_rational(gamma_text);
  ctpipe::check_shape({P, m});

  // Each schedule with its own V and placement; one it rejects becomes a table row.
  std::vector<ctpipe::io::report> reports;
  std::vector<std::string> rejected;
  std::string_view rest = schedules_text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string name(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    ctpipe::schedule_family family{};
    if (!ctpipe::family_from_name(name, family)) {
      throw usage_error(fmt::format("ctpipe: unknown schedule '{}' (known: {})", name, known_schedules()));
    }
    const bool chunked = family == ctpipe::schedule_family::interleaved_1f1b || family == ctpipe::schedule_family::looped_bfs ||
                         family == ctpipe::schedule_family::interleaved_zb;
    const int V = family == ctpipe::schedule_family::zbv ? 2 : chunked ? chunks : 1;
    const ctpipe::schedule_spec spec{family, {P, m, V, ctpipe::natural_placement(family)}};
    if (const char* why = ctpipe::spec_error(spec)) {
      rejected.push_back(fmt::format("{}: rejected ({})", name, why));
      continue;
    }
    if (static_cast<long long>(ctpipe::ops_per_rank(spec)) * P > max_json_ops) {
      throw usage_error(fmt::format("ctpipe: compare draws at most {} ops per schedule", max_json_ops));
    }
    reports.push_back(ctpipe::io::analyze(spec, cost, gamma));
  }
  if (reports.empty()) throw usage_error("ctpipe: compare needs at least one schedule that accepts the shape");

  std::string out;
  ctpipe::rational longest{0};
  for (const auto& rep : reports) longest = ctpipe::max(longest, rep.sim.makespan());
  if (format == "svg") {
    std::vector<const ctpipe::io::report*> pointers;
    for (const auto& rep : reports) pointers.push_back(&rep);
    out = ctpipe::io::render_svg_compare(pointers);
  } else {
    for (const auto& rep : reports) {
      out += ctpipe::io::render_title(rep) + ctpipe::io::render_timeline(rep, {width, false, longest}) + "\n";
    }
    out += fmt::format("{:<18}{:>12}{:>14}{:>9}{:>13}{:>14}{:>10}\n", "schedule", "makespan", "bubble", "", "span bubble",
                       "peak rank 0", "messages");
    for (const auto& rep : reports) {
      const ctpipe::rational bubble = rep.sim.bubble_fraction();
      out += fmt::format("{:<18}{:>12}{:>14}{:>9}{:>13}{:>14}{:>10}\n", ctpipe::family_name(rep.spec.family),
                         ctpipe::io::to_string(rep.sim.makespan()), ctpipe::io::to_string(bubble),
                         fmt::format("{:.1f}%", 100 * bubble.to_double()), ctpipe::io::to_string(rep.sim.span_bubble()),
                         ctpipe::io::to_string(rep.memory.peak(0)), rep.message_count);
    }
    for (const auto& line : rejected) out += line + "\n";
  }
  return finish(out);
}

/// One report in `format` (text, json, svg or trace); text in colour per `color`.
std::string render(const ctpipe::io::report& rep, const std::string& format, int width, const std::string& color) {
  if (format == "json") return ctpipe::io::to_json(rep).dump(2) + "\n";
  if (format == "svg") return ctpipe::io::render_svg(rep);
  if (format == "trace") return ctpipe::io::to_trace(rep).dump() + "\n";
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool tty = isatty(fileno(stdout)) != 0 && (no_color == nullptr || *no_color == '\0') &&
                   !(term != nullptr && std::string_view(term) == "dumb");
  return ctpipe::io::render_text(rep, {width, color == "always" || (color == "auto" && tty)});
}

/// The text of file `path` (`-`: standard input): at most io::max_csv_bytes + 1 bytes,
/// which parse_csv() rejects as too large. Bad input when it cannot be read.
std::string read_input(const std::string& path) {
  FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw usage_error(fmt::format("ctpipe: cannot read '{}'", path));
  std::string text;
  std::vector<char> chunk(1 << 16);
  std::size_t n = 0;
  while (text.size() <= ctpipe::io::max_csv_bytes && (n = std::fread(chunk.data(), 1, chunk.size(), file)) > 0) {
    text.append(chunk.data(), n);
  }
  const bool failed = std::ferror(file) != 0;
  if (file != stdin) std::fclose(file);
  if (failed) throw usage_error(fmt::format("ctpipe: cannot read '{}'", path));
  return text;
}

/// Most problems of an invalid schedule printed, one line each; a last line counts the
/// others.
constexpr std::size_t max_issue_lines = 20;

/// Raises every issue of a failed validation, one line each (at most max_issue_lines,
/// then `ctpipe: FILE: N more issues`): `ctpipe: FILE: rank R, step K, op A:
/// DESCRIPTION[ (needs B)]`. `step` is the op's index in its rank's list (0-based, idle
/// cells not counted); a missing op has none.
void require_valid(const std::vector<ctpipe::validation_issue>& issues, const std::string& path) {
  if (issues.empty()) return;
  std::vector<std::string> lines;
  for (const ctpipe::validation_issue& issue : issues) {
    if (lines.size() == max_issue_lines) break;
    std::string where = issue.step >= 0 ? fmt::format("rank {}, step {}, op {}", issue.rank, issue.step, ctpipe::io::action(issue.at))
                                        : fmt::format("rank {}, op {}", issue.rank, ctpipe::io::action(issue.at));
    std::string message = fmt::format("ctpipe: {}: {}: {}", path, where, ctpipe::fault_description(issue.what));
    if (issue.needs != issue.at) message += fmt::format(" (needs {})", ctpipe::io::action(issue.needs));
    lines.push_back(std::move(message));
  }
  if (issues.size() > max_issue_lines) {
    const std::size_t more = issues.size() - max_issue_lines;
    lines.push_back(fmt::format("ctpipe: {}: {} more issue{}", path, more, more > 1 ? "s" : ""));
  }
  throw invalid_schedule(std::move(lines));
}

/// The `--runtime` value: a model, or none (nullptr) for every model.
const ctpipe::runtime_model* parse_runtime(const std::string& text, ctpipe::runtime_model& storage) {
  if (text.empty()) return nullptr;
  if (!ctpipe::runtime_model_from_name(text, storage)) {
    throw usage_error(fmt::format("ctpipe: --runtime takes blocking, rendezvous, posted or batched, not '{}'", text));
  }
  return &storage;
}

/// `ctpipe validate FILE.csv`: reads a schedule in PyTorch's CSV format (P, m, V and the
/// placement from the file), validates it (compute-only: validate(); with transfers:
/// validate_lowered() under rendezvous and under buffered sends), simulates its compute
/// ops and prints the usual views.
int run_validate(int argc, char** argv) {
  CLI::App app{"ctpipe validate: checks and simulates a schedule in PyTorch's CSV format (one row per rank, "
               "actions such as 0F3 or 1SEND_F2), written by hand or by another framework. P, m, V and the stage "
               "placement come from the file; files with SEND/RECV ops are checked under rendezvous and buffered sends."};
  app.name("ctpipe validate");
  std::string path;
  std::string costs_text;
  std::string gamma_text = "1";
  std::string format = "text";
  std::string color = "auto";
  std::string width_text = "100";
  app.add_option("file", path, "the CSV file, or - for standard input")->required();
  app.add_option("--costs", costs_text, "op costs, exact: f=1,b=2,i=1,w=1,c=0 (as for ctpipe)");
  app.add_option("--gamma", gamma_text, "M_W / M_B of the finer memory model, in [0, 1]")->capture_default_str();
  app.add_option("--format", format, "text, json, svg or trace (as for ctpipe)")->capture_default_str();
  app.add_option("--width", width_text, "timeline width in columns (text), 20 to 100000")->capture_default_str();
  app.add_option("--color", color, "auto, always or never (text)")->capture_default_str();
  std::string runtime_text;
  app.add_option("--runtime", runtime_text,
                 "a file with SEND/RECV ops runs under every runtime model (blocking, rendezvous, posted, batched), "
                 "or only under the one named");
  if (int code = 0; !parse_command_line(app, argc, argv, code)) return code;
  ctpipe::runtime_model runtime_storage{};
  const ctpipe::runtime_model* only = parse_runtime(runtime_text, runtime_storage);
  if (format != "text" && format != "json" && format != "svg" && format != "trace") {
    throw usage_error(fmt::format("ctpipe: unknown format '{}' for validate (known: text, json, svg, trace)", format));
  }
  if (color != "auto" && color != "always" && color != "never") {
    throw usage_error(fmt::format("ctpipe: --color takes auto, always or never, not '{}'", color));
  }
  const int width = parse_width(width_text);
  const ctpipe::costs cost = ctpipe::tool::parse_costs(costs_text);
  const ctpipe::rational gamma = ctpipe::parse_rational(gamma_text);
  ctpipe::check_gamma(gamma);  // before reading the file

  ctpipe::schedule file;
  try {
    file = ctpipe::io::parse_csv(read_input(path));
  } catch (const ctpipe::error& e) {  // `ctpipe: CSV row ...` becomes `ctpipe: FILE: CSV row ...`
    throw usage_error(fmt::format("ctpipe: {}: {}", path, std::string_view(e.what()).substr(8)));
  }
  const ctpipe::schedule_view v = file.view();
  const ctpipe::pipeline_shape& shape = v.shape;
  // The format's limit applies to the compute ops, as for a generated schedule (a
  // lowered file adds at most two transfers per compute op: 3x in all); the validators'
  // and analyses' working memory also grows with S*m.
  std::size_t transfers = 0;
  for (const ctpipe::op o : v.ops) transfers += ctpipe::is_transfer(o.kind()) ? 1 : 0;
  const long long limit = max_ops(format);
  const long long compute_ops = static_cast<long long>(v.size() - transfers);
  const long long pairs = static_cast<long long>(shape.stages()) * shape.m;
  if (compute_ops > limit || static_cast<long long>(v.size()) > 3 * limit || pairs > limit) {
    throw usage_error(fmt::format(
        "ctpipe: {}: {} compute ops, {} ops in all and {} (stage, micro-batch) pairs are too many for --format {} "
        "(at most {}, {} and {})",
        path, compute_ops, v.size(), pairs, format, limit, 3 * limit, limit));
  }
  std::string verdict;
  ctpipe::schedule compute;
  std::vector<ctpipe::validation_issue> issues;
  const auto collect = [&issues](const ctpipe::validation_issue& i) { issues.push_back(i); };
  std::vector<ctpipe::tool::executed_run> runs;
  if (transfers == 0) {
    ctpipe::validate(v, collect);
    require_valid(issues, path);
    compute = std::move(file);
    verdict = "valid compute schedule";
  } else {
    // The ops themselves first; then the lists run under each runtime model. A file that
    // runs under at least one model is valid; one that hangs under every model is not.
    ctpipe::validate_lowered_ops(v, collect);
    require_valid(issues, path);
    runs = ctpipe::tool::execute_models(v, cost, only);
    std::string runs_under, hangs_under;
    for (const auto& r : runs) {
      std::string& list = r.run.completed() ? runs_under : hangs_under;
      list += (list.empty() ? "" : ", ") + std::string(ctpipe::runtime_model_name(r.model));
    }
    if (runs_under.empty()) throw invalid_schedule(ctpipe::tool::hang_lines(path, shape, runs));
    compute = ctpipe::compute_part(v);
    verdict = fmt::format("valid lowered schedule ({} transfer ops): runs under {}{}", transfers, runs_under,
                          hangs_under.empty() ? "" : "; hangs under " + hangs_under);
  }
  nlohmann::ordered_json executed;
  if (format == "json") {
    executed = runs.empty() ? ctpipe::tool::own_lowering_json(compute.view(), cost, only) : ctpipe::tool::executed_json(runs);
  }
  const ctpipe::io::report rep = ctpipe::io::analyze(std::move(compute), cost, gamma, path);
  std::string out = render(rep, format, width, color);
  if (format == "text") {
    out = fmt::format("{}: {}; P = {}, m = {}, V = {}, placement {} (from the file)\n{}\n", path, verdict, shape.P, shape.m,
                      shape.V, ctpipe::placement_name(shape.layout), ctpipe::tool::executed_text(runs)) + out;
  } else if (format == "json") {  // a lowered file's own lists; a compute file's lowering
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
    j["executed"] = executed;
    out = j.dump(2) + "\n";
  }
  return finish(out);
}

int run(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "compare") return run_compare(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "validate") return run_validate(argc - 1, argv + 1);
  CLI::App app{"ctpipe: pipeline-parallel schedules, simulated exactly.\n"
               "With no options it shows the article's default: 1F1B, P = 4, m = 8.\n"
               "`ctpipe compare --help` draws several schedules on one time axis; `ctpipe validate --help` checks a "
               "schedule in PyTorch's CSV format."};
  app.name("ctpipe");
  std::string schedule_name = "1f1b";
  std::string P_text = "4";
  std::string m_text = "8";
  std::string V_text;  // empty: the schedule's own (2 for zbv, else 1)
  std::string placement_text;
  std::string variant_text = "megatron";
  std::string group_text = "0";
  std::string warmup_text = "2";
  std::string costs_text;
  std::string gamma_text = "1";
  std::string format = "text";
  std::string color = "auto";
  std::string width_text = "100";
  app.add_option("--schedule,-s", schedule_name, "schedule: " + known_schedules())->capture_default_str();
  app.add_option("-P", P_text, "pipeline ranks")->capture_default_str();
  app.add_option("-m", m_text, "micro-batches")->capture_default_str();
  app.add_option("-V", V_text, "model chunks per rank (virtual stages); default 2 for zbv, else 1");
  app.add_option("--placement", placement_text, "loop or v (V-shape); default v for zbv, else loop");
  app.add_option("--variant", variant_text, "interleaved-1f1b: megatron, megatron-legacy or torch")
      ->capture_default_str();
  app.add_option("--group,-g", group_text,
                 "interleaved-1f1b: micro-batches per group (Megatron's microbatch_group_size_per_vp_stage); "
                 "0 = the variant's default (P, or m / max(1, m/P) for torch)")
      ->capture_default_str();
  app.add_option("--warmup-factor", warmup_text,
                 "interleaved-1f1b: warmup forwards added per rank away from the last (2, or 1)")
      ->capture_default_str();
  app.add_option("--costs", costs_text,
                 "op costs, exact: f=1,b=2,i=1,w=1,c=0 (any subset; 1/2 and 0.25 accepted; "
                 "b defaults to i+w when i or w is given)");
  app.add_option("--gamma", gamma_text, "M_W / M_B of the finer memory model, in [0, 1]")->capture_default_str();
  app.add_option("--format", format, "text, json, svg (the timeline and in-flight views), trace (Chrome trace-event "
                                     "JSON for Perfetto), csv (PyTorch's CSV schedule, compute ops) or csv-comms "
                                     "(with the SEND/RECV ops of lower())")
      ->capture_default_str();
  app.add_option("--width", width_text, "timeline width in columns (text), 20 to 100000")->capture_default_str();
  app.add_option("--color", color, "auto, always or never (text)")->capture_default_str();
  std::string runtime_text;
  app.add_option("--runtime", runtime_text,
                 "csv-comms: the runtime model to order the transfers for (blocking, rendezvous, posted, batched; "
                 "default blocking); json: the model of the `executed` entry (default every model)");

  if (int code = 0; !parse_command_line(app, argc, argv, code)) return code;
  ctpipe::runtime_model runtime_storage{};
  const ctpipe::runtime_model* only = parse_runtime(runtime_text, runtime_storage);

  ctpipe::schedule_spec spec{};
  if (!ctpipe::family_from_name(schedule_name, spec.family)) {
    throw usage_error(fmt::format("ctpipe: unknown schedule '{}' (known: {})", schedule_name, known_schedules()));
  }
  if (format != "text" && format != "json" && format != "svg" && format != "trace" && format != "csv" &&
      format != "csv-comms") {
    throw usage_error(fmt::format("ctpipe: unknown format '{}' (known: text, json, svg, trace, csv, csv-comms)", format));
  }
  if (color != "auto" && color != "always" && color != "never") {
    throw usage_error(fmt::format("ctpipe: --color takes auto, always or never, not '{}'", color));
  }
  const int width = parse_width(width_text);
  if (!ctpipe::variant_from_name(variant_text, spec.variant)) {
    throw usage_error(fmt::format("ctpipe: unknown variant '{}' (known: megatron, megatron-legacy, torch)", variant_text));
  }
  if (spec.family != ctpipe::schedule_family::interleaved_1f1b &&
      app.count("--variant") + app.count("--group") + app.count("--warmup-factor") > 0) {
    throw usage_error("ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only");
  }
  ctpipe::placement layout = ctpipe::natural_placement(spec.family);
  if (!placement_text.empty()) {
    if (placement_text != "loop" && placement_text != "v") {
      throw usage_error(fmt::format("ctpipe: --placement takes loop or v, not '{}'", placement_text));
    }
    layout = placement_text == "v" ? ctpipe::placement::v_shape : ctpipe::placement::loop;
  }
  const int V = app.count("-V") == 0 ? (spec.family == ctpipe::schedule_family::zbv ? 2 : 1) : parse_whole(V_text, "-V");
  spec.shape = {parse_whole(P_text, "-P"), parse_whole(m_text, "-m"), V, layout};
  spec.group = parse_whole(group_text, "--group");
  spec.warmup_factor = parse_whole(warmup_text, "--warmup-factor");
  ctpipe::check_spec(spec);  // throws ctpipe::error with the library's message
  const long long ops = static_cast<long long>(ctpipe::ops_per_rank(spec)) * spec.shape.P;
  const long long limit = max_ops(format);
  if (ops > limit) {
    throw usage_error(fmt::format("ctpipe: {} ops are too many for --format {} (at most {})", ops, format, limit));
  }
  const ctpipe::costs cost = ctpipe::tool::parse_costs(costs_text);
  const ctpipe::rational gamma = ctpipe::parse_rational(gamma_text);
  ctpipe::check_costs(cost);  // every format rejects bad options, even one that ignores them
  ctpipe::check_gamma(gamma);
  if (format == "csv" || format == "csv-comms") {
    const ctpipe::schedule s = ctpipe::generate(spec);
    if (format == "csv") return finish(ctpipe::io::to_csv(s.view()));
    const ctpipe::runtime_model model = only != nullptr ? *only : ctpipe::runtime_model::blocking;
    return finish(ctpipe::io::to_csv(ctpipe::lower(s.view(), cost, model).view()));
  }
  std::string out = render(ctpipe::io::analyze(spec, cost, gamma), format, width, color);
  if (format == "json") {
    // The lists lower() makes for each model, run under that model.
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
    j["executed"] = ctpipe::tool::own_lowering_json(ctpipe::generate(spec).view(), cost, only);
    out = j.dump(2) + "\n";
  }
  return finish(out);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const invalid_schedule& e) {
    for (const std::string& line : e.lines) print_error(line);
  } catch (const usage_error& e) {
    print_error(e.what());
  } catch (const ctpipe::error& e) {
    print_error(e.what());
  } catch (const std::exception& e) {
    print_error(std::string("ctpipe: ") + e.what());
  }
  return 2;
}
