// `ctpipe search`: the split-backward schedule with the least bubble under a memory limit
// per rank (ctpipe/plan/search.hpp, docs/search.md), shown like any schedule (text,
// JSON, SVG, trace, PyTorch's CSV) with a section on how it was found: the method, the
// lower bound and whether it is proved optimal, and the Zero Bubble authors' heuristic
// on the same problem (their manual_order on the loop placement, their automatic ZB-V
// with --placement v).
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctpipe/analysis/model.hpp"
#include "ctpipe/plan/search.hpp"
#include "ctpipe/exact/search_cbc.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/io/json.hpp"
#include "ctpipe/io/readout.hpp"  // io::detail::spaced
#include "../executed.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"

namespace ctpipe::tool {
namespace {

/// `value` as a percentage with two decimals, for the text view; a value that is not 0 or
/// 1 never reads as 0.00% or 100.00% (more decimals then, up to 6).
std::string percent(rational value) {
  const double x = value.to_double() * 100;
  int decimals = 2;
  const auto rounds_away = [&](int d) {
    const std::string t = fmt::format("{:.{}f}", x, d);
    return (value != rational{0} && std::stod(t) == 0) || (value != rational{1} && std::stod(t) == 100);
  };
  while (decimals < 6 && rounds_away(decimals)) ++decimals;
  return fmt::format("{:.{}f}%", x, decimals);
}

/// `n` with its noun, singular for exactly 1: "1 full activation", "5/2 full activations".
std::string activations(rational n, const char* noun) {
  return fmt::format("{} {}{}", io::to_string(n), noun, n == rational{1} ? "" : "s");
}

/// `ctpipe search` (see the file comment).
/// `ctpipe search`'s options.
struct search_options : options_of<shape_options, cost_options, model_options, view_options> {
  search_options() {
    placement_help = "loop (default: one stage per rank) or v (the V-shape: two chunks per rank)";
    takes_device = false;  // search takes its costs from --costs
    formats = {"text", "json", "svg", "trace", "csv"};
    format_help = "text, json (a schedule's JSON plus \"search\"), svg, trace or csv (PyTorch's CSV schedule)";
    command = "search";
  }
};

/// --method: auto, greedy or exact.
enum class method_choice { automatic, greedy, exact };

class search_command final : public command_with_options<search_options> {
 public:
 private:
  void declare_own(CLI::App& app) override {
    add_choice(
        app, "--method", method_,
        {{"auto", method_choice::automatic}, {"greedy", method_choice::greedy}, {"exact", method_choice::exact}},
        "auto (default: exact for P*m <= 32, i.e. up to 96 ops, on the V-shape P*m <= 8, when the greedy is not "
        "already proved optimal; else greedy), greedy (the best of the greedy rule sets, then local repair) or exact "
        "(also CBC on the mixed-integer program, the same sizes)");
    add_converted(
        app, "--time-limit",
        [this](const std::string& text) {
          rational value{0};
          try {
            value = parse_rational(text);
          } catch (const ctpipe::error&) {
          }
          if (value <= rational{0} || value > rational{86400}) {
            throw usage_error(
                fmt::format("ctpipe: --time-limit takes seconds, more than 0 and at most 86400, not '{}'", text));
          }
          seconds_ = value.to_double();
          time_limit_given_ = true;
        },
        "wall-clock seconds CBC may take in the exact method (default 10)");
  }

  void adjust_shared(CLI::App& app) override {
    app.get_option("--layout")->group("");  // refused (run_checked())
    app.get_option("--memory-limit")
        ->description(
            "the limit per rank the schedule must stay within: full activations, gamma-weighted (a plain number, "
            "default P, 1F1B's rank 0), or bytes with a unit (80GiB; needs --model)");
    app.get_option("--model")->description(
        "a dense transformer, for the memory in bytes per rank (the costs still come from --costs): a preset "
        "(gpt3-175b, llama2-7b, llama2-70b) or a JSON file of its shape and parallelism (docs/memory.md)");
  }

