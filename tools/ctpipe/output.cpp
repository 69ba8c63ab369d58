// The `ctpipe` tool's output (see output.hpp).
#include "output.hpp"

#include <cstdio>

#include "ctpipe/io/json.hpp"
#include "ctpipe/io/svg.hpp"
#include "ctpipe/io/text.hpp"
#include "ctpipe/io/trace.hpp"
#include "invoke.hpp"
#include "options.hpp"

namespace ctpipe::tool {

long long max_ops(const std::string& format) {
  if (format == "text") return max_text_ops;
  if (format == "trace") return max_trace_ops;
  if (format == "csv" || format == "csv-comms") return max_csv_ops;
  return max_json_ops;
}

std::string json_text(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

nlohmann::ordered_json json_of(const io::report& rep) { return io::to_json(io::readout_of(rep)); }

std::string render(const io::report& rep, const view_options& opts) {
  const io::readout ro = io::readout_of(rep);
  if (opts.format == "json") return json_text(io::to_json(ro));
  if (opts.format == "svg") return io::render_svg(ro);
  if (opts.format == "trace") return json_text(io::to_trace(ro), -1);
  return io::render_text(ro, {opts.width, opts.colored()});
}

bool write_stdout(const std::string& out) {
  const bool written = std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  return std::fflush(stdout) == 0 && written && std::ferror(stdout) == 0;
}

int finish(const std::string& out) {
  if (write_stdout(out)) return 0;
  print_error("ctpipe: cannot write to standard output");
  return 1;
}

void print_error(std::string_view message) noexcept {
  try {
    std::fputs(error_line(message).c_str(), stderr);
  } catch (...) {
    std::fputs("ctpipe: internal error\n", stderr);
  }
}

}  // namespace ctpipe::tool
