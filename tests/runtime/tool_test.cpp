// The `ctpipe` tool as a user runs it: the default view, JSON fields, bad input.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/format.hpp>
#include <ctpipe/io/torch_lowering.hpp>
#include <ctpipe/io/torch_passes.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>
#include <string>

#include "catch.hpp"
#include "tool_runner.hpp"

using ctpipe::tests::run_tool;
using ctpipe::tests::temp_file;

namespace {
/// The tool run with `args` refuses it: exit 2, nothing on stdout, exactly one line on
/// stderr, starting with `message`.
void require_refused(const char* args, const char* message) {
  INFO(args);
  const auto run = run_tool(args);
  REQUIRE(run.exit_code == 2);
  REQUIRE(run.out.empty());
  REQUIRE(run.err.starts_with(message));
  REQUIRE(run.err.find('\n') == run.err.size() - 1);  // exactly one line
}
}  // namespace

// Most tool tests run the tool in this process (tool_runner.hpp's run_tool()); this one
// checks that the executable, main() around the same invoke(), gives the same exit
// code, output and errors for each kind of result: the default view, every format,
// a subcommand, a note on standard error with success, a rejection, --help, --version.
TEST_CASE("the ctpipe executable gives what invoke() gives", "[tool]") {
  for (const char* args :
       {"", "--format json -s zbv -P 3 -m 5", "--format svg -s gpipe -P 2 -m 2", "--format trace",
        "--format csv-comms -s interleaved-1f1b -P 2 -m 4 -V 2", "compare -P 2 -m 4",
        "--format csv -s dualpipe -P 2 -m 4", "-P 0", "--schedule nope", "--help", "--version", "validate --help"}) {
    INFO(args);
    const auto in_process = run_tool(args);
    const auto process = ctpipe::tests::run_tool_process(args);
    REQUIRE(ctpipe::tests::plain_words(args).has_value());
    REQUIRE(process.exit_code == in_process.exit_code);
    REQUIRE(process.out == in_process.out);
    REQUIRE(process.err == in_process.err);
  }
  REQUIRE(run_tool("-P 0").exit_code == 2);
  REQUIRE_FALSE(run_tool("--format csv -s dualpipe -P 2 -m 4").err.empty());
}

// The words run_tool() hands invoke(): the shell's, or none when the shell must read the line.
TEST_CASE("run_tool splits a plain command line as the shell does", "[tool]") {
  using ctpipe::tests::plain_words;
  using words = std::vector<std::string>;
  REQUIRE(plain_words("") == words{});
  REQUIRE(plain_words("  -P 4   -m 8 ") == words{"-P", "4", "-m", "8"});
  REQUIRE(plain_words("-P ' 4' -m \"\"") == words{"-P", " 4", "-m", ""});
  REQUIRE(plain_words("--costs f='1'/2") == words{"--costs", "f=1/2"});
  for (const char* shell : {"-s \"$(printf x)\"", "> /dev/full", "validate - < x", "-P '4", "a | b", "-s \\x"}) {
    INFO(shell);
    REQUIRE_FALSE(plain_words(shell).has_value());
  }
}

TEST_CASE("ctpipe with no arguments shows the article's 1F1B P=4 m=8", "[tool]") {
  const auto run = run_tool("");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.err.empty());
  const std::string& out = run.out;
  REQUIRE(out.find("1f1b  P = 4  m = 8  V = 1") != std::string::npos);
  // The timeline: one row per rank, forwards and backwards labelled, bubbles shaded.
  for (const char* row : {"rank 0  F0-F1-F2-F3-\u2591", "rank 1  \u2591\u2591\u2591F0-F1-F2-\u2591",
                          "rank 3  \u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591F0-B0====F1-"}) {
    INFO(row);
    REQUIRE(out.find(row) != std::string::npos);
  }
  REQUIRE(out.find("F- forward  B= backward  \u2591 bubble (idle);  1 time unit = 3 columns") != std::string::npos);
  REQUIRE(out.find("simulated bubble 3/11 (27.3%) = formula (P-1)/(m+P-1)") != std::string::npos);
  REQUIRE(out.find("makespan 33 = formula (m+P-1)(t_f+t_b)") != std::string::npos);
  REQUIRE(out.find("messages 48 = formula 2m(PV-1)") != std::string::npos);
  // The in-flight view: a bar per rank with its peak.
  REQUIRE(out.find("in-flight activations") != std::string::npos);
  REQUIRE(out.find("\u2588 4 = formula min(m, P-r)") != std::string::npos);
  REQUIRE(out.find("\u2588 1 = formula min(m, P-r)") != std::string::npos);
  REQUIRE(out.find("\x1b[") == std::string::npos);  // no colour into a pipe
}

TEST_CASE("colour: --color always adds ANSI colours", "[tool]") {
  const auto run = run_tool("--color always");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("\x1b[44;97m") != std::string::npos);
}

TEST_CASE("json: --format json prints exactly the documented fields", "[tool]") {
  const auto run = run_tool("--format json");
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::json::parse(run.out);
  std::set<std::string> keys;
  for (const auto& item : j.items()) keys.insert(item.key());
  REQUIRE(keys == std::set<std::string>{"schedule",
                                        "P",
                                        "m",
                                        "V",
                                        "chunk_fraction",
                                        "placement",
                                        "pairs",
                                        "costs",
                                        "stage_scale",
                                        "microbatch_scale",
                                        "gamma",
                                        "makespan",
                                        "bubble_fraction",
                                        "bubble_fraction_formula",
                                        "idle",
                                        "span_bubble",
                                        "peak_in_flight",
                                        "peak_in_flight_formula",
                                        "messages",
                                        "memory",
                                        "ranks",
                                        "timeline",
                                        "executed"});
  REQUIRE(j.at("chunk_fraction") == "1");
  REQUIRE(j.at("pairs").is_null());
  REQUIRE(nlohmann::json::parse(run_tool("-s dualpipev --format json").out).at("pairs") == "fused");
  REQUIRE(nlohmann::json::parse(run_tool("-s dualpipe --pair-model split --format json").out).at("pairs") == "split");
  REQUIRE(run_tool("-s dualpipev")
              .out.starts_with("dualpipev  P = 4  m = 8  V = 2  placement v  costs t_f = 1, t_b = 2, t_i = 1, t_w = 1, "
                               "t_c = 0, t_fb = 3  pairs fused\n"));
  REQUIRE(run_tool("-s dualpipev --pair-model split").out.find("t_c = 0  pairs split\n") != std::string::npos);
  REQUIRE(nlohmann::json::parse(run_tool("-s zbv --format json").out).at("chunk_fraction") == "1/2");
  REQUIRE(nlohmann::json::parse(run_tool("-s interleaved-1f1b -V 3 --format json").out).at("chunk_fraction") == "1/3");
  // The schedule's own lowering, run under each runtime model: no loss under blocking
  // and posted, and none under rendezvous and batched at these costs (t_c = 0).
  for (const char* model : {"blocking", "rendezvous", "posted", "batched"}) {
    INFO(model);
    REQUIRE(j["executed"][model]["makespan"] == "33");
    REQUIRE(j["executed"][model]["stall"] == nlohmann::json::array({"0", "0", "0", "0"}));
  }
  const auto latency = nlohmann::json::parse(run_tool("--format json --costs c=1/2 --runtime rendezvous").out);
  REQUIRE(latency["executed"].size() == 1);
  REQUIRE(latency["executed"]["rendezvous"]["makespan"] == "101/2");
  REQUIRE(j["schedule"] == "1f1b");
  REQUIRE(j["P"] == 4);
  REQUIRE(j["placement"] == "loop");
  REQUIRE(j["costs"] == nlohmann::json{{"f", "1"}, {"b", "2"}, {"i", "1"}, {"w", "1"}, {"c", "0"}, {"fb", "3"}});
  REQUIRE(j["gamma"] == "1");
  REQUIRE(j["bubble_fraction"] == "3/11");
  REQUIRE(j["idle"] == nlohmann::json{"9", "9", "9", "9"});
  REQUIRE(j["span_bubble"] == "9");
  REQUIRE(j["ranks"][0][4] == "0B0");
  REQUIRE(j["timeline"][3][0] == nlohmann::json{"3F0", "3", "4"});
  REQUIRE(j["ranks"][0].size() == 16);
}