  /// The problem the options give: the shape (loop, or the V-shape at V = 2), --costs,
  /// --gamma and the limit per rank (`limit_text`: --memory-limit, default P).
  search_problem problem(const std::string& limit_text) const {
    search_problem p;
    const bool v_shape = opts_.placement_given && opts_.layout == placement::v_shape;
    p.shape = pipeline_shape{opts_.P, opts_.m, v_shape ? 2 : 1, opts_.placement_given ? opts_.layout : placement::loop};
    if (!detail::searchable(p.shape)) {
      throw usage_error(
          "ctpipe: search takes --placement loop (one stage per rank, V = 1) or --placement v (the V-shape, V = 2)");
    }
    check_shape(p.shape);
    const long long limit =
        std::min(max_ops(opts_.format), 1LL << 20);  // some 80 linear constructions, then local repair
    check_op_limit(3LL * p.shape.V * p.shape.P * p.shape.m, limit, "search --format " + opts_.format);
    p.cost = opts_.cost;
    p.gamma = opts_.gamma;
    p.memory_limit = limits_in_activations(p.shape, p.gamma, parse_memory_limit(limit_text));
    return p;
  }

  /// Whether `p` is small enough for the exact method (P*m at most exact_options' sizes);
  /// raises usage_error when --method exact is asked of a problem it cannot take.
  bool small_enough(const search_problem& p, const exact_options& exact) const {
    const bool v_shape = p.shape.layout == placement::v_shape;
    const int most =
        v_shape ? exact.max_v_pairs : exact.max_pairs;  // the V-shape's program has 6 P m ops and more pairs
    const bool small = p.shape.P * p.shape.m <= most;
    if (method_ == method_choice::exact && !small) {
      throw usage_error(fmt::format("ctpipe: --method exact takes P*m <= {}{} (here {}); the greedy runs at any size",
                                    most, v_shape ? " on the V-shape" : "", p.shape.P * p.shape.m));
    }
    if (method_ == method_choice::exact && !lasting(p)) {
      throw usage_error("ctpipe: --method exact needs t_i > 0 and t_w > 0 (it reads the orders from the ops' ends)");
    }
    return small;
  }

  /// Whether both halves of the backward take time (the exact method reads orders from ends).
  static bool lasting(const search_problem& p) { return p.cost.i > rational{0} && p.cost.w > rational{0}; }

  std::string run_checked() override {
    // Its own schedule's stages, and a limit per rank divided by a stage's bytes: a
    // layout's empty stage would hold none (docs/memory.md).
    if (opts_.layout_given) throw usage_error("ctpipe: search takes --layers, not --layout");
    if (time_limit_given_ && method_ == method_choice::greedy)
      throw usage_error("ctpipe: --time-limit applies to --method exact and auto (CBC's wall-clock time)");
    exact_options exact;
    exact.seconds = seconds_;
    const std::string limit_text = opts_.memory_limit_text.empty() ? std::to_string(opts_.P) : opts_.memory_limit_text;
    const search_problem p = problem(limit_text);
    const bool small = small_enough(p, exact);
    search_result best = method_ == method_choice::greedy || !small ? search(p) : search_exact(p, exact);
    if (opts_.format == "csv") return io::to_csv(best.ops.view());
    std::optional<search_report> authors;  // none when no rule set of theirs fits (the V-shape at low limits)
    try {
      authors = search(p, {true}).report;
    } catch (const ctpipe::error&) {
    }
    const search_report found = best.report;
    io::report rep = io::analyze(std::move(best.ops), p.cost, p.gamma, "search", "searched");
    // the memory view: the limit (as given: activations or bytes), and bytes with --model
    apply_memory(rep, opts_, limit_text);
    const memory_limit given = parse_memory_limit(limit_text);
    if (opts_.format == "json") {
      nlohmann::ordered_json j = json_of(rep);
      j["executed"] = own_lowering_json(rep.ops.view(), p.cost, nullptr);  // as a shown schedule's JSON
      j["search"] = search_json(p, given, found, authors);
      return json_text(j);
    }
    std::string out = render(rep, opts_);
    if (opts_.format == "text") {
      out += search_text(p, given, found, authors);
      if (method_ == method_choice::automatic && small && !lasting(p) && !found.optimal)
        out += "  the exact method was not run: it needs t_i > 0 and t_w > 0\n";
      if (found.method == search_method::exact && !found.optimal)
        out += "  CBC stopped at its time limit (--time-limit) without closing the gap\n";
      if (opts_.model_given) out += "  costs from --costs: --model gives the memory only (bytes per rank)\n";
    }
    return out;
  }

