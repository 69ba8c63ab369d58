// The pictures: the readout model every view renders from against the JSON it prints,
// the SVG's own shapes against the simulation, the trace against the simulation,
// `ctpipe compare`, the README's committed picture, and the executed run's timeline
// (text and SVG) with its stalls.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/csv.hpp>
#include <ctpipe/io/json.hpp>
#include <ctpipe/io/readout.hpp>
#include <ctpipe/io/svg.hpp>
#include <ctpipe/io/text.hpp>
#include <ctpipe/io/trace.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cases.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;

namespace {

struct svg_rect {
  std::string cls;
  int rank = -1;
  std::string action;
  rational start;
  rational end;
  double x = 0;
  double width = 0;
};

/// The op, idle and stall rectangles of an SVG produced by render_svg, read back from its text.
std::vector<svg_rect> rects_of(const std::string& svg) {
  static const std::regex rect(
      R"re(<rect class="(op|idle|stall)" data-rank="(\d+)"(?: data-action="([^"]+)")? data-start="([^"]+)" data-end="([^"]+)" x="([^"]+)" y="[^"]+" width="([^"]+)")re");
  std::vector<svg_rect> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out.push_back({m[1], std::stoi(m[2]), m[3], parse_rational(m[4].str()), parse_rational(m[5].str()), std::stod(m[6]),
                   std::stod(m[7])});
  }
  return out;
}

io::report analyze_spec(const schedule_spec& spec, const costs& c = costs{}) {
  return io::analyze(spec, c, rational{1});
}

const std::vector<schedule_spec>& picture_cases() {
  static const std::vector<schedule_spec> cases = {ctpipe::tests::one_f_one_b(4, 8),
                                                   ctpipe::tests::gpipe(2, 1),
                                                   ctpipe::tests::interleaved(4, 8, 2),
                                                   ctpipe::tests::zero_bubble(schedule_family::zb_h1, 4, 8),
                                                   ctpipe::tests::zero_bubble(schedule_family::zbv, 4, 8),
                                                   ctpipe::tests::interleaved(16, 64, 4)};
  return cases;
}

}  // namespace

TEST_CASE("readout: the model's fields are the JSON's values, 1F1B P = 4 m = 8", "[pictures]") {
  const io::report rep = analyze_spec(ctpipe::tests::one_f_one_b(4, 8));
  const io::readout ro = io::readout_of(rep);
  const auto j = io::to_json(ro);
  const auto strings = [](const std::vector<rational>& values) {
    std::vector<std::string> out;
    for (const rational& x : values) out.push_back(io::to_string(x));
    return out;
  };
  // The article's values, in the model...
  REQUIRE(ro.schedule == "1f1b");
  REQUIRE((ro.P == 4 && ro.m == 8 && ro.V == 1 && ro.placement == placement::loop));
  REQUIRE(ro.costs == costs{});
  REQUIRE(ro.gamma == rational{1});
  REQUIRE(ro.makespan == rational{33});
  REQUIRE(ro.bubble_fraction == rational{3, 11});
  REQUIRE((ro.bubble_fraction_formula.holds && ro.bubble_fraction_formula.value == rational{3, 11}));
  REQUIRE(ro.idle == std::vector<rational>(4, rational{9}));
  REQUIRE(ro.span_bubble == rational{9});
  REQUIRE(ro.peak_in_flight == std::vector<rational>{rational{4}, rational{3}, rational{2}, rational{1}});
  REQUIRE(ro.peak_in_flight_formula.size() == 4);
  for (std::size_t r = 0; r < 4; ++r) REQUIRE(ro.peak_in_flight_formula[r].value == ro.peak_in_flight[r]);
  REQUIRE(ro.messages == 48);
  REQUIRE(ro.ranks.size() == 64);
  REQUIRE(io::action(ro.ranks.rank(0)[4]) == "0B0");
  REQUIRE(
      (ro.timeline.start(4) == rational{10} && ro.timeline.end(4) == rational{12}));  // 0B0 after 3B0 (4 to 6) ... 1B0
  REQUIRE(ro.timeline.makespan() == ro.makespan);
  REQUIRE((ro.drawn_run == nullptr && ro.drawn.makespan() == ro.makespan && ro.in_flight == &rep.memory));
  REQUIRE(ro.plain_peak_in_flight.empty());
  REQUIRE_FALSE(ro.interleaved);
  // ... and in the JSON, under the same names.
  REQUIRE(j["schedule"] == ro.schedule);
  REQUIRE((j["P"] == ro.P && j["m"] == ro.m && j["V"] == ro.V && j["placement"] == "loop"));
  REQUIRE(j["costs"] ==
          nlohmann::ordered_json{{"f", "1"}, {"b", "2"}, {"i", "1"}, {"w", "1"}, {"c", "0"}, {"fb", "3"}});
  REQUIRE(j["gamma"] == "1");
  REQUIRE(j["makespan"] == "33");
  REQUIRE(j["bubble_fraction"] == "3/11");
  REQUIRE(j["bubble_fraction_formula"] == "3/11");
  REQUIRE(j["idle"].get<std::vector<std::string>>() == strings(ro.idle));
  REQUIRE(j["span_bubble"] == "9");
  REQUIRE(j["peak_in_flight"].get<std::vector<std::string>>() == std::vector<std::string>{"4", "3", "2", "1"});
  REQUIRE(j["peak_in_flight_formula"].get<std::vector<std::string>>() == strings(ro.peak_in_flight));
  REQUIRE(j["messages"] == ro.messages);
  REQUIRE(j["ranks"][0][4] == "0B0");
  REQUIRE(j["timeline"][0][4] == nlohmann::ordered_json{"0B0", "10", "12"});
  REQUIRE(j["timeline"].size() == 4);
  // The report's overloads render the same model.
  REQUIRE(io::to_json(rep) == j);
  REQUIRE(io::render_text(rep) == io::render_text(ro));
  REQUIRE(io::render_svg(rep) == io::render_svg(ro));
  REQUIRE(io::to_trace(rep) == io::to_trace(ro));
}

