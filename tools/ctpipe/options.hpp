// The `ctpipe` tool's options: the groups of options the commands share, each typed
// where CLI11 reads it; one options struct per command made of the groups it takes; the
// helpers that declare an enumeration or a whole number; the parsing of --costs (also
// used by the tests).
#pragma once

#include <cstdint>
#include <functional>
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

namespace ctpipe::io {
enum class torch_lowering : std::uint8_t;  // ctpipe/io/torch_lowering.hpp
}  // namespace ctpipe::io

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ctpipe::tool {

/// Rejected input: the message becomes the one `ctpipe:` line on stderr, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// parse_rational() of `text`, its error naming what was read: `ctpipe: NAME: not an
/// exact number (use 3, 1/2 or 0.25)` (NAME: `--gamma`, `--costs f`, `--stage-scale`),
/// raised as usage_error.
inline rational parse_number(std::string_view text, std::string_view name) {
  try {
    return parse_rational(text);
  } catch (const error& e) {
    const std::string_view what = e.what();
    throw usage_error("ctpipe: " + std::string(name) + ": " + std::string(what.substr(what.find(": ") + 2)));
  }
}

/// Parses `f=1,b=2,i=1,w=1,c=0,fb=3,move=1/8` (any subset, any order; values exact: `1/2`,
/// `0.25`). Keys not given keep the defaults, except `b`, which becomes `i + w` when `i`
/// or `w` is given without it (docs/spec.md §1: t_b = t_i + t_w); `fb` (an overlapped
/// F&B pair) left out is t_f + t_b. Raises ctpipe::error with `ctpipe: --costs takes
/// key=value pairs ...` or the check_costs() messages, and usage_error with
/// parse_number()'s message for a bad number (`ctpipe: --costs f: ...`).
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
    detail::require(equals != std::string_view::npos, bad);  // an empty value: parse_number() names its key
    std::size_t key = 0;
    while (key < 7 && keys[key] != item.substr(0, equals)) ++key;
    detail::require(key < 7 && !seen[key], bad);
    seen[key] = true;
    rational* field[] = {&out.f, &out.b, &out.i, &out.w, &out.c, &out.fb, &out.move};
    *field[key] = parse_number(item.substr(equals + 1), "--costs " + std::string(keys[key]));
    detail::require(key != 5 || out.fb >= rational{0}, "ctpipe: costs must be >= 0");
  }
  if (!seen[1] && (seen[2] || seen[3])) out.b = out.i + out.w;
  check_costs(out);
  return out;
}

/// Parses `1,1,1,5/4`: exact numbers separated by commas (parse_rational()), for
/// `option` (its name in the message). Empty text is an empty list. Raises
/// usage_error(`ctpipe: OPTION takes exact numbers separated by commas (e.g. 1,1,1,5/4)`)
/// for an empty item, and parse_number()'s (`ctpipe: OPTION: not an exact number ...`) for a bad number. The lengths
/// and signs are check_scale()'s, once the shape is known.
std::vector<rational> parse_factors(std::string_view text, const char* option);

/// An invalid schedule with several problems: one `ctpipe:` line each on stderr, exit
/// code 2, nothing on stdout.
struct invalid_schedule : std::runtime_error {
  std::vector<std::string> lines;  ///< each a whole `ctpipe:` line, without the newline
  explicit invalid_schedule(std::vector<std::string> l)
      : std::runtime_error("ctpipe: invalid schedule"), lines(std::move(l)) {}
};

/// How a command applies `-V`: to whichever schedule is asked for (the library rejects a
/// V the family does not take), or only to the families with several chunks, the others
/// keeping their own (compare, which runs families of both kinds at once).
enum class chunks_scope { every_family, chunked_families };

// The options, in groups. Each group declares its options on a command's CLI11 app and
// converts each value where CLI11 reads it (the option's callback: a bad value raises
// usage_error there, with the one message of its kind), then check() applies the rules
// that relate several options of the group once the whole line is read. A command's
// options are one struct made of the groups it takes (options_of below), so a command
// cannot read an option it does not declare.

/// -P, -m and (search) --placement: the pipeline's shape.
struct shape_options {
  int P = 4;                           ///< -P: pipeline ranks
  int m = 8;                           ///< -m: micro-batches
  bool placement_given = false;        ///< --placement given
  placement layout = placement::loop;  ///< --placement, when given
  bool takes_placement = true;         ///< the command declares --placement
  std::string placement_help;          ///< --placement's help; empty: the families' wording

  void declare(CLI::App& app);
  void declare_shape(CLI::App& app);      ///< -P, -m
  void declare_placement(CLI::App& app);  ///< --placement, when the command takes it
  void check(const CLI::App& app);
};

