// The `ctpipe` tool's options: the one struct that holds the options several commands
// share, the one place that declares them on a command's CLI11 app and checks them, and
// the parsing of --costs (also used by the tests).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctpipe/analysis/model.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/io/torch_passes.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/schedules/family.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace ctpipe::tool {

/// Parses `f=1,b=2,i=1,w=1,c=0,fb=3,move=1/8` (any subset, any order; values exact: `1/2`,
/// `0.25`). Keys not given keep the defaults, except `b`, which becomes `i + w` when `i`
/// or `w` is given without it (docs/spec.md §1: t_b = t_i + t_w); `fb` (an overlapped
/// F&B pair) left out is t_f + t_b. Raises ctpipe::error with `ctpipe: --costs takes
/// key=value pairs ...`, the parse_rational() message, or the check_costs() messages.
inline costs parse_costs(std::string_view text) {
  constexpr const char* bad =
      "ctpipe: --costs takes key=value pairs separated by commas, keys f, b, i, w, c, fb, move, each once (e.g. "
      "f=1,b=2)";
  costs out{};
  bool seen[7] = {};
  constexpr std::string_view keys[] = {"f", "b", "i", "w", "c", "fb", "move"};
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    detail::require(comma == std::string_view::npos || !text.empty(), bad);  // no trailing comma
    const std::size_t equals = item.find('=');
    detail::require(equals != std::string_view::npos && equals + 1 < item.size(), bad);
    std::size_t key = 0;
    while (key < 7 && keys[key] != item.substr(0, equals)) ++key;
    detail::require(key < 7 && !seen[key], bad);
    seen[key] = true;
    rational* field[] = {&out.f, &out.b, &out.i, &out.w, &out.c, &out.fb, &out.move};
    *field[key] = parse_rational(item.substr(equals + 1));
    detail::require(key != 5 || out.fb >= rational{0}, "ctpipe: costs must be >= 0");
  }
  if (!seen[1] && (seen[2] || seen[3])) out.b = out.i + out.w;
  check_costs(out);
  return out;
}

/// Parses `1,1,1,5/4`: exact numbers separated by commas (parse_rational()), for
/// `option` (its name in the message). Empty text is an empty list. Raises
/// usage_error(`ctpipe: OPTION takes exact numbers separated by commas (e.g. 1,1,1,5/4)`)
/// for an empty item, and the parse_rational() message for a bad number. The lengths
/// and signs are check_scale()'s, once the shape is known.
std::vector<rational> parse_factors(std::string_view text, const char* option);

/// Rejected input: the message becomes the one `ctpipe:` line on stderr, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An invalid schedule with several problems: one `ctpipe:` line each on stderr, exit
/// code 2, nothing on stdout.
struct invalid_schedule : std::runtime_error {
  std::vector<std::string> lines;  ///< each a whole `ctpipe:` line, without the newline
  explicit invalid_schedule(std::vector<std::string> l)
      : std::runtime_error("ctpipe: invalid schedule"), lines(std::move(l)) {}
};

/// The shared options a command takes, as bits of a mask (`--format` every command takes).
enum option_bits : unsigned {
  opt_schedule = 1U << 0,   ///< --schedule,-s NAME: one schedule (default 1f1b)
  opt_schedules = 1U << 1,  ///< --schedules A,B,...: several (compare)
  opt_shape = 1U << 2,      ///< -P, -m
  opt_chunks = 1U << 3,     ///< -V
  opt_placement = 1U << 4,  ///< --placement
  opt_interleaved =
      1U << 5,            ///< --variant, --group,-g, --warmup-factor; --structural-minimum, --pair-model (dualpipev)
  opt_costs = 1U << 6,    ///< --costs, --gamma
  opt_width = 1U << 7,    ///< --width
  opt_color = 1U << 8,    ///< --color
  opt_runtime = 1U << 9,  ///< --runtime MODEL (ctpipe/lower/runtime.hpp)
  opt_lowering =
      1U << 10,          ///< --lowering own|deepseek (ctpipe/lower/deepseek.hpp), --torch-passes, --max-active-stages
  opt_scale = 1U << 11,  ///< --stage-scale, --microbatch-scale (cost_scale)
  opt_model = 1U << 12,  ///< --model, --memory-limit, --layers (model.hpp)
};