TEST_CASE("readout: an interleaved schedule's title parameters, a split backward's plain peaks", "[pictures]") {
  const io::report interleaved = analyze_spec(ctpipe::tests::interleaved(4, 8, 2));
  const io::readout il = io::readout_of(interleaved);
  REQUIRE(il.interleaved);
  REQUIRE((il.interleaved->variant == interleaved_variant::megatron && il.interleaved->group == 4 &&
           il.interleaved->warmup_factor == 2));
  REQUIRE(io::render_title(il).find("placement loop  variant megatron  g = 4  warmup factor 2  costs") !=
          std::string::npos);
  // ZB-H1 with gamma = 1/2: the finer model's peaks beside the plain count's 4 4 4 4.
  const io::report zb = io::analyze(ctpipe::tests::zero_bubble(schedule_family::zb_h1, 4, 8), costs{}, rational{1, 2});
  const io::readout ro = io::readout_of(zb);
  REQUIRE(ro.peak_in_flight == std::vector<rational>{rational{4}, rational{7, 2}, rational{3}, rational{5, 2}});
  REQUIRE(ro.plain_peak_in_flight == std::vector<rational>(4, rational{4}));
  REQUIRE(io::render_in_flight(ro).find(" 7/2 [4] = formula") != std::string::npos);
  REQUIRE_FALSE(ro.interleaved);
}

TEST_CASE("SVG: one box per op at its simulated times - hatched idle per rank sums to the simulated idle",
          "[pictures]") {
  for (const schedule_spec& spec : picture_cases()) {
    for (const costs& c : {costs{}, costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 3}}}) {
      INFO(family_name(spec.family) << " P " << spec.shape.P << " m " << spec.shape.m << " t_c " << io::to_string(c.c));
      const io::report rep = analyze_spec(spec, c);
      const std::vector<svg_rect> rects = rects_of(io::render_svg(rep));
      // Pixels per time unit, from the first op's box. The SVG rounds x and widths to 1e-4
      // px: `scale_error` bounds the relative error of the scale, `rounding` a width's.
      double scale = 0;
      double scale_error = 0;
      constexpr double rounding = 0.5e-4;
      std::vector<int> idle_rects(static_cast<std::size_t>(spec.shape.P));
      std::size_t ops = 0;
      std::map<std::string, std::pair<rational, rational>> times;
      for (std::size_t k = 0; k < rep.ops.size(); ++k)
        times[io::action(rep.ops.view().ops[k])] = {rep.sim.start(k), rep.sim.end(k)};
      std::vector<rational> idle_exact(static_cast<std::size_t>(spec.shape.P));
      std::vector<double> idle_pixels(static_cast<std::size_t>(spec.shape.P));
      for (const svg_rect& r : rects) {
        if (r.cls == "op") {
          ++ops;
          REQUIRE(times.at(r.action) == std::make_pair(r.start, r.end));
          if (scale == 0 && r.end > r.start) {
            scale = r.width / (r.end - r.start).to_double();
            scale_error = rounding / r.width;
          }
        } else {
          idle_exact[static_cast<std::size_t>(r.rank)] += r.end - r.start;
          idle_pixels[static_cast<std::size_t>(r.rank)] += r.width;
          ++idle_rects[static_cast<std::size_t>(r.rank)];
        }
      }
      REQUIRE(ops == rep.ops.size());
      for (int r = 0; r < spec.shape.P; ++r) {
        REQUIRE(idle_exact[static_cast<std::size_t>(r)] == rep.sim.idle(r));
        const double idle = rep.sim.idle(r).to_double();
        const double bound = idle * scale_error + idle_rects[static_cast<std::size_t>(r)] * rounding / scale + 1e-9;
        REQUIRE(idle_pixels[static_cast<std::size_t>(r)] / scale == Approx(idle).epsilon(0).margin(bound));
      }
    }
  }
}

