// ctpipe/io/text.hpp (run time, opt-in): the article's two views in a terminal, rendered
// from the readout model (io::readout, ctpipe/io/readout.hpp); each function also takes
// a report, for which it renders readout_of(report).
// - title: render_title() (readout.hpp);
// - timeline: one row per rank, time across, each op a box from its simulated start to
//   its end (or, for a readout with an executed run, its executed start and end, and the
//   rank's stalls in a shade of their own), labelled with its kind and micro-batch; idle
//   time shaded; an overlapped pair one box labelled with both halves (`F4/B0`,
//   pair_label());
// - readout: readout_lines() (readout.hpp): makespan, idle, bubble fraction against its
//   formula, span bubble, messages;
// - in-flight view: one bar per rank, as long as its peak, with the value and formula.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"

namespace ctpipe::io {

/// How the text views look. `width` is the timeline's target width in columns (the
/// scale is the largest whole number of columns per tick that fits, or several ticks per
/// column when even one does not); `color` adds ANSI colours (forward blue, backward
/// green, overlapped F&B pair bright blue, bubble grey); without colour the kinds differ
/// by their label letters and fill characters (F `-`, B `=`, I `~`, W `+`, an
/// overlapped pair `#`), the bubble is shaded with '░' and a stall
/// of an executed run (readout::drawn_run) with '▒' (red with colour).
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
    case op_kind::F: return "\x1b[44;97m";             // blue
    case op_kind::B: return "\x1b[42;30m";             // green
    case op_kind::I: return "\x1b[46;30m";             // cyan
    case op_kind::W: return "\x1b[45;97m";             // magenta
    case op_kind::overlap_f_b: return "\x1b[104;30m";  // bright blue: an overlapped F&B pair
    default: return "\x1b[43;30m";                     // yellow: transfers
  }
}
inline constexpr const char* bubble_color = "\x1b[90m";
inline constexpr const char* stall_color = "\x1b[31m";
inline constexpr const char* reset_color = "\x1b[0m";
inline constexpr const char* shade = "\u2591";        // ░
inline constexpr const char* stall_shade = "\u2592";  // ▒
inline constexpr const char* fill_shade = "\u2593";   // ▓
inline constexpr const char* fill_color = "\x1b[33m";

/// What fills an op's box after its label: F '-', B '=', I '~', W '+', an overlapped
/// pair '#', transfers '.'.
inline char fill(op_kind k) {
  switch (k) {
    case op_kind::F: return '-';
    case op_kind::B: return '=';
    case op_kind::I: return '~';
    case op_kind::W: return '+';
    case op_kind::overlap_f_b: return '#';
    default: return '.';
  }
}

/// The timeline's horizontal scale: how many columns, how many ticks each.
struct timeline_scale {
  std::int64_t width = 0;    ///< columns per band
  std::int64_t columns = 0;  ///< columns of the whole timeline
  bool fixed_span = false;   ///< text_style::time_span set the scale
  double span_ticks = 0;     ///< ticks the columns cover
  double ticks_per_column = 1;

  /// First column whose middle lies at or after `ticks`.
  std::size_t column(std::int64_t ticks) const { return column(static_cast<double>(ticks)); }
  std::size_t column(double ticks) const {
    const double c = std::ceil(ticks / ticks_per_column - 0.5);
    return static_cast<std::size_t>(std::clamp(c, 0.0, static_cast<double>(columns)));
  }
};

/// An op's label: its kind's letter and micro-batch, and its chunk when V > 1 (`F3.1`).
inline std::string timeline_label(op o, const pipeline_shape& shape) {
  std::string label = fmt::format("{}{}", kind_name(o.kind())[0], o.microbatch());
  if (shape.V > 1) label += fmt::format(".{}", shape.chunk_of(o.stage()));
  return label;
}

/// The label of op k of `v` (ending its rank at `rank_end`): timeline_label(), or for an
/// overlapped pair pair_label() of its two words.
inline std::string drawn_label(schedule_view v, std::size_t k, std::size_t rank_end) {
  return starts_pair(v, k, rank_end) ? pair_label(v.ops[k], v.ops[k + 1], v.shape) : timeline_label(v.ops[k], v.shape);
}

