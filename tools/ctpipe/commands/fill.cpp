// `ctpipe fill`: independent work put into a schedule's bubbles (docs/spec.md §8.1,
// ctpipe/plan/fill.hpp): the article's vision-encoder preset or jobs of one's own,
// shown in the timeline (filled idle time '▓') with a section saying how much fitted and
// why the rest did not (and, with --allow-stretch, how long the pipeline gets when the
// rest is inserted as ops: ctpipe/plan/fill_stretch.hpp), or as JSON (the
// schedule's plus `fill`), SVG or a trace (those two without --allow-stretch: they draw
// the unstretched timeline only).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"
#include "../overlays.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe fill` (see the file comment).
/// `ctpipe fill`'s options.
struct fill_options : options_of<schedule_options, cost_options, scale_options, view_options> {
  fill_options() {
    formats = {"text", "json", "svg", "trace"};
    format_help = "text, json (the schedule's JSON plus \"fill\"), svg or trace";
    command = "fill";
  }
};

class fill final : public command_with_options<fill_options> {
 public:
 private:
  void declare_own(CLI::App& app) override {
    app.add_option(
           "--fill", requests_,
           "what to put into the bubbles, repeatable: encoder:f=T,b=T[,piece=T] (the article's vision encoder: per "
           "micro-batch a forward before its F on the first stage, a backward after its B/I there; indivisible "
           "unless piece= gives a minimum piece), or job:t=T[,name=N][,rank=R|any][,after=ACTION][,before=ACTION]"
           "[,piece=T][,count=N] (ACTION as in the CSV, e.g. 0B3)")
        ->required();
    app.add_flag(
        "--steady-state", steady_,
        "also fill back-to-back iterations: jobs due before their op may use the previous iteration's cool-down, "
        "jobs released after theirs the next warm-up");
    app.add_flag(
        "--allow-stretch", stretch_,
        "let the pipeline get longer to take what one iteration's bubbles could not: each job's remainder is inserted "
        "as an op into a rank's list (greedy insertion) and the schedule re-simulated; reports the new makespan, the "
        "stretch and where each remainder went (the timeline stays the unstretched one); --format text and json only");
    add_choice(app, "--fill-method", method_, {{"best", fill_method::best}, {"greedy", fill_method::greedy}},
               "best (default: max-flow for divisible jobs, branch-and-bound for up to 12 indivisible ones, else the "
               "greedy with the flow's bound) or greedy (the passes a constant expression runs)");
  }

  std::string run_checked() override {
    if (stretch_ && opts_.format != "text" && opts_.format != "json") {
      throw usage_error(fmt::format(
          "ctpipe: --allow-stretch shows in --format text and json only (--format {} draws the unstretched timeline)",
          opts_.format));
    }
    const schedule_spec spec = opts_.spec_for(opts_.families.front());
    check_spec(spec);
    check_op_limit(static_cast<long long>(total_ops(spec)), max_json_ops, "fill");
    const cost_scale scale{opts_.stage_scale, opts_.microbatch_scale};
    check_scale_lengths(opts_.stage_scale, opts_.microbatch_scale, spec.shape);
    check_scale(scale, spec.shape);
    io::report rep = io::analyze(spec, opts_.cost, opts_.gamma, opts_.stage_scale, opts_.microbatch_scale);
    apply_fill(rep, requests_, steady_, method_, stretch_);
    return render(rep, opts_);
  }

  std::vector<std::string> requests_;
  bool steady_ = false;
  bool stretch_ = false;
  fill_method method_ = fill_method::best;
};

}  // namespace

std::unique_ptr<command> make_fill() { return std::make_unique<fill>(); }

}  // namespace ctpipe::tool
