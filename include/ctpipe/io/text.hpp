// ctpipe/io/text.hpp (run time, opt-in): the article's two views in a terminal.
// - timeline: one row per rank, time across, each op a box from its simulated start to
//   its end (or, for a report with an executed run, its executed start and end, and the
//   rank's stalls in a shade of their own), labelled with its kind and micro-batch; idle
//   time shaded;
// - readout: makespan, idle, bubble fraction against its formula, span bubble, messages;
// - in-flight view: one bar per rank, as long as its peak, with the value and formula.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/report.hpp"

namespace ctpipe::io {

/// How the text views look. `width` is the timeline's target width in columns (the
/// scale is the largest whole number of columns per tick that fits, or several ticks per
/// column when even one does not); `color` adds ANSI colours (forward blue, backward
/// green, bubble grey); without colour the kinds differ by their label letters and fill
/// characters (F `-`, B `=`, I `~`, W `+`), the bubble is shaded with '░' and a stall
/// of an executed run (report::executed) with '▒' (red with colour).
struct text_style {
  int width = 100;
  bool color = false;
  /// Time span of the axis in time units; 0 = the schedule's makespan. A nonzero span
  /// fixes the scale to `width` columns for that span (no bands, labels where they fit):
  /// `ctpipe compare` draws several schedules on one axis this way.
  rational time_span{0};
};

namespace detail {

inline const char* kind_color(op_kind k) {
  switch (k) {
    case op_kind::F: return "\x1b[44;97m";  // blue
    case op_kind::B: return "\x1b[42;30m";  // green
    case op_kind::I: return "\x1b[46;30m";  // cyan
    case op_kind::W: return "\x1b[45;97m";  // magenta
    default: return "\x1b[43;30m";          // yellow: transfers
  }
}
inline constexpr const char* bubble_color = "\x1b[90m";
inline constexpr const char* stall_color = "\x1b[31m";
inline constexpr const char* reset_color = "\x1b[0m";
inline constexpr const char* shade = "\u2591";        // ░
inline constexpr const char* stall_shade = "\u2592";  // ▒

/// What fills an op's box after its label: F '-', B '=', I '~', W '+', transfers '.'.
inline char fill(op_kind k) {
  switch (k) {
    case op_kind::F: return '-';
    case op_kind::B: return '=';
    case op_kind::I: return '~';
    case op_kind::W: return '+';
    default: return '.';
  }
}

/// Compares a simulated value with its closed form, as the readout prints it.
inline std::string against(rational simulated, const closed_form& f) {
  if (!f.holds) return fmt::format("(no closed form: {})", f.condition);
  if (f.value == simulated) return fmt::format("= formula {}", f.formula);
  return fmt::format("!= formula {} = {} (a bug: please report it)", f.formula, to_string(f.value));
}

inline std::string percent(rational x) { return fmt::format("{:.1f}%", 100.0 * x.to_double()); }

}  // namespace detail

namespace detail {

/// The timeline's horizontal scale: how many columns, how many ticks each.
struct timeline_scale {
  std::int64_t width = 0;         ///< columns per band
  std::int64_t columns = 0;       ///< columns of the whole timeline
  bool fixed_span = false;        ///< text_style::time_span set the scale
  double span_ticks = 0;          ///< ticks the columns cover
  double ticks_per_column = 1;

