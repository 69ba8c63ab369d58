// The `ctpipe` tool's commands: the default view and the subcommands, each in its own
// file under commands/, registered in one table. A new command (split, search, ...) is a
// file defining its make_ function and one line in `commands`.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "../options.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace ctpipe::tool {

/// One command of the tool. The tool makes it, lets it declare its options on its own
/// CLI11 app, parses the command line, then runs the command that was named.
class command {
 public:
  virtual ~command() = default;
  /// Declares the command's options on `app`: its subcommand's app, or the root app for
  /// the default view.
  virtual void declare(CLI::App& app) = 0;
  /// Runs the command once `app` has parsed the command line and returns what goes on
  /// standard output. Rejected input raises usage_error or ctpipe::error (exit code 2).
  virtual std::string run(const CLI::App& app) = 0;
};

/// A command whose options are the struct `Options` (options_of the groups it takes,
/// declared and checked in options.cpp), plus any of its own (declare_own). run() checks
/// the options, then calls run_checked().
template <class Options>
class command_with_options : public command {
 public:
  /// Declares the command's own options, then its groups' in their order, then lets the
  /// command adjust those (adjust_shared).
  void declare(CLI::App& app) final {
    declare_own(app);
    opts_.declare(app);
    adjust_shared(app);
  }
  /// Checks the groups' rules (options_of::check), then runs run_checked().
  std::string run(const CLI::App& app) final {
    opts_.check(app);
    return run_checked();
  }

 protected:
  /// Declares the options only this command takes (none by default).
  virtual void declare_own(CLI::App& app) { static_cast<void>(app); }
  /// Rewords or removes shared options where this command means them differently
  /// (nothing by default).
  virtual void adjust_shared(CLI::App& app) { static_cast<void>(app); }
  /// Runs the command with the options checked; returns what goes on standard output.
  virtual std::string run_checked() = 0;

  Options opts_;  ///< the command's options (set up by the command's constructor, then read by CLI11)
};

/// A registered command: its name (empty for the default view, `ctpipe [options]`), the
/// description --help shows, and the function that makes it.
struct command_entry {
  const char* name;
  const char* description;
  std::unique_ptr<command> (*make)();
};

/// The default view: one generated schedule (commands/show.cpp).
std::unique_ptr<command> make_show();
/// `ctpipe validate FILE.csv` (commands/validate.cpp).
std::unique_ptr<command> make_validate();
/// `ctpipe split --model ...` (commands/split.cpp).
std::unique_ptr<command> make_split();
/// `ctpipe compare` (commands/compare.cpp).
std::unique_ptr<command> make_compare();
/// `ctpipe fill --fill ...` (commands/fill.cpp).
std::unique_ptr<command> make_fill();
/// `ctpipe rebalance` (commands/rebalance.cpp).
std::unique_ptr<command> make_rebalance();
/// `ctpipe search` (commands/search.cpp).
std::unique_ptr<command> make_search();
/// `ctpipe formula` (commands/formula.cpp).
std::unique_ptr<command> make_formula();
/// `ctpipe slots` (commands/slots.cpp).
std::unique_ptr<command> make_slots();

/// Every command: the default view first, then the subcommands in the order --help
/// lists them.
inline constexpr command_entry commands[] = {
    {"",
     "ctpipe: pipeline-parallel schedules, simulated exactly.\n"
     "With no options it shows the article's default: 1F1B, P = 4, m = 8.\n"
     "`ctpipe compare --help` draws several schedules on one time axis; `ctpipe validate --help` checks a "
     "schedule in PyTorch's CSV format.",
     make_show},
    {"compare", "several schedules on one time axis, with a table of their bubble, peak and messages.", make_compare},
    {"validate",
     "checks and simulates a schedule in PyTorch's CSV format (one row per rank, actions such as 0F3 or "
     "1SEND_F2), written by hand or by another framework. P, m, V and the stage placement come from the file; "
     "files with SEND/RECV ops run under every runtime model (blocking, rendezvous, posted, batched, stream-rank, "
     "stream-peer, stream-direction, stream-edge).",
     make_validate},
    {"split",
     "chooses how --model's layers go to the stages of a schedule, contiguous, to minimise its simulated makespan "
     "(optionally under --memory-limit); compares it with the even split and the Zero Bubble authors' advice.",
     make_split},
    {"fill",
     "puts independent work into a schedule's bubbles (--fill encoder:f=1/4,b=1/2: the article's vision encoder), "
     "without moving any pipeline op, and says how much fitted and why the rest did not.",
     make_fill},
    {"rebalance",
     "moves saved activations from the crowded ranks to the idle ones over copy channels (--capacity, --costs "
     "move=T), without delaying compute; shows the peaks after it beside the staircase, the bound no plan goes below, "
     "and BPipe's pairing.",
     make_rebalance},
    {"search",
     "searches the split-backward schedule (F, I, W) with the least bubble under --memory-limit per rank, for --costs "
     "and --gamma; says whether it is proved optimal, its lower bound, and what the Zero Bubble authors' heuristic "
     "gets.",
     make_search},
    {"formula",
     "the makespan, idle, bubble fraction and peaks of a schedule as exact functions of m, for every m, from its "
     "periodic certificate (docs/proofs.md): m0, the cycle, the base makespans and the increment.",
     make_formula},
    {"slots",
     "the activation slots and receive buffers each rank needs (PyTorch's liveness rule: F starts a lifetime, B or W "
     "ends it, endpoints inclusive), under the simulated timeline or, with --runtime, the executed one of ctpipe's "
     "lowering: per rank the slot count, equal to the largest overlap (minimal), and which lifetime holds which slot.",
     make_slots},
};

}  // namespace ctpipe::tool