TEST_CASE("trace: one slice per op, its duration the simulated one, exactly", "[pictures]") {
  for (const schedule_spec& spec : picture_cases()) {
    const io::report rep = analyze_spec(spec, costs{rational{1, 3}, rational{2, 3}, rational{1, 2}, rational{1, 6}});
    const auto j = nlohmann::json::parse(io::to_trace(rep).dump());
    const rational tick = parse_rational(j["otherData"]["time_units_per_tick"].get<std::string>());
    std::map<std::string, std::pair<rational, rational>> times;
    for (std::size_t k = 0; k < rep.ops.size(); ++k)
      times[io::action(rep.ops.view().ops[k])] = {rep.sim.start(k), rep.sim.end(k)};
    std::size_t slices = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      ++slices;
      const auto& [start, end] = times.at(e["name"].get<std::string>());
      REQUIRE(rational{e["ts"].get<std::int64_t>()} * tick == start);
      REQUIRE(rational{e["dur"].get<std::int64_t>()} * tick == end - start);
      REQUIRE(e["pid"] == spec.shape.rank_of(e["args"]["stage"].get<int>()));
    }
    REQUIRE(slices == rep.ops.size());
  }
}

TEST_CASE("tool: --format svg and trace - compare draws several schedules on one axis", "[pictures][tool]") {
  const auto svg = ctpipe::tests::run_tool("--format svg");
  REQUIRE(svg.exit_code == 0);
  REQUIRE(svg.out.rfind("<svg ", 0) == 0);
  // 64 ops and one hatched box per idle interval: before a rank's first op, between
  // two ops that do not touch, after its last op (counted from the simulation).
  const io::report rep = analyze_spec(ctpipe::tests::one_f_one_b(4, 8));
  std::size_t gaps = 0;
  for (int r = 0; r < 4; ++r) {
    rational free_at{0};
    for (std::uint32_t k = rep.ops.view().offsets[static_cast<std::size_t>(r)];
         k < rep.ops.view().offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      gaps += rep.sim.start(k) > free_at ? 1 : 0;
      free_at = rep.sim.end(k);
    }
    gaps += free_at < rep.sim.makespan() ? 1 : 0;
  }
  REQUIRE(gaps == 15);
  REQUIRE(rects_of(svg.out).size() == 64 + gaps);
  const auto trace = ctpipe::tests::run_tool("--format trace -s zb-h1");
  REQUIRE(trace.exit_code == 0);
  REQUIRE(nlohmann::json::parse(trace.out)["traceEvents"].size() == 96 + 8);  // ops + 2 metadata per rank
  const auto compare = ctpipe::tests::run_tool("compare --format svg");
  REQUIRE(compare.exit_code == 0);
  std::size_t boxes = 0;
  for (const auto& r : rects_of(compare.out)) boxes += r.cls == "op";
  // gpipe, 1f1b, interleaved V = 2, zb-h1, zb-h2 (F, I, W), zbv (F, I, W on two chunks)
  REQUIRE(boxes == 64 + 64 + 128 + 96 + 96 + 192);
  const auto table = ctpipe::tests::run_tool("compare --schedules gpipe,1f1b,interleaved-1f1b -P 4 -m 3");
  REQUIRE(table.exit_code == 0);
  REQUIRE(table.out.find("interleaved-1f1b: rejected (ctpipe: interleaved-1f1b (megatron) needs the group size in [P, "
                         "m], but m < P)") != std::string::npos);
  REQUIRE(table.out.find("1f1b                        18") != std::string::npos);
  const auto bad = ctpipe::tests::run_tool("compare --schedules nope");
  REQUIRE(bad.exit_code == 2);
  REQUIRE(bad.err.rfind("ctpipe: unknown schedule 'nope'", 0) == 0);
}