/// How a command applies `-V`: to whichever schedule is asked for (the library rejects a
/// V the family does not take), or only to the families with several chunks, the others
/// keeping their own (compare, which runs families of both kinds at once).
enum class chunks_scope { every_family, chunked_families };

/// What a command declares: its shared options, its formats (the first is the default)
/// with their help, and its name for messages (empty for the default view).
struct option_set {
  unsigned bits = 0;
  std::vector<std::string> formats;
  std::string format_help;
  std::string command;
  chunks_scope scope = chunks_scope::every_family;
};

/// The options several commands share: first the text as given (CLI11 stores into these),
/// then, after check(), the checked values. One struct for every command; a command
/// declares the subset it takes (option_set).
struct options {
  // As given.
  std::string schedule_text = "1f1b";                                          ///< --schedule,-s
  std::string schedules_text = "gpipe,1f1b,interleaved-1f1b,zb-h1,zb-h2,zbv";  ///< --schedules
  std::string P_text = "4";                                                    ///< -P
  std::string m_text = "8";                                                    ///< -m
  std::string V_text;                        ///< -V; empty: the family's own (chunks_default)
  std::string placement_text;                ///< --placement; empty: the family's own (natural_placement)
  std::string variant_text = "megatron";     ///< --variant
  std::string group_text = "0";              ///< --group,-g
  std::string warmup_text = "2";             ///< --warmup-factor
  std::string costs_text;                    ///< --costs
  std::string gamma_text = "1";              ///< --gamma
  std::string format;                        ///< --format; set by declare() to the command's default
  std::string width_text = "100";            ///< --width
  std::string color = "auto";                ///< --color: auto, always or never
  std::string runtime_text;                  ///< --runtime; empty: the command's default
  std::string pair_model_text = "fused";     ///< --pair-model
  std::string lowering_text = "own";         ///< --lowering
  std::string torch_passes_text = "all";     ///< --torch-passes
  std::string max_active_stages_text = "3";  ///< --max-active-stages
  std::string stage_scale_text;              ///< --stage-scale
  std::string microbatch_scale_text;         ///< --microbatch-scale
  std::string model_text;                    ///< --model: a preset or a JSON file
  std::string memory_limit_text;             ///< --memory-limit
  std::string layers_text;                   ///< --layers
  std::string device_flops_text;             ///< --device-flops
  std::string link_bandwidth_text;           ///< --link-bandwidth

