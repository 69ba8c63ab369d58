// `ctpipe formula`: a schedule's makespan, idle, bubble fraction and peaks as exact
// functions of m, for every m, from its periodic certificate (ctpipe/analysis/periodic.hpp,
// docs/proofs.md "Proofs for every m"): m0, the cycle, the base makespans and the
// increment; below m0 the makespans simulated directly; and from which m each of the
// family's closed forms holds (equal to the simulation wherever it holds). Text or JSON
// (docs/json.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join
#include <nlohmann/json.hpp>

#include <algorithm>  // std::min
#include <string>
#include <utility>  // std::move
#include <vector>

#include "ctpipe/analysis/periodic.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"  // io::detail::joined

#include "command.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe formula`'s options.
struct formula_options : options_of<schedule_options, cost_options, scale_options, view_options> {
  formula_options() {
    formats = {"text", "json"};
    format_help = "text or json (m0, cycle, base, increment, peak_in_flight, ...: docs/json.md)";
    command = "formula";
    takes_width = false;
    takes_color = false;
  }
};

/// The exact texts of `values`, spaced.
std::string spaced(const detail::buffer<rational>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) out += (k ? " " : "") + io::to_string(values[k]);
  return out;
}

/// The parameters that decide a family's program beyond P and V, as the main view's title
/// shows them: interleaved 1F1B's variant, group and warm-up factor; combined 1F1B's
/// group and pair model; interleaved ZB's group; DualPipe(V)'s pair model. Empty for the
/// others.
struct program_parameters {
  const char* variant = nullptr;  ///< interleaved-1f1b (V > 1 or PyTorch's)
  int group = 0;                  ///< 0: none
  int warmup_factor = 0;          ///< 0: none
  const char* pairs = nullptr;    ///< combined-1f1b, dualpipev, dualpipe: fused or split

  program_parameters() = default;
  program_parameters(const periodic_program& p, const schedule_spec& s) {
    if (s.family == schedule_family::dualpipev || s.family == schedule_family::dualpipe) {
      pairs = s.pairs == pair_model::fused ? "fused" : "split";  // m_step 2 of DualPipe is no group
      return;
    }
    if (p.m_step == 1 && s.family != schedule_family::interleaved_zb) return;  // 1F1B's program (V = 1)
    group = p.m_step;
    if (s.family == schedule_family::interleaved_1f1b) {
      variant = variant_name(s.variant);
      warmup_factor = s.warmup_factor;
    }
    if (s.family == schedule_family::combined_1f1b) pairs = s.pairs == pair_model::fused ? "fused" : "split";
  }
  std::string text(const costs& c) const {
    std::string out;
    if (variant != nullptr) out += fmt::format("  variant {}", variant);
    if (group != 0) out += fmt::format("  g = {}", group);
    if (warmup_factor != 0) out += fmt::format("  warmup factor {}", warmup_factor);
    if (pairs != nullptr)
      out += fmt::format("  pairs {}{}", pairs, pairs[0] == 'f' ? ", t_fb = " + io::to_string(c.pair()) : "");
    return out;
  }
};

/// What the certificate and the family's closed forms give, as the text and JSON say it.
struct formula_result {
  schedule_spec spec;
  costs cost;
  rational gamma;
  std::vector<rational> stage_scale;
  periodic_certificate cert;
  program_parameters params;
  std::vector<int> below_m;                       ///< the m of the class below m0 that the family accepts
  std::vector<rational> below;                    ///< their makespans, simulated directly
  std::vector<std::vector<rational>> below_busy;  ///< and per rank their busy times
  every_m_result closed;                          ///< the closed forms that hold for every m
};

/// What the text says of a closed form's range: `holds for every m`, `holds for every m
/// >= 4`, `none for every m`, or that it disagrees with the simulation (a bug).
std::string range_text(closed_form_range r) {
  if (!r.correct) return "disagrees with the simulation (a bug: please report it)";
  if (r.from == 0) return "not for every m from some m on";
  return r.from == 1 ? std::string("holds for every m") : fmt::format("holds for every m >= {}", r.from);
}

/// The JSON of a closed form's range: {"from": the least m from which it holds, or null;
/// "correct": false only if it disagrees with the simulation}.
nlohmann::ordered_json range_json(closed_form_range r) {
  nlohmann::ordered_json j;
  j["from"] = r.from == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.from);
  j["correct"] = r.correct;
  return j;
}

