// ctpipe: the command-line tool. `ctpipe [options]` shows one generated schedule (the
// article's default: 1F1B, P = 4, m = 8); the subcommands (`compare`, `validate`) are
// registered in commands/command.hpp, one file each under commands/. The options several
// commands share are declared and checked in one place (options.hpp).
//
// Exit codes (also in --help and docs/tool.md): 0 success; 2 rejected input or an invalid
// schedule (one line starting `ctpipe:` on stderr, nothing on stdout); 1 an internal error
// (the output cannot be written, an unexpected exception).
#include <cstdio>
#include <string>
#include <vector>

#include "invoke.hpp"
#include "output.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  const ctpipe::tool::invocation run = ctpipe::tool::invoke(args);
  std::fputs(run.err.c_str(), stderr);
  if (run.exit_code != 0) return run.exit_code;
  return ctpipe::tool::finish(run.out);
}