  /// First column whose middle lies at or after `ticks`.
  std::size_t column(std::int64_t ticks) const {
    const double c = std::ceil(static_cast<double>(ticks) / ticks_per_column - 0.5);
    return static_cast<std::size_t>(std::clamp(c, 0.0, static_cast<double>(columns)));
  }
};

/// An op's label: its kind's letter and micro-batch, and its chunk when V > 1 (`F3.1`).
inline std::string timeline_label(op o, const pipeline_shape& shape) {
  std::string label = fmt::format("{}{}", kind_name(o.kind())[0], o.microbatch());
  if (shape.V > 1) label += fmt::format(".{}", shape.chunk_of(o.stage()));
  return label;
}

/// The scale: fill the width, and give the shortest op room for the longest label + 1
/// (a whole number of columns per shortest op, so that equal ops look equal), or the
/// style's time span; at most 12 bands.
inline timeline_scale scale_timeline(const report& rep, const text_style& style) {
  constexpr double max_bands = 12;
  const schedule_view v = rep.ops.view();
  timeline_scale sc;
  const double total = static_cast<double>(std::max<std::int64_t>(drawn_makespan_ticks(rep), 1));
  sc.width = std::max(style.width, 20);
  double shortest = total;
  std::size_t longest_label = 1;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double d = static_cast<double>(drawn_end_ticks(rep, k) - drawn_start_ticks(rep, k));
    if (d > 0) shortest = std::min(shortest, d);
    longest_label = std::max(longest_label, timeline_label(v.ops[k], v.shape).size());
  }
  const double per_shortest =
      std::max(std::floor(static_cast<double>(sc.width) / total * shortest), static_cast<double>(longest_label + 1));
  sc.fixed_span = style.time_span > rational{0};
  sc.span_ticks = sc.fixed_span ? (style.time_span / drawn_tick(rep)).to_double() : total;
  const double per_tick = sc.fixed_span ? static_cast<double>(sc.width) / sc.span_ticks : per_shortest / shortest;
  sc.columns = static_cast<std::int64_t>(std::clamp(std::round(per_tick * sc.span_ticks), 1.0,
                                                    static_cast<double>(max_bands) * static_cast<double>(sc.width)));
  sc.ticks_per_column = sc.span_ticks / static_cast<double>(sc.columns);
  return sc;
}

/// The timeline's cells, full length, one row per rank: the character drawn and the op
/// kind there (-1 idle, stall_cell a stall), and which kinds occur.
struct timeline_grid {
  static constexpr int stall_cell = -3;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::vector<int>> kinds;
  bool present[op_kind_count] = {};
};

/// Draws each op into the columns whose middle falls inside it, its label if it fits
/// with a fill character, then the stalls of an executed run into idle columns.
inline timeline_grid fill_timeline(const report& rep, const timeline_scale& sc) {
  const schedule_view v = rep.ops.view();
  const std::size_t ncols = static_cast<std::size_t>(sc.columns);
  timeline_grid grid;
  grid.cells.assign(static_cast<std::size_t>(v.shape.P), std::vector<std::string>(ncols, shade));
  grid.kinds.assign(static_cast<std::size_t>(v.shape.P), std::vector<int>(ncols, -1));
  for (int r = 0; r < v.shape.P; ++r) {
    auto& row = grid.cells[static_cast<std::size_t>(r)];
    auto& kind_row = grid.kinds[static_cast<std::size_t>(r)];
    for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const op o = v.ops[k];
      if (static_cast<int>(o.kind()) < op_kind_count) grid.present[static_cast<int>(o.kind())] = true;
      const std::size_t from = sc.column(drawn_start_ticks(rep, k));
      const std::size_t to = sc.column(drawn_end_ticks(rep, k));
      const std::string label = timeline_label(o, v.shape);
      const bool labelled = to - std::min(from, to) > label.size();
      for (std::size_t c = from; c < to; ++c) {
        const std::size_t i = c - from;
        row[c] = std::string(1, labelled && i < label.size() ? label[i] : fill(o.kind()));
        kind_row[c] = static_cast<int>(o.kind());
      }
      if (!labelled && from < to) row[from] = std::string(1, label[0]);
    }
    if (!rep.executed) continue;
    for (const tick_span& stall : rep.executed->stalls[static_cast<std::size_t>(r)]) {
      for (std::size_t c = sc.column(stall.start); c < sc.column(stall.end); ++c) {
        if (kind_row[c] != -1) continue;  // an op's column (by its middle instant): none, as they are disjoint
        row[c] = stall_shade;
        kind_row[c] = timeline_grid::stall_cell;
      }
    }
  }
  return grid;
}

