// ctpipe/io/svg.hpp (run time, opt-in): the article's two views as one self-contained SVG,
// rendered from the readout model (io::readout, ctpipe/io/readout.hpp, whose title and
// readout lines it shares with the text view); each function also takes a report, for
// which it renders readout_of(report).
//
// - Timeline: one lane per rank, time across; each op a box from its simulated start to
//   its end (never from its list position), coloured by kind (F, B, I, W, transfers),
//   labelled with its micro-batch (and `.chunk` when V > 1) where the box is wide enough;
//   idle time as hatched boxes; a time axis below. An overlapped F&B pair (DualPipeV) is
//   one box in a colour of its own, labelled with both halves (`F4/B0`, pair_label()). A readout with an executed run
//   (readout::drawn_run) is drawn at its executed times instead, its stalls as red boxes.
//   A bubble fill (readout::fill) adds its pieces in the idle time, amber boxes at their
//   times in the simulation (svg_drawing::fill_boxes()).
// - In-flight view: per rank the level of in-flight activations over time (a step line
//   built from the simulated event times) and the peak as a bar with its value; with a
//   rebalancing (readout::rebalance) a dark inner bar for the peak after it and the
//   value `8 -> 5 rebalanced` (svg_drawing::peak_bar()), and a caption.
// - Title (parameters), legend and readouts (makespan, bubble fraction simulated and by
//   formula, span bubble, peaks, messages; a fill's and a rebalancing's summaries,
//   svg_overlay_lines()).
//
// Shapes carry classes and data attributes for tools and tests: `rect.op` (data-rank,
// data-action, data-start, data-end: exact times; an overlapped pair's box also has class
// `pair` and its data-action is PyTorch's `(7F4;0B0)OVERLAP_F_B`), `rect.idle` (data-rank, data-start,
// data-end), `rect.stall` (the same; an executed run's stalls), `rect.fill` (data-rank, data-job: index
// into fill_overlay::jobs, data-start, data-end: a fill's piece), `rect.peak-after`
// (data-rank, data-peak: rebalance_plan::peak_after, chunks). Geometry: `svg_style::scale` pixels per time unit; x =
// left + time * scale.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>  // a fill's pieces
#include <string>
#include <utility>  // std::move
#include <vector>   // compare's schedules

#include "ctpipe/io/format.hpp"
#include "ctpipe/io/readout.hpp"  // the model; readout_lines, render_title