TEST_CASE("latency: a formula that does not apply is null, never false", "[tool]") {
  const auto run = run_tool("--format json --costs c=1/2 -P 2 -m 3");
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::json::parse(run.out);
  REQUIRE(j["bubble_fraction_formula"].is_null());
  REQUIRE(j["makespan"] == "14");
  const auto text = run_tool("--costs c=1/2 -P 2 -m 3");
  REQUIRE(text.out.find("no closed form: needs t_c = 0") != std::string::npos);
}

TEST_CASE("numbers are decimal: a leading zero is not octal", "[tool]") {
  const auto run = run_tool("-P 010 -m 8 --format json");
  REQUIRE(run.exit_code == 0);
  REQUIRE(nlohmann::json::parse(run.out)["P"] == 10);
}

TEST_CASE("output that cannot be written: exit 1 and a message - a closed stderr is no crash", "[tool]") {
  const auto full = run_tool("> /dev/full");
  REQUIRE(full.exit_code == 1);
  REQUIRE(full.err == "ctpipe: cannot write to standard output\n");
  const auto json_full = run_tool("--format json > /dev/full");
  REQUIRE(json_full.exit_code == 1);
  // Bad input while stderr is unwritable: still exit 2, not an abort (run_tool would
  // redirect stderr itself, so call the shell directly).
  const int status = std::system((std::string(CTPIPE_TOOL_PATH) + " -P 0 2>/dev/full").c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 2);
}

TEST_CASE("help: --help prints usage and exits 0", "[tool]") {
  const auto run = run_tool("--help");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("--schedule") != std::string::npos);
  REQUIRE(run.out.find("gpipe, 1f1b") != std::string::npos);
}

TEST_CASE("split --help does not list --layers, which split refuses (it chooses the layers)", "[tool]") {
  const auto help = run_tool("split --help");
  REQUIRE(help.exit_code == 0);
  CHECK(help.out.find("--model") != std::string::npos);
  CHECK(help.out.find("--layers") == std::string::npos);
  const auto refused = run_tool("split --model llama2-7b --layers 8,8,8,8");
  CHECK(refused.err == "ctpipe: split chooses the layers; --layers is for the other commands\n");
}

TEST_CASE("bad input: one ctpipe: line on stderr, exit 2, nothing on stdout", "[tool]") {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"-P 0", "ctpipe: P (pipeline ranks) must be >= 1\n"},
      {"-m 0", "ctpipe: m (micro-batches) must be >= 1\n"},
      {"-m -1", "ctpipe: m (micro-batches) must be >= 1\n"},
      {"-V 0", "ctpipe: V (model chunks per rank) must be >= 1\n"},
      {"-P abc", "ctpipe: "},
      {"-P 99999999999999999999", "ctpipe: "},
      {"--schedule nope",
       "ctpipe: unknown schedule 'nope' (known: gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zbv, "
       "interleaved-zb, dualpipev, dualpipe, v-half, v-min, combined-1f1b)\n"},
      {"--schedule gpipe -V 2", "ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)\n"},
      {"--costs f=1,b", "ctpipe: --costs takes key=value pairs"},
      {"--costs x=1", "ctpipe: --costs takes key=value pairs"},
      {"--costs f=1/0", "ctpipe: --costs f: rational with zero denominator\n"},
      {"--stage-scale 1,x,1,1", "ctpipe: --stage-scale: not an exact number (use 3, 1/2 or 0.25)\n"},
      {"--costs f=abc", "ctpipe: --costs f: not an exact number (use 3, 1/2 or 0.25)\n"},
      {"--costs b=-2", "ctpipe: costs must be >= 0\n"},
      {"--costs f=0", "ctpipe: t_f (forward cost) must be > 0\n"},
      {"--gamma 2", "ctpipe: gamma must lie in [0, 1]\n"},
      {"--gamma x", "ctpipe: --gamma: not an exact number (use 3, 1/2 or 0.25)\n"},
      {"--format yaml", "ctpipe: --format takes text, json, svg, trace, csv or csv-comms, not 'yaml'\n"},
      {"--color maybe", "ctpipe: --color takes auto, always or never"},
      {"--width 5", "ctpipe: --width must lie in [20, 100000]\n"},
      {"-P 5000", "ctpipe: P*V must be at most 4096 stages\n"},
      {"-P 4096 -m 65536", "ctpipe: 536870912 ops are too many for --format text (at most 16777216)\n"},
      {"-P 1024 -m 4096 --format json", "ctpipe: 8388608 ops are too many for --format json (at most 2097152)\n"},
      {"-P 1024 -m 1024 --format trace", "ctpipe: 2097152 ops are too many for --format trace (at most 524288)\n"},
      {"-P 0x10", "ctpipe: -P takes a whole number, not '0x10'\n"},
      {"-P ' 4'", "ctpipe: -P takes a whole number, not ' 4'\n"},
      {"-P '4 '", "ctpipe: -P takes a whole number, not '4 '\n"},
      {"-P ''", "ctpipe: -P takes a whole number, not ''\n"},
      {"-m 1e3", "ctpipe: -m takes a whole number, not '1e3'\n"},
      {"--group x -s interleaved-1f1b", "ctpipe: --group takes a whole number, not 'x'\n"},
      {"--schedule \"$(printf 'gpipe\\nx')\"", "ctpipe: unknown schedule 'gpipe\\nx' (known: "},
      {"-s dualpipev -m 7",
       "ctpipe: dualpipev needs m >= 2P (DeepSeek's DualPipeV.step asserts num_chunks >= num_ranks * 2)\n"},
      {"-s dualpipev -m 6 --structural-minimum", "ctpipe: dualpipev needs m >= 2P-1 (its structural minimum)\n"},
      {"-s 1f1b --structural-minimum", "ctpipe: --structural-minimum applies to dualpipev and dualpipe only\n"},
      {"-s 1f1b --pair-model split", "ctpipe: --pair-model applies to dualpipev, dualpipe and combined-1f1b only\n"},
      {"-s dualpipev --pair-model both", "ctpipe: --pair-model takes fused or split, not 'both'\n"},
      {"-s dualpipe -P 6 -m 13",
       "ctpipe: dualpipe needs m even and m >= 2P (DeepSeek's DualPipe.step asserts num_chunks % 2 == 0 and num_chunks "
       ">= num_ranks * 2)\n"},
      {"-s dualpipe -P 8 -m 14",
       "ctpipe: dualpipe needs m even and m >= 2P (DeepSeek's DualPipe.step asserts num_chunks % 2 == 0 and num_chunks "
       ">= num_ranks * 2)\n"},
      {"-s dualpipe -P 5 -m 10",
       "ctpipe: dualpipe needs P even (DeepSeek's DualPipe.step asserts num_ranks % 2 == 0)\n"},
      {"-s dualpipev -P 4 -m 7",
       "ctpipe: dualpipev needs m >= 2P (DeepSeek's DualPipeV.step asserts num_chunks >= num_ranks * 2)\n"},
      {"-s dualpipe --placement v",
       "ctpipe: dualpipe runs two model copies on the bidirectional placement (V = 2, placement bidirectional)\n"},
      {"--costs fb=-1", "ctpipe: costs must be >= 0\n"},
      {"--color always --format json", "ctpipe: --color applies to --format text only\n"},
      {"--width 80 --format svg", "ctpipe: --width applies to --format text only\n"},
      {"compare --width 80 --format json", "ctpipe: --width applies to --format text only\n"},
      {"compare --schedules gpipe,zbv -V 3",
       "ctpipe: -V applies to interleaved-1f1b, looped-bfs, interleaved-zb, combined-1f1b only, and --schedules names "
       "none of them\n"},
      {"compare --schedules 1f1b,zbv -P 8 -m 65533",
       "ctpipe: zbv: 3145584 ops are too many for compare (at most 2097152)\n"},
      // Every command's op limit speaks the one message (check_op_limit).
      {"fill --fill encoder:f=1,b=1 -P 1024 -m 1025", "ctpipe: 2099200 ops are too many for fill (at most 2097152)\n"},
      {"rebalance -P 64 -m 513", "ctpipe: 65664 ops are too many for rebalance (at most 65536)\n"},
      {"split --model llama2-7b -P 1024 -m 1025", "ctpipe: 2099200 ops are too many for split (at most 2097152)\n"},
      {"search -P 1024 -m 342", "ctpipe: 1050624 ops are too many for search --format text (at most 1048576)\n"},
      {"search -P 1024 -m 1024 --format json",
       "ctpipe: 3145728 ops are too many for search --format json (at most 1048576)\n"},
      // compare --rebalance takes rebalance's limit (it ran for minutes past it).
      {"compare --rebalance -P 64 -m 4096 --schedules 1f1b",
       "ctpipe: 1f1b: 524288 ops are too many for compare --rebalance (at most 65536)\n"},
      // A request every schedule refuses for the same reason is said once.
      {"compare --fill x --schedules 1f1b,gpipe",
       "ctpipe: --fill takes encoder:f=T,b=T[,piece=T] or job:t=T[,...] (see --help)\n"},
      // One message, not the shape's "needs V = 2" and then the family's "V must be 1".
      {"-s 1f1b --placement v", "ctpipe: 1f1b runs one model chunk per rank on the loop placement only\n"},
      {"-s zb-h1 --placement bidirectional",
       "ctpipe: zb-h1 runs one model chunk per rank on the loop placement only\n"},
      // The enumerations' one message (add_choice), with the command for its own format list.
      {"--runtime fast --format json",
       "ctpipe: --runtime takes blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction or "
       "stream-edge, not 'fast'\n"},
      {"--runtime stream --format csv-comms",
       "ctpipe: --runtime takes blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction or "
       "stream-edge, not 'stream'\n"},
      {"compare --format csv", "ctpipe: compare --format takes text, svg or json, not 'csv'\n"},
      // Options that would be ignored are refused.
      {"--format csv-comms --torch-passes none --max-active-stages 2",
       "ctpipe: --max-active-stages applies to --torch-passes all only (the UNSHARD/RESHARD window)\n"},
      {"search --method greedy --time-limit 5",
       "ctpipe: --time-limit applies to --method exact and auto (CBC's wall-clock time)\n"},
      {"compare --schedules ''", "ctpipe: --schedules needs at least one schedule (known: gpipe, "},
      {"compare --schedules 1f1b,", "ctpipe: unknown schedule '' (known: "},
      {"compare --schedules 1f1b,,gpipe", "ctpipe: unknown schedule '' (known: "},
      // One schedule's reason is said as the default view says it; several, each by name.
      {"compare --schedules interleaved-1f1b -m 3",
       "ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P\n"},
      {"compare --schedules interleaved-1f1b,dualpipe -m 3",
       "ctpipe: compare needs at least one schedule that accepts the shape; interleaved-1f1b: ctpipe: interleaved-1f1b "
       "(megatron) needs the group size in [P, m], but m < P; dualpipe: ctpipe: dualpipe needs m even"},
      {"--placement w", "ctpipe: --placement takes loop, v or bidirectional, not 'w'\n"},
      {"--bogus", "ctpipe: "},
      {"extra", "ctpipe: "},
  };
  for (const auto& c : cases) require_refused(c.args, c.message);
}