/// The time axis of the band of columns [first, last): a number every `step` time units
/// (1, 2, 5, 10, 20, 50, ...), spaced at least 6 columns apart and never overlapping the
/// previous number.
inline std::string timeline_axis(const report& rep, const timeline_scale& sc, std::size_t first, std::size_t last) {
  const double ticks_per_unit = static_cast<double>(drawn_tick(rep).den);  // a tick is 1/den time units
  const double cols_per_unit = ticks_per_unit / sc.ticks_per_column;
  double step = 1;
  for (int k = 0; step * cols_per_unit < 6; ++k) step = (k % 3 == 1 ? step / 2 * 5 : step * 2);
  std::string axis(last - first, ' ');
  std::size_t free_from = first;
  for (double t = std::ceil(static_cast<double>(first) * sc.ticks_per_column / ticks_per_unit / step) * step;
       t * ticks_per_unit <= sc.span_ticks && t * cols_per_unit < static_cast<double>(last); t += step) {
    const std::string label = fmt::format("{}", static_cast<long long>(t));
    const auto at = static_cast<std::size_t>(std::llround(t * cols_per_unit));
    if (at < free_from || at + label.size() > last) continue;
    axis.replace(at - first, label.size(), label);
    free_from = at + label.size() + 1;
  }
  axis.erase(axis.find_last_not_of(' ') + 1);
  return axis;
}

/// Rank r's row over the columns [first, last), coloured by kind when the style says so.
inline std::string timeline_row(const timeline_grid& grid, int r, std::size_t first, std::size_t last, bool color) {
  std::string row;
  int current = -2;
  for (std::size_t c = first; c < last; ++c) {
    const int kind = grid.kinds[static_cast<std::size_t>(r)][c];
    if (color && kind != current) {
      row += reset_color;
      row += kind == timeline_grid::stall_cell ? stall_color
             : kind < 0                        ? bubble_color
                                               : kind_color(static_cast<op_kind>(kind));
      current = kind;
    }
    row += grid.cells[static_cast<std::size_t>(r)][c];
  }
  if (color) row += reset_color;
  return row;
}

/// The legend line: the kinds present, bubble, stall (when the run stalls), the scale.
inline std::string timeline_legend(const report& rep, const timeline_grid& grid, const timeline_scale& sc,
                                   const text_style& style, int label_width) {
  const schedule_view v = rep.ops.view();
  constexpr const char* names[] = {"forward", "backward", "input-gradient", "weight-gradient"};
  std::string legend;
  for (int k = 0; k < 4; ++k) {
    if (grid.present[k]) legend += fmt::format("{}{} {}  ", kind_name(static_cast<op_kind>(k)), fill(static_cast<op_kind>(k)), names[k]);
  }
  const rational unit_cols =
      rational{sc.columns} /
      (sc.fixed_span ? style.time_span : drawn_time(rep, std::max<std::int64_t>(drawn_makespan_ticks(rep), 1)));
  const std::string stall_legend = rep.executed && rep.executed->has_stall()
                                       ? fmt::format("  {} stall (blocked in a transfer, inputs ready)", stall_shade)
                                       : "";
  return fmt::format("{:<{}}{}{} bubble (idle){};  1 time unit = {} column{}{}\n", "", label_width, legend, shade,
                     stall_legend, to_string(unit_cols), unit_cols == rational{1} ? "" : "s",
                     v.shape.V > 1 ? ";  F3.1 = micro-batch 3 on chunk 1" : "");
}

}  // namespace detail