/// The text view (see the file comment).
std::string formula_text(const formula_result& f) {
  const periodic_certificate& c = f.cert;
  std::string out = fmt::format(
      "{}  P = {}  V = {}  placement {}{}  costs t_f = {}, t_b = {}, t_i = {}, t_w = {}, t_c = {}  gamma = {}{}\n",
      family_name(f.spec.family), f.spec.shape.P, f.spec.shape.V, placement_name(f.spec.shape.layout),
      f.params.text(f.cost), io::to_string(f.cost.f), io::to_string(f.cost.b), io::to_string(f.cost.i),
      io::to_string(f.cost.w), io::to_string(f.cost.c), io::to_string(f.gamma),
      f.stage_scale.empty() ? "" : "  stage scale " + io::detail::joined(f.stage_scale, ","));
  if (c.phases == 1) {
    out += fmt::format(
        "periodic certificate (docs/proofs.md): the state of {} steady repetitions repeats from repetition {}\n",
        c.state_width, c.state_index);
  } else {
    out += fmt::format(
        "periodic certificate (docs/proofs.md), {} phases: the state of each (at most {} repetition{}) repeats "
        "from repetition {} at the latest\n",
        c.phases, c.state_width, c.state_width == 1 ? "" : "s", c.state_index);
  }
  const std::string every = c.m_step == 1
                                ? fmt::format("for every m >= {}", c.m0)
                                : fmt::format("for every m >= {} with m = {} (mod {})", c.m0, c.m_residue, c.m_step);
  if (c.cycle == c.m_step) {
    out += fmt::format("{}:\n  makespan(m) = {} + {} (m - {}){}\n", every, io::to_string(c.base[0]),
                       io::to_string(c.increment), c.m0, c.cycle == 1 ? "" : fmt::format(" / {}", c.cycle));
  } else {
    const std::string j = c.m_step == 1 ? fmt::format("(m - {}) mod {}", c.m0, c.cycle)
                                        : fmt::format("((m - {}) mod {}) / {}", c.m0, c.cycle, c.m_step);
    out += fmt::format("{}, with j = {} and k = floor((m - {}) / {}):\n", every, j, c.m0, c.cycle);
    out += fmt::format("  makespan(m) = base[j] + {} k   base = {} (m = {} .. {}{})\n", io::to_string(c.increment),
                       spaced(c.base), c.m0, c.m0 + c.cycle - c.m_step,
                       c.m_step == 1 ? "" : fmt::format(" by {}", c.m_step));
  }
  out += fmt::format("  busy per rank = a + b m   a = {}   b = {}\n", spaced(c.busy_base), spaced(c.busy_per_m));
  out += "  idle per rank = makespan(m) - busy; bubble fraction = sum of idle / (P makespan(m))\n";
  bool growing = false;
  for (std::size_t r = 0; r < c.peak_per_m.size(); ++r) growing = growing || c.peak_per_m[r] != rational{0};
  if (growing) {
    out += fmt::format("  peak in flight per rank (chunks) = a + b (m - {})   a = {}   b = {}\n", c.m0, spaced(c.peak),
                       spaced(c.peak_per_m));
  } else {
    out += fmt::format("  peak in flight per rank (chunks): {}\n", spaced(c.peak));
  }
  std::string below;
  for (std::size_t k = 0; k < f.below.size(); ++k) below += (k ? " " : "") + io::to_string(f.below[k]);
  if (!f.below.empty()) {  // which m: from 1, a range the family takes (DualPipe(V)), or a class's
    const int first = f.below_m.front(), last = f.below_m.back();
    const std::string which = c.m_step > 1    ? fmt::format("m = {} of the class", fmt::join(f.below_m, ", "))
                              : first == 1    ? fmt::format("m < {}", c.m0)
                              : first == last ? fmt::format("m = {}", first)
                                              : fmt::format("m = {} .. {}", first, last);
    out += fmt::format("for {} (simulated directly): makespan {}\n", which, below);
  }
  out += fmt::format("closed forms (analysis/formulas.hpp): makespan: {}; bubble fraction: {}; peaks: {}\n",
                     range_text(f.closed.makespan), range_text(f.closed.bubble_fraction), range_text(f.closed.peaks));
  return out;
}