TEST_CASE("the README's picture is what the tool draws today", "[pictures]") {
  std::ifstream committed(std::string(CTPIPE_SOURCE_DIR) + "/docs/ctpipe-default.svg");
  REQUIRE(committed.good());
  std::stringstream text;
  text << committed.rdbuf();
  REQUIRE(text.str() == ctpipe::tests::run_tool("--format svg").out);
}

namespace {

/// P = 2, m = 2: rank 1 receives both activations before its first forward. Under
/// blocking with the default costs it stalls in 1RECV_F1 from 1 to 2 (1F0's input is
/// there at 1): makespan 10 against the simulated 9. Under posted it runs as simulated.
constexpr const char* head_of_line_csv =
    "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
    "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n";

/// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("executed timeline: a report draws the executed run, its stall in a shade of its own", "[pictures]") {
  const schedule lowered = io::parse_csv(head_of_line_csv);
  const execution run = execute(lowered.view(), costs{}, runtime_model::blocking);
  io::executed_timeline timeline = io::executed_timeline_of(lowered.view(), run);
  REQUIRE(timeline.model == runtime_model::blocking);
  REQUIRE(timeline.makespan_ticks == 10);
  REQUIRE(timeline.stalls == std::vector<std::vector<io::tick_span>>{{}, {{1, 2}}});
  REQUIRE(timeline.stall == std::vector<rational>{rational{0}, rational{1}});
  REQUIRE(timeline.has_stall());
  // The compute ops' times, in compute_part() order: rank 1's F0 starts at 2, not 1.
  REQUIRE(timeline.start_ticks == std::vector<std::int64_t>{0, 1, 5, 8, 2, 3, 5, 6});

  io::report rep = io::analyze(compute_part(lowered.view()), costs{}, rational{1}, "head_of_line.csv");
  const std::string simulated = io::render_timeline(rep);
  REQUIRE(simulated.find("\u2592") == std::string::npos);
  io::draw_executed(rep, std::move(timeline));
  const std::string text = io::render_timeline(rep, {.width = 100});
  // 10 columns per time unit: rank 1 idles for 1, stalls from 1 to 2, F0 from 2.
  std::string stalled = "rank 1  ";
  for (int c = 0; c < 10; ++c) stalled += "\u2591";
  for (int c = 0; c < 10; ++c) stalled += "\u2592";
  REQUIRE(lines_starting(text, "rank 1")[0].starts_with(stalled + "F0--------B0"));
  REQUIRE(lines_starting(text, "rank 0")[0].find("\u2592") == std::string::npos);
  REQUIRE(text.find(
              "\u2591 bubble (idle)  \u2592 stall (blocked in a transfer, inputs ready);  1 time unit = 10 columns") !=
          std::string::npos);
  REQUIRE(io::render_title(rep).find("  timeline: run executed under blocking\n") != std::string::npos);
  const std::vector<std::string> readout = io::readout_lines(rep);
  REQUIRE(readout[0] ==
          "timeline: run executed under blocking: makespan 10 (simulated 9); stall per rank 0 1; idle per rank 4 4");
  REQUIRE(readout[1] == "simulated makespan 9 (no closed form: read from a file)");
  REQUIRE(readout[2] == "simulated idle per rank 3 3");

