// `ctpipe validate FILE.csv`: reads a schedule in PyTorch's CSV format (P, m, V and the
// placement from the file), validates it (compute-only: validate(); with transfers:
// validate_lowered() under rendezvous and under buffered sends), simulates its compute
// ops and prints the usual views. An invalid file is rejected input (exit code 2).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "command.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/validate.hpp"
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

/// Raises the first issue of a failed validation as one line: `ctpipe: FILE[ (SEM
/// sends)]: rank R, step K, op A: DESCRIPTION[ (needs B)][; N more issues]`. `step` is
/// the op's index in its rank's list (0-based, idle cells not counted); a missing op has
/// none.
void require_valid(const validation_result& result, const std::string& path, const char* semantics) {
  if (result.ok()) return;
  const validation_issue& issue = result.first;
  std::string where = issue.step >= 0 ? fmt::format("rank {}, step {}, op {}", issue.rank, issue.step, io::action(issue.at))
                                      : fmt::format("rank {}, op {}", issue.rank, io::action(issue.at));
  std::string message = fmt::format("ctpipe: {}{}: {}: {}", path, semantics, where, fault_description(issue.what));
  if (issue.needs != issue.at) message += fmt::format(" (needs {})", io::action(issue.needs));
  if (result.count > 1) message += fmt::format("; {} more issue{}", result.count - 1, result.count > 2 ? "s" : "");
  throw usage_error(message);
}

/// `ctpipe validate` (see the file comment).
class validate_command final : public command_with_options {
 public:
  validate_command()
      : command_with_options({opt_costs | opt_width | opt_color,
                              {"text", "json", "svg", "trace"},
                              "text, json, svg or trace (as for ctpipe)",
                              "validate",
                              chunks_scope::every_family}) {}

 private:
  void declare_own(CLI::App& app) override {
    app.add_option("file", path_, "the CSV file, or - for standard input")->required();
  }

  std::string run_checked() override {  // the options are checked before the file is read
    schedule file;
    try {
      file = io::parse_csv(read_input(path_));
    } catch (const error& e) {  // `ctpipe: CSV row ...` becomes `ctpipe: FILE: CSV row ...`
      throw usage_error(fmt::format("ctpipe: {}: {}", path_, std::string_view(e.what()).substr(8)));
    }
    const schedule_view v = file.view();
    const pipeline_shape& shape = v.shape;
    // The format's limit applies to the compute ops, as for a generated schedule (a
    // lowered file adds at most two transfers per compute op: 3x in all); the validators'
    // and analyses' working memory also grows with S*m.
    std::size_t transfers = 0;
    for (const op o : v.ops) transfers += is_transfer(o.kind()) ? 1 : 0;
    const long long limit = max_ops(opts_.format);
    const long long compute_ops = static_cast<long long>(v.size() - transfers);
    const long long pairs = static_cast<long long>(shape.stages()) * shape.m;
    if (compute_ops > limit || static_cast<long long>(v.size()) > 3 * limit || pairs > limit) {
      throw usage_error(fmt::format(
          "ctpipe: {}: {} compute ops, {} ops in all and {} (stage, micro-batch) pairs are too many for --format {} "
          "(at most {}, {} and {})",
          path_, compute_ops, v.size(), pairs, opts_.format, limit, 3 * limit, limit));
    }
    std::string verdict;
    schedule compute;
    if (transfers == 0) {
      require_valid(validate(v), path_, "");
      compute = std::move(file);
      verdict = "valid compute schedule";
    } else {
      // Buffered sends allow every run rendezvous sends allow, and more: a fault under
      // buffered sends is the file's whatever the semantics (no label); one only under
      // rendezvous sends says so.
      require_valid(validate_lowered(v, send_semantics::buffered), path_, "");
      require_valid(validate_lowered(v, send_semantics::rendezvous), path_, " (rendezvous sends; buffered sends run)");
      compute = compute_part(v);
      verdict = fmt::format(
          "valid lowered schedule: runs to completion with rendezvous and with buffered sends ({} transfer ops)",
          transfers);
    }
    std::string out = render(io::analyze(std::move(compute), opts_.cost, opts_.gamma, path_), opts_);
    if (opts_.format == "text") {
      out = fmt::format("{}: {}; P = {}, m = {}, V = {}, placement {} (from the file)\n\n", path_, verdict, shape.P,
                        shape.m, shape.V, placement_name(shape.layout)) +
            out;
    }
    return out;
  }

  std::string path_;
};

}  // namespace

std::unique_ptr<command> make_validate() { return std::make_unique<validate_command>(); }

}  // namespace ctpipe::tool