/// The scale: fill the width, and give the shortest op room for the longest label + 1
/// (a whole number of columns per shortest op, so that equal ops look equal), and an
/// overlapped pair room for its longer label (pair_label()), or the style's time span;
/// at most 12 bands.
inline timeline_scale scale_timeline(const readout& ro, const text_style& style) {
  constexpr double max_bands = 12;
  const schedule_view v = ro.ranks;
  timeline_scale sc;
  const double total = static_cast<double>(std::max<std::int64_t>(ro.drawn.makespan_ticks(), 1));
  sc.width = std::max(style.width, 20);
  double shortest = total;
  std::size_t longest_label = 1;
  // Columns per tick an overlapped pair asks for: its label + 1 over its duration.
  double pair_per_tick = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    const std::size_t rank_end = v.offsets[static_cast<std::size_t>(r) + 1];
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < rank_end; ++k) {
      const double d = static_cast<double>(ro.drawn.end_ticks(k) - ro.drawn.start_ticks(k));
      if (d > 0) shortest = std::min(shortest, d);
      if (starts_pair(v, k, rank_end)) {
        const double label = static_cast<double>(pair_label(v.ops[k], v.ops[k + 1], v.shape).size() + 1);
        if (d > 0) pair_per_tick = std::max(pair_per_tick, label / d);
        ++k;  // its B word: the same times, labelled with the pair
        continue;
      }
      longest_label = std::max(longest_label, timeline_label(v.ops[k], v.shape).size());
    }
  }
  const double per_shortest = std::max({std::floor(static_cast<double>(sc.width) / total * shortest),
                                        static_cast<double>(longest_label + 1), std::ceil(pair_per_tick * shortest)});
  sc.fixed_span = style.time_span > rational{0};
  sc.span_ticks = sc.fixed_span ? (style.time_span / ro.drawn.tick()).to_double() : total;
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
  static constexpr int fill_cell = -4;  ///< a piece of a fill job (readout::fill)
  bool filled = false;                  ///< whether any column shows one
  std::vector<std::vector<std::string>> cells;
  std::vector<std::vector<int>> kinds;
  bool present[op_kind_count] = {};
};

/// The pieces of a fill (readout::fill) into the idle columns of their ranks, '▓'.
inline void draw_fill(const readout& ro, const timeline_scale& sc, timeline_grid& grid) {
  if (ro.fill == nullptr) return;
  const rational tick = ro.drawn.tick();
  for (const fill_piece& p : ro.fill->result.pieces.span()) {
    const std::size_t r = static_cast<std::size_t>(p.rank);
    for (std::size_t c = sc.column((p.start / tick).to_double()); c < sc.column((p.end / tick).to_double()); ++c) {
      if (grid.kinds[r][c] != -1) continue;
      grid.cells[r][c] = fill_shade;
      grid.kinds[r][c] = timeline_grid::fill_cell;
      grid.filled = true;
    }
  }
}

/// Draws each op into the columns whose middle falls inside it, its label if it fits
/// with a fill character, then the stalls of an executed run into idle columns, and the
/// pieces of a fill (draw_fill()).
inline timeline_grid fill_timeline(const readout& ro, const timeline_scale& sc) {
  const schedule_view v = ro.ranks;
  const std::size_t ncols = static_cast<std::size_t>(sc.columns);
  timeline_grid grid;
  grid.cells.assign(static_cast<std::size_t>(v.shape.P), std::vector<std::string>(ncols, shade));
  grid.kinds.assign(static_cast<std::size_t>(v.shape.P), std::vector<int>(ncols, -1));
  for (int r = 0; r < v.shape.P; ++r) {
    auto& row = grid.cells[static_cast<std::size_t>(r)];
    auto& kind_row = grid.kinds[static_cast<std::size_t>(r)];
    const std::size_t rank_end = v.offsets[static_cast<std::size_t>(r) + 1];
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < rank_end; ++k) {
      const op o = v.ops[k];
      if (static_cast<int>(o.kind()) < op_kind_count) grid.present[static_cast<int>(o.kind())] = true;
      const std::string label = drawn_label(v, k, rank_end);
      const std::size_t from = sc.column(ro.drawn.start_ticks(k));
      // An overlapped pair: one box over both words (the same times), then its B word skipped.
      const std::size_t last = starts_pair(v, k, rank_end) ? k + 1 : k;
      const std::size_t to = sc.column(std::max(ro.drawn.end_ticks(k), ro.drawn.end_ticks(last)));
      k = last;
      const bool labelled = to - std::min(from, to) > label.size();
      for (std::size_t c = from; c < to; ++c) {
        const std::size_t i = c - from;
        row[c] = std::string(1, labelled && i < label.size() ? label[i] : fill(o.kind()));
        kind_row[c] = static_cast<int>(o.kind());
      }
      // Too narrow for its label: the kind's letter (a pair stays all '#': its 'F' would read as a forward).
      if (!labelled && from < to && o.kind() != op_kind::overlap_f_b) row[from] = std::string(1, label[0]);
    }
    if (ro.drawn_run == nullptr) continue;
    for (const tick_span& stall : ro.drawn_run->stalls[static_cast<std::size_t>(r)]) {
      for (std::size_t c = sc.column(stall.start); c < sc.column(stall.end); ++c) {
        if (kind_row[c] != -1) continue;  // an op's column (by its middle instant): none, as they are disjoint
        row[c] = stall_shade;
        kind_row[c] = timeline_grid::stall_cell;
      }
    }
  }
  draw_fill(ro, sc, grid);
  return grid;
}

