// web/binding.cpp: the WebAssembly binding behind the page in web/site/ (docs/web.md).
//
// The page runs the library itself, compiled by emscripten: this file only reads a
// configuration from JavaScript, calls the same functions the `ctpipe` tool calls
// (generate, validate, simulate, in_flight, the closed forms, lower and execute, through
// io::analyze()), and hands their exact results back. No schedule, time or formula is
// computed in JavaScript.
//
// It includes only headers that use the standard library alone (ctpipe/ctpipe.hpp and
// ctpipe/io/report.hpp), so the build never puts the host's /usr/include (fmt, JSON,
// glibc) on emscripten's include path.
//
// Exported (embind), called from web/site/worker.js:
// - families(): [{name, default_V, chunks_free, splits_backward, interleaved}] in the
//   library's order (family_table).
// - runtime_models(): the runtime model names (all_runtime_models).
// - kind_names(): op kind names indexed by op_kind's value (`F`, `B`, `I`, `W`, ...).
// - analyze(config): config = {schedule, P, m, V (as the library takes it), placement
//   ("" for the family's own, else loop, v or bidirectional), variant, group, warmup
//   (interleaved-1f1b), pairs ("fused" or "split") and structural_minimum (dualpipev,
//   dualpipe), f, b ("" for t_i + t_w), i, w, c, fb ("" for t_f + t_b), gamma (exact
//   texts such as "1/2"), stage_scale and microbatch_scale (comma-separated factors,
//   docs/spec.md §2.2; "" for none), runtime ("" or a model name)}. Returns {ok: false, error:
//   "ctpipe: ..."} for a configuration the library rejects (the library's own message;
//   a cost field's parse error names the field; out of memory says so), else {ok: true,
//   ...} as write_result() lists. Exact values are strings ("3/11"); `*_value` fields are
//   the same values as doubles, for drawing only; `*_percent` as the tool prints them.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ctpipe/ctpipe.hpp"
#include "ctpipe/io/report.hpp"

namespace {

using emscripten::val;

std::string text(ctpipe::rational x) {
  return x.den == 1 ? std::to_string(x.num) : std::to_string(x.num) + "/" + std::to_string(x.den);
}

double number(ctpipe::rational x) { return static_cast<double>(x.num) / static_cast<double>(x.den); }

/// `27.3%`, as the tool's readouts print a fraction: 100 * to_double() to one decimal,
/// an exact tie rounded to even (io::detail::percent() with {fmt}; printf here).
std::string percent(ctpipe::rational x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * x.to_double());
  return buffer;
}

/// {holds, value, value_number, formula, source, condition} of a closed form.
val formula(const ctpipe::closed_form& f) {
  val out = val::object();
  out.set("holds", f.holds);
  out.set("value", f.holds ? val(text(f.value)) : val::null());
  out.set("value_number", f.holds ? val(number(f.value)) : val::null());
  out.set("formula", std::string(f.formula));
  out.set("source", std::string(f.source));
  out.set("condition", std::string(f.condition));
  return out;
}

template <class T>
val array_of(const std::vector<T>& values) {
  val out = val::array();
  for (const T& v : values) out.call<void>("push", v);
  return out;
}

/// A copy of `values` as a JavaScript typed array (the worker transfers its buffer).
template <class T>
val typed(const std::vector<T>& values) {
  return val::global(sizeof(T) == 8 ? "Float64Array" : "Int32Array")
      .new_(emscripten::typed_memory_view(values.size(), values.data()))
      .template call<val>("slice");
}

/// The integer field `key` of `config`; the page sends whole numbers only.
int whole(const val& config, const char* key) { return config[key].as<int>(); }

ctpipe::schedule_spec spec_of(const val& config) {
  ctpipe::schedule_spec spec{};
  const std::string name = config["schedule"].as<std::string>();
  ctpipe::detail::require(ctpipe::family_from_name(name, spec.family), "ctpipe: unknown schedule");
  const ctpipe::family_entry& family = ctpipe::family_of(spec.family);
  spec.shape = {whole(config, "P"), whole(config, "m"), whole(config, "V"), family.natural_placement};
  const std::string layout = config["placement"].as<std::string>();
  if (!layout.empty()) {
    bool known = false;
    for (const ctpipe::placement_entry& e : ctpipe::placement_table) {
      if (layout == e.name) {
        spec.shape.layout = e.id;
        known = true;
      }
    }
    ctpipe::detail::require(known, "ctpipe: unknown placement");
  }
  if (spec.family == ctpipe::schedule_family::dualpipev || spec.family == ctpipe::schedule_family::dualpipe) {
    spec.structural_minimum = config["structural_minimum"].as<bool>();
    spec.pairs = config["pairs"].as<std::string>() == "split" ? ctpipe::pair_model::split : ctpipe::pair_model::fused;
  }
  if (spec.family == ctpipe::schedule_family::interleaved_1f1b) {
    ctpipe::detail::require(ctpipe::variant_from_name(config["variant"].as<std::string>(), spec.variant),
                            "ctpipe: unknown interleaved variant");
    spec.group = whole(config, "group");
    spec.warmup_factor = whole(config, "warmup");
  }
  ctpipe::check_spec(spec);
  return spec;
}

