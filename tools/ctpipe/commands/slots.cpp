// `ctpipe slots`: the activation slots and receive buffers each pipeline rank needs
// (ctpipe/analysis/slots.hpp, docs/memory.md "Slots"): under the simulated timeline, or
// with --runtime under the executed timeline of ctpipe's own lowering for that model. Per
// rank the slot count and the largest overlap (equal: the colouring is minimal) and a map
// of which lifetime holds which slot, as text or JSON (docs/json.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>  // std::move
#include <vector>

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/slots.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/schedules/generate.hpp"

#include "command.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../output.hpp"

namespace ctpipe::tool {
namespace {

/// `ctpipe slots`'s options.
struct slots_options : options_of<schedule_options, cost_options, scale_options, view_options, runtime_options> {
  slots_options() {
    formats = {"text", "json"};
    format_help = "text (per rank: slot counts, largest overlaps, the map) or json (docs/json.md)";
    command = "slots";
    takes_width = false;
    takes_color = false;
  }
};

/// The schedule, the timeline's ops (the compute schedule, or its lowered lists) and the plan.
struct slots_result {
  schedule_spec spec;
  const runtime_model* runtime = nullptr;  ///< the executed timeline's model, or nullptr: simulated
  schedule ops;                            ///< the view the plan indexes
  slot_plan plan;
};

/// Whether flat op `k` of `v` is the B word of an overlapped pair (the word before it on
/// its rank is the pair's OVERLAP_F_B word): one action with that word in every list the
/// tool and the Python package hand out.
bool pair_b_word(schedule_view v, int r, std::size_t k) {
  return k > v.offsets[static_cast<std::size_t>(r)] && v.ops[k - 1].kind() == op_kind::overlap_f_b;
}

/// The action flat op `k` of rank `r` belongs to, as the lists spell it: an overlapped
/// pair (its word or its B word) as `(<s>F<j>;<s2>B<j2>)OVERLAP_F_B`, any other op as
/// io::action().
std::string action_of(schedule_view v, int r, std::size_t k) {
  if (v.ops[k].kind() == op_kind::overlap_f_b && k + 1 < v.offsets[static_cast<std::size_t>(r) + 1])
    return io::pair_action(v.ops[k], v.ops[k + 1]);
  if (pair_b_word(v, r, k)) return io::pair_action(v.ops[k - 1], v.ops[k]);
  return io::action(v.ops[k]);
}

/// Per flat op of `v`, the 0-based position of its action in its rank's list (a pair,
/// its word and its B word, one action). Linear.
std::vector<std::size_t> action_indices(schedule_view v) {
  std::vector<std::size_t> out(v.size());
  for (int r = 0; r < v.shape.P; ++r) {
    std::size_t index = 0;
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k)
      out[k] = pair_b_word(v, r, k) ? index - 1 : index++;
  }
  return out;
}

/// A lifetime's name: the action of the op that starts it and of the one that ends it.
std::string lifetime_ops(schedule_view v, const slot_lifetime& l) {
  return action_of(v, l.rank, l.first_op) + ".." + action_of(v, l.rank, l.last_op);
}

/// The text view: a title, then per rank its counts and, per kind, one line per slot
/// listing the lifetimes it holds in time order: `0F4..0B4 [12, 20]`.
std::string slots_text(const slots_result& s) {
  const schedule_view v = s.ops.view();
  std::string out = fmt::format("slots: {}  P = {}  m = {}  V = {}  {}\n", family_name(s.spec.family), s.spec.shape.P,
                                s.spec.shape.m, s.spec.shape.V,
                                s.runtime == nullptr ? std::string("simulated timeline")
                                                     : fmt::format("executed timeline of ctpipe's lowering under {}",
                                                                   runtime_model_name(*s.runtime)));
  out += "a lifetime holds the ops from its first to its last in its rank's list (docs/memory.md, \"Slots\")\n";
  const slot_kind kinds[] = {slot_kind::activation, slot_kind::receive};
  for (int r = 0; r < s.plan.ranks(); ++r) {
    out += fmt::format("rank {}: {} activation slots (largest overlap {}), {} receive buffers (largest overlap {})\n",
                       r, s.plan.count(r, slot_kind::activation), s.plan.largest_overlap(r, slot_kind::activation),
                       s.plan.count(r, slot_kind::receive), s.plan.largest_overlap(r, slot_kind::receive));
    for (const slot_kind k : kinds) {
      std::vector<std::string> lines(static_cast<std::size_t>(s.plan.count(r, k)));
      for (const slot_lifetime& l : s.plan.of(r, k)) {
        const rational tick = s.plan.tick();
        lines[static_cast<std::size_t>(l.slot)] +=
            fmt::format("  {} [{}, {}]", lifetime_ops(v, l), io::to_string(tick * rational{l.start_ticks}),
                        io::to_string(tick * rational{l.end_ticks}));
      }
      for (std::size_t slot = 0; slot < lines.size(); ++slot)
        out += fmt::format("  {} {}:{}\n", k == slot_kind::activation ? "activation slot" : "receive buffer", slot,
                           lines[slot]);
    }
  }
  return out;
}

/// The JSON view (docs/json.md, `ctpipe slots`).
std::string slots_json(const slots_result& s) {
  const schedule_view v = s.ops.view();
  nlohmann::ordered_json j;
  j["schedule"] = family_name(s.spec.family);
  j["P"] = s.spec.shape.P;
  j["m"] = s.spec.shape.m;
  j["V"] = s.spec.shape.V;
  j["timeline"] = s.runtime == nullptr ? "simulated" : "executed";
  j["runtime"] = s.runtime == nullptr ? nlohmann::ordered_json(nullptr) : runtime_model_name(*s.runtime);
  j["ranks"] = nlohmann::ordered_json::array();
  const std::vector<std::size_t> index = action_indices(v);
  for (int r = 0; r < s.plan.ranks(); ++r) {
    nlohmann::ordered_json rank;
    rank["rank"] = r;
    for (const slot_kind k : {slot_kind::activation, slot_kind::receive})
      rank[slot_kind_name(k)] = {{"slots", s.plan.count(r, k)}, {"largest_overlap", s.plan.largest_overlap(r, k)}};
    rank["lifetimes"] = nlohmann::ordered_json::array();
    for (const slot_kind k : {slot_kind::activation, slot_kind::receive}) {
      for (const slot_lifetime& l : s.plan.of(r, k)) {
        rank["lifetimes"].push_back({{"stage", l.stage},
                                     {"microbatch", l.microbatch},
                                     {"kind", slot_kind_name(l.kind)},
                                     {"start", io::to_string(s.plan.tick() * rational{l.start_ticks})},
                                     {"end", io::to_string(s.plan.tick() * rational{l.end_ticks})},
                                     {"slot", l.slot},
                                     {"start_op", action_of(v, r, l.first_op)},
                                     {"end_op", action_of(v, r, l.last_op)},
                                     {"start_index", index[l.first_op]},
                                     {"end_index", index[l.last_op]}});
      }
    }
    j["ranks"].push_back(rank);
  }
  return json_text(j);
}

/// `ctpipe slots` (see the file comment).
class slots_command final : public command_with_options<slots_options> {
 private:
  void adjust_shared(CLI::App& app) override {
    app.remove_option(app.get_option("--gamma"));  // a slot holds a whole activation
    app.get_option("--runtime")
        ->description(
            "the executed timeline of ctpipe's own lowering under this runtime model (activation slots and receive "
            "buffers); default: the simulated timeline (activation slots only)");
  }