/// The time axis of the band of columns [first, last): a number every `step` time units
/// (1, 2, 5, 10, 20, 50, ...), spaced at least 6 columns apart and never overlapping the
/// previous number.
inline std::string timeline_axis(const readout& ro, const timeline_scale& sc, std::size_t first, std::size_t last) {
  const double ticks_per_unit = static_cast<double>(ro.drawn.tick().den);  // a tick is 1/den time units
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
      row += kind == timeline_grid::stall_cell  ? stall_color
             : kind == timeline_grid::fill_cell ? fill_color
             : kind < 0                         ? bubble_color
                                                : kind_color(static_cast<op_kind>(kind));
      current = kind;
    }
    row += grid.cells[static_cast<std::size_t>(r)][c];
  }
  if (color) row += reset_color;
  return row;
}

/// The legend line: the kinds present (an overlapped pair as `F/B# F&B overlapped
/// pair`, never its word's kind name), bubble, stall (when the run stalls), the scale.
inline std::string timeline_legend(const readout& ro, const timeline_grid& grid, const timeline_scale& sc,
                                   const text_style& style, int label_width) {
  const schedule_view v = ro.ranks;
  constexpr const char* names[] = {"forward", "backward", "input-gradient", "weight-gradient"};
  std::string legend;
  for (int k = 0; k < 4; ++k) {
    if (grid.present[k])
      legend += fmt::format("{}{} {}  ", kind_name(static_cast<op_kind>(k)), fill(static_cast<op_kind>(k)), names[k]);
  }
  if (grid.present[static_cast<int>(op_kind::overlap_f_b)])
    legend += fmt::format("F/B{} F&B overlapped pair  ", fill(op_kind::overlap_f_b));
  const rational unit_cols =
      rational{sc.columns} /
      (sc.fixed_span ? style.time_span : ro.drawn.time(std::max<std::int64_t>(ro.drawn.makespan_ticks(), 1)));
  // Under a stream model a rank stalls at a compute op whose RECV queued on its stream.
  const std::string stall_legend =
      ro.drawn_run != nullptr && ro.drawn_run->has_stall()
          ? fmt::format("  {} stall ({})", stall_shade,
                        is_stream_model(ro.drawn_run->model) ? "a RECV queued behind other ops of its stream"
                                                             : "blocked in a transfer, inputs ready")
          : "";
  const std::string fill_legend =
      grid.filled ? fmt::format("  {} filled (independent work in the bubbles)", fill_shade) : "";
  return fmt::format("{:<{}}{}{} bubble (idle){}{};  1 time unit = {} column{}{}{}\n", "", label_width, legend, shade,
                     stall_legend, fill_legend, to_string(unit_cols), unit_cols == rational{1} ? "" : "s",
                     v.shape.V > 1 ? ";  F3.1 = micro-batch 3 on chunk 1" : "",
                     !grid.present[static_cast<int>(op_kind::overlap_f_b)] ? ""
                     : v.shape.V > 1                                       ? ";  F4.1/B0.0 = F4.1 and B0.0 overlapped"
                                                                           : ";  F4/B0 = F4 and B0 overlapped");
}

}  // namespace detail