/// The JSON view (docs/json.md, `ctpipe formula`).
std::string formula_json(const formula_result& f) {
  const periodic_certificate& c = f.cert;
  const auto texts = [](const auto& values) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < values.size(); ++k) a.push_back(io::to_string(values[k]));
    return a;
  };
  nlohmann::ordered_json j;
  j["schedule"] = family_name(f.spec.family);
  j["P"] = f.spec.shape.P;
  j["V"] = f.spec.shape.V;
  j["placement"] = placement_name(f.spec.shape.layout);
  const auto or_null = [](auto value, bool given) {
    return given ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
  };
  j["variant"] = or_null(f.params.variant, f.params.variant != nullptr);
  j["group"] = or_null(f.params.group, f.params.group != 0);
  j["warmup_factor"] = or_null(f.params.warmup_factor, f.params.warmup_factor != 0);
  j["pairs"] = or_null(f.params.pairs, f.params.pairs != nullptr);
  j["costs"] = {{"f", io::to_string(f.cost.f)}, {"b", io::to_string(f.cost.b)}, {"i", io::to_string(f.cost.i)},
                {"w", io::to_string(f.cost.w)}, {"c", io::to_string(f.cost.c)}, {"fb", io::to_string(f.cost.pair())}};
  j["gamma"] = io::to_string(f.gamma);
  j["stage_scale"] = f.stage_scale.empty() ? nlohmann::ordered_json(nullptr) : texts(f.stage_scale);
  j["m0"] = c.m0;
  j["m_step"] = c.m_step;
  j["m_residue"] = c.m_residue;
  j["cycle"] = c.cycle;
  j["base"] = texts(c.base);
  j["increment"] = io::to_string(c.increment);
  j["peak_in_flight"] = texts(c.peak);
  j["peak_in_flight_per_m"] = texts(c.peak_per_m);
  j["phases"] = c.phases;
  j["busy"] = {{"base", texts(c.busy_base)}, {"per_m", texts(c.busy_per_m)}};
  j["bubble_fraction"] = "sum over ranks of (makespan(m) - busy(m)) / (P * makespan(m))";
  j["below"] = texts(f.below);
  j["below_m"] = f.below_m;
  j["below_busy"] = nlohmann::ordered_json::array();
  for (const auto& busy : f.below_busy) j["below_busy"].push_back(texts(busy));
  j["state"] = {{"index", c.state_index}, {"width", c.state_width}};
  j["closed_forms"] = {{"makespan", range_json(f.closed.makespan)},
                       {"bubble_fraction", range_json(f.closed.bubble_fraction)},
                       {"peak_in_flight", range_json(f.closed.peaks)}};
  return json_text(j);
}

/// `ctpipe formula` (see the file comment).
class formula_command final : public command_with_options<formula_options> {
 private:
  void declare_own(CLI::App& app) override {
    app_ = &app;
    add_whole(app, "--max-periods", max_periods_,
              "steady repetitions the certificate searches at most (0: the default, 16*P*V + 64)");
  }
  void adjust_shared(CLI::App& app) override {
    app.get_option("-m")->default_str("")->description(
        "interleaved-1f1b, combined-1f1b and interleaved-zb only: the class of m (modulo their group g) to answer "
        "for (default: the multiples of g)");
  }

