// Runs the built `ctpipe` tool (CTPIPE_TOOL_PATH) with arguments and captures its exit
// code, standard output and standard error; temporary files to hand it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ctpipe::tests {

struct tool_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// `args` is appended to the command line as is (the shell splits it).
inline tool_result run_tool(const std::string& args) {
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