/// The timeline: one row per rank, time across, idle time shaded; a time axis above and
/// a legend below. It draws readout::drawn: the simulation, or the executed run when
/// there is one (readout::drawn_run): then each op at its executed times, and the columns
/// where a rank stalls (executed_timeline::stalls) shaded '▒', with a legend entry when
/// there are any. Each column shows what its rank does at the column's middle instant
/// (so bubbles and ops keep their true proportions at any scale); an op whose box is wide
/// enough carries a label with its kind and micro-batch, and its chunk when V > 1
/// (`F3.1`); an overlapped pair is one box, `#`-filled, labelled with both halves
/// (`F4/B0`, `F4.1/B0.0`; pair_label()), with a legend entry when there are any. The scale gives the shortest op room
/// for its label and one fill character; a timeline wider than `style.width` is cut into bands of that width, one above
/// the other, each with its own axis. Beyond 12 bands the scale shrinks instead and labels drop out where they do not
/// fit. Ops that take no time, or much less than a column, do not show. Column positions are computed in floating
/// point: display only; every number printed is exact.
inline std::string render_timeline(const readout& ro, const text_style& style = {}) {
  const detail::timeline_scale sc = detail::scale_timeline(ro, style);
  const detail::timeline_grid grid = detail::fill_timeline(ro, sc);
  const int label_width = static_cast<int>(fmt::format("rank {}", ro.P - 1).size()) + 2;
  std::string out;
  for (std::int64_t band = 0; band * sc.width < sc.columns; ++band) {  // bands of `width` columns
    const std::size_t first = static_cast<std::size_t>(band * sc.width);
    const std::size_t last = static_cast<std::size_t>(std::min(sc.columns, (band + 1) * sc.width));
    if (band > 0) out += "\n";
    out += fmt::format("{:<{}}{}\n", "time", label_width, detail::timeline_axis(ro, sc, first, last));
    for (int r = 0; r < ro.P; ++r) {
      out += fmt::format("{:<{}}", fmt::format("rank {}", r), label_width) +
             detail::timeline_row(grid, r, first, last, style.color) + "\n";
    }
  }
  return out + detail::timeline_legend(ro, grid, sc, style, label_width);
}

/// render_timeline() of readout_of(rep).
inline std::string render_timeline(const report& rep, const text_style& style = {}) {
  return render_timeline(readout_of(rep), style);
}

/// The readout: readout_lines(), one per line.
inline std::string render_readout(const readout& ro) {
  std::string out;
  for (const std::string& line : readout_lines(ro)) out += line + "\n";
  return out;
}

/// render_readout() of readout_of(rep).
inline std::string render_readout(const report& rep) { return render_readout(readout_of(rep)); }

namespace detail {
/// A rank's in-flight bar with a rebalancing: '█' up to the lower of its peaks before
/// and after, then '▒' for what moved away (before > after) or '▓' for what it hosts
/// (after > before); `top` is the longest bar's value, `width` its columns.
inline std::string rebalanced_bar(rational after, rational before, rational top, int width) {
  const auto cols = [&](rational x) {
    return top == rational{0} ? 0 : static_cast<int>((x / top * rational{width}).to_double() + 0.5);
  };
  const int low = cols(std::min(after, before)), high = cols(max(after, before));
  std::string bar;
  for (int k = 0; k < high; ++k) bar += k < low ? "\u2588" : after < before ? stall_shade : fill_shade;
  return bar;
}
}  // namespace detail

/// The in-flight view: one bar per rank, its length proportional to the rank's peak
/// (readout::peak_in_flight), with the value and its closed form; with V > 1 the peak in
/// full activations too. For a split-backward schedule with gamma != 1 each row also
/// gives the plain count's peak (readout::plain_peak_in_flight, gamma = 1), to show what
/// the finer memory model saves. With a rebalancing (readout::rebalance) each bar shows
/// the peak after it beside the staircase (detail::rebalanced_bar(): '▒' moved away, '▓'
/// hosted) and the row ends `; 5 after rebalancing`.
inline std::string render_in_flight(const readout& ro, const text_style& style = {}) {
  const bool compare = !ro.plain_peak_in_flight.empty();
  rational top{0};
  for (const rational& peak : ro.peak_in_flight) top = max(top, peak);
  if (ro.rebalance != nullptr) {
    for (const rational& peak : ro.rebalance->plan.peak_after) top = max(top, peak);
  }
  const int bar_width = std::max(10, std::min(style.width - 40, 50));
  const int label_width = static_cast<int>(fmt::format("rank {}", ro.P - 1).size()) + 2;
  std::string out =
      fmt::format("in-flight activations: peak per rank{} (gamma = {}{})\n",
                  ro.chunk_fraction != rational{1} ? ", in chunks (a chunk is 1/V of a full activation)" : "",
                  to_string(ro.gamma), compare ? "; in brackets the plain count, gamma = 1" : "");
  if (ro.rebalance != nullptr)
    out += fmt::format("after rebalancing: {} moved away, {} hosted\n", detail::stall_shade, detail::fill_shade);
  for (std::size_t r = 0; r < ro.peak_in_flight.size(); ++r) {
    const rational peak = ro.peak_in_flight[r];
    const int len = top == rational{0} ? 0 : static_cast<int>((peak / top * rational{bar_width}).to_double() + 0.5);
    std::string bar;
    for (int k = 0; k < len; ++k) bar += "\u2588";  // █
    if (ro.rebalance != nullptr) bar = detail::rebalanced_bar(ro.rebalance->plan.peak_after[r], peak, top, bar_width);
    std::string tail = fmt::format(" {}", to_string(peak));
    if (compare) tail += fmt::format(" [{}]", to_string(ro.plain_peak_in_flight[r]));
    if (ro.chunk_fraction != rational{1}) tail += fmt::format(" ({} full)", to_string(peak * ro.chunk_fraction));
    tail += " " + detail::against(peak, ro.peak_in_flight_formula[r]);
    if (ro.rebalance != nullptr)
      tail += fmt::format("; {} after rebalancing", to_string(ro.rebalance->plan.peak_after[r]));
    out += fmt::format("{:<{}}{}{}{}{}\n", fmt::format("rank {}", r), label_width, style.color ? "\x1b[33m" : "", bar,
                       style.color ? detail::reset_color : "", tail);
  }
  return out;
}