namespace {

/// The keys of a JSON object, in the order printed.
std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  return keys;
}

/// The whitespace-separated cells of the last line of `text` that starts with `start`
/// (in `ctpipe compare`'s text: the table row, after the title of the timeline).
std::vector<std::string> row_of(const std::string& text, const std::string& start) {
  std::istringstream lines(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) != 0) continue;
    std::istringstream cells(line);
    out.clear();
    for (std::string cell; cells >> cell;) out.push_back(cell);
  }
  return out;
}

const std::string exit_codes_footer =
    "Exit codes: 0 success; 2 rejected input or an invalid schedule (one `ctpipe:` line on stderr, nothing on "
    "stdout); 1 internal error (the output cannot be written, an unexpected failure).";

}  // namespace

TEST_CASE("version: --version prints ctpipe and CMake's project version", "[tool]") {
  const auto run = run_tool("--version");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.err.empty());
  REQUIRE(run.out == std::string("ctpipe ") + CTPIPE_VERSION + "\n");
  REQUIRE(std::string(CTPIPE_VERSION).find('.') != std::string::npos);
  REQUIRE(run_tool("--version > /dev/full").exit_code == 1);
}

TEST_CASE("subcommands: compare and validate are CLI11 subcommands with their own help", "[tool]") {
  const auto help = run_tool("--help");
  REQUIRE(help.exit_code == 0);
  REQUIRE(help.out.find("Subcommands:") != std::string::npos);
  REQUIRE(help.out.find("\n  compare ") != std::string::npos);
  REQUIRE(help.out.find("\n  validate ") != std::string::npos);
  REQUIRE(help.out.find("--version") != std::string::npos);
  const auto compare = run_tool("compare --help");
  REQUIRE(compare.exit_code == 0);
  REQUIRE(compare.out.find("Usage: ctpipe compare [OPTIONS]") != std::string::npos);
  REQUIRE(compare.out.find("--schedules") != std::string::npos);
  REQUIRE(compare.out.find("--schedule,") == std::string::npos);  // the default view's option is not compare's
  const auto validate = run_tool("validate --help");
  REQUIRE(validate.out.find("Usage: ctpipe validate [OPTIONS] file") != std::string::npos);
  REQUIRE(validate.out.find("-P ") == std::string::npos);  // P comes from the file
  // Options belong after their command's name; one command at a time.
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"-P 4 compare", "ctpipe: -P comes before 'compare': a command's options follow its name\n"},
      {"--format json validate -", "ctpipe: --format comes before 'validate': a command's options follow its name\n"},
      {"compare validate", "ctpipe: "},
      {"compare --schedule 1f1b", "ctpipe: "},
      {"validate -P 4 -", "ctpipe: "},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto run = run_tool(std::string(c.args) + " < /dev/null");
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err.starts_with(c.message));
  }
}

TEST_CASE("exit codes: documented in every command help, 0 success, 2 rejected, 1 unwritable output", "[tool]") {
  for (const char* args : {"--help", "compare --help", "validate --help"}) {
    INFO(args);
    REQUIRE(run_tool(args).out.find(exit_codes_footer) != std::string::npos);
  }
  for (const char* args : {"", "--format json", "compare", "compare --format json", "compare --format svg"}) {
    INFO(args);
    const auto run = run_tool(args);
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.err.empty());
    REQUIRE(!run.out.empty());
  }
  // Rejected input and an invalid schedule: 2, in every command.
  for (const char* args : {"-P 0", "compare -P 0", "compare --schedules nope", "compare --width 5",
                           "validate --gamma 2 -", "-s interleaved-1f1b -P 6 -m 3"}) {
    INFO(args);
    const auto run = run_tool(std::string(args) + " < /dev/null");
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err.starts_with("ctpipe: "));
  }
  const temp_file invalid_file("0F0,0B0\n1B0,1F0\n");
  const auto invalid = run_tool("validate " + invalid_file.path);
  REQUIRE(invalid.exit_code == 2);
  REQUIRE(invalid.out.empty());
  REQUIRE(invalid.err.starts_with("ctpipe: " + invalid_file.path + ": rank 1, step 0, op 1B0: "));
  // Output that cannot be written: 1, in every command.
  for (const char* args : {"compare > /dev/full", "compare --format json > /dev/full"}) {
    INFO(args);
    const auto run = run_tool(args);
    REQUIRE(run.exit_code == 1);
    REQUIRE(run.err == "ctpipe: cannot write to standard output\n");
  }
  const temp_file valid_file(run_tool("--format csv").out);
  REQUIRE(run_tool("validate " + valid_file.path).exit_code == 0);
  REQUIRE(run_tool("validate " + valid_file.path + " > /dev/full").exit_code == 1);
}