  // The SVG: the ops at their executed times, one stall box on rank 1 from 1 to 2, and
  // per rank the ops, the hatched idle and the stall fill the executed makespan.
  const std::string svg = io::render_svg(rep);
  const std::vector<svg_rect> rects = rects_of(svg);
  std::vector<rational> covered(2), stall(2);
  double scale = 0;
  for (const svg_rect& r : rects) {
    covered[static_cast<std::size_t>(r.rank)] += r.end - r.start;
    if (r.cls == "op" && scale == 0) scale = r.width / (r.end - r.start).to_double();
    if (r.cls == "op" && r.action == "1F0") REQUIRE(r.start == rational{2});
    if (r.cls != "stall") continue;
    stall[static_cast<std::size_t>(r.rank)] += r.end - r.start;
    REQUIRE(r.rank == 1);
    REQUIRE(r.start == rational{1});
    REQUIRE(r.end == rational{2});
    REQUIRE(r.x == Approx(70 + 1 * scale));
    REQUIRE(r.width == Approx(scale));
  }
  REQUIRE(stall == std::vector<rational>{rational{0}, rational{1}});
  REQUIRE(covered == std::vector<rational>{rational{10}, rational{10}});
  REQUIRE(svg.find("class=\"legend-stall\"") != std::string::npos);
  REQUIRE(svg.find(">timeline of the run executed under blocking (time units of t_f)<") != std::string::npos);
  REQUIRE(svg.find("t_c = 0  gamma = 1  timeline: run executed under blocking</text>") != std::string::npos);

  // Posted runs it as simulated: no stall, no stall legend, no stall box.
  io::report posted = io::analyze(compute_part(lowered.view()), costs{}, rational{1}, "head_of_line.csv");
  io::draw_executed(posted,
                    io::executed_timeline_of(lowered.view(), execute(lowered.view(), costs{}, runtime_model::posted)));
  REQUIRE(io::render_timeline(posted).find("\u2592") == std::string::npos);
  REQUIRE(io::render_timeline(posted).find("stall") == std::string::npos);
  REQUIRE(io::render_svg(posted).find("class=\"stall\"") == std::string::npos);
  REQUIRE(io::render_svg(posted).find("legend-stall") == std::string::npos);

  // A run that hangs has no timeline; a timeline fits only its own schedule.
  const schedule bad = io::parse_csv("0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1F0,1B0,1SEND_B0\n");
  REQUIRE_THROWS_WITH(io::executed_timeline_of(bad.view(), execute(bad.view(), costs{}, runtime_model::blocking)),
                      "ctpipe: an executed timeline needs a run that completed");
  REQUIRE_THROWS_WITH(io::executed_timeline_of(bad.view(), run),
                      "ctpipe: an executed timeline needs the execution of these lowered lists");
  io::report other = analyze_spec(ctpipe::tests::one_f_one_b(2, 3));
  REQUIRE_THROWS_WITH(io::draw_executed(other, io::executed_timeline_of(lowered.view(), run)),
                      "ctpipe: an executed timeline needs the lowered lists of the report's schedule");
}

TEST_CASE("ctpipe validate draws the executed run of a lowered file: blocking's, --runtime's, or the first that runs",
          "[pictures][tool]") {
  using ctpipe::tests::run_tool;
  using ctpipe::tests::temp_file;
  const temp_file stalled(head_of_line_csv);
  const auto text = run_tool("validate " + stalled.path);
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.out.find("executed, blocking    makespan 10  bubble 2/5 (40.0%)  stall per rank 0 1\n") !=
          std::string::npos);
  REQUIRE(text.out.find("t_c = 0  timeline: run executed under blocking\n") != std::string::npos);
  std::string stalled_row = "rank 1  ";
  for (int c = 0; c < 10; ++c) stalled_row += "\u2591";
  for (int c = 0; c < 10; ++c) stalled_row += "\u2592";
  REQUIRE(text.out.find("\n" + stalled_row + "F0--------B0==================F1") != std::string::npos);
  REQUIRE(text.out.find("\u2592 stall (blocked in a transfer, inputs ready)") != std::string::npos);
  REQUIRE(
      text.out.find(
          "\ntimeline: run executed under blocking: makespan 10 (simulated 9); stall per rank 0 1; idle per rank 4 4\n"
          "simulated makespan 9 (no closed form: read from a file)\n") != std::string::npos);
  const auto svg = run_tool("validate --format svg " + stalled.path);
  REQUIRE(svg.exit_code == 0);
  std::size_t stall_boxes = 0;
  for (const svg_rect& r : rects_of(svg.out)) {
    if (r.cls != "stall") continue;
    ++stall_boxes;
    REQUIRE(r.rank == 1);
    REQUIRE(r.start == rational{1});
    REQUIRE(r.end == rational{2});
  }
  REQUIRE(stall_boxes == 1);
  REQUIRE(svg.out.find("legend-stall") != std::string::npos);

  // --runtime posted: drawn as simulated, no stall anywhere.
  const auto posted = run_tool("validate --runtime posted " + stalled.path);
  REQUIRE(posted.out.find("t_c = 0  timeline: run executed under posted\n") != std::string::npos);
  REQUIRE(posted.out.find("\u2592") == std::string::npos);
  REQUIRE(posted.out.find("stall (") == std::string::npos);
  REQUIRE(run_tool("validate --format svg --runtime posted " + stalled.path).out.find("stall\"") == std::string::npos);

  // Blocking and rendezvous hang (each rank receives before it sends); posted runs.
  const temp_file grouped(
      "0F0,0SEND_F0,0F1,0RECV_B0,0SEND_F1,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1B0,1RECV_F1,1SEND_B0,1F1,1B1,1SEND_B1\n");
  const auto fallback = run_tool("validate " + grouped.path);
  REQUIRE(fallback.exit_code == 0);
  REQUIRE(fallback.out.find("t_c = 0  timeline: run executed under posted (blocking, rendezvous hang)\n") !=
          std::string::npos);
  REQUIRE(fallback.out.find("\ntimeline: run executed under posted: makespan 9") != std::string::npos);
  REQUIRE(run_tool("validate --format svg " + grouped.path)
              .out.find("timeline: run executed under posted (blocking, rendezvous hang)</text>") != std::string::npos);
  // --runtime batched names the model, which runs: no note.
  REQUIRE(run_tool("validate --runtime batched " + grouped.path).out.find("timeline: run executed under batched\n") !=
          std::string::npos);

  // The JSON keeps its fields; a compute-only file and a generated schedule keep the
  // simulated timeline (the README's text and docs/ctpipe-default.svg are tested apart).
  const auto json = nlohmann::json::parse(run_tool("validate --format json " + stalled.path).out);
  REQUIRE(json["makespan"] == "9");
  REQUIRE(json["executed"]["blocking"]["stall"] == nlohmann::json::array({"0", "1"}));
  const temp_file compute("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  const auto plain = run_tool("validate " + compute.path);
  REQUIRE(plain.out.find("timeline:") == std::string::npos);
  REQUIRE(plain.out.find("\nmakespan 9 (no closed form: read from a file)\n") != std::string::npos);
}