/// render_in_flight() of readout_of(rep).
inline std::string render_in_flight(const report& rep, const text_style& style = {}) {
  return render_in_flight(readout_of(rep), style);
}

/// Bytes in the binary unit (B, KiB, MiB, GiB, TiB) that `scale` bytes call for, with two
/// decimals (display only; the JSON has the exact bytes): one unit for a whole table.
inline std::string bytes_text(rational bytes, rational scale) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double size = 1;
  while (u < 4 && scale.to_double() >= size * 1024) {
    size *= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", to_string(bytes)) : fmt::format("{:.2f} {}", bytes.to_double() / size, units[u]);
}

/// One line of a readout's memory (readout::budget): each rank's peak, and the ranks over
/// the limit with by how much (`ctpipe compare`'s notes).
inline std::string memory_summary(const readout& ro) {
  const memory_budget& b = *ro.budget;
  std::string out;
  if (!b.model.empty()) {
    rational scale{0};
    for (const rational& x : b.peak_bytes) scale = max(scale, x);
    out += "peak per rank";
    for (const rational& x : b.peak_bytes) out += " " + bytes_text(x, scale);
    if (b.limit_bytes) {
      std::string over;
      for (int r = 0; r < ro.P; ++r) {
        const rational x = b.peak_bytes[static_cast<std::size_t>(r)];
        if (x > *b.limit_bytes) over += fmt::format(" rank {} by {},", r, bytes_text(x - *b.limit_bytes, scale));
      }
      out += over.empty()
                 ? "; every rank fits the limit " + bytes_text(*b.limit_bytes, scale)
                 : "; over the limit " + bytes_text(*b.limit_bytes, scale) + ":" + over.substr(0, over.size() - 1);
    }
  }
  if (b.limit_activations) {
    const std::vector<rational> peaks = detail::peak_activations(ro);
    std::string over;
    for (int r = 0; r < ro.P; ++r) {
      if (peaks[static_cast<std::size_t>(r)] > *b.limit_activations) over += fmt::format(" rank {},", r);
    }
    out += (out.empty() ? "" : "; ") + std::string("limit ") + to_string(*b.limit_activations) + " full activations: " +
           (over.empty() ? std::string("every rank fits") : "over on" + over.substr(0, over.size() - 1));
  }
  return out;
}

namespace detail {
/// `text` with its control characters (a newline in a file name) shown as `?`.
inline std::string one_line(std::string text) {
  for (char& c : text) c = static_cast<unsigned char>(c) < 32 ? '?' : c;
  return text;
}
}  // namespace detail

/// The memory section (readout::budget): per rank, from a model, its static and peak
/// bytes in GiB; against a limit, whether it fits and by how much it does not. Empty
/// without a budget.
inline std::string render_memory(const readout& ro) {
  if (ro.budget == nullptr) return "";
  const memory_budget& b = *ro.budget;
  std::string out;
  const auto verdict = [](rational value, std::optional<rational> limit, auto show) {
    if (!limit) return std::string();
    return value > *limit ? fmt::format("  OVER the limit {} by {}", show(*limit), show(value - *limit))
                          : fmt::format("  fits the limit {}", show(*limit));
  };
  if (!b.model.empty()) {
    rational scale{0};
    for (const rational& x : b.peak_bytes) scale = max(scale, x);
    const auto gib = [&scale](rational x) { return bytes_text(x, scale); };
    std::string layers;
    for (std::size_t s = 0; s < b.layers.size(); ++s) layers += (s == 0 ? "" : ",") + std::to_string(b.layers[s]);
    out += fmt::format("memory per rank, model {} (layers per stage {}; gamma = {}):\n", detail::one_line(b.model),
                       layers, to_string(ro.gamma));
    for (int r = 0; r < ro.P; ++r) {
      const std::size_t i = static_cast<std::size_t>(r);
      out += fmt::format("rank {}  static {} + activations {} = peak {}{}\n", r, gib(b.static_bytes[i]),
                         gib(b.peak_bytes[i] - b.static_bytes[i]), gib(b.peak_bytes[i]),
                         verdict(b.peak_bytes[i], b.limit_bytes, gib));
    }
  }
  if (b.limit_activations) {
    const std::vector<rational> peaks = detail::peak_activations(ro);
    out += fmt::format("memory limit {} full activations per rank (peak in flight x chunk fraction, gamma = {}):\n",
                       to_string(*b.limit_activations), to_string(ro.gamma));
    const auto plain = [](rational x) { return to_string(x); };
    for (int r = 0; r < ro.P; ++r) {
      out += fmt::format("rank {}  {}{}\n", r, to_string(peaks[static_cast<std::size_t>(r)]),
                         verdict(peaks[static_cast<std::size_t>(r)], b.limit_activations, plain));
    }
  }
  return out;
}