namespace ctpipe::io {

/// Geometry of the SVG. `width` is the plot width in pixels for the time span drawn
/// (`time_span`, in time units; 0 = the schedule's makespan); 0 = automatic: about 22
/// pixels for the shortest op, so its micro-batch fits, within [1000, 4000]. Pass the same
/// `time_span` and `width` to several drawings to put them on one time axis.
struct svg_style {
  double width = 0;
  rational time_span{0};
};

namespace detail {

/// Fill colour of an op kind (colour-blind-safe Tableau hues).
inline const char* svg_fill(op_kind k) {
  switch (k) {
    case op_kind::F: return "#4e79a7";
    case op_kind::B: return "#59a14f";
    case op_kind::I: return "#76b7b2";
    case op_kind::W: return "#b07aa1";
    case op_kind::overlap_f_b: return "#9c755f";  // brown: an overlapped F&B pair
    default: return "#edc948";
  }
}

/// Fill colour of a stall box: a light red, apart from every kind's hue and the hatch.
inline constexpr const char* svg_stall_fill = "#f4a09a";

/// What a stall box of readout `ro`'s drawn run means: a rank blocked in a transfer op
/// with the next op's inputs ready, or under a stream model a RECV queued on its stream.
inline const char* svg_stall_meaning(const readout& ro) {
  return ro.drawn_run != nullptr && is_stream_model(ro.drawn_run->model)
             ? "a RECV queued behind other ops of its stream"
             : "blocked in a transfer, the next op's inputs ready";
}

/// Fill and stroke colours of a bubble fill's piece (readout::fill): an amber, apart from
/// every kind's hue (the transfers' lighter yellow included), the stall's and the hatch.
inline constexpr const char* svg_piece_fill = "#ffb000";
inline constexpr const char* svg_piece_stroke = "#a86f00";

/// Fill colour of the inner bar for the peak after a rebalancing (readout::rebalance):
/// a dark grey, apart from the orange peak bar it sits in.
inline constexpr const char* svg_rebalanced_fill = "#4d4d4d";

/// The kind's colour for chunk c of V: later chunks lighter (mixed with white), so the
/// chunks of an interleaved schedule stand apart even where no label fits.
inline std::string svg_fill(op_kind k, int chunk, int V) {
  const std::string base = svg_fill(k);
  if (V <= 1 || chunk == 0) return base;
  const double mix = 0.5 * chunk / (V - 1);
  std::string out = "#";
  for (int i = 0; i < 3; ++i) {
    const int value = std::stoi(base.substr(1 + 2 * static_cast<std::size_t>(i), 2), nullptr, 16);
    out += fmt::format("{:02x}", static_cast<int>(value + (255 - value) * mix));
  }
  return out;
}

/// The automatic plot width: 26 pixels for the shortest op, within [1000, 4000].
inline double svg_auto_width(const readout& ro, rational span) {
  rational shortest = span;
  for (std::size_t k = 0; k < ro.ranks.size(); ++k) {
    const rational d = ro.drawn.time(ro.drawn.end_ticks(k) - ro.drawn.start_ticks(k));
    if (d > rational{0} && d < shortest) shortest = d;
  }
  return std::clamp(26.0 * (span / shortest).to_double(), 1000.0, 4000.0);
}

/// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong form, no
/// surrogate, at most U+10FFFF) that starts at `text[k]`, or 0 when none does.
inline std::size_t utf8_sequence(const std::string& text, std::size_t k) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(k);
  if (lead < 0x80) return 1;
  const std::size_t n = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  if (n == 0 || k + n > text.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(k + i) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = byte(k + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return n;
}

/// `text` as XML character data: `<`, `>`, `&` and `"` escaped; a byte that starts no
/// well-formed UTF-8 sequence, and a character XML 1.0 forbids (C0 controls but tab,
/// newline and CR; U+FFFE, U+FFFF), become U+FFFD
/// (as the JSON views replace them). A file name shown in a title may be any bytes.
inline std::string svg_escape(const std::string& text) {
  std::string out;
  for (std::size_t k = 0; k < text.size();) {
    const char ch = text[k];
    const std::size_t n = utf8_sequence(text, k);
    const bool control = n == 1 && static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r';
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF): well-formed UTF-8 that XML 1.0 forbids.
    const bool nonchar = n == 3 && static_cast<unsigned char>(ch) == 0xEF &&
                         static_cast<unsigned char>(text[k + 1]) == 0xBF &&
                         static_cast<unsigned char>(text[k + 2]) >= 0xBE;
    if (n == 0 || control || nonchar)
      out += "\xEF\xBF\xBD";  // U+FFFD
    else if (ch == '<')
      out += "&lt;";
    else if (ch == '>')
      out += "&gt;";
    else if (ch == '&')
      out += "&amp;";
    else if (ch == '"')
      out += "&quot;";
    else
      out.append(text, k, n);
    k += n == 0 ? 1 : n;
  }
  return out;
}

/// Everything one schedule's drawing needs: its lanes start at `top`; returns the height.
class svg_drawing {
 public:
  svg_drawing(const readout& ro, const svg_style& style, double left) : ro_(ro), left_(left) {
    const rational span = style.time_span > rational{0} ? style.time_span : ro.drawn.makespan();
    const double width = style.width > 0 ? style.width : svg_auto_width(ro, span);
    scale_ = width / std::max(span.to_double(), 1e-12);
    span_ = span;
  }

  double x(rational t) const { return left_ + t.to_double() * scale_; }

  /// The timeline lanes, axis included: readout::drawn, the simulation or the executed
  /// run with its stalls (readout::drawn_run), and a bubble fill's pieces over the idle
  /// time (fill_boxes()). Returns the height used.
  double timeline(std::string& out, double top) const {
    const schedule_view v = ro_.ranks;
    const int P = v.shape.P;
    for (int r = 0; r < P; ++r) {
      const double y = top + r * (lane_ + gap_);
      out += fmt::format("<text class=\"lane\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">rank {}</text>\n",
                         left_ - 8, y + lane_ * 0.7, r);
      rational cursor{0};
      auto hatched = [&](rational from, rational to) {
        if (!(from < to)) return;
        out += fmt::format(
            "<rect class=\"idle\" data-rank=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.4f}\" y=\"{:.2f}\" "
            "width=\"{:.4f}\" height=\"{}\" fill=\"url(#hatch)\" stroke=\"#bbb\" stroke-width=\"0.5\"/>\n",
            r, to_string(from), to_string(to), x(from), y, (to - from).to_double() * scale_, lane_);
      };
      // Idle time from `from` to `to`: hatched, but where the rank stalls a stall box.
      const std::vector<tick_span> no_stalls;
      const std::vector<tick_span>& stalls =
          ro_.drawn_run != nullptr ? ro_.drawn_run->stalls[static_cast<std::size_t>(r)] : no_stalls;
      std::size_t next_stall = 0;
      auto idle = [&](rational from, rational to) {
        for (; next_stall < stalls.size() && ro_.drawn.time(stalls[next_stall].start) < to; ++next_stall) {
          const rational a = max(from, ro_.drawn.time(stalls[next_stall].start));
          const rational b = ro_.drawn.time(stalls[next_stall].end);
          hatched(from, a);
          out += fmt::format(
              "<rect class=\"stall\" data-rank=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.4f}\" y=\"{:.2f}\" "
              "width=\"{:.4f}\" height=\"{}\" fill=\"{}\" stroke=\"#c0392b\" stroke-width=\"0.5\"><title>stall [{}, "
              "{}]: {}</title></rect>\n",
              r, to_string(a), to_string(b), x(a), y, (b - a).to_double() * scale_, lane_, svg_stall_fill, to_string(a),
              to_string(b), svg_stall_meaning(ro_));
          from = b;
        }
        hatched(from, to);
      };
      const std::uint32_t rank_end = v.offsets[static_cast<std::size_t>(r) + 1];
      for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < rank_end; ++k) {
        const op o = v.ops[k];
        // An overlapped pair: one box over its word and its B word (the same times).
        const bool pair = starts_pair(v, k, rank_end);
        const std::uint32_t last = pair ? k + 1 : k;
        const rational start = ro_.drawn.time(ro_.drawn.start_ticks(k));
        const rational end = ro_.drawn.time(std::max(ro_.drawn.end_ticks(k), ro_.drawn.end_ticks(last)));
        idle(cursor, start);
        cursor = end;
        if (pair) {
          pair_box(out, r, o, v.ops[last], start, end, y);
        } else {
          op_box(out, r, o, start, end, y);
        }
        k = last;
      }
      idle(cursor, ro_.drawn.makespan());
      fill_boxes(out, r, y);
    }
    const double axis_y = top + P * (lane_ + gap_);
    axis(out, axis_y);
    return P * (lane_ + gap_) + 28;
  }