TEST_CASE("V: the families with several chunks default to V = 2, as in ctpipe compare", "[tool]") {
  const struct {
    const char* schedule;
    int V;
    std::size_t rank0_ops;  // (2 or 3 kinds) x m x V
  } cases[] = {{"gpipe", 1, 16}, {"1f1b", 1, 16}, {"interleaved-1f1b", 2, 32}, {"looped-bfs", 2, 32}, {"zb-h1", 1, 24},
               {"zb-h2", 1, 24}, {"zbv", 2, 48},  {"interleaved-zb", 2, 48}};
  const auto compared = nlohmann::json::parse(
      run_tool(
          "compare --format json --schedules gpipe,1f1b,interleaved-1f1b,looped-bfs,zb-h1,zb-h2,zbv,interleaved-zb")
          .out);
  REQUIRE(compared["schedules"].size() == 8);
  for (std::size_t k = 0; k < 8; ++k) {
    const auto& c = cases[k];
    INFO(c.schedule);
    const auto run = run_tool(std::string("--format json -s ") + c.schedule);
    REQUIRE(run.exit_code == 0);
    const auto j = nlohmann::json::parse(run.out);
    REQUIRE(j["V"] == c.V);
    REQUIRE(j["ranks"][0].size() == c.rank0_ops);
    // The same default as compare's: the same object.
    REQUIRE(compared["schedules"][k] == j);
  }
  // An explicit -V still wins; V = 1 runs the family on one chunk.
  REQUIRE(nlohmann::json::parse(run_tool("--format json -s interleaved-1f1b -V 4").out)["V"] == 4);
  REQUIRE(nlohmann::json::parse(run_tool("--format json -s looped-bfs -V 1").out)["V"] == 1);
  REQUIRE(run_tool("-s interleaved-1f1b").out.starts_with("interleaved-1f1b  P = 4  m = 8  V = 2"));
}

TEST_CASE("V = 1: --group and --warmup-factor are rejected where they do nothing, in every command", "[tool]") {
  const char* message =
      "ctpipe: --group and --warmup-factor only apply to interleaved schedules with V > 1 (interleaved-1f1b at V = 1 "
      "is plain 1F1B, or PyTorch's own rule with --variant torch)\n";
  for (const char* args :
       {"-s interleaved-1f1b -V 1 -g 4", "-s interleaved-1f1b -V 1 --group 0",
        "-s interleaved-1f1b -V 1 --warmup-factor 1", "-s interleaved-1f1b -V 1 --warmup-factor 2", "compare -V 1 -g 4",
        "compare -V 1 --warmup-factor 1", "compare --schedules interleaved-1f1b -V 1 --group 4"}) {
    INFO(args);
    const auto run = run_tool(args);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err == message);
  }
  // For a family without groups: the message it always gave, in both commands.
  for (const char* args : {"-s looped-bfs -g 4", "-s zbv --warmup-factor 1", "compare --schedules 1f1b,zbv -g 4"}) {
    INFO(args);
    const auto run = run_tool(args);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.err ==
            "ctpipe: --variant, --group and --warmup-factor apply to interleaved-1f1b only (--group also to "
            "combined-1f1b)\n");
  }
  // Where they apply (V > 1, the default now) they are taken and change the schedule.
  const auto factor1 = run_tool("--format json -s interleaved-1f1b --warmup-factor 1");
  REQUIRE(factor1.exit_code == 0);
  const auto factor2 = run_tool("--format json -s interleaved-1f1b");
  REQUIRE(nlohmann::json::parse(factor1.out)["peak_in_flight"] == nlohmann::json{"8", "7", "6", "5"});
  REQUIRE(nlohmann::json::parse(factor2.out)["peak_in_flight"] == nlohmann::json{"11", "9", "7", "5"});
  const auto compared =
      nlohmann::json::parse(run_tool("compare --format json --schedules interleaved-1f1b --warmup-factor 1").out);
  REQUIRE(compared["schedules"][0] == nlohmann::json::parse(factor1.out));
  // Without -g or --warmup-factor, V = 1 is accepted (plain 1F1B's timeline).
  const auto plain = nlohmann::json::parse(run_tool("--format json -s interleaved-1f1b -V 1").out);
  REQUIRE(plain["ranks"] == nlohmann::json::parse(run_tool("--format json").out)["ranks"]);
}

TEST_CASE("compare --format json: each schedule's ctpipe --format json object, and the rejected ones", "[tool]") {
  const auto run = run_tool("compare --format json --schedules 1f1b,interleaved-1f1b,zbv -P 4 -m 3");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.err.empty());
  const auto j = nlohmann::json::parse(run.out);
  REQUIRE(keys_of(nlohmann::ordered_json::parse(run.out)) == std::vector<std::string>{"schedules", "rejected"});
  REQUIRE(j["schedules"].size() == 2);
  REQUIRE(j["schedules"][0] == nlohmann::json::parse(run_tool("--format json -P 4 -m 3").out));
  REQUIRE(j["schedules"][1] == nlohmann::json::parse(run_tool("--format json -s zbv -P 4 -m 3").out));
  REQUIRE(keys_of(nlohmann::ordered_json::parse(run.out)["schedules"][1]) ==
          keys_of(nlohmann::ordered_json::parse(run_tool("--format json").out)));
  REQUIRE(j["schedules"][1]["V"] == 2);
  REQUIRE(j["schedules"][1]["peak_in_flight"].size() == 4);
  REQUIRE(j["rejected"] == nlohmann::json::array({{{"schedule", "interleaved-1f1b"},
                                                   {"reason",
                                                    "ctpipe: interleaved-1f1b (megatron) needs the group size "
                                                    "in [P, m], but m < P"}}}));
  // The default: six schedules, none rejected, costs and gamma in each.
  const auto all = nlohmann::json::parse(run_tool("compare --format json --costs f=1,i=1,w=1 --gamma 1/2").out);
  REQUIRE(all["schedules"].size() == 6);
  REQUIRE(all["rejected"].empty());
  for (const auto& s : all["schedules"]) {
    REQUIRE(s["gamma"] == "1/2");
    REQUIRE(s["costs"]["b"] == "2");
  }
}

TEST_CASE("compare: the memory column says its unit, full activations beside chunks", "[tool]") {
  const auto run = run_tool("compare");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("span bubble  peak r0 (full act.)  peak r0 (chunks)  messages\n") != std::string::npos);
  REQUIRE(run.out.find("peak r0: rank 0's peak in-flight activations (gamma = 1), in full activations of its layers "
                       "(chunks x chunk_fraction: chunks / V, chunks for dualpipe) and in model chunks\n") !=
          std::string::npos);
  // name, makespan, bubble, %, span bubble, full, chunks, messages: ZB-V holds as many
  // full activations as 1F1B (4), in twice as many chunks.
  REQUIRE(row_of(run.out, "1f1b ") == std::vector<std::string>{"1f1b", "33", "3/11", "27.3%", "9", "4", "4", "48"});
  REQUIRE(row_of(run.out, "zbv ") == std::vector<std::string>{"zbv", "51/2", "1/17", "5.9%", "0", "4", "8", "96"});
  REQUIRE(row_of(run.out, "interleaved-1f1b ")[5] == "11/2");  // exact: 11 chunks / V = 2
  REQUIRE(row_of(run.out, "interleaved-1f1b ")[6] == "11");
  const auto svg = run_tool("compare --format svg");
  REQUIRE(svg.out.find(">peak r0 (full act.)</text>") != std::string::npos);
  REQUIRE(svg.out.find(">peak r0 (chunks)</text>") != std::string::npos);
  // The notes under the table, as in the text view: what peak r0 counts, the rejected.
  const auto rejected = run_tool("compare --format svg --schedules 1f1b,interleaved-1f1b -m 3");
  REQUIRE(rejected.exit_code == 0);
  REQUIRE(rejected.out.find(">peak r0: rank 0's peak in-flight activations (gamma = 1)") != std::string::npos);
  REQUIRE(rejected.out.find(">interleaved-1f1b: rejected (ctpipe: interleaved-1f1b (megatron) needs the group size in "
                            "[P, m], but m &lt; P)</text>") != std::string::npos);
}

