// ctpipe: the command-line tool. `ctpipe [options]` shows one generated schedule (the
// article's default: 1F1B, P = 4, m = 8); the subcommands (`compare`, `validate`) are
// registered in commands/command.hpp, one file each under commands/. The options several
// commands share are declared and checked in one place (options.hpp).
//
// Exit codes (also in --help and docs/tool.md): 0 success; 2 rejected input or an invalid
// schedule (one line starting `ctpipe:` on stderr, nothing on stdout); 1 an internal error
// (the output cannot be written, an unexpected exception).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands/command.hpp"
#include "ctpipe/core/error.hpp"
#include "options.hpp"
#include "output.hpp"

#ifndef CTPIPE_VERSION
#error "CTPIPE_VERSION (CMake's project version) must be defined"
#endif

namespace {

using ctpipe::tool::usage_error;

constexpr const char* exit_codes =
    "Exit codes: 0 success; 2 rejected input or an invalid schedule (one `ctpipe:` line on stderr, nothing on "
    "stdout); 1 internal error (the output cannot be written, an unexpected failure).";

/// A made command and the CLI11 app it declared its options on.
struct made_command {
  std::unique_ptr<ctpipe::tool::command> command;
  CLI::App* app;
};

/// Parses the command line and runs the command it names; returns the exit code.
int run(int argc, char** argv) {
  const auto& entries = ctpipe::tool::commands;
  CLI::App root{entries[0].description, "ctpipe"};
  root.footer(exit_codes);  // subcommands made after this inherit it
  root.set_version_flag("--version", "ctpipe " CTPIPE_VERSION, "print `ctpipe <version>` and exit");
  root.require_subcommand(0, 1);
  std::vector<made_command> made;
  for (const auto& entry : entries) {
    CLI::App* app = *entry.name == '\0' ? &root : root.add_subcommand(entry.name, entry.description);
    made.push_back({entry.make(), app});
    made.back().command->declare(*app);
  }
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ctpipe::tool::finish(root.help());
  } catch (const CLI::CallForVersion& e) {
    return ctpipe::tool::finish(std::string(e.what()) + "\n");
  } catch (const CLI::ParseError& e) {
    throw usage_error(fmt::format("ctpipe: {}", e.what()));
  }
  for (const made_command& m : made) {
    if (m.app == &root || !m.app->parsed()) continue;
    for (const CLI::Option* option : root.get_options()) {
      if (option->count() > 0) {
        throw usage_error(fmt::format("ctpipe: {} comes before '{}': a command's options follow its name",
                                      option->get_name(), m.app->get_name()));
      }
    }
    return ctpipe::tool::finish(m.command->run(*m.app));
  }
  return ctpipe::tool::finish(made.front().command->run(root));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ctpipe::tool::invalid_schedule& e) {
    for (const std::string& line : e.lines) ctpipe::tool::print_error(line);
    return 2;
  } catch (const usage_error& e) {
    ctpipe::tool::print_error(e.what());
    return 2;
  } catch (const ctpipe::error& e) {
    ctpipe::tool::print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    ctpipe::tool::print_error(std::string("ctpipe: internal error: ") + e.what());
  } catch (...) {
    ctpipe::tool::print_error("ctpipe: internal error");
  }
  return 1;
}