  /// Each rank's limit in full activations: a plain number as it is; bytes less the
  /// rank's static bytes (of its stages: both chunks' on the V-shape), over one
  /// micro-batch's activation bytes of its stage (--model, --layers); on the V-shape over
  /// twice its larger chunk's, as the search counts a chunk as half an activation (so the
  /// bytes stay within the limit whichever chunk it holds). Rounded down to the levels a
  /// rank can hold (multiples of 1/(V q) activations, gamma = p/q: no level lies
  /// between). A limit under 1 activation on some rank is an error naming the least.
  std::vector<rational> limits_in_activations(const pipeline_shape& shape, rational gamma,
                                              const memory_limit& given) const {
    if (!given.bytes) {
      if (given.value < rational{1}) {
        throw usage_error(
            fmt::format("ctpipe: --memory-limit {} is below what any schedule needs: at least 1 full activation "
                        "per rank (one micro-batch in flight)",
                        io::to_string(given.value)));
      }
      return {given.value};
    }
    if (!opts_.model_given)
      throw usage_error("ctpipe: a memory limit in bytes needs --model (a plain number is full activations per rank)");
    const stage_split split = split_for(opts_, shape, "search");
    const std::vector<std::int64_t>& layers = split.layers;
    std::vector<rational> fixed(static_cast<std::size_t>(shape.P)), chunk(static_cast<std::size_t>(shape.P));
    for (int st = 0; st < shape.stages(); ++st) {
      const std::size_t r = static_cast<std::size_t>(shape.rank_of(st));
      const stage_role role = role_at(shape, split.roles, st);
      fixed[r] = fixed[r] + stage_static_bytes(opts_.model, layers[static_cast<std::size_t>(st)], role);
      chunk[r] = max(chunk[r], stage_activation_bytes(opts_.model, layers[static_cast<std::size_t>(st)], role));
    }
    std::vector<rational> out;
    rational least{0};
    const std::int64_t levels =
        static_cast<std::int64_t>(shape.V) * gamma.den;  // a level is a whole number of 1/(V q)-ths
    for (std::size_t r = 0; r < fixed.size(); ++r) {
      const rational activation = chunk[r] * rational{shape.V};
      least = max(least, fixed[r] + activation);
      const rational x = (given.value - fixed[r]) / activation * rational{levels};
      out.push_back(rational{x.num >= 0 ? x.num / x.den : -1, levels});
    }
    for (const rational x : out) {
      if (x < rational{1}) {
        throw usage_error(fmt::format(
            "ctpipe: --memory-limit {} is below the least the search takes: at least {} bytes per rank "
            "(a rank's static bytes and one micro-batch's activation; on the V-shape twice its larger chunk's)",
            opts_.memory_limit_text, io::to_string(least)));
      }
    }
    return out;
  }

  method_choice method_ = method_choice::automatic;
  double seconds_ = 10;            ///< --time-limit
  bool time_limit_given_ = false;  ///< --time-limit given