TEST_CASE("the runtime option applies where it changes something, and a hang under the one named says so", "[tool]") {
  // Ignored options read as applied: --runtime is refused where it would change nothing.
  const auto text = run_tool("--runtime rendezvous");
  REQUIRE(text.exit_code == 2);
  REQUIRE(text.err ==
          "ctpipe: --runtime applies to --format csv-comms (the order of the transfers) and json (the "
          "executed entry) only\n");
  REQUIRE(run_tool("--runtime rendezvous --format csv").exit_code == 2);
  REQUIRE(run_tool("--runtime rendezvous --format csv-comms").exit_code == 0);
  const temp_file compute(run_tool("--format csv").out);
  const auto on_compute = run_tool("validate --runtime posted " + compute.path);
  REQUIRE(on_compute.exit_code == 2);
  REQUIRE(on_compute.err.find("--runtime applies to a file with SEND/RECV ops") != std::string::npos);
  REQUIRE(run_tool("validate --runtime posted --format json " + compute.path).exit_code == 0);
  // Lists that run under blocking and posted but hang under rendezvous: named with
  // --runtime rendezvous, they are refused as hanging under rendezvous, not under every model.
  const temp_file crossed(
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F1,1F1,1RECV_F0,1F0,1B0,1SEND_B0,1B1,1SEND_B1\n");
  REQUIRE(run_tool("validate " + crossed.path).exit_code == 0);
  const auto named = run_tool("validate --runtime rendezvous " + crossed.path);
  REQUIRE(named.exit_code == 2);
  REQUIRE(named.out.empty());
  REQUIRE(named.err.starts_with("ctpipe: " + crossed.path +
                                ": hangs under rendezvous: rank 0, step 1, op 0SEND_F0: deadlock"));
}

TEST_CASE("interleaved-1f1b at V = 1 is plain 1F1B: its title names no group or warmup factor", "[tool]") {
  const auto v1 = run_tool("-s interleaved-1f1b -V 1");
  REQUIRE(v1.exit_code == 0);
  const std::string title = v1.out.substr(0, v1.out.find('\n'));
  REQUIRE(title.starts_with("interleaved-1f1b  P = 4  m = 8  V = 1  placement loop  costs"));
  const auto v2 = run_tool("-s interleaved-1f1b -V 2");
  REQUIRE(v2.out.substr(0, v2.out.find('\n')).find("  variant megatron  g = 4  warmup factor 2  costs") !=
          std::string::npos);
}

TEST_CASE(
    "the lowering option deepseek: DeepSeek's batches in csv-comms and json's executed entry, for dualpipev and "
    "dualpipe only",
    "[tool][dualpipe]") {
  for (const auto& [args, spec] :
       {std::pair{"-s dualpipev -P 4 -m 8",
                  ctpipe::schedule_spec{ctpipe::schedule_family::dualpipev, {4, 8, 2, ctpipe::placement::v_shape}}},
        std::pair{"-s dualpipe -P 4 -m 8", ctpipe::schedule_spec{ctpipe::schedule_family::dualpipe,
                                                                 {4, 8, 2, ctpipe::placement::bidirectional}}}}) {
    INFO(args);
    const auto csv = run_tool(std::string(args) + " --lowering deepseek --format csv-comms");
    REQUIRE(csv.exit_code == 0);
    REQUIRE(csv.out == ctpipe::io::to_torch_csv(ctpipe::lower_deepseek(spec).view()));
    REQUIRE(csv.out != run_tool(std::string(args) + " --format csv-comms --runtime batched").out);
    const auto json = nlohmann::json::parse(run_tool(std::string(args) + " --lowering deepseek --format json").out);
    const std::string makespan = json.at("makespan").get<std::string>();
    for (const char* model : {"blocking", "posted", "batched"}) {
      REQUIRE(json.at("executed").at(model).at("makespan") == makespan);  // loses nothing at the article's costs
    }
    REQUIRE(json.at("executed").at("rendezvous").at("deadlock") == true);  // its batches post sends with receives
  }
  const struct {
    const char* args;
    const char* message;
  } refused[] = {
      {"-s 1f1b --lowering deepseek --format csv-comms",
       "ctpipe: --lowering deepseek applies to dualpipev and dualpipe (DeepSeek's step())\n"},
      {"-s dualpipev --lowering deepseek",
       "ctpipe: --lowering applies to --format csv-comms and json (the executed entry) only\n"},
      {"-s dualpipev --lowering own --format svg",
       "ctpipe: --lowering applies to --format csv-comms and json (the executed entry) only\n"},
      {"-s dualpipev --lowering deepseek --runtime batched --format csv-comms",
       "ctpipe: --lowering deepseek writes DeepSeek's own batches, the same for every runtime model (--runtime applies "
       "to "
       "json's executed entry)\n"},
      {"-s dualpipev --lowering theirs --format csv-comms",
       "ctpipe: --lowering takes own, deepseek, torch-asap, torch-warmup, torch-consumer, torch-parity or least-loss, "
       "not "
       "'theirs'\n"},
  };
  for (const auto& c : refused) {
    INFO(c.args);
    const auto run = run_tool(c.args);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err == c.message);
  }
}

TEST_CASE("the torch lowerings in csv-comms, json's executed entry and validate", "[tool][torch]") {
  ctpipe::schedule_spec spec{ctpipe::schedule_family::interleaved_1f1b, {2, 4, 2}};
  spec.variant = ctpipe::interleaved_variant::torch;
  const ctpipe::schedule compute = ctpipe::generate(spec);
  const std::string args = "-s interleaved-1f1b --variant torch -P 2 -m 4";
  for (const auto which : ctpipe::io::all_torch_lowerings) {
    const std::string name = ctpipe::io::torch_lowering_name(which);
    INFO(name);
    const auto csv = run_tool(args + " --lowering " + name + " --format csv-comms");
    REQUIRE(csv.exit_code == 0);
    REQUIRE(csv.out == ctpipe::io::to_csv(ctpipe::io::lower_torch(compute.view(), which)));
    const ctpipe::io::torch_passes none{false, false, 3};
    const ctpipe::io::csv_schedule bare = ctpipe::io::lower_torch(compute.view(), which, none);
    REQUIRE(run_tool(args + " --lowering " + name + " --format csv-comms --torch-passes none").out ==
            ctpipe::io::to_csv(bare));
    // json's executed entry runs PyTorch's lists under each model; --torch-passes changes them.
    const auto json =
        nlohmann::json::parse(run_tool(args + " --lowering " + name + " --format json --torch-passes none").out);
    for (const ctpipe::runtime_model model : ctpipe::all_runtime_models) {
      const ctpipe::execution run = ctpipe::execute(bare.view(), ctpipe::costs{}, model);
      const auto& entry = json.at("executed").at(ctpipe::runtime_model_name(model));
      REQUIRE(entry.contains("deadlock") == !run.completed());
      if (run.completed()) REQUIRE(entry.at("makespan") == ctpipe::io::to_string(run.makespan()));
    }
    // validate lowers a compute-only file the same way and runs it under every model.
    const ctpipe::tests::temp_file file(ctpipe::io::to_csv(compute.view()));
    const auto checked = nlohmann::json::parse(
        run_tool("validate " + file.path + " --format json --lowering " + name + " --torch-passes none").out);
    REQUIRE(checked.at("executed") == json.at("executed"));
  }
  // PR 172833's order hangs on one stream per rank (issue 172668's deadlock), torch-asap
  // runs; validate names the cycle and still exits 0: the file is valid, the hang a
  // prediction.
  const ctpipe::tests::temp_file file(ctpipe::io::to_csv(compute.view()));
  const auto consumer = run_tool("validate " + file.path + " --lowering torch-consumer --runtime stream-rank");
  REQUIRE(consumer.exit_code == 0);
  REQUIRE(consumer.out.starts_with(file.path +
                                   ": valid compute schedule, lowered by torch-consumer (48 transfer ops): hangs "
                                   "under stream-rank; P = 2, m = 4, V = 2"));
  REQUIRE(consumer.out.find("  cycle: rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream; rank 0's stream: its head "
                            "0SEND_F1 needs 1RECV_F1, queued on rank 1's stream behind 1SEND_F0; rank 1's stream: its "
                            "head 1SEND_F0 needs 2RECV_F0, queued on rank 0's stream behind 0SEND_F1; back to rank 0's "
                            "stream\n") != std::string::npos);
  const auto asap = run_tool("validate " + file.path + " --lowering torch-asap");
  REQUIRE(
      asap.out.starts_with(file.path +
                           ": valid compute schedule, lowered by torch-asap (48 transfer ops): runs under blocking, "
                           "rendezvous, posted, batched, stream-rank, stream-peer, stream-direction, stream-edge;"));
  const struct {
    const char* args;
    const char* message;
  } refused[] = {
      {"-s dualpipe -P 2 -m 4 --lowering torch-asap --format csv-comms",
       "ctpipe: --lowering torch-* applies to the schedules PyTorch's runtime runs, not dualpipe"},
      {"-s 1f1b --lowering torch-parity --runtime stream-rank --format csv-comms",
       "ctpipe: --lowering torch-* writes PyTorch's own order, the same for every runtime model"},
      {"-s 1f1b --lowering torch-parity --format svg",
       "ctpipe: --lowering applies to --format csv-comms and json (the executed entry) only"},
      {"-s 1f1b --lowering torch_asap --format csv-comms",
       "ctpipe: --lowering takes own, deepseek, torch-asap, torch-warmup, torch-consumer, torch-parity or least-loss, "
       "not "
       "'torch_asap'"},
      {"-s 1f1b --torch-passes none --format json",
       "ctpipe: --torch-passes and --max-active-stages apply to --format csv-comms, and to json with a torch-*"},
  };
  for (const auto& c : refused) require_refused(c.args, c.message);
  const ctpipe::tests::temp_file lowered(run_tool(args + " --format csv-comms").out);
  const std::string validate_refused[][2] = {
      {"validate " + lowered.path + " --lowering torch-asap",
       "ctpipe: " + lowered.path +
           ": --lowering lowers a compute-only file; this one has SEND/RECV ops (it is lowered already)"},
      {"validate " + file.path + " --lowering deepseek",
       "ctpipe: validate --lowering takes own or a torch-* order; deepseek lowers DeepSeek's own"},
      {"validate " + file.path + " --torch-passes none",
       "ctpipe: validate takes --torch-passes and --max-active-stages with a torch-* --lowering only"},
      {"validate " + file.path + " --lowering torch-last", "ctpipe: --lowering takes own, deepseek, torch-asap"},
  };
  for (const auto& c : validate_refused) require_refused(c[0].c_str(), c[1].c_str());
}