/// The timeline: one row per rank, time across, idle time shaded; a time axis above and
/// a legend below. It draws the simulation, or the report's executed run when it has one
/// (report::executed): then each op at its executed times, and the columns where a rank
/// stalls (executed_timeline::stalls) shaded '▒', with a legend entry when there are any. Each column shows what its rank does at the column's middle instant
/// (so bubbles and ops keep their true proportions at any scale); an op whose box is wide
/// enough carries a label with its kind and micro-batch, and its chunk when V > 1
/// (`F3.1`). The scale gives the shortest op room for its label and one fill character;
/// a timeline wider than `style.width` is cut into bands of that width, one above the
/// other, each with its own axis. Beyond 12 bands the scale shrinks instead and labels
/// drop out where they do not fit. Ops that take no time, or much less than a column,
/// do not show. Column positions
/// are computed in floating point: display only; every number printed is exact.
inline std::string render_timeline(const report& rep, const text_style& style = {}) {
  const schedule_view v = rep.ops.view();
  const detail::timeline_scale sc = detail::scale_timeline(rep, style);
  const detail::timeline_grid grid = detail::fill_timeline(rep, sc);
  const int label_width = static_cast<int>(fmt::format("rank {}", v.shape.P - 1).size()) + 2;
  std::string out;
  for (std::int64_t band = 0; band * sc.width < sc.columns; ++band) {  // bands of `width` columns
    const std::size_t first = static_cast<std::size_t>(band * sc.width);
    const std::size_t last = static_cast<std::size_t>(std::min(sc.columns, (band + 1) * sc.width));
    if (band > 0) out += "\n";
    out += fmt::format("{:<{}}{}\n", "time", label_width, detail::timeline_axis(rep, sc, first, last));
    for (int r = 0; r < v.shape.P; ++r) {
      out += fmt::format("{:<{}}", fmt::format("rank {}", r), label_width) +
             detail::timeline_row(grid, r, first, last, style.color) + "\n";
    }
  }
  return out + detail::timeline_legend(rep, grid, sc, style, label_width);
}

/// The readout lines, shared by the text view and the SVG: makespan, idle per rank,
/// bubble fraction, span bubble and messages, each against its closed form. With an
/// executed run (report::executed) a first line names what the timeline draws (`timeline:
/// run executed under blocking: makespan 10 (simulated 9); stall per rank 0 1; idle per
/// rank 4 4`), and the makespan and idle lines say `simulated`.
inline std::vector<std::string> readout_lines(const report& rep) {
  const int P = rep.spec.shape.P;
  std::string idle;
  for (int r = 0; r < P; ++r) idle += (r ? " " : "") + to_string(rep.sim.idle(r));
  const rational bubble = rep.sim.bubble_fraction();
  const rational msgs{static_cast<std::int64_t>(rep.message_count)};
  std::vector<std::string> lines;
  const char* simulated = "";
  if (rep.executed) {
    const executed_timeline& e = *rep.executed;
    std::string stall, executed_idle;
    for (std::size_t r = 0; r < static_cast<std::size_t>(P); ++r) {
      stall += (r ? " " : "") + to_string(e.stall[r]);
      executed_idle += (r ? " " : "") + to_string(e.idle[r]);
    }
    lines.push_back(fmt::format("timeline: run executed under {}: makespan {} (simulated {}); stall per rank {}; idle per rank {}",
                                runtime_model_name(e.model), to_string(e.tick * rational{e.makespan_ticks}),
                                to_string(rep.sim.makespan()), stall, executed_idle));
    simulated = "simulated ";
  }
  for (std::string& line : std::vector<std::string>{
      fmt::format("{}makespan {} {}", simulated, to_string(rep.sim.makespan()), detail::against(rep.sim.makespan(), rep.makespan_formula)),
      fmt::format("{}idle per rank {}", simulated, idle),
      fmt::format("simulated bubble {} ({}) {}", to_string(bubble), detail::percent(bubble),
                  detail::against(bubble, rep.bubble_formula)),
      fmt::format("span bubble {} (largest span - busy over ranks) {}", to_string(rep.sim.span_bubble()),
                  detail::against(rep.sim.span_bubble(), rep.span_bubble_formula)),
      fmt::format("messages {} {}", rep.message_count, detail::against(msgs, rep.message_formula)),
  }) {
    lines.push_back(std::move(line));
  }
  return lines;
}

/// The readout: readout_lines(), one per line.
inline std::string render_readout(const report& rep) {
  std::string out;
  for (const std::string& line : readout_lines(rep)) out += line + "\n";
  return out;
}