TEST_CASE("SVG: a file name of any bytes becomes well-formed XML text (U+FFFD for bad UTF-8 and controls)",
          "[pictures]") {
  const std::string name =
      std::string("bad\xff") + "name<&\x01\xc3\xa9\xed\xa0\x80.csv";  // 0xED 0xA0 0x80: a surrogate
  const io::report rep = io::analyze(generate({schedule_family::one_f_one_b, {2, 2}}), costs{}, rational{1}, name);
  const std::string svg = io::render_svg(rep);
  const std::string fffd = "\xEF\xBF\xBD";
  // 0xFF, the control 0x01 and each byte of the surrogate sequence are replaced; the
  // well-formed "é" (0xC3 0xA9) is kept; < and & are escaped.
  REQUIRE(svg.find("bad" + fffd + "name&lt;&amp;" + fffd + "\xc3\xa9" + fffd + fffd + fffd + ".csv") !=
          std::string::npos);
  REQUIRE(svg.find('\xff') == std::string::npos);
  // U+FFFE and U+FFFF are well-formed UTF-8 that XML 1.0 forbids.
  const io::report nonchars = io::analyze(generate({schedule_family::one_f_one_b, {2, 2}}), costs{}, rational{1},
                                          "a\xef\xbf\xbe\xef\xbf\xbf"
                                          "b.csv");
  REQUIRE(io::render_svg(nonchars).find("a" + fffd + fffd + "b.csv") != std::string::npos);
}