  static nlohmann::ordered_json search_json(const search_problem& p, const memory_limit& given, const search_report& r,
                                            const std::optional<search_report>& authors) {
    nlohmann::ordered_json j;
    j["memory_limit"] = io::to_string(given.value);
    j["memory_limit_unit"] = given.bytes ? "bytes" : "activations";
    std::vector<rational> per_rank;
    for (int x = 0; x < p.shape.P; ++x) per_rank.push_back(p.limit(x));
    j["memory_limit_activations"] = io::detail::string_array(per_rank);
    j["method"] = r.method == search_method::exact ? "exact" : r.method == search_method::local ? "local" : "greedy";
    j["optimal"] = r.optimal;
    j["lower_bound"] = io::to_string(r.lower_bound);
    j["seconds"] = r.seconds;
    j["span"] = io::to_string(r.span);
    j["bubble"] = io::to_string(r.bubble);
    j["peak"] = io::to_string(r.peak);
    j["rule_sets"] = r.rule_sets;
    j["rule_sets_fitting"] = r.rule_sets_fitting;
    j["repairs"] = r.repairs;
    if (authors) {
      j["authors"] = {{"span", io::to_string(authors->span)}, {"bubble", io::to_string(authors->bubble)}};
    } else {
      j["authors"] = nullptr;
    }
    return j;
  }

  static std::string search_text(const search_problem& p, const memory_limit& given, const search_report& r,
                                 const std::optional<search_report>& authors) {
    const rational work = rational{p.shape.m} * (p.cost.f + p.cost.i + p.cost.w);
    const rational bound_bubble = (r.lower_bound - work) / r.lower_bound;
    std::vector<rational> per_rank;
    for (int x = 0; x < p.shape.P; ++x) per_rank.push_back(p.limit(x));
    std::string out = "\nsearch: the least largest span under the memory limit (the Zero Bubble authors' problem)\n";
    out += given.bytes ? fmt::format("  memory limit {} bytes per rank = {} full activations per rank (gamma = {})\n",
                                     io::to_string(given.value), io::detail::spaced(per_rank), io::to_string(p.gamma))
                       : fmt::format("  memory limit {} per rank (gamma = {}; 1F1B's rank 0 holds {})\n",
                                     activations(given.value, "full activation"), io::to_string(p.gamma),
                                     std::min(p.shape.P, p.shape.m));
    out += p.shape.layout == placement::v_shape
               ? fmt::format(
                     "  method greedy: the best of {} constructions ({} fit the limit): the authors' 4 rule sets "
                     "(their automatic ZB-V), "
                     "ctpipe's 24 variants, 8 fixed orders (groups, 4 list schedules, ZB-V, V-Half, V-Min)\n",
                     r.rule_sets, r.rule_sets_fitting)
               : fmt::format(
                     "  method greedy: the best of {} constructions ({} fit the limit): the authors' 8 rule sets, "
                     "ctpipe's 64 variants, 2 fixed orders\n",
                     r.rule_sets, r.rule_sets_fitting);
    if (r.method != search_method::greedy)
      out += fmt::format("  then local repair: {} swaps of neighbours kept\n", r.repairs);
    if (r.method == search_method::exact)
      out += "  then the exact method: CBC on the mixed-integer program, started from that schedule\n";
    out += fmt::format("  largest span {}, bubble rate {} = {} (span - m(t_f+t_i+t_w)) / span; peak {}\n",
                       io::to_string(r.span), io::to_string(r.bubble), percent(r.bubble),
                       activations(r.peak, "activation"));
    out += r.optimal ? fmt::format("  lower bound {} = the span: proved optimal\n", io::to_string(r.lower_bound))
                     : fmt::format(
                           "  lower bound {} (bubble rate {}): not proved optimal, the span is at most {} above\n",
                           io::to_string(r.lower_bound), percent(bound_bubble), io::to_string(r.span - r.lower_bound));
    const char* const theirs =
        p.shape.layout == placement::v_shape ? "their automatic ZB-V, 4 rule sets" : "their 8 rule sets";
    out += authors ? fmt::format("  the authors' heuristic alone ({}): span {}, bubble rate {}\n", theirs,
                                 io::to_string(authors->span), percent(authors->bubble))
                   : fmt::format(
                         "  the authors' heuristic alone ({}): no schedule within the limit (their code stops on an "
                         "assertion here)\n",
                         theirs);
    out += fmt::format("  searched in {:.4f} s\n", r.seconds);
    return out;
  }
};

}  // namespace

std::unique_ptr<command> make_search() { return std::make_unique<search_command>(); }

}  // namespace ctpipe::tool
