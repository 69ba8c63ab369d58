// web/binding.cpp: the WebAssembly binding behind the page in web/site/ (docs/web.md).
//
// The page runs the library and the tool's own request and readout, compiled by
// emscripten: a request is the tool's options (`-s interleaved-1f1b -P 4 -V 2 --costs
// f=1,b=2`), parsed and checked by the tool's parser (tools/ctpipe/request.hpp, the
// parser the tool and the Python package use), analysed by io::analyze() and read
// through io::readout_of(), the one readout model every view renders. This file only
// copies the readout's values into JavaScript objects; no schedule, time, percentage or
// formula is computed in JavaScript or here.
//
// Exported (embind), called from web/site/worker.js:
// - families(): [{name, default_V, chunks_free, splits_backward, interleaved}] in the
//   library's order (family_table).
// - runtime_models(): the runtime model names (all_runtime_models).
// - kind_names(): op kind names indexed by op_kind's value (`F`, `B`, `I`, `W`, ...).
// - analyze(args): args = an array of the tool's options for its default view (no
//   program name, no --format; docs/tool.md). Returns {ok: false, error: "ctpipe: ..."}
//   with the tool's message for a request it rejects (or out of memory), else {ok: true,
//   ...} as write_result() lists. Exact values are strings ("3/11"); `*_value` fields are
//   the same values as doubles, for drawing only; `*_percent` as the tool prints them;
//   `certificate` the formula for every m (write_certificate()).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>  // std::min
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "ctpipe/ctpipe.hpp"
#include "ctpipe/io/readout.hpp"
#include "ctpipe/io/report.hpp"
#include "executed.hpp"
#include "options.hpp"
#include "output.hpp"
#include "request.hpp"