  /// One op of rank r in its lane at height y, from start to end: a box with its action
  /// and times as a tooltip, and its micro-batch (and chunk) as a label when it fits.
  void op_box(std::string& out, int r, op o, rational start, rational end, double y) const {
    const pipeline_shape& shape = ro_.ranks.shape;
    const double w = (end - start).to_double() * scale_;
    out += fmt::format(
        "<rect class=\"op\" data-rank=\"{}\" data-action=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.4f}\" "
        "y=\"{:.2f}\" width=\"{:.4f}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{} "
        "[{}, {}]</title></rect>\n",
        r, action(o), to_string(start), to_string(end), x(start), y, w, lane_,
        svg_fill(o.kind(), shape.chunk_of(o.stage()), shape.V), action(o), to_string(start), to_string(end));
    std::string label = fmt::format("{}", o.microbatch());
    if (shape.V > 1) label += fmt::format(".{}", shape.chunk_of(o.stage()));
    if (w >= 6.5 * static_cast<double>(label.size()) + 3) {
      // White on the full colours, dark on the lighter later chunks.
      const bool light = shape.V > 1 && 2 * shape.chunk_of(o.stage()) >= shape.V;
      out += fmt::format("<text class=\"label\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\"{}>{}</text>\n",
                         x(start) + w / 2, y + lane_ * 0.7, light ? " style=\"fill:#222\"" : "", label);
    }
  }

  /// An overlapped pair of rank r (its word and its B word) in its lane at height y, from
  /// start to end: one box of the pair's colour, class `op pair`, its PyTorch action
  /// string and times as a tooltip, and pair_label() (`F4/B0`) as a label when it fits.
  void pair_box(std::string& out, int r, op word, op backward, rational start, rational end, double y) const {
    const pipeline_shape& shape = ro_.ranks.shape;
    const double w = (end - start).to_double() * scale_;
    const std::string name = pair_action(word, backward);
    out += fmt::format(
        "<rect class=\"op pair\" data-rank=\"{}\" data-action=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.4f}\" "
        "y=\"{:.2f}\" width=\"{:.4f}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{} "
        "[{}, {}]: forward and backward overlapped</title></rect>\n",
        r, name, to_string(start), to_string(end), x(start), y, w, lane_, svg_fill(op_kind::overlap_f_b), name,
        to_string(start), to_string(end));
    const std::string label = pair_label(word, backward, shape);
    if (w >= 6.5 * static_cast<double>(label.size()) + 3) {
      out += fmt::format("<text class=\"label\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n",
                         x(start) + w / 2, y + lane_ * 0.7, label);
    }
  }