TEST_CASE("csv-comms carries PyTorch's UNSHARD, RESHARD and REDUCE_GRAD, with --torch-passes and --max-active-stages",
          "[tool][torch]") {
  const auto all = run_tool("-s 1f1b -P 2 -m 2 --format csv-comms");
  REQUIRE(all.exit_code == 0);
  CHECK(all.out ==
        "0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n");
  CHECK(run_tool("-s 1f1b -P 2 -m 2 --format csv-comms --torch-passes reduce-grad").out ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
        "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1REDUCE_GRAD\n");
  CHECK(run_tool("-s 1f1b -P 2 -m 2 --format csv-comms --torch-passes none").out ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const auto window = run_tool("-s interleaved-1f1b -P 2 -m 4 --format csv-comms --max-active-stages 1");
  CHECK(window.out.starts_with("0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RESHARD,2UNSHARD,"));
  // The compute-only file stays compute-only: PyTorch's compute_only route adds them itself.
  CHECK(run_tool("-s 1f1b -P 2 -m 2 --format csv").out == "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  const struct {
    const char* args;
    const char* err;
  } rejected[] = {
      {"--format csv-comms --torch-passes fsdp", "ctpipe: --torch-passes takes all, reduce-grad or none, not 'fsdp'\n"},
      {"--format csv-comms --max-active-stages 0", "ctpipe: --max-active-stages must be >= 1\n"},
      {"--format csv-comms --max-active-stages x", "ctpipe: --max-active-stages takes a whole number, not 'x'\n"},
      {"--format csv --torch-passes none",
       "ctpipe: --torch-passes and --max-active-stages apply to --format csv-comms, and to json with a torch-* "
       "--lowering (whose order they change)\n"},
      {"--max-active-stages 2",
       "ctpipe: --torch-passes and --max-active-stages apply to --format csv-comms, and to json with a torch-* "
       "--lowering (whose order they change)\n"},
      {"--format json --torch-passes none",
       "ctpipe: --torch-passes and --max-active-stages apply to --format csv-comms, and to json with a torch-* "
       "--lowering (whose order they change)\n"},
  };
  for (const auto& r : rejected) {
    INFO(r.args);
    const auto run = run_tool(r.args);
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err == r.err);
  }
}

TEST_CASE("dualpipe's CSV: written for ctpipe validate, with a note that PyTorch's one-copy format cannot run it",
          "[tool][torch]") {
  for (const char* format : {"csv", "csv-comms"}) {
    INFO(format);
    const auto run = run_tool(std::string("-s dualpipe -P 2 -m 4 --format ") + format);
    CHECK(run.exit_code == 0);
    CHECK(!run.out.empty());
    CHECK(run.err.starts_with("ctpipe: note: dualpipe's two model copies share their stage indices"));
    CHECK(run_tool(std::string("-s dualpipev -P 2 -m 4 --format ") + format).err.empty());
  }
}

TEST_CASE("validate runs every stream model, names a stream hang's cycle and draws a stream run", "[tool][streams]") {
  const std::string data = std::string(CTPIPE_SOURCE_DIR) + "/tests/data/lowered/";
  const std::string cycle_file = data + "stream_fifo_cycle_P2_m2_V2.csv",
                    hol_file = data + "stream_head_of_line_P3_m2.csv";
  // No --runtime: every model, the verdict naming where the lists run and where they hang.
  const auto all = run_tool("validate " + cycle_file);
  REQUIRE(all.exit_code == 0);
  REQUIRE(all.out.find("valid lowered schedule (24 transfer ops): runs under blocking, posted, batched, stream-edge; "
                       "hangs under rendezvous, stream-rank, stream-peer, stream-direction") != std::string::npos);
  for (const char* name : {"stream-rank", "stream-peer", "stream-direction"}) {
    INFO(name);
    REQUIRE(all.out.find(std::string("executed, ") + name + "  hangs: rank 0, step 5, op 2F0: deadlock") !=
            std::string::npos);
  }
  REQUIRE(
      all.out.find("  cycle: rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream (activations); rank 0's stream "
                   "(activations): its head 0SEND_F1 needs 1RECV_F1, queued on rank 1's stream (activations) behind "
                   "1SEND_F0;") != std::string::npos);
  REQUIRE(all.out.find("rank 0's stream (0-1): its head 0SEND_F1") != std::string::npos);
  REQUIRE(all.out.find("executed, stream-edge  makespan 15/2") != std::string::npos);
  // The JSON names every model; a stream hang carries its cycle.
  const auto json = nlohmann::json::parse(run_tool("validate --format json " + cycle_file).out);
  REQUIRE(json["executed"].size() == 8);
  REQUIRE(json["executed"]["stream-rank"]["deadlock"] == true);
  REQUIRE(json["executed"]["stream-rank"]["cycle"].get<std::string>().ends_with("back to rank 0's stream"));
  REQUIRE(json["executed"]["stream-edge"]["makespan"] == "15/2");
  REQUIRE_FALSE(json["executed"]["rendezvous"].contains("cycle"));
  // Named alone, a model the lists hang under is rejected input, with the cycle.
  const auto rank = run_tool("validate --runtime stream-rank " + cycle_file);
  REQUIRE(rank.exit_code == 2);
  REQUIRE(rank.out.empty());
  REQUIRE(rank.err.starts_with("ctpipe: " + cycle_file + ": hangs under stream-rank: rank 0, step 5, op 2F0"));
  REQUIRE(
      rank.err.find("ctpipe: " + cycle_file +
                    ": under stream-rank: rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream; rank 0's stream: its "
                    "head 0SEND_F1 needs 1RECV_F1, queued on rank 1's stream behind 1SEND_F0; rank 1's stream: its "
                    "head 1SEND_F0 needs 2RECV_F0, queued on rank 0's stream behind 0SEND_F1; back to rank 0's "
                    "stream\n") != std::string::npos);
  REQUIRE(run_tool("validate --runtime stream-edge " + cycle_file).exit_code == 0);
  REQUIRE(run_tool("validate --runtime stream-edge --format json " + cycle_file).out.find("\"stream-edge\"") !=
          std::string::npos);
  // Head-of-line blocking: stream-rank's run drawn, with rank 1's stall (by hand in
  // execute_test.cpp: makespan 9 against 8, stall 2 on rank 1).
  const auto hol = run_tool("validate --costs b=1 --runtime stream-rank " + hol_file);
  REQUIRE(hol.exit_code == 0);
  REQUIRE(hol.out.find("executed, stream-rank  makespan 9  bubble 5/9 (55.6%)  stall per rank 0 2 0") !=
          std::string::npos);
  REQUIRE(hol.out.find("timeline: run executed under stream-rank: makespan 9 (simulated 8)") != std::string::npos);
  const auto svg = run_tool("validate --costs b=1 --runtime stream-rank --format svg " + hol_file);
  REQUIRE(svg.exit_code == 0);
  REQUIRE(svg.out.find("of the run executed under stream-rank") != std::string::npos);
  REQUIRE(svg.out.find("stall [2, 4]: a RECV queued behind other ops of its stream") != std::string::npos);
  REQUIRE(hol.out.find("stall (a RECV queued behind other ops of its stream)") != std::string::npos);
  const auto trace = run_tool("validate --costs b=1 --runtime stream-peer --format trace " + hol_file);
  REQUIRE(trace.exit_code == 0);
  REQUIRE_NOTHROW(nlohmann::json::parse(trace.out));  // the trace draws the simulation, as for every model
  // csv-comms for a stream model: lower()'s stream order for that policy (the key order
  // with each RECV moved up to its stream's previous transfer), not rendezvous's.
  const ctpipe::schedule il = ctpipe::generate({ctpipe::schedule_family::interleaved_1f1b, {4, 8, 2}});
  for (const ctpipe::runtime_model model : ctpipe::stream_models) {
    const std::string name = ctpipe::runtime_model_name(model);
    const std::string lists = run_tool("--format csv-comms --runtime " + name + " -s interleaved-1f1b").out;
    REQUIRE(lists == ctpipe::io::to_torch_csv(ctpipe::lower(il.view(), ctpipe::costs{}, model).view()));
    REQUIRE(lists != run_tool("--format csv-comms --runtime rendezvous -s interleaved-1f1b").out);
  }
}