TEST_CASE(
    "overlapped pairs: DualPipeV P = 4 m = 8 draws each pair as one box with both labels, text, SVG, trace and JSON",
    "[pictures]") {
  const io::report rep = analyze_spec({schedule_family::dualpipev, {4, 8, 2, placement::v_shape}});
  const schedule_view v = rep.ops.view();
  // Each pair: its word's index, its PyTorch action and its timeline label.
  struct pair_info {
    std::size_t k;
    std::string action;
    std::string label;
  };
  std::vector<pair_info> pairs;
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      if (v.ops[k].kind() != op_kind::overlap_f_b) continue;
      REQUIRE(io::starts_pair(v, k, v.offsets[static_cast<std::size_t>(r) + 1]));
      // The simulation gives both words the pair's time: t_fb / V = (t_f + t_b) / 2.
      REQUIRE(rep.sim.start(k) == rep.sim.start(k + 1));
      REQUIRE(rep.sim.end(k) == rep.sim.end(k + 1));
      REQUIRE(rep.sim.end(k) - rep.sim.start(k) == rational{3, 2});
      pairs.push_back({k, io::pair_action(v.ops[k], v.ops[k + 1]), io::pair_label(v.ops[k], v.ops[k + 1], v.shape)});
    }
  }
  REQUIRE(pairs.size() > 10);
  REQUIRE(pairs[0].action ==
          "(0F7;7B3)OVERLAP_F_B");  // rank 0's first pair: F of micro-batch 7 on chunk 0, B of 3 on chunk 1
  REQUIRE(pairs[0].label == "F7.0/B3.1");
  const std::size_t actions = v.size() - pairs.size();  // what each view shows: one item per action

  SECTION("text: one '#' box per pair, its label both halves, as long as the pair lasts") {
    const std::string timeline = io::render_timeline(rep);
    // 1 time unit = 10 columns here: a pair (3/2) is 15 columns, its label then '#'.
    REQUIRE(timeline.find("1 time unit = 10 columns") != std::string::npos);
    for (const pair_info& p : pairs) {
      INFO(p.label);
      const std::string box = p.label + std::string(15 - p.label.size(), '#');
      // The box may be cut by a band's end: then its start is there.
      REQUIRE((timeline.find(box) != std::string::npos || timeline.find(p.label + "#") != std::string::npos));
      REQUIRE(timeline.find(box + "#") == std::string::npos);  // never longer: no second box behind it
    }
    // In the ranks' rows, one label per pair and nothing else with a '/'.
    std::size_t labels = 0;
    std::istringstream lines(timeline);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("rank ")) continue;
      labels += static_cast<std::size_t>(std::count(line.begin(), line.end(), '/'));
    }
    REQUIRE(labels == pairs.size());
    REQUIRE(timeline.find("F/B# F&B overlapped pair") != std::string::npos);
    REQUIRE(timeline.find("F4.1/B0.0 = F4.1 and B0.0 overlapped") != std::string::npos);
    REQUIRE(timeline.find("OVERLAP") == std::string::npos);      // never the word's kind name
    REQUIRE(timeline.find("B= backward") != std::string::npos);  // DualPipeV has plain Bs too
    // Too narrow for a label (27 time units on 40 columns: a pair is 2 columns): a pair
    // is all '#', never an 'F' that would read as a forward.
    const io::text_style narrow{40, false, rational{27}};
    const io::readout ro = io::readout_of(rep);
    const auto sc = io::detail::scale_timeline(ro, narrow);
    const auto grid = io::detail::fill_timeline(ro, sc);
    std::size_t hashed = 0;
    for (const pair_info& p : pairs) {
      const int r = v.shape.rank_of(v.ops[p.k].stage());
      const std::size_t from = sc.column(rep.sim.start_ticks(p.k));
      const std::size_t to = sc.column(rep.sim.end_ticks(p.k));
      for (std::size_t c = from; c < to; ++c, ++hashed) REQUIRE(grid.cells[static_cast<std::size_t>(r)][c] == "#");
    }
    REQUIRE(hashed >= pairs.size());
    std::istringstream narrow_lines(io::render_timeline(rep, narrow));
    for (std::string line; std::getline(narrow_lines, line);) {
      if (line.starts_with("rank ")) REQUIRE(line.find('/') == std::string::npos);  // no label fits
    }
    // Without pairs, no pair legend.
    REQUIRE(io::render_timeline(analyze_spec(ctpipe::tests::one_f_one_b(4, 8))).find("overlapped") ==
            std::string::npos);
  }

  SECTION(
      "SVG: one rect per pair, class op pair, its action both halves, label F7.0/B3.1, idle sums to the simulated") {
    const std::string svg = io::render_svg(rep);
    static const std::regex pair_rect(
        R"re(<rect class="op pair" data-rank="(\d+)" data-action="([^"]+)" data-start="([^"]+)" data-end="([^"]+)")re");
    std::size_t drawn = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), pair_rect); it != std::sregex_iterator();
         ++it, ++drawn) {
      const auto& m = *it;
      REQUIRE(drawn < pairs.size());
      const pair_info& p = pairs[drawn];  // in rank order, as drawn
      REQUIRE(m[2] == p.action);
      REQUIRE(std::stoi(m[1]) == v.shape.rank_of(v.ops[p.k].stage()));
      REQUIRE(parse_rational(m[3].str()) == rep.sim.start(p.k));
      REQUIRE(parse_rational(m[4].str()) == rep.sim.end(p.k));
    }
    REQUIRE(drawn == pairs.size());
    for (const pair_info& p : pairs)
      REQUIRE(svg.find("text-anchor=\"middle\">" + p.label + "</text>") != std::string::npos);
    // The other ops one box each; no box for a pair's B word or its word alone.
    const std::vector<svg_rect> rects = rects_of(svg);
    std::vector<rational> idle(static_cast<std::size_t>(v.shape.P));
    std::size_t single = 0;
    for (const svg_rect& r : rects) {
      if (r.cls == "op") {
        ++single;
        REQUIRE(r.action.find("OVERLAP") == std::string::npos);
      } else {
        idle[static_cast<std::size_t>(r.rank)] += r.end - r.start;
      }
    }
    REQUIRE(single + drawn == actions);
    for (int r = 0; r < v.shape.P; ++r) REQUIRE(idle[static_cast<std::size_t>(r)] == rep.sim.idle(r));
    for (const pair_info& p : pairs) {
      const std::string b = io::action(v.ops[p.k + 1]);
      REQUIRE(svg.find("data-action=\"" + b + "\"") == std::string::npos);
    }
    // The legend: a pair swatch, escaped; never the word's kind.
    REQUIRE(svg.find(">F&amp;B overlapped pair</text>") != std::string::npos);
    REQUIRE(svg.find("F&B") == std::string::npos);
    REQUIRE(svg.find("OVERLAP_F_B</text>") == std::string::npos);
  }

  SECTION("trace: one event per pair spanning it, one per other op") {
    const auto j = nlohmann::json::parse(io::to_trace(rep).dump());
    const rational tick = parse_rational(j["otherData"]["time_units_per_tick"].get<std::string>());
    std::map<std::string, std::size_t> pair_of;
    for (const pair_info& p : pairs) pair_of[p.action] = p.k;
    std::size_t slices = 0;
    std::size_t pair_events = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      ++slices;
      const std::string name = e["name"].get<std::string>();
      if (e["cat"] != "OVERLAP_F_B") {
        REQUIRE(name.find("OVERLAP") == std::string::npos);
        continue;
      }
      ++pair_events;
      const std::size_t k = pair_of.at(name);
      REQUIRE(rational{e["ts"].get<std::int64_t>()} * tick == rep.sim.start(k));
      REQUIRE(rational{e["dur"].get<std::int64_t>()} * tick == rational{3, 2});
      REQUIRE(e["args"]["stage"] == v.ops[k].stage());
      REQUIRE(e["args"]["microbatch"] == v.ops[k].microbatch());
      REQUIRE(e["args"]["backward_stage"] == v.ops[k + 1].stage());
      REQUIRE(e["args"]["backward_microbatch"] == v.ops[k + 1].microbatch());
      REQUIRE(e["args"]["backward_chunk"] == v.shape.chunk_of(v.ops[k + 1].stage()));
    }
    REQUIRE(pair_events == pairs.size());
    REQUIRE(slices == actions);
  }

  SECTION("JSON: ranks and timeline list a pair once, by its PyTorch action") {
    const auto j = io::to_json(rep);
    std::size_t entries = 0;
    for (int r = 0; r < v.shape.P; ++r) {
      const auto& ranks = j["ranks"][static_cast<std::size_t>(r)];
      REQUIRE(ranks.get<std::vector<std::string>>() == io::actions(v.rank(r)));
      const auto& timeline = j["timeline"][static_cast<std::size_t>(r)];
      REQUIRE(timeline.size() == ranks.size());
      for (std::size_t i = 0; i < ranks.size(); ++i) REQUIRE(timeline[i][0] == ranks[i]);
      entries += ranks.size();
    }
    REQUIRE(entries == actions);
    REQUIRE(j["timeline"][0][17] == nlohmann::ordered_json{"(0F7;7B3)OVERLAP_F_B",
                                                           io::to_string(rep.sim.start(pairs[0].k)),
                                                           io::to_string(rep.sim.end(pairs[0].k))});
    // Idle and bubble are the simulation's, whatever the views draw.
    REQUIRE(j["idle"] == nlohmann::ordered_json{"3", "3", "3", "3"});
    REQUIRE(j["bubble_fraction"] == io::to_string(rep.sim.bubble_fraction()));
  }
}
