// The pictures: the SVG's own shapes against the simulation, the trace against the
// simulation, `ctpipe compare`, and the README's committed picture.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/svg.hpp>
#include <ctpipe/io/trace.hpp>
#include <nlohmann/json.hpp>

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

/// The op and idle rectangles of an SVG produced by render_svg, read back from its text.
std::vector<svg_rect> rects_of(const std::string& svg) {
  static const std::regex rect(R"re(<rect class="(op|idle)" data-rank="(\d+)"(?: data-action="([^"]+)")? data-start="([^"]+)" data-end="([^"]+)" x="([^"]+)" y="[^"]+" width="([^"]+)")re");
  std::vector<svg_rect> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out.push_back({m[1], std::stoi(m[2]), m[3], parse_rational(m[4].str()), parse_rational(m[5].str()), std::stod(m[6]),
                   std::stod(m[7])});
  }
  return out;
}

io::report analyze_spec(const schedule_spec& spec, const costs& c = costs{}) { return io::analyze(spec, c, rational{1}); }

const std::vector<schedule_spec>& picture_cases() {
  static const std::vector<schedule_spec> cases = {
      ctpipe::tests::one_f_one_b(4, 8), ctpipe::tests::gpipe(2, 1), ctpipe::tests::interleaved(4, 8, 2),
      ctpipe::tests::zero_bubble(schedule_family::zb_h1, 4, 8), ctpipe::tests::zero_bubble(schedule_family::zbv, 4, 8),
      ctpipe::tests::interleaved(16, 64, 4)};
  return cases;
}

}  // namespace

TEST_CASE("SVG: one box per op at its simulated times - hatched idle per rank sums to the simulated idle", "[pictures]") {
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
      for (std::size_t k = 0; k < rep.ops.size(); ++k) times[io::action(rep.ops.view().ops[k])] = {rep.sim.start(k), rep.sim.end(k)};
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
    for (std::size_t k = 0; k < rep.ops.size(); ++k) times[io::action(rep.ops.view().ops[k])] = {rep.sim.start(k), rep.sim.end(k)};
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
    for (std::uint32_t k = rep.ops.view().offsets[static_cast<std::size_t>(r)]; k < rep.ops.view().offsets[static_cast<std::size_t>(r) + 1]; ++k) {
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
  REQUIRE(table.out.find("interleaved-1f1b: rejected (ctpipe: interleaved-1f1b (megatron) needs the group size in [P, m], but m < P)") !=
          std::string::npos);
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
