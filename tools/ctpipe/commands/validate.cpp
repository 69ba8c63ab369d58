// `ctpipe validate FILE.csv`: reads a schedule in PyTorch's CSV format (P, m, V and the
// placement from the file), validates it (compute-only: validate(); with transfers: the
// ops with validate_lowered_ops(), then a run under every runtime model with execute()),
// simulates its compute ops and prints the usual views; for a file with transfers the
// text and SVG timelines draw the executed run (blocking's, or --runtime's; when that
// one hangs, the first model that runs) with its stalls. An invalid file is rejected
// input: every problem on its own `ctpipe:` line (exit code 2).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>  // std::none_of
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
#include "../lowered.hpp"
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
struct validate_options : options_of<cost_options, view_options, runtime_options, lowering_options> {
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
    check_lowering(transfers + copies != 0);
    if (transfers + copies == 0 && opts_.runtime_given && opts_.format != "json" && !opts_.torch_order()) {
      throw usage_error(
          fmt::format("ctpipe: {}: --runtime applies to a file with SEND/RECV ops, or to --format json "
                      "(the executed entry of the file's lowering)",
                      path_));
    }
    return file;
  }

  /// --lowering's rules for validate: own (ctpipe's lower() per model, json's executed
  /// entry) or a torch order, which lowers a compute-only file; --torch-passes and
  /// --max-active-stages only with a torch order (they change its order).
  void check_lowering(bool lowered) const {
    if (opts_.lowering == lowering_choice::deepseek) {
      throw usage_error(
          "ctpipe: validate --lowering takes own or a torch-* order; deepseek lowers DeepSeek's own dualpipev and "
          "dualpipe (ctpipe -s dualpipev --lowering deepseek), not a file");
    }
    if (opts_.lowering_given && lowered) {
      throw usage_error(fmt::format(
          "ctpipe: {}: --lowering lowers a compute-only file; this one has SEND/RECV ops (it is lowered already)",
          path_));
    }
    if (opts_.torch_passes_given && !opts_.torch_order()) {
      throw usage_error(
          "ctpipe: validate takes --torch-passes and --max-active-stages with a torch-* --lowering only (whose order "
          "they change)");
    }
  }

  /// The models `runs` completed under and those they hung under, each a list of names.
  static std::pair<std::string, std::string> runs_and_hangs(const std::vector<executed_run>& runs) {
    std::string runs_under, hangs_under;
    for (const executed_run& r : runs) {
      std::string& list = r.run.completed() ? runs_under : hangs_under;
      list += (list.empty() ? "" : ", ") + std::string(runtime_model_name(r.model));
    }
    return {runs_under, hangs_under};
  }

  /// Compute-only file `v` lowered by --lowering's torch order into `lists`, run under
  /// every runtime model (or --runtime's) into `runs`: a prediction, so a hang is
  /// reported, not refused. Returns the verdict line's text.
  std::string run_torch_lowering(schedule_view v, io::csv_schedule& lists, std::vector<executed_run>& runs) const {
    lists = lowered_lists(nullptr, v, opts_.cost, runtime_model::blocking, {}, opts_);
    std::size_t transfers = 0;
    for (const op o : lists.view().ops) transfers += is_transfer(o.kind()) ? 1 : 0;
    runs = execute_models(lists.view(), opts_.cost, opts_.runtime_or_all());
    const auto [runs_under, hangs_under] = runs_and_hangs(runs);
    io::torch_lowering order{};
    torch_order_of(opts_.lowering, order);
    std::string verdict = fmt::format(
        "valid compute schedule, lowered by {} ({} transfer ops): ", io::torch_lowering_name(order), transfers);
    if (!runs_under.empty()) verdict += "runs under " + runs_under + (hangs_under.empty() ? "" : "; ");
    return verdict + (hangs_under.empty() ? "" : "hangs under " + hangs_under);
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
    const auto [runs_under, hangs_under] = runs_and_hangs(runs);
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
    io::csv_schedule lists;  // a compute-only file's torch lowering (--lowering torch-*)
    if (transfers + copies == 0) {
      std::vector<validation_issue> issues;
      validate(v, [&issues](const validation_issue& i) { issues.push_back(i); });
      require_valid(issues, path_);
      verdict = opts_.torch_order() ? run_torch_lowering(v, lists, runs) : "valid compute schedule";
      compute = std::move(file);
    } else {
      verdict = run_lowered_file(v, transfers, copies, runs);
      compute = compute_part(v);
    }
    nlohmann::ordered_json executed;  // a lowered file's own lists; a compute file's lowering
    if (opts_.format == "json") {
      executed = runs.empty() ? own_lowering_json(compute.view(), opts_.cost, opts_.runtime_or_all(), {},
                                                  opts_.lowering == lowering_choice::least_loss)
                              : executed_json(runs);
    }
    io::report rep = io::analyze(std::move(compute), opts_.cost, opts_.gamma, path_);
    const schedule_view run_lists = opts_.torch_order() ? lists.view() : v;  // the lists `runs` ran
    if (!runs.empty() && (opts_.format == "text" || opts_.format == "svg")) draw_first_run(rep, run_lists, runs);
    if (opts_.format == "json") {
      nlohmann::ordered_json j = json_of(rep);
      j["executed"] = std::move(executed);
      return json_text(j);
    }
    std::string out = render(rep, opts_);
    if (opts_.format == "text") {
      // A compute-only file's torch order that hangs under every model run: the timeline
      // drawn is the simulation's, and the text says so.
      const bool none_ran = !runs.empty() && std::none_of(runs.begin(), runs.end(),
                                                          [](const executed_run& r) { return r.run.completed(); });
      out = fmt::format("{}: {}; P = {}, m = {}, V = {}, placement {} (from the file)\n{}{}{}\n", path_, verdict,
                        shape.P, shape.m, shape.V, placement_name(shape.layout), executed_text(runs),
                        none_ran ? "timeline: simulated (no run of these lists completes)\n" : "",
                        copied_peaks(run_lists, runs)) +
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
