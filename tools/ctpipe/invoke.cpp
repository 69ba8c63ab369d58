// The `ctpipe` tool as a function (see invoke.hpp): parses the command line and runs the
// command it names. The exit codes are main.cpp's (and --help's).
#include "invoke.hpp"

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

namespace ctpipe::tool {
namespace {

std::string* running_err = nullptr;  // the running invocation's err (note())

constexpr const char* exit_codes =
    "Exit codes: 0 success; 2 rejected input or an invalid schedule (one `ctpipe:` line on stderr, nothing on "
    "stdout); 1 internal error (the output cannot be written, an unexpected failure).";

/// A made command and the CLI11 app it declared its options on.
struct made_command {
  std::unique_ptr<command> made;
  CLI::App* app;
};

/// Parses the command line and runs the command it names; returns its standard output.
std::string run(int argc, const char* const* argv) {
  const auto& entries = commands;
  CLI::App root{entries[0].description, "ctpipe"};
  root.footer(exit_codes);  // subcommands made after this inherit it
  root.set_version_flag("--version", "ctpipe " CTPIPE_VERSION, "print `ctpipe <version>` and exit");
  root.require_subcommand(0, 1);
  std::vector<made_command> made;
  for (const auto& entry : entries) {
    CLI::App* app = *entry.name == '\0' ? &root : root.add_subcommand(entry.name, entry.description);
    made.push_back({entry.make(), app});
    made.back().made->declare(*app);
  }
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return root.help();
  } catch (const CLI::CallForVersion& e) {
    return std::string(e.what()) + "\n";
  } catch (const CLI::ExtrasError&) {
    const CLI::App* command = &root;
    for (const made_command& m : made) command = m.app->parsed() ? m.app : command;
    throw usage_error(unexpected_arguments(*command));
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
    return m.made->run(*m.app);
  }
  return made.front().made->run(root);
}

}  // namespace

std::string error_line(std::string_view message) {
  std::string line;
  for (char ch : message) {
    if (ch == '\n')
      line += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      line += '?';
    else
      line += ch;
  }
  line += '\n';
  return line;
}

void note(std::string_view message) {
  if (running_err != nullptr) *running_err += error_line(message);
}

invocation invoke(const std::vector<std::string>& args) {
  invocation result;
  running_err = &result.err;
  std::vector<const char*> argv{"ctpipe"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    result.out = run(static_cast<int>(argv.size()), argv.data());
    running_err = nullptr;
    return result;
  } catch (const invalid_schedule& e) {
    for (const std::string& line : e.lines) result.err += error_line(line);
    result.exit_code = 2;
  } catch (const usage_error& e) {
    result.err += error_line(e.what());
    result.exit_code = 2;
  } catch (const ctpipe::error& e) {
    result.err += error_line(e.what());
    result.exit_code = 2;
  } catch (const std::exception& e) {
    result.err += error_line(std::string("ctpipe: internal error: ") + e.what());
    result.exit_code = 1;
  } catch (...) {
    result.err += error_line("ctpipe: internal error");
    result.exit_code = 1;
  }
  running_err = nullptr;
  result.out.clear();
  return result;
}

}  // namespace ctpipe::tool