TEST_CASE("slots: per rank the slot counts, the largest overlaps and the map, as the library plans them",
          "[tool][slots]") {
  using namespace ctpipe;
  const costs c{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}};
  const schedule g = generate({schedule_family::zb_h1, {4, 6}});
  const slot_plan simulated = plan_slots(g.view(), simulate(g.view(), c));
  const schedule lowered = lower(g.view(), c, runtime_model::posted);
  const slot_plan executed = plan_slots(lowered.view(), execute(lowered.view(), c, runtime_model::posted));
  for (const bool run : {false, true}) {
    INFO(run);
    const slot_plan& p = run ? executed : simulated;
    const schedule_view v = run ? lowered.view() : g.view();
    const std::string args =
        std::string("slots -s zb-h1 -P 4 -m 6 --costs f=1,i=2,w=1,c=1/2") + (run ? " --runtime posted" : "");
    const auto json = run_tool(args + " --format json");
    REQUIRE(json.exit_code == 0);
    REQUIRE(json.err.empty());
    const auto j = nlohmann::ordered_json::parse(json.out);
    REQUIRE(keys_of(j) == std::vector<std::string>{"schedule", "P", "m", "V", "timeline", "runtime", "ranks"});
    REQUIRE(j["timeline"] == (run ? "executed" : "simulated"));
    REQUIRE(j["runtime"] == (run ? nlohmann::ordered_json("posted") : nlohmann::ordered_json(nullptr)));
    REQUIRE(j["ranks"].size() == 4);
    const auto text = run_tool(args);
    REQUIRE(text.exit_code == 0);
    std::size_t i = 0;  // the library's lifetimes, in the JSON's order
    for (int r = 0; r < 4; ++r) {
      const auto& rank = j["ranks"][static_cast<std::size_t>(r)];
      REQUIRE(keys_of(rank) == std::vector<std::string>{"rank", "activation", "receive", "lifetimes"});
      for (const slot_kind k : {slot_kind::activation, slot_kind::receive}) {
        REQUIRE(rank[slot_kind_name(k)]["slots"] == p.count(r, k));
        REQUIRE(rank[slot_kind_name(k)]["largest_overlap"] == p.largest_overlap(r, k));
      }
      REQUIRE(text.out.find(fmt::format("rank {}: {} activation slots (largest overlap {}), {} receive buffers "
                                        "(largest overlap {})\n",
                                        r, p.count(r, slot_kind::activation),
                                        p.largest_overlap(r, slot_kind::activation), p.count(r, slot_kind::receive),
                                        p.largest_overlap(r, slot_kind::receive))) != std::string::npos);
      REQUIRE(rank["lifetimes"].size() == p.of(r, slot_kind::activation).size() + p.of(r, slot_kind::receive).size());
      for (const auto& life : rank["lifetimes"]) {
        const slot_lifetime& l = p.lifetimes()[i];
        REQUIRE(keys_of(life) == std::vector<std::string>{"stage", "microbatch", "kind", "start", "end", "slot",
                                                          "start_op", "end_op", "start_index", "end_index"});
        REQUIRE(life["stage"] == l.stage);
        REQUIRE(life["microbatch"] == l.microbatch);
        REQUIRE(life["kind"] == slot_kind_name(l.kind));
        REQUIRE(life["start"] == io::to_string(p.start(i)));
        REQUIRE(life["end"] == io::to_string(p.end(i)));
        REQUIRE(life["slot"] == l.slot);
        REQUIRE(life["start_op"] == io::action(v.ops[l.first_op]));
        REQUIRE(life["end_op"] == io::action(v.ops[l.last_op]));
        // Positions in the rank's list of actions; this schedule has no overlapped pair, so
        // they are the flat positions less the rank's offset.
        REQUIRE(life["start_index"] == l.first_op - v.offsets[static_cast<std::size_t>(r)]);
        REQUIRE(life["end_index"] == l.last_op - v.offsets[static_cast<std::size_t>(r)]);
        ++i;
      }
    }
    REQUIRE(i == p.lifetimes().size());
    // The map: each slot's line lists its lifetimes, e.g. `0F0..0W0 [0, 23/2]`.
    const slot_lifetime& first = p.lifetimes()[0];
    REQUIRE(text.out.find(fmt::format("  activation slot 0:  {}..{} [{}, {}]", io::action(v.ops[first.first_op]),
                                      io::action(v.ops[first.last_op]), io::to_string(p.start(0)),
                                      io::to_string(p.end(0)))) != std::string::npos);
  }
}

TEST_CASE("slots: bad input gives one ctpipe: line, exit 2, nothing on stdout", "[tool][slots]") {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"slots --runtime fast",
       "ctpipe: --runtime takes blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction or "
       "stream-edge, not 'fast'\n"},
      {"slots --format svg", "ctpipe: slots --format takes text or json, not 'svg'\n"},
      {"slots -s nope", "ctpipe: unknown schedule 'nope' (known: "},
      {"slots -P 0", "ctpipe: P (pipeline ranks) must be >= 1\n"},
      {"slots --costs f=x", "ctpipe: --costs f: not an exact number (use 3, 1/2 or 0.25)\n"},
      {"slots --stage-scale 1,1", "ctpipe: "},
      {"slots -s 1f1b -P 1024 -m 1025", "ctpipe: 2099200 ops are too many for slots (at most 2097152)\n"},
      {"slots --gamma 1/2", "ctpipe: "},  // a slot holds a whole activation: no gamma
      {"slots --width 80", "ctpipe: "},
      {"slots --bogus", "ctpipe: "},
      {"slots extra", "ctpipe: "},
  };
  for (const auto& c : cases) require_refused(c.args, c.message);
}