  /// The pieces of a bubble fill (readout::fill) on rank r, in its lane at height y (drawn
  /// after its idle boxes, so over them): per piece, [start, end) in time units of t_f
  /// (exact; x as the ops', doubles for display only), a box of svg_piece_fill, class
  /// `fill` (data-rank, data-job: index into fill_overlay::jobs, data-start, data-end),
  /// its job and times as a tooltip (`encoder F 3: [5, 21/4)`), and its job as a label
  /// where that fits. The pieces are placed in the simulation's idle time (fill_bubbles()):
  /// over an executed run (readout::drawn_run) they keep the simulation's times. Nothing
  /// without a fill. O(log pieces + pieces of rank r).
  void fill_boxes(std::string& out, int r, double y) const {
    if (ro_.fill == nullptr) return;
    const std::span<const fill_piece> pieces = ro_.fill->result.pieces.span();  // sorted by rank, then start
    const auto first =
        std::partition_point(pieces.begin(), pieces.end(), [r](const fill_piece& p) { return p.rank < r; });
    const auto last = std::partition_point(first, pieces.end(), [r](const fill_piece& p) { return p.rank <= r; });
    for (auto it = first; it != last; ++it) {
      const fill_piece& p = *it;
      const std::string label = svg_escape(fill_job_label(ro_.fill->jobs[p.job]));
      const double w = (p.end - p.start).to_double() * scale_;
      out += fmt::format(
          "<rect class=\"fill\" data-rank=\"{}\" data-job=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.4f}\" "
          "y=\"{:.2f}\" width=\"{:.4f}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"0.5\"><title>{}: "
          "[{}, {})</title></rect>\n",
          r, p.job, to_string(p.start), to_string(p.end), x(p.start), y, w, lane_, svg_piece_fill, svg_piece_stroke,
          label, to_string(p.start), to_string(p.end));
      if (w >= 6.5 * static_cast<double>(fill_job_label(ro_.fill->jobs[p.job]).size()) + 3) {
        out += fmt::format(
            "<text class=\"label\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" style=\"fill:#222\">{}</text>\n",
            x(p.start) + w / 2, y + lane_ * 0.7, label);
      }
    }
  }

  /// The in-flight view: per rank a step line of the level over time and the peak bar
  /// (peak_bar()); with a rebalancing (readout::rebalance) the bars' scale takes in the
  /// peaks after it too, and a caption under the lanes says what its inner bar is.
  double in_flight_view(std::string& out, double top) const {
    const schedule_view v = ro_.ranks;
    const int P = v.shape.P;
    rational highest{0};
    for (int r = 0; r < P; ++r) highest = max(highest, ro_.peak_in_flight[static_cast<std::size_t>(r)]);
    const double unit = highest > rational{0} ? (mem_lane_ - 6) / highest.to_double() : 0;
    const double bar_left = x(span_) + 30;
    rational bar_top = highest;  // the longest bar's value: the highest peak, before or after rebalancing
    if (ro_.rebalance != nullptr) {
      for (const rational& after : ro_.rebalance->plan.peak_after) bar_top = max(bar_top, after);
    }
    for (int r = 0; r < P; ++r) {
      const double base = top + (r + 1) * mem_lane_;
      out += fmt::format("<text class=\"lane\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">rank {}</text>\n",
                         left_ - 8, base - 4, r);
      out += fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#ccc\"/>\n", x(0),
                         base, x(span_), base);
      // Steps: the level changes at an F's start and at a B/I/W's end (an overlapped
      // pair's word at its start, as its forward; its B word at its end); events at the
      // same instant (a B ending as the next F starts) make one step to their last level.
      std::string path = fmt::format("M{:.3f},{:.3f}", x(0), base);
      double level = 0;
      rational pending_at{0};
      double pending = 0;
      for (std::uint32_t k = v.offsets[static_cast<std::size_t>(r)]; k < v.offsets[static_cast<std::size_t>(r) + 1];
           ++k) {
        const op_kind kind = v.ops[k].kind();
        const bool allocates = kind == op_kind::F || kind == op_kind::overlap_f_b;
        const rational at = ro_.drawn.time(allocates ? ro_.drawn.start_ticks(k) : ro_.drawn.end_ticks(k));
        if (at != pending_at) {
          path += fmt::format(" L{:.3f},{:.3f} L{:.3f},{:.3f}", x(pending_at), base - level * unit, x(pending_at),
                              base - pending * unit);
          level = pending;
          pending_at = at;
        }
        pending = ro_.in_flight->level_after(k).to_double();
      }
      path += fmt::format(" L{:.3f},{:.3f} L{:.3f},{:.3f} L{:.3f},{:.3f}", x(pending_at), base - level * unit,
                          x(pending_at), base - pending * unit, x(ro_.drawn.makespan()), base - pending * unit);
      out += fmt::format(
          "<path class=\"in-flight\" data-rank=\"{}\" d=\"{}\" fill=\"none\" stroke=\"#e15759\" "
          "stroke-width=\"1.5\"/>\n",
          r, path);
      peak_bar(out, r, bar_left, base, bar_top);
    }
    if (ro_.rebalance == nullptr) return P * mem_lane_ + 10;
    out += fmt::format(
        "<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">orange bar: peak in flight; dark inner bar "
        "(the value after -&gt;): the peak after rebalancing, activations moved between ranks (chunks)</text>\n",
        left_, top + P * mem_lane_ + 16);
    return P * mem_lane_ + 26;
  }

