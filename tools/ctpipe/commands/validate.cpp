// `ctpipe validate FILE.csv`: reads a schedule in PyTorch's CSV format (P, m, V and the
// placement from the file), validates it (compute-only: validate(); with transfers: the
// ops with validate_lowered_ops(), then a run under every runtime model with execute()),
// simulates its compute ops and prints the usual views; for a file with transfers the
// text and SVG timelines draw the executed run (blocking's, or --runtime's; when that
// one hangs, the first model that runs) with its stalls. An invalid file is rejected
// input: every problem on its own `ctpipe:` line (exit code 2).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "command.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"  // io::detail::spaced
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/plan/moves.hpp"
#include "ctpipe/lower/validate.hpp"
#include "../executed.hpp"
#include "../options.hpp"
#include "../output.hpp"

namespace ctpipe::tool {
namespace {

/// The text of file `path` (`-`: standard input): at most io::max_csv_bytes + 1 bytes,
/// which parse_csv() rejects as too large. Rejected input when it cannot be read.
std::string read_input(const std::string& path) {
  FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw usage_error(fmt::format("ctpipe: cannot read '{}'", path));
  std::string text;
  std::vector<char> chunk(1 << 16);
  std::size_t n = 0;
  while (text.size() <= io::max_csv_bytes && (n = std::fread(chunk.data(), 1, chunk.size(), file)) > 0) {
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
void require_valid(const std::vector<validation_issue>& issues, const std::string& path) {
  if (issues.empty()) return;
  std::vector<std::string> lines;
  for (const validation_issue& issue : issues) {
    if (lines.size() == max_issue_lines) break;
    std::string where = issue.step >= 0
                            ? fmt::format("rank {}, step {}, op {}", issue.rank, issue.step, io::action(issue.at))
                            : fmt::format("rank {}, op {}", issue.rank, io::action(issue.at));
    std::string message = fmt::format("ctpipe: {}: {}: {}", path, where, fault_description(issue.what));
    if (issue.needs != issue.at) message += fmt::format(" (needs {})", io::action(issue.needs));
    lines.push_back(std::move(message));
  }
  if (issues.size() > max_issue_lines) {
    const std::size_t more = issues.size() - max_issue_lines;
    lines.push_back(fmt::format("ctpipe: {}: {} more issue{}", path, more, more > 1 ? "s" : ""));
  }
  throw invalid_schedule(std::move(lines));
}

/// `ctpipe validate` (see the file comment).
/// `ctpipe validate`'s options.
struct validate_options : options_of<cost_options, view_options, runtime_options> {
  validate_options() {
    formats = {"text", "json", "svg", "trace"};
    format_help = "text, json, svg or trace (as for ctpipe)";
    command = "validate";
  }
};

class validate_command final : public command_with_options<validate_options> {
 public:
 private:
  void declare_own(CLI::App& app) override {
    app.add_option("file", path_, "the CSV file, or - for standard input")->required();
  }

  /// The file, parsed (io::parse_csv), within the format's limits: they apply to the
  /// compute ops, as for a generated schedule (a lowered file adds at most two transfers
  /// per compute op: 3x in all); the validators' and analyses' working memory also grows
  /// with S*m. Counts the file's transfers and copies.
  schedule read_file(std::size_t& transfers, std::size_t& copies) const {
    schedule file;
    try {
      file = io::parse_csv(read_input(path_));
    } catch (const error& e) {  // `ctpipe: CSV row ...` becomes `ctpipe: FILE: CSV row ...`
      throw usage_error(fmt::format("ctpipe: {}: {}", path_, std::string_view(e.what()).substr(8)));
    }
    const schedule_view v = file.view();
    transfers = copies = 0;  // SEND/RECV; SEND_ACT/RECV_ACT (docs/spec.md §8.3)
    for (const op o : v.ops) transfers += is_transfer(o.kind()) ? 1 : 0, copies += is_move(o.kind()) ? 1 : 0;
    const long long limit = max_ops(opts_.format);
    const std::string reader = "--format " + opts_.format;
    check_op_limit(static_cast<long long>(v.size() - transfers - copies), limit, reader, path_, "compute ops");
    check_op_limit(static_cast<long long>(v.size()), 3 * limit, reader, path_, "ops in all");
    check_op_limit(static_cast<long long>(v.shape.stages()) * v.shape.m, limit, reader, path_,
                   "(stage, micro-batch) pairs");
    if (transfers + copies == 0 && opts_.runtime_given && opts_.format != "json") {
      throw usage_error(
          fmt::format("ctpipe: {}: --runtime applies to a file with SEND/RECV ops, or to --format json "
                      "(the executed entry of the file's lowering)",
                      path_));
    }
    return file;
  }

  /// A lowered file: the ops themselves first; then the lists run under each runtime
  /// model. A file that runs under at least one model is valid; one that hangs under
  /// every model is not (docs/runtimes.md). Returns the verdict line's text.
  std::string run_lowered_file(schedule_view v, std::size_t transfers, std::size_t copies,
                               std::vector<executed_run>& runs) const {
    std::vector<validation_issue> issues;
    validate_lowered_ops(v, [&issues](const validation_issue& i) { issues.push_back(i); });
    require_valid(issues, path_);
    runs = execute_models(v, opts_.cost, opts_.runtime_or_all());
    std::string runs_under, hangs_under;
    for (const executed_run& r : runs) {
      std::string& list = r.run.completed() ? runs_under : hangs_under;
      list += (list.empty() ? "" : ", ") + std::string(runtime_model_name(r.model));
    }
    if (runs_under.empty()) throw invalid_schedule(hang_lines(path_, v.shape, runs));
    const std::string hangs = hangs_under.empty() ? "" : "; hangs under " + hangs_under;
    return copies == 0
               ? fmt::format("valid lowered schedule ({} transfer ops): runs under {}{}", transfers, runs_under, hangs)
               : fmt::format("valid lowered schedule ({} transfer ops, {} activation copy ops): runs under {}{}",
                             transfers, copies, runs_under, hangs);
  }

  std::string run_checked() override {  // the options are checked before the file is read
    std::size_t transfers = 0, copies = 0;
    schedule file = read_file(transfers, copies);
    const schedule_view v = file.view();
    const pipeline_shape& shape = v.shape;
    std::string verdict;
    schedule compute;
    std::vector<executed_run> runs;
    if (transfers + copies == 0) {
      std::vector<validation_issue> issues;
      validate(v, [&issues](const validation_issue& i) { issues.push_back(i); });
      require_valid(issues, path_);
      compute = std::move(file);
      verdict = "valid compute schedule";
    } else {
      verdict = run_lowered_file(v, transfers, copies, runs);
      compute = compute_part(v);
    }
    nlohmann::ordered_json executed;  // a lowered file's own lists; a compute file's lowering
    if (opts_.format == "json") {
      executed =
          runs.empty() ? own_lowering_json(compute.view(), opts_.cost, opts_.runtime_or_all()) : executed_json(runs);
    }
    io::report rep = io::analyze(std::move(compute), opts_.cost, opts_.gamma, path_);
    if (!runs.empty() && (opts_.format == "text" || opts_.format == "svg")) draw_first_run(rep, v, runs);
    if (opts_.format == "json") {
      nlohmann::ordered_json j = json_of(rep);
      j["executed"] = std::move(executed);
      return json_text(j);
    }
    std::string out = render(rep, opts_);
    if (opts_.format == "text") {
      out = fmt::format("{}: {}; P = {}, m = {}, V = {}, placement {} (from the file)\n{}{}\n", path_, verdict, shape.P,
                        shape.m, shape.V, placement_name(shape.layout), executed_text(runs), copied_peaks(v, runs)) +
            out;
    }
    return out;
  }

  /// For a file with activation copies: the in-flight peaks per rank with the moves the
  /// first completed run made (executed_moves(), replayed by check_rebalance() on the
  /// file's compute part for --gamma), one line; empty without copies, or when those
  /// moves break a rule of docs/spec.md §8.2 (then the line says which).
  std::string copied_peaks(schedule_view lists, const std::vector<executed_run>& runs) const {
    bool any = false;
    for (const op o : lists.ops) any = any || is_move(o.kind());
    if (!any) return "";
    for (const executed_run& r : runs) {
      if (!r.run.completed()) continue;
      const std::vector<activation_move> moves = executed_moves(lists, r.run);
      const schedule compute = compute_part(lists);
      const rebalance_check replay = check_rebalance(compute.view(), opts_.cost, moves, opts_.gamma);
      if (replay.problem != nullptr)
        return fmt::format("activation copies, {}: {} moves; {}\n", runtime_model_name(r.model), moves.size(),
                           replay.problem);
      return fmt::format("activation copies, {}: {} moves; in-flight peak per rank with them {} (chunks, gamma = {})\n",
                         runtime_model_name(r.model), moves.size(), io::detail::spaced(replay.peak),
                         io::to_string(opts_.gamma));
    }
    return "";
  }

  /// Makes the timelines draw the first run of `runs` that completed (one does): the
  /// first model's, or, when it hangs, the next that runs, the title naming the ones
  /// that hang (`blocking hangs`).
  static void draw_first_run(io::report& rep, schedule_view lowered, const std::vector<executed_run>& runs) {
    std::string hang;
    std::size_t hung = 0;
    for (const executed_run& r : runs) {
      if (!r.run.completed()) {
        hang += (hang.empty() ? "" : ", ") + std::string(runtime_model_name(r.model));
        ++hung;
        continue;
      }
      io::draw_executed(
          rep, io::executed_timeline_of(lowered, r.run, hung == 0 ? "" : hang + (hung > 1 ? " hang" : " hangs")));
      return;
    }
  }

  std::string path_;
};

}  // namespace

std::unique_ptr<command> make_validate() { return std::make_unique<validate_command>(); }

}  // namespace ctpipe::tool