  // Checked by check().
  std::vector<schedule_family> families;                        ///< --schedule (one) or --schedules (several)
  std::vector<std::string> family_names;                        ///< as given, one per entry of `families`
  int P = 4;                                                    ///< pipeline ranks
  int m = 8;                                                    ///< micro-batches
  bool V_given = false;                                         ///< -V given explicitly
  int V = 0;                                                    ///< -V, when given
  bool placement_given = false;                                 ///< --placement given
  placement layout = placement::loop;                           ///< --placement, when given
  interleaved_variant variant = interleaved_variant::megatron;  ///< --variant
  int group = 0;                                                ///< --group (0: the variant's default)
  int warmup_factor = 2;                                        ///< --warmup-factor
  bool group_given = false;                                     ///< --group given explicitly
  bool warmup_given = false;                                    ///< --warmup-factor given explicitly
  bool variant_given = false;                                   ///< --variant given explicitly
  bool structural_minimum = false;                              ///< --structural-minimum (dualpipev: m >= 2P-1)
  pair_model pairs = pair_model::fused;                         ///< --pair-model (dualpipev)
  costs cost{};                                                 ///< --costs
  rational gamma{1};                                            ///< --gamma, in [0, 1]
  int width = 100;                                              ///< --width, in [20, 100000]
  bool runtime_given = false;                                   ///< --runtime given
  runtime_model runtime = runtime_model::blocking;              ///< --runtime, when given
  bool lowering_given = false;                                  ///< --lowering given
  bool deepseek_lowering = false;                               ///< --lowering deepseek (dualpipev, dualpipe)
  io::torch_passes passes{};                                    ///< --torch-passes, --max-active-stages (csv-comms)
  bool torch_passes_given = false;                              ///< either given
  std::vector<rational> stage_scale;       ///< --stage-scale: one factor per stage (S = P*V), or empty
  std::vector<rational> microbatch_scale;  ///< --microbatch-scale: one per micro-batch (m), or empty
  bool model_given = false;                ///< --model given
  transformer_model model{};               ///< --model, when given
  std::vector<std::int64_t> layers;        ///< --layers, or empty for the even split

  /// The runtime model --runtime names, or nullptr for every model.
  const runtime_model* runtime_or_all() const { return runtime_given ? &runtime : nullptr; }

  /// Declares the options of `set` on `app` (a command's own CLI11 app), storing into
  /// this struct. Call once per app.
  void declare(CLI::App& app, const option_set& set);

  /// Checks the options `set` declares, after `app` parsed them: formats, names, whole
  /// numbers, costs, gamma; the rules on --variant, --group and --warmup-factor over the
  /// families asked for. Raises usage_error or ctpipe::error (both exit code 2).
  void check(const CLI::App& app, const option_set& set);
  // check()'s parts, in its order: -s / --schedules; --format, --color, --width; the
  // interleaved names and the families they apply to; their numbers (after -P, -m, -V).
  void check_families(const option_set& set);
  void check_output(const option_set& set);
  void check_text_only(const CLI::App& app, const option_set& set);
  void check_interleaved_names(const CLI::App& app);
  void check_interleaved_numbers(const option_set& set);
  /// --model, --memory-limit, --layers, --device-flops, --link-bandwidth (opt_model);
  /// --stage-scale, --microbatch-scale (opt_scale): their texts parsed and checked.
  void check_model_options(const option_set& set);
  /// declare()'s part for opt_scale and opt_model.
  void declare_model_options(CLI::App& app, const option_set& set);

  /// The request for `family` (one of `families`): -V or the family's default (see
  /// chunks_default; with chunks_scope::chunked_families -V applies to the families with
  /// several chunks only), --placement or the family's own, and the interleaved
  /// parameters for interleaved-1f1b. Not checked: check_spec() or spec_error() next.
  schedule_spec spec_for(schedule_family family, chunks_scope scope) const;

  /// Whether text output is coloured: --color always, or auto on a terminal without
  /// NO_COLOR and with a TERM other than dumb.
  bool colored() const;
};

/// Whether the family runs several model chunks per rank (interleaved-1f1b, looped-bfs,
/// interleaved-zb, zbv): its default V is above 1 (family_table).
constexpr bool chunked(schedule_family f) { return family_of(f).default_V > 1; }

/// The V a family runs with when -V is not given: the family's default (family_table):
/// 2 for the families with several chunks, 1 for the others.
constexpr int chunks_default(schedule_family f) { return family_of(f).default_V; }

/// Every family's name, comma-separated, in the library's order.
std::string known_schedules();

/// A whole number in decimal: an optional '-', then digits; nothing else (no spaces, no
/// '+', no 0x). Values beyond int are clamped so that the library's range checks reject
/// them with their own message. Raises usage_error(`ctpipe: OPTION takes a whole number,
/// not 'TEXT'`).
int parse_whole(const std::string& text, const char* option);

}  // namespace ctpipe::tool