  /// Rank r's peak bar in the in-flight view, its lane's baseline at `base` (pixels): an
  /// orange bar from `bar_left`, 120 pixels for `top` chunks (the longest bar), with the
  /// peak (readout::peak_in_flight, chunks) as its value. With a rebalancing
  /// (readout::rebalance) a thinner dark bar inside it for the peak after the moves
  /// (rebalance_plan::peak_after, chunks; class `peak-after`, longer than the orange bar
  /// on a rank that hosts activations), and the value `8 -> 5 rebalanced`.
  void peak_bar(std::string& out, int r, double bar_left, double base, rational top) const {
    const rational peak = ro_.peak_in_flight[static_cast<std::size_t>(r)];
    const auto length = [top](rational value) { return top > rational{0} ? 120 * (value / top).to_double() : 0; };
    const double bar = length(peak);
    out += fmt::format(
        "<rect class=\"peak\" data-rank=\"{}\" data-peak=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
        "height=\"{:.2f}\" fill=\"#f28e2b\"/>\n",
        r, to_string(peak), bar_left, base - mem_lane_ + 8, bar, mem_lane_ - 12);
    std::string value = to_string(peak);
    double end = bar;
    if (ro_.rebalance != nullptr) {
      const rational after = ro_.rebalance->plan.peak_after[static_cast<std::size_t>(r)];
      end = std::max(bar, length(after));
      out += fmt::format(
          "<rect class=\"peak-after\" data-rank=\"{}\" data-peak=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" "
          "width=\"{:.2f}\" height=\"8\" fill=\"{}\"><title>rank {}: peak {} chunks after rebalancing "
          "(before {})</title></rect>\n",
          r, to_string(after), bar_left, base - mem_lane_ + 15, length(after), svg_rebalanced_fill, r, to_string(after),
          to_string(peak));
      value += fmt::format(" -&gt; {} rebalanced", to_string(after));
    }
    out +=
        fmt::format("<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">{}</text>\n", bar_left + end + 6, base - 8, value);
  }

  /// The right edge of the drawing, in pixels: past the peak bars' values (longer with a
  /// rebalancing's `-> 5 rebalanced`).
  double right_edge() const { return x(span_) + (ro_.rebalance != nullptr ? 320 : 220); }

 private:
  void axis(std::string& out, double y) const {
    out += fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#333\"/>\n", x(0), y,
                       x(span_), y);
    // A tick every `step` time units (1, 2, 5, 10, ...), at least 50 px apart.
    double step = 1;
    for (int k = 0; step * scale_ < 50; ++k) step = (k % 3 == 1 ? step / 2 * 5 : step * 2);
    for (double t = 0; t <= span_.to_double() + 1e-9; t += step) {
      const double at = left_ + t * scale_;
      out += fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#333\"/>\n", at, y, at,
                         y + 4);
      out += fmt::format("<text class=\"axis\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n", at,
                         y + 16, static_cast<long long>(t));
    }
  }

  const readout& ro_;
  double left_;
  double scale_ = 1;
  rational span_{1};
  static constexpr double lane_ = 20;
  static constexpr double gap_ = 4;
  static constexpr double mem_lane_ = 34;
};

inline std::string svg_header(double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#999\" stroke-width=\"1.5\"/></pattern></defs>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      "<style>.label{{fill:#fff;font-size:10px}} .title{{font-size:15px;font-weight:bold}} "
      ".lane,.axis,.value,.readout,.legend{{fill:#222}} "
      ".section{{font-size:12px;font-weight:bold;fill:#222}}</style>\n",
      width, height, width, height);
}

/// The text view's title line (render_title) with gamma (before the executed run's
/// words), for the SVG.
inline std::string svg_title(const readout& ro) {
  std::string title = render_title(ro);
  title.resize(title.size() - 1 - title_run(ro).size());  // its newline, and the run for the end
  return title + fmt::format("  gamma = {}", to_string(ro.gamma)) + title_run(ro);
}

/// The legend's swatch for a bubble fill's pieces (svg_piece_fill) at x, its text's
/// baseline at y (pixels), `filled (independent work in the bubbles)` and then `labels`.
inline void svg_legend_fill(std::string& out, double x, double y, const char* labels) {
  out += fmt::format(
      "<rect class=\"legend-fill\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" fill=\"{}\" "
      "stroke=\"{}\"/><text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\">filled (independent work in the "
      "bubbles){}</text>\n",
      x, y - 10, svg_piece_fill, svg_piece_stroke, x + 18, y, labels);
}