  std::string run_checked() override {
    const bool classes = opts_.families.front() == schedule_family::interleaved_1f1b ||
                         opts_.families.front() == schedule_family::combined_1f1b ||
                         opts_.families.front() == schedule_family::interleaved_zb;
    if (app_->count("-m") > 0 && !classes)
      throw usage_error(
          "ctpipe: formula answers for every m; -m is not taken (but for the classes of interleaved-1f1b, "
          "combined-1f1b and interleaved-zb)");
    if (!opts_.microbatch_scale.empty())
      throw usage_error("ctpipe: formula needs micro-batches of equal cost (--microbatch-scale is not taken)");
    if (max_periods_ < 0) throw usage_error("ctpipe: --max-periods must be >= 0");
    formula_result f;
    f.spec = opts_.spec_for(opts_.families.front());
    f.cost = opts_.cost;
    f.gamma = opts_.gamma;
    f.stage_scale = opts_.stage_scale;
    if (!has_program(f.spec.family))
      throw usage_error(
          fmt::format("ctpipe: no formula for {}: {}", family_name(f.spec.family), why_no_program(f.spec.family)));
    // Any m of the class: for interleaved 1F1B by default its group (P or --group); for
    // DualPipe(V) an m their rule takes (the program is every m's).
    const bool dual = f.spec.family == schedule_family::dualpipev || f.spec.family == schedule_family::dualpipe;
    if (app_->count("-m") == 0)
      f.spec.shape.m = classes ? (f.spec.group != 0 ? f.spec.group : f.spec.shape.P)
                       : dual  ? 2 * std::min(f.spec.shape.P, 1 << 20)  // no overflow: check_spec refuses such a P
                               : 1;
    check_spec(f.spec);
    check_scale_lengths(opts_.stage_scale, {}, f.spec.shape);
    check_scale(cost_scale{opts_.stage_scale, {}}, f.spec.shape);
    // The program holds about the ops of the spec's m (DualPipe's: 10 P^2 templates):
    // refused before it is built when that passes the search's limit.
    check_op_limit(static_cast<long long>(total_ops(f.spec)), max_json_ops, "the certificate's search", "formula");
    const periodic_program p = program_of(f.spec);
    f.params = program_parameters(p, f.spec);
    // The search starts small and doubles up to the bound; it goes as far as the op limit
    // allows (the first attempt, first_search_periods(), must fit).
    const int asked = max_periods_ > 0 ? max_periods_ : default_max_periods(p);
    const int first = std::min(asked, first_search_periods(p));
    check_op_limit(certificate_search_ops(p, first), max_json_ops, "the certificate's search", "formula");
    const int periods = max_periods_within(p, asked, max_json_ops);
    if (periods < first) {
      throw usage_error(
          fmt::format("ctpipe: formula: the certificate's search needs m = {} at least, past the {} "
                      "micro-batches an op holds",
                      p.m_min + first * p.m_step, max_microbatches));
    }
    f.cert = periodic_certificate_of(f.spec, f.cost, opts_.stage_scale, opts_.gamma, periods);
    if (!f.cert.proved) throw usage_error(refusal(f.cert, periods < asked ? periods : 0));
    check_op_limit(ops_below_m0(f, p), max_below_ops, fmt::format("the direct simulations below m0 = {}", f.cert.m0),
                   "formula");
    simulate_below_m0(f, p);
    f.closed = closed_forms_hold_for_every_m(f.cert, f.spec, f.cost, opts_.gamma, opts_.stage_scale);
    return opts_.format == "json" ? formula_json(f) : formula_text(f);
  }

  /// The ops of the m below m0 that simulate_below_m0() simulates (twice: the closed
  /// forms' check simulates them again): arithmetic, O(m0 P). A long
  /// transient (a stage factor near 1, with --max-periods raised) puts m0 in the
  /// thousands, and these simulations grow as m0 squared.
  static long long ops_below_m0(const formula_result& f, const periodic_program& p) {
    long long n = 0;
    for (int m = p.m_residue > 0 ? p.m_residue : p.m_step; m < f.cert.m0; m += p.m_step) {
      schedule_spec at = f.spec;
      at.shape.m = m;
      if (spec_error(at) == nullptr) n += static_cast<long long>(total_ops(at));
    }
    return n;
  }

  /// The m of the class below the certificate's m0 that the family takes, simulated
  /// directly: their makespans and busy times into `f`.
  static void simulate_below_m0(formula_result& f, const periodic_program& p) {
    for (int m = p.m_residue > 0 ? p.m_residue : p.m_step; m < f.cert.m0; m += p.m_step) {
      schedule_spec at = f.spec;
      at.shape.m = m;
      if (spec_error(at) != nullptr) continue;
      const schedule sched = generate(at);
      const simulation sim = simulate(sched.view(), f.cost, cost_scale{f.stage_scale, {}});
      f.below_m.push_back(m);
      f.below.push_back(sim.makespan());
      std::vector<rational> busy;
      for (int r = 0; r < at.shape.P; ++r) busy.push_back(sim.busy(r));
      f.below_busy.push_back(std::move(busy));
    }
  }

  /// The message of a certificate that was not found: its reason, and the last state
  /// differences when the state did not repeat; `capped`, when the op limit cut the
  /// bound to that many repetitions (0: it did not).
  static std::string refusal(const periodic_certificate& c, int capped) {
    std::string reason = c.reason;
    const std::string library = "raise max_periods";
    const std::string instead =
        capped > 0 ? fmt::format("{} repetitions, as far as the search's limits go: {} ops, {} micro-batches", capped,
                                 max_json_ops, max_microbatches)
                   : std::string("raise --max-periods");
    if (const auto at = reason.find(library); at != std::string::npos) reason.replace(at, library.size(), instead);
    std::string text = fmt::format("ctpipe: no certificate: {}", reason);
    if (c.last_differences.size() > 0) text += fmt::format(" (last state differences: {})", spaced(c.last_differences));
    return text;
  }

  CLI::App* app_ = nullptr;
  int max_periods_ = 0;
};

}  // namespace

std::unique_ptr<command> make_formula() { return std::make_unique<formula_command>(); }

}  // namespace ctpipe::tool