TEST_CASE("slots: an overlapped pair is one action of the lists, in the names and the indices", "[tool][slots]") {
  // A fresh tester's finding: the indices counted a pair's word and its B word apart, and
  // named them 1OVERLAP_F_B1 and 0B0, which no list the tool hands out holds. Each
  // lifetime's start_index and end_index now name its start_op and end_op in the rank's
  // list of the tool's JSON (and of csv-comms, for a lowered run).
  for (const char* args : {"-s dualpipev -P 2 -m 5", "-s combined-1f1b -P 2 -m 4", "-s dualpipe -P 4 -m 8"}) {
    INFO(args);
    const auto slots = nlohmann::json::parse(run_tool(std::string("slots --format json ") + args).out);
    const auto lists = nlohmann::json::parse(run_tool(std::string("--format json ") + args).out)["ranks"];
    int pairs = 0;
    for (const auto& rank : slots["ranks"]) {
      const auto& list = lists[rank["rank"].get<std::size_t>()];
      for (const auto& life : rank["lifetimes"]) {
        REQUIRE(life["end_index"].get<std::size_t>() < list.size());
        REQUIRE(list[life["start_index"].get<std::size_t>()] == life["start_op"]);
        REQUIRE(list[life["end_index"].get<std::size_t>()] == life["end_op"]);
        pairs += life["start_op"].get<std::string>().ends_with(")OVERLAP_F_B");
      }
    }
    REQUIRE(pairs > 0);
  }
  // Under a runtime model, against the csv-comms row of rank 0.
  const auto run = nlohmann::json::parse(
      run_tool("slots --format json -s combined-1f1b -P 2 -m 4 --runtime posted").out)["ranks"][0]["lifetimes"];
  std::vector<std::string> row;
  std::stringstream cells(
      run_tool("--format csv-comms --torch-passes none -s combined-1f1b -P 2 -m 4 --runtime posted").out);
  std::string line, cell;
  std::getline(cells, line);
  std::stringstream split(line);
  while (std::getline(split, cell, ',')) row.push_back(cell);
  for (const auto& life : run) {
    REQUIRE(row.at(life["start_index"].get<std::size_t>()) == life["start_op"]);
    REQUIRE(row.at(life["end_index"].get<std::size_t>()) == life["end_op"]);
  }
}

TEST_CASE("validate: under a stream model a rank waits for the rank its stream's head waits on", "[tool][streams]") {
  // A fresh tester's finding: rank 1's 1F0 waits for 1RECV_F0, queued on rank 1's one
  // stream behind 1RECV_B0, whose SEND rank 2 never reaches; it was said to wait for rank
  // 0 (whose 0SEND_F0 heads its stream). The waits-for cycle is ranks 1 and 2.
  const temp_file file(
      "0F0,0SEND_F0,0RECV_B0,0B0\n1RECV_B0,1RECV_F0,1F0,1SEND_F0,1B0,1SEND_B0\n"
      "2RECV_F0,2F0,2B0,2SEND_B0\n");
  const auto run = run_tool("validate " + file.path + " --runtime stream-rank");
  REQUIRE(run.exit_code != 0);
  REQUIRE(
      run.err.find("op 1F0: deadlock: this op waits for an op that never runs (needs 2SEND_B0); waits for rank 2") !=
      std::string::npos);
  REQUIRE(run.err.find("rank 1 waits for rank 2, which waits for rank 1") != std::string::npos);
  // Per peer each message pair has its own stream: the same file, the same cycle.
  const auto peer = run_tool("validate " + file.path + " --runtime stream-peer");
  REQUIRE(peer.err.find("rank 1 waits for rank 2, which waits for rank 1") != std::string::npos);
}

TEST_CASE("json and validate: a stream model's loss bound, where the stream order meets it", "[tool][streams]") {
  // Looped BFS, P = 2, m = 3, V = 2, t_c = 1/2, one stream per rank: ctpipe's stream order
  // runs 1 longer than simulated, and no order of the transfers does better.
  const auto run = run_tool("-s looped-bfs -P 2 -m 3 -V 2 --costs c=1/2 --runtime stream-rank --format json");
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::json::parse(run.out);
  const auto& entry = j["executed"]["stream-rank"];
  REQUIRE(entry["loss_bound"] == "1");
  REQUIRE(ctpipe::parse_rational(entry["makespan"].get<std::string>()) -
              ctpipe::parse_rational(j["makespan"].get<std::string>()) ==
          ctpipe::rational{1});
  REQUIRE_FALSE(j["executed"].contains("posted"));
  const auto all = nlohmann::json::parse(run_tool("-s looped-bfs -P 2 -m 3 -V 2 --costs c=1/2 --format json").out);
  REQUIRE_FALSE(all["executed"]["posted"].contains("loss_bound"));  // only the stream models have one
  REQUIRE(all["executed"]["stream-edge"]["loss_bound"] == "0");
  const std::string file = (std::filesystem::temp_directory_path() / "ctpipe_tool_test_bound.csv").string();
  std::ofstream(file)
      << run_tool("-s looped-bfs -P 2 -m 3 -V 2 --costs c=1/2 --runtime stream-rank --format csv-comms").out;
  const auto text = run_tool("validate --costs c=1/2 --runtime stream-rank " + file);
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.out.find("(no order of the transfers loses less than 1)") != std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE("the least-loss lowering: a stream model's fastest of ctpipe's orders, own under the other models",
          "[tool][streams]") {
  using namespace ctpipe;
  costs c;
  c.c = rational{1, 2};
  const schedule g = generate({schedule_family::interleaved_zb, {8, 16, 2}});
  const io::least_loss_lowering best = io::lower_least_loss(g.view(), c, runtime_model::stream_peer);
  const std::string args = "-s interleaved-zb -P 8 -m 16 --costs c=1/2 --lowering least-loss ";
  REQUIRE(run_tool(args + "--runtime stream-peer --format csv-comms").out == io::to_torch_csv(best.lists.view()));
  const auto j = nlohmann::json::parse(run_tool(args + "--format json").out);
  REQUIRE(parse_rational(j["executed"]["stream-peer"]["makespan"].get<std::string>()) -
              parse_rational(j["makespan"].get<std::string>()) ==
          rational{3, 2});  // torch-asap's lists moved to their streams' turns (the stream order: 13/2)
  const auto own = nlohmann::json::parse(run_tool("-s interleaved-zb -P 8 -m 16 --costs c=1/2 --format json").out);
  REQUIRE(parse_rational(own["executed"]["stream-peer"]["makespan"].get<std::string>()) -
              parse_rational(own["makespan"].get<std::string>()) ==
          rational{13, 2});
  REQUIRE(j["executed"]["posted"] == own["executed"]["posted"]);  // own under the other models
  REQUIRE(run_tool(args + "--runtime posted --format csv-comms").out ==
          run_tool("-s interleaved-zb -P 8 -m 16 --costs c=1/2 --runtime posted --format csv-comms").out);
}

TEST_CASE("validate: its own --lowering help, and a note when every run of a torch order hangs", "[tool][streams]") {
  const std::string main_help = run_tool("--help").out, validate_help = run_tool("validate --help").out;
  REQUIRE(main_help.find("deepseek (dualpipev, dualpipe") != std::string::npos);
  REQUIRE(validate_help.find("deepseek (dualpipev, dualpipe") == std::string::npos);  // refused by validate
  REQUIRE(validate_help.find("a compute-only file's lowering") != std::string::npos);
  // 1F1B P = 2, m = 2 under torch-parity hangs on one stream per rank (docs/pytorch.md).
  const std::string file = (std::filesystem::temp_directory_path() / "ctpipe_tool_test_onef.csv").string();
  std::ofstream(file) << run_tool("-s 1f1b -P 2 -m 2 --format csv").out;
  const auto hung = run_tool("validate --lowering torch-parity --runtime stream-rank " + file);
  REQUIRE(hung.exit_code == 0);
  REQUIRE(hung.out.find("hangs under stream-rank") != std::string::npos);
  REQUIRE(hung.out.find("timeline: simulated (no run of these lists completes)") != std::string::npos);
  const auto ran = run_tool("validate --lowering torch-parity --runtime posted " + file);
  REQUIRE(ran.out.find("timeline: simulated (no run") == std::string::npos);
  std::filesystem::remove(file);
}