/// The legend: one swatch per op kind present (an overlapped pair as `F&B overlapped
/// pair`; its B word counts as no B of its own), the hatch for idle time, when the
/// executed run drawn (readout::drawn_run) stalls the stall box, and when a bubble fill
/// (readout::fill) placed pieces their swatch (svg_legend_fill()). The labels' note
/// follows the last entry.
inline double svg_legend(std::string& out, const readout& ro, double left, double y) {
  bool present[op_kind_count] = {};
  const schedule_view v = ro.ranks;
  for (int r = 0; r < v.shape.P; ++r) {
    const std::size_t rank_end = v.offsets[static_cast<std::size_t>(r) + 1];
    for (std::size_t k = v.offsets[static_cast<std::size_t>(r)]; k < rank_end; ++k) {
      if (static_cast<int>(v.ops[k].kind()) < op_kind_count) present[static_cast<int>(v.ops[k].kind())] = true;
      if (starts_pair(v, k, rank_end)) ++k;
    }
  }
  const char* names[op_kind_count] = {"F forward",         "B backward",       "I input gradient",
                                      "W weight gradient", "send activation",  "receive activation",
                                      "send gradient",     "receive gradient", "F&B overlapped pair"};
  double x = left;
  for (int k = 0; k < op_kind_count; ++k) {
    if (!present[k]) continue;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" fill=\"{}\"/>"
        "<text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        x, y - 10, svg_fill(static_cast<op_kind>(k)), x + 18, y, svg_escape(names[k]));
    x += 30 + 7.0 * static_cast<double>(std::string(names[k]).size());
  }
  const bool pairs = present[static_cast<int>(op_kind::overlap_f_b)];
  const char* labels = ro.V > 1 ? (pairs ? ";   labels: micro-batch.chunk, later chunks lighter; F4.1/B0.0 a pair"
                                         : ";   labels: micro-batch.chunk, later chunks lighter")
                                : (pairs ? ";   labels: micro-batch; F4/B0 a pair" : ";   labels: micro-batch");
  const bool stall = ro.drawn_run != nullptr && ro.drawn_run->has_stall();
  const bool filled = ro.fill != nullptr && ro.fill->result.pieces.size() > 0;
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" fill=\"url(#hatch)\" stroke=\"#999\"/>"
      "<text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\">idle (bubble){}</text>\n",
      x, y - 10, x + 18, y, stall || filled ? "" : labels);
  x += 30 + 7.0 * static_cast<double>(std::string("idle (bubble)").size());
  if (stall) {
    const std::string name = std::string("stall (") + svg_stall_meaning(ro) + ")";
    out += fmt::format(
        "<rect class=\"legend-stall\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" fill=\"{}\" "
        "stroke=\"#c0392b\"/><text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\">{}{}</text>\n",
        x, y - 10, svg_stall_fill, x + 18, y, svg_escape(name), filled ? "" : labels);
    x += 30 + 7.0 * static_cast<double>(name.size());
  }
  if (filled) svg_legend_fill(out, x, y, labels);
  return 22;
}

/// One fill_result (readout::fill) as one readout line: `WHAT: filled 12 of 48 (25.0%),
/// bound 20: optimal; method greedy` (times in time units of t_f, exact).
inline std::string svg_fill_line(const fill_result& r, const char* what) {
  const rational share = r.work == rational{0} ? rational{0} : r.total / r.work;
  return fmt::format("{}: filled {} of {} ({}), bound {}{}; method {}", what, to_string(r.total), to_string(r.work),
                     percent(share), to_string(r.bound), r.optimal ? ": optimal" : "", r.method);
}

/// The short summaries of a bubble fill (readout::fill: what was asked, then
/// svg_fill_line() for one iteration and, with a steady state, back-to-back iterations)
/// and of a rebalancing (readout::rebalance: capacity and t_move, the bound, the peaks
/// after, in chunks, and whether the plan fits), as readout lines; none without them.
inline std::vector<std::string> svg_overlay_lines(const readout& ro) {
  std::vector<std::string> lines;
  if (ro.fill != nullptr) {
    lines.push_back(fmt::format("bubble filling: {} ({} job{}; no pipeline op moves)", ro.fill->request,
                                ro.fill->jobs.size(), ro.fill->jobs.size() == 1 ? "" : "s"));
    lines.push_back(svg_fill_line(ro.fill->result, "one iteration"));
    if (ro.fill->steady) lines.push_back(svg_fill_line(*ro.fill->steady, "steady state (back-to-back iterations)"));
  }
  if (ro.rebalance != nullptr) {
    const rebalance_plan& p = ro.rebalance->plan;
    const bool uniform =
        std::all_of(p.capacity.begin(), p.capacity.end(), [&p](rational c) { return c == p.capacity.front(); });
    const std::string capacity = uniform && !p.capacity.empty() ? to_string(p.capacity.front()) : spaced(p.capacity);
    lines.push_back(fmt::format(
        "rebalancing: capacity {} per rank (chunks{}), t_move = {}; bound {}; peak after {}; {}", capacity,
        ro.rebalance->searched ? ", the least this planner reaches" : "", to_string(p.move_cost),
        to_string(p.bound.bound), spaced(p.peak_after),
        p.feasible
            ? fmt::format("fits, {} moves, no compute op delayed", p.moves.size())
            : fmt::format("does not fit: rank {} cannot be relieved at time {}", p.stuck_rank, to_string(p.stuck_at))));
  }
  return lines;
}