namespace detail {
/// One fill_result as text lines: the total against the work and the bound, per rank
/// filled and remaining idle, the jobs not wholly placed with their reasons (the first
/// 20, then how many more).
inline std::string fill_lines(const std::vector<fill_job>& jobs, const fill_result& r, const char* what) {
  const rational share = r.work == rational{0} ? rational{0} : r.total / r.work;
  const std::string verdict =
      r.optimal ? ": optimal" : fmt::format(" (gap {}: not proved optimal)", to_string(r.bound - r.total));
  std::string out = fmt::format("{}: filled {} of {} ({}), bound {}{}; method {}\n", what, to_string(r.total),
                                to_string(r.work), percent(share), to_string(r.bound), verdict, r.method);
  out += fmt::format("  filled per rank          {}\n",
                     spaced(std::vector<rational>(r.filled.data(), r.filled.data() + r.filled.size())));
  out += fmt::format(
      "  idle left per rank       {}\n",
      spaced(std::vector<rational>(r.remaining_idle.data(), r.remaining_idle.data() + r.remaining_idle.size())));
  std::size_t listed = 0, unlisted = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (r.reason[j] == fill_reason::placed) continue;
    if (listed == 20) {  // the JSON lists them all
      ++unlisted;
      continue;
    }
    ++listed;
    out +=
        fmt::format("  not placed: {}, {} of {}: {}\n", one_line(fill_job_label(jobs[j])),
                    to_string(jobs[j].duration - r.placed[j]), to_string(jobs[j].duration), reason_text(r.reason[j]));
  }
  if (unlisted > 0) out += fmt::format("  ... and {} more not placed (--format json lists them all)\n", unlisted);
  return out;
}
}  // namespace detail

namespace detail {
/// A stretch_fill() result as text lines: the makespan before and after, the stretch,
/// the bound and what it says, the method; then where each remainder went, the jobs no
/// order admits and the jobs blocked by the remainders inserted before them (the first
/// 20 of each, then how many more). `least` is never claimed while a job is left out:
/// with jobs no order admits the bound is "reached" for the others; with jobs blocked it
/// bounds the remainders inserted only.
inline std::string stretch_lines(const std::vector<fill_job>& jobs, const stretch_result& s) {
  std::string verdict;
  if (!s.blocked.empty()) {
    verdict = fmt::format(" for the remainders inserted only, not for all: {} blocked below", s.blocked.size());
  } else if (s.makespan != s.bound) {
    verdict = fmt::format(" (gap {}: not proved least)", to_string(s.makespan - s.bound));
  } else {
    verdict = s.impossible.empty() ? ": least" : ": reached, no stretch of the jobs some order admits ends earlier";
  }
  const std::string passes = s.passes > 1 ? fmt::format(" ({} orders tried)", s.passes) : std::string();
  std::string out = fmt::format(
      "stretched to take the rest (--allow-stretch): makespan {} -> {}, stretch {}; bound {}{}; method {}{}\n",
      to_string(s.old_makespan), to_string(s.makespan), to_string(s.stretch), to_string(s.bound), verdict, s.method,
      passes);
  for (std::size_t k = 0; k < s.placed.size() && k < 20; ++k) {
    const fill_piece& x = s.placed[k];
    out += fmt::format("  inserted: {}, {} on rank {} at {} to {}\n", one_line(fill_job_label(jobs[x.job])),
                       to_string(x.end - x.start), x.rank, to_string(x.start), to_string(x.end));
  }
  if (s.placed.size() > 20)
    out += fmt::format("  ... and {} more inserted (--format json lists them all)\n", s.placed.size() - 20);
  for (std::size_t k = 0; k < s.impossible.size() && k < 20; ++k) {
    out += fmt::format("  not placed even so: {}: its release op depends on its deadline op\n",
                       one_line(fill_job_label(jobs[s.impossible[k]])));
  }
  if (s.impossible.size() > 20)
    out += fmt::format("  ... and {} more not placed (--format json lists them all)\n", s.impossible.size() - 20);
  for (std::size_t k = 0; k < s.blocked.size() && k < 20; ++k) {
    const stretch_blocked& b = s.blocked[k];
    std::string by;
    for (std::size_t q = 0; q < b.by.size() && q < 4; ++q)
      by += (q == 0 ? "" : ", ") + one_line(fill_job_label(jobs[b.by[q]]));
    if (b.by.size() > 4) by += fmt::format(", ... ({} more)", b.by.size() - 4);
    out += fmt::format(
        "  not placed even so: {}: blocked by the remainders inserted before it ({}): with them its release op depends "
        "on its "
        "deadline op; {}\n",
        one_line(fill_job_label(jobs[b.job])), by,
        b.proved ? "no stretch inserts it beside all those inserted (proved)" : "another order might insert it");
  }
  if (s.blocked.size() > 20)
    out += fmt::format("  ... and {} more blocked (--format json lists them all)\n", s.blocked.size() - 20);
  return out;
}

/// The line saying why --allow-stretch has no stretch (fill_overlay::stretch_refused), in
/// the tool's terms: how many remainders, how far over the limit, what to shrink.
inline std::string stretch_refused_line(const stretch_refusal& r) {
  return fmt::format(
      "stretch not computed (--allow-stretch): too large: inserting the {} remainder{} into this schedule would take "
      "about {} "
      "times the work the tool allows (a few seconds); ask for fewer jobs (fewer --fill requests or a smaller count=) "
      "or "
      "a smaller shape (fewer ranks, micro-batches or chunks)\n",
      r.remainders, r.remainders == 1 ? "" : "s", r.over_limit());
}
}  // namespace detail