/// The exact number in field `key` of `config`, `name` naming it in a parse error
/// (`ctpipe: t_f: not an exact number (use 3, 1/2 or 0.25)`).
ctpipe::rational exact(const val& config, const char* key, const char* name) {
  try {
    return ctpipe::parse_rational(config[key].as<std::string>());
  } catch (const ctpipe::error& e) {
    const std::string what = e.what();
    throw std::runtime_error("ctpipe: " + std::string(name) + ": " + what.substr(what.find(": ") + 2));
  }
}

/// The factors of text field `key` (`1,1,1,5/4`; empty: none), as the tool's
/// --stage-scale and --microbatch-scale read them; `name` names the field in an error.
std::vector<ctpipe::rational> factors(const val& config, const char* key, const char* name) {
  const std::string text = config[key].as<std::string>();
  std::vector<ctpipe::rational> out;
  for (std::size_t from = 0; !text.empty() && from <= text.size();) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    try {
      out.push_back(ctpipe::parse_rational(std::string_view(text).substr(from, comma - from)));
    } catch (const ctpipe::error& e) {
      const std::string what = e.what();
      throw std::runtime_error("ctpipe: " + std::string(name) + ": " + what.substr(what.find(": ") + 2));
    }
    from = comma + 1;
  }
  return out;
}

/// The costs, as the tool's --costs reads them: t_b empty is t_i + t_w (docs/spec.md §1),
/// t_fb empty is t_f + t_b (costs::pair()); a given t_fb must be >= 0.
ctpipe::costs costs_of(const val& config) {
  ctpipe::costs c{};
  c.f = exact(config, "f", "t_f");
  c.i = exact(config, "i", "t_i");
  c.w = exact(config, "w", "t_w");
  c.b = config["b"].as<std::string>().empty() ? c.i + c.w : exact(config, "b", "t_b");
  c.c = exact(config, "c", "t_c");
  if (!config["fb"].as<std::string>().empty()) {
    c.fb = exact(config, "fb", "t_fb");
    ctpipe::detail::require(c.fb >= ctpipe::rational{0}, "ctpipe: costs must be >= 0");
  }
  return c;
}

/// Per op of the report's lists, in flat order: kind, stage, micro-batch, chunk; and per
/// rank the offsets (P + 1 entries: rank r's ops are [offsets[r], offsets[r + 1])).
void write_ops(val& out, const ctpipe::io::report& rep) {
  const ctpipe::schedule_view v = rep.ops.view();
  std::vector<std::int32_t> kind, stage, microbatch, chunk, offsets;
  for (int r = 0; r < v.shape.P; ++r) {
    offsets.push_back(static_cast<std::int32_t>(v.offsets[static_cast<std::size_t>(r)]));
    for (const ctpipe::op o : v.rank(r)) {
      kind.push_back(static_cast<std::int32_t>(o.kind()));
      stage.push_back(o.stage());
      microbatch.push_back(o.microbatch());
      chunk.push_back(v.shape.chunk_of(o.stage()));
    }
  }
  offsets.push_back(static_cast<std::int32_t>(v.size()));
  out.set("op_kind", typed(kind));
  out.set("op_stage", typed(stage));
  out.set("op_microbatch", typed(microbatch));
  out.set("op_chunk", typed(chunk));
  out.set("offsets", typed(offsets));
}

/// Start and end of every op in whole ticks (op_start_ticks, op_end_ticks: exact
/// integers, below 2^53, held as doubles), and the tick's length as tick_num / tick_den
/// time units: a time is ticks * tick_num / tick_den, exact; from a simulation or an
/// executed run.
template <class Timeline>
void write_times(val& out, const Timeline& t, std::size_t ops) {
  std::vector<double> start, end;
  constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
  for (std::size_t k = 0; k < ops; ++k) {
    ctpipe::detail::require(t.end_ticks(k) < exact_limit, "ctpipe: the page's times hold up to 2^53 ticks");
    start.push_back(static_cast<double>(t.start_ticks(k)));
    end.push_back(static_cast<double>(t.end_ticks(k)));
  }
  out.set("op_start_ticks", typed(start));
  out.set("op_end_ticks", typed(end));
  out.set("tick_num", static_cast<double>(t.tick().num));
  out.set("tick_den", static_cast<double>(t.tick().den));
}

