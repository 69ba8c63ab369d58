// Every value docs/spec.md §5 and issue #2 claim for GPipe and 1F1B (tests/static/cases.hpp),
// checked at run time through the library (the same holds() the static_asserts use, then
// field by field for readable failures) and through `ctpipe --format json`.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cases.hpp"
#include "catch.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::claims;

namespace {
std::string costs_option(const costs& c) {
  return fmt::format("f={},b={},i={},w={},c={}", io::to_string(c.f), io::to_string(c.b), io::to_string(c.i),
                     io::to_string(c.w), io::to_string(c.c));
}
}  // namespace

TEST_CASE("claimed values, through the library", "[values]") {
  for (const auto& c : claims) {
    INFO(c.what);
    REQUIRE(ctpipe::tests::holds(c));
    const schedule s = generate(c.spec);
    REQUIRE(validate(s.view()).ok());
    const simulation sim = simulate(s.view(), c.cost);
    if (c.makespan != ctpipe::tests::unclaimed) REQUIRE(sim.makespan() == c.makespan);
    if (c.bubble != ctpipe::tests::unclaimed) REQUIRE(sim.bubble_fraction() == c.bubble);
    const in_flight_profile mem = in_flight(s.view());
    for (int r = 0; r < c.spec.shape.P && c.peaks[0] >= 0; ++r) REQUIRE(mem.peak(r) == rational{c.peaks[r]});
    if (c.messages >= 0) REQUIRE(static_cast<long long>(messages(s.view())) == c.messages);
    if (c.span_bubble != ctpipe::tests::unclaimed) REQUIRE(sim.span_bubble() == c.span_bubble);
  }
}

TEST_CASE("claimed values, through ctpipe --format json", "[values][tool]") {
  for (const auto& c : claims) {
    INFO(c.what);
    const auto& shape = c.spec.shape;
    std::string args = fmt::format("--format json --schedule {} -P {} -m {} -V {} --placement {} --costs {}",
                                   family_name(c.spec.family), shape.P, shape.m, shape.V, placement_name(shape.layout),
                                   costs_option(c.cost));
    if (c.spec.family == schedule_family::interleaved_1f1b) {
      args += fmt::format(" --variant {} --group {}", variant_name(c.spec.variant), c.spec.group);
    }
    if (c.spec.family == schedule_family::combined_1f1b) args += fmt::format(" --group {}", c.spec.group);
    const auto run = ctpipe::tests::run_tool(args);
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.err.empty());
    const auto j = nlohmann::json::parse(run.out);
    if (c.makespan != ctpipe::tests::unclaimed) REQUIRE(j.at("makespan") == io::to_string(c.makespan));
    if (c.bubble != ctpipe::tests::unclaimed) {
      REQUIRE(j.at("bubble_fraction") == io::to_string(c.bubble));
      // A closed form is printed only where it holds, and then it equals the simulation.
      const closed_form f = bubble_fraction_formula(c.spec, c.cost);
      REQUIRE(j.at("bubble_fraction_formula") ==
              (f.holds ? nlohmann::json(io::to_string(c.bubble)) : nlohmann::json(nullptr)));
    }
    REQUIRE(j.at("peak_in_flight").size() == static_cast<std::size_t>(shape.P));
    for (int r = 0; r < shape.P && c.peaks[0] >= 0; ++r) {
      REQUIRE(j.at("peak_in_flight")[static_cast<std::size_t>(r)] == std::to_string(c.peaks[r]));
      // The formula is printed where it applies (and then equals the claim), else null.
      if (peak_in_flight_formula(c.spec, rational{1}, r).holds) {
        REQUIRE(j.at("peak_in_flight_formula")[static_cast<std::size_t>(r)] == std::to_string(c.peaks[r]));
      } else {
        REQUIRE(j.at("peak_in_flight_formula").is_null());
      }
    }
    if (c.messages >= 0) REQUIRE(j.at("messages") == c.messages);
    if (c.span_bubble != ctpipe::tests::unclaimed) REQUIRE(j.at("span_bubble") == io::to_string(c.span_bubble));
  }
}