/// The fill section (readout::fill): what was asked, then detail::fill_lines() for one
/// iteration, with --allow-stretch detail::stretch_lines() (or, when it was refused,
/// detail::stretch_refused_line()), and with --steady-state
/// detail::fill_lines() for back-to-back iterations; empty without a fill.
inline std::string render_fill(const readout& ro) {
  if (ro.fill == nullptr) return "";
  const fill_overlay& f = *ro.fill;
  std::string out = fmt::format("bubble filling: {} ({} job{}; no pipeline op moves: proved by re-simulation)\n",
                                detail::one_line(f.request), f.jobs.size(), f.jobs.size() == 1 ? "" : "s");
  out += detail::fill_lines(f.jobs, f.result, "one iteration");
  if (f.stretch) out += detail::stretch_lines(f.jobs, *f.stretch);
  if (f.stretch_refused) out += detail::stretch_refused_line(*f.stretch_refused);
  if (f.steady) out += detail::fill_lines(f.jobs, *f.steady, "steady state (back-to-back iterations)");
  return out;
}

namespace detail {

/// The least-delay lines of the rebalancing section (least_delay()): the delayed
/// makespan beside `makespan`, the forwards that wait (at most 8 listed), moves and peaks;
/// or why no delayed plan was found.
inline std::string render_delay(const rebalance_delay& d, rational makespan) {
  if (!d.found) {
    return fmt::format("  with forwards waiting for room (least_delay): no delayed plan found: {}{}\n",
                       d.why_not != nullptr ? d.why_not : "",
                       d.stuck_rank < 0
                           ? std::string()
                           : fmt::format(" (last stuck at rank {}, time {})", d.stuck_rank, to_string(d.stuck_at)));
  }
  std::string waits;
  for (std::size_t k = 0; k < d.waits.size() && k < 8; ++k) {
    const delayed_op& w = d.waits[k];
    const bool pair = w.o.kind() == op_kind::overlap_f_b;  // the pair's forward waits
    waits += fmt::format("{}rank {} {}F{}{} {} -> {}", k == 0 ? "" : ", ", w.rank, w.o.stage(), w.o.microbatch(),
                         pair ? " (overlapped pair)" : "", to_string(w.start), to_string(w.delayed_start));
  }
  if (d.waits.size() > 8) waits += fmt::format(", ... ({} more)", d.waits.size() - 8);
  std::string out =
      fmt::format("  with forwards waiting for room (least_delay): fits with makespan {} -> {} (delay {}{})\n",
                  to_string(makespan), to_string(d.makespan), to_string(d.delay),
                  d.delay == rational{0} ? ", the least possible: the forwards below wait in idle time"
                                         : "; the least this greedy reaches, not proved least");
  out += fmt::format("    {} forward{} wait{}: {}\n", d.waits.size(), d.waits.size() == 1 ? "" : "s",
                     d.waits.size() == 1 ? "s" : "", waits);
  out += fmt::format("    peak per rank {}; moves {}; copy channels busy per rank {}\n", spaced(d.peak_after),
                     d.moves.size(), spaced(d.channel_busy));
  return out;
}

}  // namespace detail