/// An executed_timeline's ticks in the accessors write_times() reads.
struct run_times {
  const ctpipe::io::executed_timeline& run;
  ctpipe::rational tick() const { return run.tick; }
  std::int64_t start_ticks(std::size_t k) const { return run.start_ticks[k]; }
  std::int64_t end_ticks(std::size_t k) const { return run.end_ticks[k]; }
};

std::string describe(const ctpipe::validation_issue& i) {
  const auto action = [](ctpipe::op o) {
    return std::to_string(o.stage()) + ctpipe::kind_name(o.kind()) + std::to_string(o.microbatch());
  };
  return "rank " + std::to_string(i.rank) + ", step " + std::to_string(i.step) + ", op " + action(i.at) + ": " +
         ctpipe::fault_description(i.what) + (i.needs != i.at ? " (needs " + action(i.needs) + ")" : "");
}

/// The run of the report's lowered lists under `model`: {model, completed, makespan,
/// bubble, stall [per rank], stalls [per rank: [start, end] pairs, time units, doubles
/// for drawing]} and its op times in `out` (write_times()); or {model, completed: false,
/// hang}.
val write_executed(val& out, const ctpipe::io::report& rep, ctpipe::runtime_model model) {
  const ctpipe::schedule lowered = ctpipe::lower(rep.ops.view(), rep.cost, model, rep.scale());
  const ctpipe::execution run = ctpipe::execute(lowered.view(), rep.cost, model, rep.scale());
  val e = val::object();
  e.set("model", std::string(ctpipe::runtime_model_name(model)));
  e.set("completed", run.completed());
  if (!run.completed()) {
    e.set("hang", describe(run.stuck()[0]));
    return e;
  }
  const ctpipe::io::executed_timeline t = ctpipe::io::executed_timeline_of(lowered.view(), run);
  write_times(out, run_times{t}, rep.ops.size());
  e.set("makespan", text(run.makespan()));
  e.set("makespan_value", number(run.makespan()));
  e.set("bubble", text(run.bubble_fraction()));
  e.set("bubble_percent", percent(run.bubble_fraction()));
  std::vector<std::string> stall;
  val stalls = val::array();
  for (int r = 0; r < run.ranks(); ++r) {
    stall.push_back(text(run.stall(r)));
    std::vector<double> spans;
    for (const ctpipe::io::tick_span& s : t.stalls[static_cast<std::size_t>(r)]) {
      spans.push_back(number(t.tick * ctpipe::rational{s.start}));
      spans.push_back(number(t.tick * ctpipe::rational{s.end}));
    }
    stalls.call<void>("push", typed(spans));
  }
  e.set("stall", array_of(stall));
  e.set("stalls", stalls);
  return e;
}

/// The per-rank readouts: idle (exact), peak in-flight in chunks and in full activations
/// (exact), and the peak's closed form (chunks).
void write_ranks(val& out, const ctpipe::io::report& rep) {
  std::vector<std::string> idle, peak, peak_activations, plain;
  std::vector<double> peak_value, activations_value;
  val peak_formula = val::array();
  // With gamma < 1, the plain count beside the weighted one, as the tool's `6 [7]`.
  const ctpipe::in_flight_profile counted = ctpipe::in_flight(rep.ops.view(), ctpipe::rational{1});
  for (int r = 0; r < rep.spec.shape.P; ++r) {
    idle.push_back(text(rep.sim.idle(r)));
    peak.push_back(text(rep.memory.peak(r)));
    peak_value.push_back(number(rep.memory.peak(r)));
    peak_activations.push_back(text(rep.memory.peak_activations(r)));
    activations_value.push_back(number(rep.memory.peak_activations(r)));
    plain.push_back(text(counted.peak(r)));
    peak_formula.call<void>("push", formula(rep.peak_formula[static_cast<std::size_t>(r)]));
  }
  out.set("idle", array_of(idle));
  out.set("peak_in_flight", array_of(peak));
  out.set("peak_in_flight_value", array_of(peak_value));
  out.set("peak_activations", array_of(peak_activations));
  out.set("peak_activations_value", array_of(activations_value));
  out.set("peak_in_flight_plain", array_of(plain));
  out.set("peak_in_flight_formula", peak_formula);
}

