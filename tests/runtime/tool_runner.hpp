// Runs the `ctpipe` tool with arguments and captures its exit code, standard output and
// standard error: in this process through ctpipe::tool::invoke() (the function the tool's
// main() calls: the same parser, commands and readouts), or, where the shell is part of
// the test (redirections, `$(...)`, backslashes) or standard input is read (`-`), the
// built executable (CTPIPE_TOOL_PATH) through the shell; temporary files to hand it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "invoke.hpp"

namespace ctpipe::tests {

struct tool_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs the built executable: `args` is appended to the command line as is (the shell
/// splits it, expands it and applies its redirections). For what only the executable
/// shows: exit code 1 when standard output cannot be written, standard input.
inline tool_result run_tool_process(const std::string& args) {
  char err_path[] = "/tmp/ctpipe-test-stderr-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  const std::string command = std::string(CTPIPE_TOOL_PATH) + " " + args + " 2>" + err_path;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  tool_result result;
  std::array<char, 4096> chunk{};
  std::size_t n = 0;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) result.out.append(chunk.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path);
  std::ostringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  std::remove(err_path);
  return result;
}

/// The words the shell would make of `args` when it holds no expansion, redirection or
/// backslash (blanks separate words; '...' and "..." quote), else nothing: such a line
/// is the shell's to read (run_tool_process()), as is one with the word `-` (standard
/// input).
inline std::optional<std::vector<std::string>> plain_words(std::string_view args) {
  if (args.find_first_of("$`\\<>|;&(){}*?[]~#\n") != std::string_view::npos) return std::nullopt;
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const char c = args[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else if (c == '\'' || c == '"') {
      const std::size_t close = args.find(c, i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      word.append(args.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  for (const std::string& w : words)
    if (w == "-") return std::nullopt;
  return words;
}

/// Runs the tool on `args`, a command line as the shell would read it: in this process
/// (ctpipe::tool::invoke(), then the exit code main() gives when the output is written)
/// when plain_words() can split it, else the built executable (run_tool_process()). A
/// closing ` < /dev/null` (standard input empty) is dropped in this process: a command
/// line without the word `-` does not read standard input.
inline tool_result run_tool(const std::string& args) {
  constexpr std::string_view empty_input = " < /dev/null";
  std::string_view line = args;
  if (line.ends_with(empty_input)) line.remove_suffix(empty_input.size());
  const std::optional<std::vector<std::string>> words = plain_words(line);
  if (!words) return run_tool_process(args);
  ctpipe::tool::invocation run = ctpipe::tool::invoke(*words);
  return {run.exit_code, std::move(run.out), std::move(run.err)};
}

/// A file in /tmp holding `text`, removed when the object goes.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text) {
    char name[] = "/tmp/ctpipe-test-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path = name;
    std::ofstream(path, std::ios::binary) << text;
  }
  ~temp_file() { std::remove(path.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
};

}  // namespace ctpipe::tests
