// The `ctpipe` tool as a function: one command line in, its exit code, standard output
// and standard error out, nothing written to the process's streams. main.cpp writes what
// it returns; the Python package (python/) calls it for the tool's readouts, so a
// request is parsed by one parser (the tool's options) and every view is the tool's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ctpipe::tool {

/// What one run of the tool gives: exit code 0 (success), 2 (rejected input or an invalid
/// schedule: `err` holds one or more `ctpipe:` lines, `out` is empty) or 1 (an internal
/// error); `out` is what goes on standard output; `err` the lines for standard error, each
/// ending in `\n` (also notes on success, e.g. dualpipe's CSV note).
struct invocation {
  int exit_code = 0;
  std::string out;
  std::string err;
};

/// Runs the tool on `args`, the command line without the program name
/// (`{"-s", "gpipe", "--format", "json"}`). Never throws; never writes to the process's
/// standard streams. Not reentrant across threads (the notes of one run are collected in
/// one place): the Python binding holds the GIL around it.
invocation invoke(const std::vector<std::string>& args);

/// Adds one line to the running invocation's standard error (escaped as print_error()
/// does): a note that does not change the exit code.
void note(std::string_view message);

/// `message` as one standard-error line: newlines as `\n`, other control characters as
/// `?`, then a newline.
std::string error_line(std::string_view message);

}  // namespace ctpipe::tool