/// The whole readout of `rep`; `model` names the runtime model whose executed run the
/// timeline draws, or is empty for the simulation.
val write_result(const ctpipe::io::report& rep, const std::string& model) {
  val out = val::object();
  const ctpipe::pipeline_shape& shape = rep.spec.shape;
  out.set("ok", true);
  out.set("schedule", std::string(ctpipe::family_name(rep.spec.family)));
  out.set("P", shape.P);
  out.set("m", shape.m);
  out.set("V", shape.V);
  out.set("placement", std::string(ctpipe::placement_name(shape.layout)));
  val costs = val::object();  // as the library read them, in lowest terms
  for (const auto& [key, value] :
       {std::pair{"f", rep.cost.f}, std::pair{"b", rep.cost.b}, std::pair{"i", rep.cost.i}, std::pair{"w", rep.cost.w},
        std::pair{"c", rep.cost.c}, std::pair{"fb", rep.cost.pair()}}) {
    costs.set(key, text(value));
  }
  out.set("costs", costs);
  out.set("gamma", text(rep.gamma));
  std::vector<std::string> stage_scale, microbatch_scale;
  for (const ctpipe::rational x : rep.stage_scale) stage_scale.push_back(text(x));
  for (const ctpipe::rational x : rep.microbatch_scale) microbatch_scale.push_back(text(x));
  out.set("stage_scale", array_of(stage_scale));
  out.set("microbatch_scale", array_of(microbatch_scale));
  out.set("pairs", std::string(rep.spec.pairs == ctpipe::pair_model::split ? "split" : "fused"));
  out.set("variant", std::string(ctpipe::variant_name(rep.spec.variant)));
  out.set("warmup_factor", rep.spec.warmup_factor);
  out.set("group", ctpipe::group_size(rep.spec));
  out.set("makespan", text(rep.sim.makespan()));
  out.set("makespan_value", number(rep.sim.makespan()));
  out.set("makespan_formula", formula(rep.makespan_formula));
  out.set("bubble_fraction", text(rep.sim.bubble_fraction()));
  out.set("bubble_fraction_percent", percent(rep.sim.bubble_fraction()));
  out.set("bubble_fraction_formula", formula(rep.bubble_formula));
  out.set("span_bubble", text(rep.sim.span_bubble()));
  out.set("span_bubble_formula", formula(rep.span_bubble_formula));
  out.set("messages", static_cast<double>(rep.message_count));
  out.set("messages_formula", formula(rep.message_formula));
  write_ranks(out, rep);
  write_ops(out, rep);
  write_times(out, rep.sim, rep.ops.size());
  ctpipe::runtime_model m{};
  if (!model.empty()) {
    ctpipe::detail::require(ctpipe::runtime_model_from_name(model, m), "ctpipe: unknown runtime model");
    out.set("executed", write_executed(out, rep, m));
  }
  return out;
}

val failure(const std::string& message) {
  val out = val::object();
  out.set("ok", false);
  out.set("error", message);
  return out;
}

val analyze(val config) {
  try {
    const ctpipe::schedule_spec spec = spec_of(config);
    const ctpipe::costs c = costs_of(config);
    const ctpipe::rational gamma = ctpipe::parse_rational(config["gamma"].as<std::string>());
    const ctpipe::io::report rep = ctpipe::io::analyze(spec, c, gamma, factors(config, "stage_scale", "stage scale"),
                                                       factors(config, "microbatch_scale", "micro-batch scale"));
    return write_result(rep, config["runtime"].as<std::string>());
  } catch (const std::bad_alloc&) {
    return failure(
        "ctpipe: out of memory: the page has at most 2 GiB (WebAssembly); try a smaller shape, or the ctpipe tool");
  } catch (const std::exception& e) {
    return failure(e.what());
  }
}

val families() {
  val out = val::array();
  for (const ctpipe::family_entry& f : ctpipe::family_table) {
    val e = val::object();
    e.set("name", std::string(f.name));
    e.set("default_V", f.default_V);
    e.set("chunks_free", f.chunks_free);
    e.set("splits_backward", f.splits_backward);
    e.set("interleaved", f.id == ctpipe::schedule_family::interleaved_1f1b);
    out.call<void>("push", e);
  }
  return out;
}

val runtime_models() {
  val out = val::array();
  for (const ctpipe::runtime_model m : ctpipe::all_runtime_models)
    out.call<void>("push", std::string(ctpipe::runtime_model_name(m)));
  return out;
}

val kind_names() {
  val out = val::array();
  for (int k = 0; k <= static_cast<int>(ctpipe::op_kind::overlap_f_b); ++k) {
    out.call<void>("push", std::string(ctpipe::kind_name(static_cast<ctpipe::op_kind>(k))));
  }
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(ctpipe) {
  emscripten::function("analyze", &analyze);
  emscripten::function("families", &families);
  emscripten::function("runtime_models", &runtime_models);
  emscripten::function("kind_names", &kind_names);
}