/// The schedule(s) asked for (--schedule,-s or --schedules), their shape (-P, -m, -V,
/// --placement) and the family rules (--variant, --group, --warmup-factor,
/// --structural-minimum, --pair-model).
struct schedule_options : shape_options {
  bool several = false;                                                 ///< --schedules (compare) instead of --schedule
  chunks_scope scope = chunks_scope::every_family;                      ///< how -V applies
  std::vector<schedule_family> families{schedule_family::one_f_one_b};  ///< the schedules asked for
  std::vector<std::string> family_names{"1f1b"};                        ///< as given, one per entry of `families`
  bool V_given = false;                                                 ///< -V given explicitly
  int V = 0;                                                            ///< -V, when given
  interleaved_variant variant = interleaved_variant::megatron;          ///< --variant
  int group = 0;                                                        ///< --group (0: the variant's default)
  int warmup_factor = 2;                                                ///< --warmup-factor
  bool group_given = false;                                             ///< --group given explicitly
  bool warmup_given = false;                                            ///< --warmup-factor given explicitly
  bool variant_given = false;                                           ///< --variant given explicitly
  bool structural_minimum = false;                                      ///< --structural-minimum (dualpipev: m >= 2P-1)
  pair_model pairs = pair_model::fused;                                 ///< --pair-model (dualpipev)

  void declare(CLI::App& app);
  void declare_chunks(CLI::App& app);  ///< -V
  void declare_rules(CLI::App& app);   ///< --variant, --group, --warmup-factor, --structural-minimum, --pair-model
  /// The rules over the families asked for: --variant, --group and --warmup-factor apply
  /// to interleaved-1f1b at V > 1 only, --structural-minimum and --pair-model to DualPipe
  /// and DualPipeV only, -V in compare to a family that takes it.
  void check(const CLI::App& app);

  /// The request for `family` (one of `families`): -V or the family's default (see
  /// chunks_default; with chunks_scope::chunked_families -V applies to the families with
  /// several chunks only), --placement or the family's own, and the interleaved
  /// parameters for interleaved-1f1b. Not checked: check_spec() or spec_error() next.
  schedule_spec spec_for(schedule_family family) const;
};

/// --costs and --gamma.
struct cost_options {
  costs cost{};            ///< --costs (parse_costs)
  std::string costs_text;  ///< --costs as given (costs_for reads which keys it gives)
  rational gamma{1};       ///< --gamma, in [0, 1]

  void declare(CLI::App& app);
  void check(const CLI::App&) {}
};

/// --stage-scale and --microbatch-scale (cost_scale): their lengths are checked once the
/// shape is known (check_scale_lengths).
struct scale_options {
  std::vector<rational> stage_scale;       ///< one factor per stage (S = P*V), or empty
  std::vector<rational> microbatch_scale;  ///< one per micro-batch (m), or empty

  void declare(CLI::App& app);
  void check(const CLI::App&) {}
};

/// --model, --memory-limit, --layers, --device-flops, --link-bandwidth (model.hpp).
struct model_options {
  bool model_given = false;          ///< --model given
  transformer_model model{};         ///< --model, when given
  std::string model_text;            ///< --model as given: a preset's name or a file
  std::string memory_limit_text;     ///< --memory-limit as given (checked: parse_memory_limit)
  std::vector<std::int64_t> layers;  ///< --layers, or empty for the even split
  bool layout_given = false;         ///< --layout given (then `layers` is empty: the two exclude each other)
  std::string layout_text;           ///< --layout as given (checked: parse_layout(); against the shape: split_for())
  std::string device_flops_text;     ///< --device-flops as given (checked: parse_device_flops)
  std::string link_bandwidth_text;   ///< --link-bandwidth as given (checked: parse_link_bandwidth)
  bool takes_device = true;          ///< the command declares --device-flops and --link-bandwidth

  void declare(CLI::App& app);
  /// A limit in bytes, --layers and --layout need --model; --layers and --layout exclude
  /// each other.
  void check(const CLI::App& app);
};

/// --format, and --width and --color for the text view.
struct view_options {
  std::vector<std::string> formats;  ///< the command's formats, the first the default
  std::string format_help;           ///< --format's help
  std::string command;               ///< the command's name for messages (empty: the default view)
  bool takes_width = true;           ///< the command declares --width
  bool takes_color = true;           ///< the command declares --color
  std::string format;                ///< --format (one of `formats`)
  int width = 100;                   ///< --width, in [20, 100000]
  enum class color_mode { automatic, always, never };
  color_mode color = color_mode::automatic;  ///< --color

  void declare(CLI::App& app);
  /// --color and --width apply to --format text only.
  void check(const CLI::App& app);
  /// Whether text output is coloured: --color always, or auto on a terminal without
  /// NO_COLOR and with a TERM other than dumb.
  bool colored() const;
};

/// --runtime MODEL (ctpipe/lower/runtime.hpp).
struct runtime_options {
  bool runtime_given = false;                       ///< --runtime given
  runtime_model runtime = runtime_model::blocking;  ///< --runtime, when given

  void declare(CLI::App& app);
  void check(const CLI::App& app);
  /// The runtime model --runtime names, or nullptr for every model.
  const runtime_model* runtime_or_all() const { return runtime_given ? &runtime : nullptr; }
};