/// The in-flight view: one bar per rank, its length proportional to the rank's peak,
/// with the value and its closed form. For a split-backward schedule with gamma != 1 each
/// row also gives the plain count's peak (gamma = 1), to show what the finer memory model
/// saves.
inline std::string render_in_flight(const report& rep, const text_style& style = {}) {
  const int P = rep.spec.shape.P;
  const int V = rep.spec.shape.V;
  const bool compare = has_split_backward(rep) && rep.gamma != rational{1};
  const in_flight_profile plain = compare ? in_flight(rep.ops.view()) : in_flight_profile{};
  rational top{0};
  for (int r = 0; r < P; ++r) top = max(top, rep.memory.peak(r));
  const int bar_width = std::max(10, std::min(style.width - 40, 50));
  const int label_width = static_cast<int>(fmt::format("rank {}", P - 1).size()) + 2;
  std::string out = fmt::format("in-flight activations: peak per rank{} (gamma = {}{})\n",
                                V > 1 ? ", in chunks (a chunk is 1/V of a full activation)" : "",
                                to_string(rep.gamma), compare ? "; in brackets the plain count, gamma = 1" : "");
  for (int r = 0; r < P; ++r) {
    const rational peak = rep.memory.peak(r);
    const int len = top == rational{0} ? 0 : static_cast<int>((peak / top * rational{bar_width}).to_double() + 0.5);
    std::string bar;
    for (int k = 0; k < len; ++k) bar += "\u2588";  // █
    std::string tail = fmt::format(" {}", to_string(peak));
    if (compare) tail += fmt::format(" [{}]", to_string(plain.peak(r)));
    if (V > 1) tail += fmt::format(" ({} full)", to_string(rep.memory.peak_activations(r)));
    tail += " " + detail::against(peak, rep.peak_formula[static_cast<std::size_t>(r)]);
    out += fmt::format("{:<{}}{}{}{}{}\n", fmt::format("rank {}", r), label_width, style.color ? "\x1b[33m" : "", bar,
                       style.color ? detail::reset_color : "", tail);
  }
  return out;
}

namespace detail {
/// What the title says of an executed run (report::executed): `  timeline: run executed
/// under MODEL (NOTE)`; empty without one.
inline std::string title_run(const report& rep) {
  if (!rep.executed) return "";
  std::string run = fmt::format("  timeline: run executed under {}", runtime_model_name(rep.executed->model));
  if (!rep.executed->note.empty()) run += fmt::format(" ({})", rep.executed->note);
  return run;
}
}  // namespace detail

/// Title line: schedule (family, or file: schedule_name), shape, the interleaved
/// parameters, costs; with an executed run (report::executed) `timeline: run executed
/// under MODEL` and its note in brackets.
inline std::string render_title(const report& rep) {
  const auto& s = rep.spec.shape;
  std::string params;
  if (rep.source.empty() && rep.spec.family == schedule_family::interleaved_1f1b) {
    params = fmt::format("  variant {}  g = {}  warmup factor {}", variant_name(rep.spec.variant), group_size(rep.spec),
                         rep.spec.warmup_factor);
  }
  return fmt::format("{}  P = {}  m = {}  V = {}  placement {}{}  costs t_f = {}, t_b = {}, t_i = {}, t_w = {}, t_c = {}{}\n",
                     schedule_name(rep), s.P, s.m, s.V, placement_name(s.layout), params, to_string(rep.cost.f),
                     to_string(rep.cost.b), to_string(rep.cost.i), to_string(rep.cost.w), to_string(rep.cost.c),
                     detail::title_run(rep));
}

/// Everything the `ctpipe` tool prints in text format.
inline std::string render_text(const report& rep, const text_style& style = {}) {
  return render_title(rep) + "\n" + render_timeline(rep, style) + "\n" + render_readout(rep) + "\n" +
         render_in_flight(rep, style);
}

}  // namespace ctpipe::io