/// The rebalancing section (readout::rebalance): capacity, the bound, peaks before and
/// after, moves and copy-channel time, and BPipe's pairing beside it; empty without one.
inline std::string render_rebalance(const readout& ro) {
  if (ro.rebalance == nullptr) return "";
  const rebalance_overlay& o = *ro.rebalance;
  const rebalance_plan& p = o.plan;
  const auto verdict = [&](const rebalance_plan& x) {
    if (x.feasible) return std::string("fits, no compute op delayed");
    const char* why = ro.P == 1 ? "no other rank to take an activation"
                      : x.capacity[static_cast<std::size_t>(x.stuck_rank)] < rational{1}
                          ? "a capacity under one chunk: a forward holds its own activation"
                          : "moves too slow or no room";
    return fmt::format("does not fit: rank {} cannot be relieved at time {} ({})", x.stuck_rank, to_string(x.stuck_at),
                       why);
  };
  const bool uniform =
      std::all_of(p.capacity.begin(), p.capacity.end(), [&](rational x) { return x == p.capacity.front(); });
  std::string out =
      fmt::format("activation rebalancing: capacity {} per rank (chunks, gamma = {}{}), t_move = {}\n",
                  uniform ? to_string(p.capacity.front()) : detail::spaced(p.capacity), to_string(ro.gamma),
                  o.searched ? "; the least this planner reaches" : "", to_string(p.move_cost));
  out += fmt::format("  live activations at most {} at once over {} rank{}: no plan goes below {} per rank\n",
                     to_string(p.bound.live), ro.P, ro.P == 1 ? "" : "s", to_string(p.bound.bound));
  out += fmt::format("  peak per rank before     {}\n", detail::spaced(p.peak_before));
  out += fmt::format("  peak per rank after      {}  ({})\n", detail::spaced(p.peak_after), verdict(p));
  out += fmt::format("  moves {}; copy channels busy per rank {}\n", p.moves.size(), detail::spaced(p.channel_busy));
  if (o.delay) out += detail::render_delay(*o.delay, p.makespan);
  if (o.executed) {
    const executed_plan& e = *o.executed;
    out += fmt::format(
        "  run as {} activation copies (SEND_ACT/RECV_ACT) in the {} lowering: {}\n", e.copy_ops,
        runtime_model_name(e.model),
        !e.completed ? std::string("hangs (execute() names where)")
        : e.as_planned
            ? fmt::format("every copy at its planned time, no compute op moved; makespan {}, peaks {}",
                          to_string(e.makespan), detail::spaced(e.peak))
            : fmt::format("not as planned (compute ops or copies ran off the plan's times: lower()'s "
                          "lists for this model are not zero loss here); makespan {}{}",
                          to_string(e.makespan),
                          e.peak.empty() ? std::string() : fmt::format(", peaks {}", detail::spaced(e.peak))));
  }
  const char* reached = o.least == p.bound.bound ? " = the bound"
                        : o.least == p.bound.level_bound
                            ? " = the bound rounded up to a level (levels are multiples of 1/q)"
                            : " (the bound is not reached: moves too slow, or the planner's limit)";
  out += fmt::format("  least uniform capacity reached: {}{}\n", to_string(o.least), reached);
  if (ro.P > 1) {  // one rank pairs with itself: nothing to show
    out += fmt::format(
        "BPipe (rank x pairs with rank P-1-x) at the same capacity: peak after {}  ({}); moves {}; least capacity {}\n",
        detail::spaced(o.bpipe.peak_after), verdict(o.bpipe), o.bpipe.moves.size(), to_string(o.bpipe_least));
  }
  return out;
}

/// Everything the `ctpipe` tool prints in text format: title, timeline, readout and
/// in-flight view, a blank line between them; the memory, fill and rebalancing sections
/// after them when given.
inline std::string render_text(const readout& ro, const text_style& style = {}) {
  std::string out = render_title(ro) + "\n" + render_timeline(ro, style) + "\n" + render_readout(ro) + "\n" +
                    render_in_flight(ro, style);
  for (const std::string& section : {render_memory(ro), render_fill(ro), render_rebalance(ro)}) {
    if (!section.empty()) out += "\n" + section;
  }
  return out;
}

/// render_text() of readout_of(rep).
inline std::string render_text(const report& rep, const text_style& style = {}) {
  return render_text(readout_of(rep), style);
}

}  // namespace ctpipe::io