namespace {

using emscripten::val;

/// The page's op limit: the tool's JSON limit (a drawn op is a JSON op's worth of data).
constexpr long long max_page_ops = ctpipe::tool::max_json_ops;

std::string text(ctpipe::rational x) { return ctpipe::io::to_string(x); }

double number(ctpipe::rational x) { return x.to_double(); }

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

/// Exact texts of `values`, as a JavaScript array.
val texts(const std::vector<ctpipe::rational>& values) {
  val out = val::array();
  for (const ctpipe::rational v : values) out.call<void>("push", text(v));
  return out;
}

/// Doubles of `values` (drawing only), as a JavaScript array.
val numbers(const std::vector<ctpipe::rational>& values) {
  val out = val::array();
  for (const ctpipe::rational v : values) out.call<void>("push", number(v));
  return out;
}

/// A copy of `values` as a JavaScript typed array (the worker transfers its buffer).
template <class T>
val typed(const std::vector<T>& values) {
  return val::global(sizeof(T) == 8 ? "Float64Array" : "Int32Array")
      .new_(emscripten::typed_memory_view(values.size(), values.data()))
      .template call<val>("slice");
}

/// Per op of the readout's lists, in flat order: kind, stage, micro-batch, chunk; and per
/// rank the offsets (P + 1 entries: rank r's ops are [offsets[r], offsets[r + 1])).
void write_ops(val& out, const ctpipe::io::readout& ro) {
  const ctpipe::schedule_view v = ro.ranks;
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

/// The drawn timeline (readout::drawn: the executed run's, else the simulation's): start
/// and end of every op in whole ticks (op_start_ticks, op_end_ticks: exact integers below
/// 2^53, held as doubles), and the tick's length as tick_num / tick_den time units.
void write_times(val& out, const ctpipe::io::readout& ro) {
  std::vector<double> start, end;
  constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
  for (std::size_t k = 0; k < ro.ranks.size(); ++k) {
    ctpipe::detail::require(ro.drawn.end_ticks(k) < exact_limit, "ctpipe: the page's times hold up to 2^53 ticks");
    start.push_back(static_cast<double>(ro.drawn.start_ticks(k)));
    end.push_back(static_cast<double>(ro.drawn.end_ticks(k)));
  }
  out.set("op_start_ticks", typed(start));
  out.set("op_end_ticks", typed(end));
  out.set("tick_num", static_cast<double>(ro.drawn.tick().num));
  out.set("tick_den", static_cast<double>(ro.drawn.tick().den));
}

/// The executed run the readout draws (readout::drawn_run, of `run`): {model, completed:
/// true, makespan, bubble, bubble_percent, stall [per rank], stalls [per rank: [start,
/// end] pairs, time units, doubles for drawing]}.
val write_executed(const ctpipe::io::readout& ro, const ctpipe::execution& run) {
  const ctpipe::io::executed_timeline& t = *ro.drawn_run;
  val e = val::object();
  e.set("model", std::string(ctpipe::runtime_model_name(t.model)));
  e.set("completed", true);
  e.set("makespan", text(ro.drawn.makespan()));
  e.set("makespan_value", number(ro.drawn.makespan()));
  e.set("bubble", text(run.bubble_fraction()));
  e.set("bubble_percent", ctpipe::io::detail::percent(run.bubble_fraction()));
  e.set("stall", texts(t.stall));
  val stalls = val::array();
  for (const std::vector<ctpipe::io::tick_span>& spans : t.stalls) {
    std::vector<double> ends;
    for (const ctpipe::io::tick_span& s : spans) {
      ends.push_back(number(t.tick * ctpipe::rational{s.start}));
      ends.push_back(number(t.tick * ctpipe::rational{s.end}));
    }
    stalls.call<void>("push", typed(ends));
  }
  e.set("stalls", stalls);
  return e;
}

/// The per-rank readouts: idle (exact), peak in flight in chunks and in full activations
/// (exact), the plain count beside a gamma-weighted peak (empty otherwise), and the
/// peak's closed form (chunks).
void write_ranks(val& out, const ctpipe::io::readout& ro) {
  const std::vector<ctpipe::rational> activations = ctpipe::io::detail::peak_activations(ro);
  out.set("idle", texts(ro.idle));
  out.set("peak_in_flight", texts(ro.peak_in_flight));
  out.set("peak_in_flight_value", numbers(ro.peak_in_flight));
  out.set("peak_activations", texts(activations));
  out.set("peak_activations_value", numbers(activations));
  out.set("peak_in_flight_plain", texts(ro.plain_peak_in_flight));
  val peak_formula = val::array();
  for (const ctpipe::closed_form& f : ro.peak_in_flight_formula) peak_formula.call<void>("push", formula(f));
  out.set("peak_in_flight_formula", peak_formula);
}

/// The costs as analysed, in lowest terms ({f, b, i, w, c, fb}), and the scales.
void write_costs(val& out, const ctpipe::io::readout& ro) {
  val costs = val::object();
  for (const auto& [key, value] :
       {std::pair{"f", ro.costs.f}, std::pair{"b", ro.costs.b}, std::pair{"i", ro.costs.i}, std::pair{"w", ro.costs.w},
        std::pair{"c", ro.costs.c}, std::pair{"fb", ro.costs.pair()}}) {
    costs.set(key, text(value));
  }
  out.set("costs", costs);
  out.set("gamma", text(ro.gamma));
  out.set("stage_scale", texts(ro.stage_scale));
  out.set("microbatch_scale", texts(ro.microbatch_scale));
}

/// The page's object of readout `ro`: {ok: true, schedule, P, m, V, title (the tool's
/// title line, render_title()), costs, gamma, stage_scale, microbatch_scale, pairs
/// ("fused", "split" or ""), interleaved ({variant, group, warmup_factor} or null), makespan,
/// bubble_fraction (+ _percent), span_bubble, messages, each with its *_formula, the
/// per-rank readouts (write_ranks()), the ops (write_ops()), the drawn times
/// (write_times())}; `executed` is set by the caller.
val write_result(const ctpipe::io::readout& ro) {
  val out = val::object();
  out.set("ok", true);
  out.set("schedule", ro.schedule);
  out.set("P", ro.P);
  out.set("m", ro.m);
  out.set("V", ro.V);
  std::string title = ctpipe::io::render_title(ro);
  if (!title.empty() && title.back() == '\n') title.pop_back();
  out.set("title", title);
  write_costs(out, ro);
  out.set("pairs", ro.pairs);
  val interleaved = val::null();
  if (ro.interleaved) {
    interleaved = val::object();
    interleaved.set("variant", std::string(ctpipe::variant_name(ro.interleaved->variant)));
    interleaved.set("group", ro.interleaved->group);
    interleaved.set("warmup_factor", ro.interleaved->warmup_factor);
  }
  out.set("interleaved", interleaved);
  out.set("makespan", text(ro.makespan));
  out.set("makespan_value", number(ro.makespan));
  out.set("makespan_formula", formula(ro.makespan_formula));
  out.set("bubble_fraction", text(ro.bubble_fraction));
  out.set("bubble_fraction_percent", ctpipe::io::detail::percent(ro.bubble_fraction));
  out.set("bubble_fraction_formula", formula(ro.bubble_fraction_formula));
  out.set("span_bubble", text(ro.span_bubble));
  out.set("span_bubble_formula", formula(ro.span_bubble_formula));
  out.set("messages", static_cast<double>(ro.messages));
  out.set("messages_formula", formula(ro.messages_formula));
  write_ranks(out, ro);
  write_ops(out, ro);
  write_times(out, ro);
  return out;
}

val failure(const std::string& message) {
  val out = val::object();
  out.set("ok", false);
  out.set("error", message);
  return out;
}

/// The page's certificates simulate at most this many ops (the periodic program at its
/// largest search): larger ones are the ctpipe tool's (`ctpipe formula`).
constexpr long long max_certificate_ops = 1LL << 18;

/// The formula for every m beside the readouts (`ctpipe formula`, docs/proofs.md): {available:
/// true, m0, m_step, m_residue (interleaved 1F1B: the class of the request's m modulo its
/// group; else 1 and 0), cycle, base [exact strings, m0 .. m0 + cycle - m_step], increment, closed_forms
/// {makespan, bubble_fraction, peak_in_flight: each {from, correct}}} from the periodic certificate of the
/// request's family at its P, costs, stage scale and gamma; or {available: false,
/// reason} (no program for the family or for the class of m, unequal micro-batches, too
/// large for the page, or no repeat within the bound).
val write_certificate(const ctpipe::tool::request& req) {
  val out = val::object();
  const auto unavailable = [&](const std::string& reason) {
    out.set("available", false);
    out.set("reason", reason);
    return out;
  };
  if (!ctpipe::has_program(req.spec.family)) return unavailable(ctpipe::why_no_program(req.spec.family));
  if (!req.microbatch_scale.empty()) return unavailable("the certificate needs micro-batches of equal cost");
  if (req.spec.family == ctpipe::schedule_family::interleaved_1f1b &&
      req.spec.variant == ctpipe::interleaved_variant::torch && req.spec.shape.m % req.spec.shape.P != 0)
    return unavailable("PyTorch's interleaved 1F1B has a periodic program for m a multiple of P only");
  const ctpipe::periodic_program p = ctpipe::program_of(req.spec);
  // As ctpipe formula: the search goes as far as the page's op limit allows.
  const int first = std::min(ctpipe::default_max_periods(p), p.steps(p.m_min) + 8);
  const int periods = ctpipe::max_periods_within(p, ctpipe::default_max_periods(p), max_certificate_ops);
  if (ctpipe::certificate_search_ops(p, first) > max_certificate_ops || periods < first)
    return unavailable("too large for the page's certificate (ctpipe formula computes it)");
  const ctpipe::periodic_certificate cert =
      ctpipe::periodic_certificate_of(req.spec, req.cost, req.stage_scale, req.opts.gamma, periods);
  if (!cert.proved) return unavailable(cert.reason);
  out.set("available", true);
  out.set("m0", cert.m0);
  out.set("m_step", cert.m_step);
  out.set("m_residue", cert.m_residue);
  out.set("cycle", cert.cycle);
  val base = val::array();
  for (std::size_t j = 0; j < cert.base.size(); ++j) base.call<void>("push", text(cert.base[j]));
  out.set("base", base);
  out.set("increment", text(cert.increment));
  const ctpipe::every_m_result holds =
      ctpipe::closed_forms_hold_for_every_m(cert, req.spec, req.cost, req.opts.gamma, req.stage_scale);
  val closed = val::object();
  for (const auto& [key, range] :
       {std::pair{"makespan", holds.makespan}, std::pair{"bubble_fraction", holds.bubble_fraction},
        std::pair{"peak_in_flight", holds.peaks}}) {
    val r = val::object();  // as `ctpipe formula --format json`: {from, correct}
    r.set("from", range.from == 0 ? val::null() : val(range.from));
    r.set("correct", range.correct);
    closed.set(key, r);
  }
  out.set("closed_forms", closed);
  return out;
}

/// The readout of one checked request, with its executed run under --runtime when given
/// (ctpipe's own lowering, as the tool's JSON `executed` entry): drawn in place of the
/// simulation when it completes, else {model, completed: false, hang} (the first stuck
/// op, as the tool describes it).
val analyze_request(const ctpipe::tool::request& req) {
  ctpipe::tool::check_op_limit(static_cast<long long>(ctpipe::total_ops(req.spec)), max_page_ops, "the page");
  ctpipe::io::report rep =
      ctpipe::io::analyze(req.spec, req.cost, req.opts.gamma, req.stage_scale, req.microbatch_scale);
  if (!req.opts.runtime_given) {
    val out = write_result(ctpipe::io::readout_of(rep));
    out.set("certificate", write_certificate(req));
    return out;
  }
  const ctpipe::runtime_model model = req.opts.runtime;
  const ctpipe::schedule lowered = ctpipe::lower(rep.ops.view(), rep.cost, model, req.scale());
  const ctpipe::execution run = ctpipe::execute(lowered.view(), rep.cost, model, req.scale());
  if (!run.completed()) {
    val out = write_result(ctpipe::io::readout_of(rep));
    val e = val::object();
    e.set("model", std::string(ctpipe::runtime_model_name(model)));
    e.set("completed", false);
    e.set("hang", ctpipe::tool::describe_stuck(run.stuck()[0]));
    out.set("executed", e);
    out.set("certificate", write_certificate(req));
    return out;
  }
  ctpipe::io::draw_executed(rep, ctpipe::io::executed_timeline_of(lowered.view(), run));
  const ctpipe::io::readout ro = ctpipe::io::readout_of(rep);
  val out = write_result(ro);
  out.set("executed", write_executed(ro, run));
  out.set("certificate", write_certificate(req));
  return out;
}

val analyze(val args) {
  try {
    return analyze_request(ctpipe::tool::parse_request(emscripten::vecFromJSArray<std::string>(args)));
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
