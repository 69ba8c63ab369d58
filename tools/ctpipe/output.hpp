// The `ctpipe` tool's output: the size limits, the views in each format, writing to
// standard output and the one-line error on standard error.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "ctpipe/io/report.hpp"

namespace ctpipe::tool {

struct view_options;

/// Largest schedule the tool analyses (ops over all ranks), by format: measured working
/// memory at each limit is 0.6 to 2 GiB (bench/tool_limits.sh). The library itself has no
/// such limit.
inline constexpr long long max_text_ops = 1LL << 24;
/// JSON and SVG (every op is an element; also each schedule of `ctpipe compare`).
inline constexpr long long max_json_ops = 1LL << 21;
/// `ctpipe formula`'s direct simulations of the m below m0 (their ops summed over m; run
/// twice): a transient of thousands of micro-batches grows them as m0 squared (m0 = 8015
/// at P = 4 took 84 s in the dev preset's Release build before this limit).
inline constexpr long long max_below_ops = 1LL << 28;
/// Chrome trace (a trace event is four times a JSON op).
inline constexpr long long max_trace_ops = 1LL << 19;
/// CSV (compute ops; the lowered file has at most 3 times as many): as JSON, so that every
/// file the tool writes stays below the reader's limit (io::max_csv_bytes).
inline constexpr long long max_csv_ops = max_json_ops;

/// `ctpipe rebalance` and `compare --rebalance`: the planner is quadratic in the worst case
/// (ctpipe/plan/rebalance.hpp).
inline constexpr long long max_rebalance_ops = 1LL << 16;

/// The tool's op limit for `format` (text, json, svg, trace, csv, csv-comms).
long long max_ops(const std::string& format);

/// One report in the format of `opts` (text, json, svg or trace), each rendered from its
/// readout (io::readout_of()): text at its --width, coloured per --color.
std::string render(const io::report& rep, const view_options& opts);

/// A report's JSON object (docs/json.md), from its readout, for a command that adds its
/// own entries (`executed`, `search`) before json_text() prints it.
nlohmann::ordered_json json_of(const io::report& rep);

/// A JSON document as the tool prints it: indented by 2, one newline at the end; bytes of
/// echoed names that are not UTF-8 become U+FFFD.
std::string json_text(const nlohmann::ordered_json& j, int indent = 2);

/// Writes `out` on standard output: exit code 0, or 1 with `ctpipe: cannot write to
/// standard output` on standard error when it cannot be written.
int finish(const std::string& out);

/// Writes everything on standard output, or returns false.
bool write_stdout(const std::string& out);

/// Prints one line on stderr, control characters of echoed input escaped (so a value
/// holding a newline cannot make it two lines). Never throws: it runs inside handlers.
void print_error(std::string_view message) noexcept;

}  // namespace ctpipe::tool