  std::string run_checked() override {
    slots_result s;
    s.spec = opts_.spec_for(opts_.families.front());
    check_spec(s.spec);
    check_op_limit(static_cast<long long>(total_ops(s.spec)), max_json_ops, "slots");
    check_scale_lengths(opts_.stage_scale, opts_.microbatch_scale, s.spec.shape);
    const cost_scale scale{opts_.stage_scale, opts_.microbatch_scale};
    check_scale(scale, s.spec.shape);
    s.runtime = opts_.runtime_or_all();
    schedule compute = generate(s.spec);
    if (s.runtime == nullptr) {
      s.plan = plan_slots(compute.view(), simulate(compute.view(), opts_.cost, scale));
      s.ops = std::move(compute);
    } else {
      s.ops = lower(compute.view(), opts_.cost, *s.runtime, scale);
      const execution run = execute(s.ops.view(), opts_.cost, *s.runtime, scale);
      if (!run.completed())
        throw usage_error(fmt::format("ctpipe: slots: ctpipe's lowering hangs under {} (ctpipe validate names why)",
                                      runtime_model_name(*s.runtime)));
      s.plan = plan_slots(s.ops.view(), run);
    }
    return opts_.format == "json" ? slots_json(s) : slots_text(s);
  }
};

}  // namespace

std::unique_ptr<command> make_slots() { return std::make_unique<slots_command>(); }

}  // namespace ctpipe::tool