/// Who places the sends and receives (--lowering): ctpipe's lower() for the runtime
/// model (`own`), DeepSeek's step() (`deepseek`, ctpipe/lower/deepseek.hpp), or one of
/// PyTorch's four orders (`torch-asap`, `torch-warmup`, `torch-consumer`, `torch-parity`,
/// ctpipe/io/torch_lowering.hpp).
enum class lowering_choice : std::uint8_t {
  own,
  deepseek,
  torch_asap,
  torch_warmup,
  torch_consumer,
  torch_parity,
  least_loss  ///< a stream model's fastest of ctpipe's orders (io::lower_least_loss()); own elsewhere
};

/// The torch order `choice` names, or false for `own` and `deepseek` (then `out` is
/// unchanged).
bool torch_order_of(lowering_choice choice, io::torch_lowering& out);

/// --lowering own|deepseek|torch-asap|torch-warmup|torch-consumer|torch-parity,
/// --torch-passes, --max-active-stages.
struct lowering_options {
  bool lowering_given = false;                      ///< --lowering given
  lowering_choice lowering = lowering_choice::own;  ///< --lowering
  io::torch_passes passes{};                        ///< --torch-passes, --max-active-stages
  bool torch_passes_given = false;                  ///< either given

  /// Whether --lowering names one of PyTorch's orders.
  bool torch_order() const {
    io::torch_lowering unused{};
    return torch_order_of(lowering, unused);
  }

  void declare(CLI::App& app);
  void check(const CLI::App& app);
};

/// A command's options: the groups it takes, declared on its app in this order (--help
/// lists them so) and checked in this order once CLI11 has read the line. Each command
/// names its own: `struct show_options : options_of<schedule_options, ...>`.
template <class... Groups>
struct options_of : Groups... {
  void declare(CLI::App& app) { (Groups::declare(app), ...); }
  void check(const CLI::App& app) { (Groups::check(app), ...); }
};

/// The default view's options (commands/show.cpp, request.hpp, the Python package).
struct show_options : options_of<schedule_options, cost_options, scale_options, model_options, view_options,
                                 runtime_options, lowering_options> {
  show_options();
};

/// The message for the arguments that `command` (the tool, or one of its commands) did
/// not take (CLI::ExtrasError), in their order: CLI11's own lists them last first
/// ("... not expected: 1 --foo"), which read as nonsense from Python (`formula(foo=1)`):
/// `ctpipe: formula does not take '--foo 1' (`ctpipe formula --help` lists its options)`.
std::string unexpected_arguments(const CLI::App& command);

/// The one message of an op limit: raises usage_error(`ctpipe: [SUBJECT: ]N WHAT are too
/// many for READER (at most LIMIT)`) when `n` > `limit` (`what` "ops", "compute ops",
/// ...; `reader` "--format json", "compare", ...).
void check_op_limit(long long n, long long limit, std::string_view reader, std::string_view subject = {},
                    std::string_view what = "ops");

/// A choice of `E` by name for option `name` (the one helper of the enumerations): the
/// value of the entry whose name is `text`, else usage_error(`ctpipe: NAME takes A, B or
/// C, not 'TEXT'`, with `command` before NAME when not empty).
template <class E>
struct choice {
  const char* name;
  E value;
};
template <class E>
E choose(std::string_view text, const std::vector<choice<E>>& table, std::string_view name,
         std::string_view command = {}) {
  std::string names;
  for (std::size_t k = 0; k < table.size(); ++k) {
    if (text == table[k].name) return table[k].value;
    names += std::string(k == 0 ? "" : k + 1 == table.size() ? " or " : ", ") + table[k].name;
  }
  throw usage_error(std::string("ctpipe: ") + (command.empty() ? "" : std::string(command) + " ") + std::string(name) +
                    " takes " + names + ", not '" + std::string(text) + "'");
}

/// Declares option `name` on `app`, converted where CLI11 reads it: `convert(text)` sets
/// the target or raises usage_error. `shown` is the default --help shows (empty: none).
CLI::Option* add_converted(CLI::App& app, const std::string& name, std::function<void(const std::string&)> convert,
                           const std::string& help, const std::string& shown = {});

/// Declares the enumeration option `name` storing into `target`, choose()'s message.
template <class E>
CLI::Option* add_choice(CLI::App& app, const std::string& name, E& target, std::vector<choice<E>> table,
                        const std::string& help, std::string command = {}) {
  std::string shown;
  for (const auto& entry : table) {
    if (entry.value == target) shown = entry.name;
  }
  return add_converted(
      app, name,
      [&target, table, name, command](const std::string& text) { target = choose(text, table, name, command); }, help,
      shown);
}

/// Declares the whole-number option `name` storing into `target` (parse_whole()).
CLI::Option* add_whole(CLI::App& app, const std::string& name, int& target, const std::string& help);

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