/// The readouts (the text view's lines, and the peaks), one line each; then a fill's and
/// a rebalancing's summaries (svg_overlay_lines()).
inline double svg_readouts(std::string& out, const readout& ro, double left, double y) {
  std::vector<std::string> lines = readout_lines(ro);
  lines.push_back(
      fmt::format("peak in-flight per rank ({}): {}", ro.V > 1 ? "chunks" : "activations", spaced(ro.peak_in_flight)));
  for (std::string& line : svg_overlay_lines(ro)) lines.push_back(std::move(line));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += fmt::format("<text class=\"readout\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left,
                       y + 16.0 * static_cast<double>(i), svg_escape(lines[i]));
  }
  return 16.0 * static_cast<double>(lines.size()) + 6;
}

/// The table under render_svg_compare()'s timelines, from `top`: a row per schedule.
inline double svg_compare_table(std::string& out, const std::vector<readout>& readouts, double left, double top) {
  double y = top;
  const char* heads[] = {"schedule",         "makespan", "bubble", "span bubble", "peak r0 (full act.)",
                         "peak r0 (chunks)", "messages"};
  for (int c = 0; c < 7; ++c) {
    out += fmt::format("<text class=\"section\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + 150.0 * c, y, heads[c]);
  }
  for (const readout& ro : readouts) {
    y += 16;
    const std::string cells[] = {ro.schedule,
                                 to_string(ro.makespan),
                                 to_string(ro.bubble_fraction),
                                 to_string(ro.span_bubble),
                                 to_string(ro.peak_in_flight[0] * ro.chunk_fraction),
                                 to_string(ro.peak_in_flight[0]),
                                 fmt::format("{}", ro.messages)};
    for (int c = 0; c < 7; ++c) {
      out +=
          fmt::format("<text class=\"readout\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + 150.0 * c, y, cells[c]);
    }
  }
  return y - top;
}

/// The memory view (readout::budget): per rank a bar of its peak bytes in GiB, its static
/// part grey, the limit as a dashed line, and the values with how far a rank passes the
/// limit; a plain-number limit (full activations) as one line per rank. Returns its height.
inline double svg_memory(std::string& out, const readout& ro, double left, double top) {
  const memory_budget& b = *ro.budget;
  double y = top;
  const auto gib = [](rational bytes) { return bytes.to_double() / 1073741824.0; };
  if (!b.model.empty()) {
    double most = b.limit_bytes ? gib(*b.limit_bytes) : 0;
    for (const rational& x : b.peak_bytes) most = std::max(most, gib(x));
    const double unit = most > 0 ? 420 / most : 0;
    for (int r = 0; r < ro.P; ++r) {
      const std::size_t i = static_cast<std::size_t>(r);
      const double peak = gib(b.peak_bytes[i]), fixed = gib(b.static_bytes[i]);
      const bool over = b.limit_bytes && b.peak_bytes[i] > *b.limit_bytes;
      std::string label = fmt::format("{:.2f} GiB (static {:.2f})", peak, fixed);
      if (over) label += fmt::format(", over by {:.2f} GiB", peak - gib(*b.limit_bytes));
      out += fmt::format("<text class=\"lane\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">rank {}</text>\n",
                         left - 8, y + 14, r);
      out += fmt::format(
          "<rect class=\"static-bytes\" data-rank=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"16\" "
          "fill=\"#7f7f7f\"/>\n",
          r, left, y + 2, fixed * unit);
      out += fmt::format(
          "<rect class=\"peak-bytes\" data-rank=\"{}\" data-bytes=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
          "height=\"16\" fill=\"{}\"/>\n",
          r, to_string(b.peak_bytes[i]), left + fixed * unit, y + 2, (peak - fixed) * unit,
          over ? "#e15759" : "#f28e2b");
      out += fmt::format("<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">{}</text>\n", left + most * unit + 8, y + 14,
                         label);
      y += 20;
    }
    out += fmt::format(
        "<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">grey: static bytes; orange: activations within the limit; "
        "red: a rank over it</text>\n",
        left, y + 12);
    y += 16;
    if (b.limit_bytes) {
      const double at = left + gib(*b.limit_bytes) * unit;
      out += fmt::format(
          "<line class=\"limit\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#222\" "
          "stroke-dasharray=\"4 3\"/>\n",
          at, top, at, y);
      out += fmt::format("<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">limit {:.2f} GiB</text>\n", at + 4, y + 12,
                         gib(*b.limit_bytes));
      y += 16;
    }
  }
  if (b.limit_activations) {
    const std::vector<rational> peaks = peak_activations(ro);
    for (int r = 0; r < ro.P; ++r) {
      const rational p = peaks[static_cast<std::size_t>(r)];
      const rational limit = *b.limit_activations;
      const std::string verdict = p > limit ? "over the limit " + to_string(limit) + " by " + to_string(p - limit)
                                            : "within the limit " + to_string(limit);
      out += fmt::format("<text class=\"value\" x=\"{:.2f}\" y=\"{:.2f}\">rank {}: {} full activations, {}</text>\n",
                         left, y + 12, r, to_string(p), verdict);
      y += 16;
    }
  }
  return y - top + 6;
}

}  // namespace detail

/// One schedule as a self-contained SVG document: title, legend, timeline (readout::drawn)
/// with hatched bubbles and a time axis, readouts, and the in-flight view; with a model or
/// a memory limit (readout::budget), the memory view.
inline std::string render_svg(const readout& ro, const svg_style& style = {}) {
  const double left = 70;
  const detail::svg_drawing drawing(ro, style, left);
  std::string body;
  double y = 28;
  body += fmt::format("<text class=\"title\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", 10.0, y,
                      detail::svg_escape(detail::svg_title(ro)));
  y += 24;
  y += detail::svg_legend(body, ro, left, y);
  body += fmt::format("<text class=\"section\" x=\"10\" y=\"{:.1f}\">timeline{} (time units of t_f)</text>\n", y + 4,
                      ro.drawn_run != nullptr
                          ? fmt::format(" of the run executed under {}", runtime_model_name(ro.drawn_run->model))
                          : "");
  y += 14;
  y += drawing.timeline(body, y);
  y += 10 + detail::svg_readouts(body, ro, left, y + 6);
  body += fmt::format(
      "<text class=\"section\" x=\"10\" y=\"{:.1f}\">in-flight activations over time and peak per rank{}</text>\n",
      y + 10, ro.V > 1 ? " (chunks)" : "");
  y += 16;
  y += drawing.in_flight_view(body, y);
  if (ro.budget != nullptr) {  // memory per rank against the limit (docs/memory.md)
    y += 8;
    body += fmt::format("<text class=\"section\" x=\"10\" y=\"{:.1f}\">memory per rank{}</text>\n", y + 10,
                        ro.budget->model.empty() ? "" : " (GiB), model " + detail::svg_escape(ro.budget->model));
    y += 16;
    y += detail::svg_memory(body, ro, left, y);
  }
  const double width = std::max(drawing.right_edge(), 900.0);
  return detail::svg_header(width, y + 10) + body + "</svg>\n";
}

/// render_svg() of readout_of(rep).
inline std::string render_svg(const report& rep, const svg_style& style = {}) {
  return render_svg(readout_of(rep), style);
}

/// Several schedules one above another on one time axis (the longest simulated makespan),
/// each with its title and timeline, then a table of their makespan, bubble, span bubble,
/// rank-0 peak (in full activations, chunks * chunk_fraction, and in chunks) and messages. `width`:
/// plot width in pixels for the longest makespan.
/// Under the table, one line of text per entry of `notes` (the tool's: what the peak
/// columns count, the schedules the shape does not suit).
inline std::string render_svg_compare(const std::vector<readout>& readouts, double width = 1200,
                                      const std::vector<std::string>& notes = {}) {
  rational longest{0};
  for (const readout& ro : readouts) longest = max(longest, ro.makespan);
  const double left = 70;
  std::string body;
  double y = 26;
  body += fmt::format("<text class=\"title\" x=\"10\" y=\"{:.1f}\">schedules compared on one time axis</text>\n", y);
  y += 16;
  for (const readout& ro : readouts) {
    y += 18;
    body += fmt::format("<text class=\"section\" x=\"10\" y=\"{:.1f}\">{}</text>\n", y,
                        detail::svg_escape(detail::svg_title(ro)));
    y += 8;
    const detail::svg_drawing drawing(ro, {width, longest}, left);
    y += drawing.timeline(body, y);
  }
  y += 20;
  y += detail::svg_compare_table(body, readouts, left, y);
  for (const std::string& note : notes) {
    y += 16;
    body +=
        fmt::format("<text class=\"readout\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left, y, detail::svg_escape(note));
  }
  return detail::svg_header(std::max(left + width + 40, 900.0), y + 20) + body + "</svg>\n";
}

/// render_svg_compare() of each report's readout_of().
inline std::string render_svg_compare(const std::vector<const report*>& reports, double width = 1200) {
  std::vector<readout> readouts;
  for (const report* rep : reports) readouts.push_back(readout_of(*rep));
  return render_svg_compare(readouts, width);
}

}  // namespace ctpipe::io
