// ctpipe/io/csv.hpp (run time, opt-in): PyTorch's CSV schedule format, written and read.
//
// The format is the one `torch.distributed.pipelining` writes with `_dump_csv` and reads
// with `_load_csv` (Python's csv module): one row per rank, rank 0 first, one action per
// cell in execution order (`0F3`, `1SEND_B2`, `2RECV_F2`; see io::action), an empty cell
// where the rank idles, and `(0F7;7B3)OVERLAP_F_B` for a forward and a backward issued
// together (DualPipeV): ctpipe's overlapped pair (op_kind::overlap_f_b), whose two words
// (the pair's word, carrying the forward, then its B word) make that one cell, the F
// first (io::pair_action). Compute-only files hold F, B, I, W; files with communication
// (PyTorch's "compute_comms") also SEND_F, RECV_F, SEND_B, RECV_B, each on the rank of
// the stage that executes it (the stage convention of ctpipe/lower/transfer.hpp). Files
// of runtimes that shard parameters (PyTorch with FSDP) also hold UNSHARD, RESHARD and
// REDUCE_GRAD actions (`0UNSHARD`, `1RESHARD`, `0REDUCE_GRAD`: a stage, the kind, no
// micro-batch): ctpipe does not model them and keeps them as annotations beside the ops
// (csv_annotation), which to_csv() writes back in place.
//
// Forward-only (evaluation) files, F ops with no B, I or W at all (what PyTorch runs for
// `eval()`), are rejected with `ctpipe: CSV has forward ops (F) only: ...`: validate(),
// simulate() and the closed forms define a training step (docs/spec.md §2, every F has
// its backward), and a forward-only rule would be a second validity rule and cost model
// in the core, not a reader's option. The message says so instead of validate()'s "op
// missing" for every backward.
//
// The writer takes a schedule_view, not the readout model the other views render from
// (ctpipe/io/readout.hpp, whose `ranks` is such a view): a CSV holds op lists only, and
// it writes lists no report analyses (lowered ones, with transfers).
#pragma once

#include <fmt/format.h>

#include <algorithm>     // std::max, std::sort
#include <charconv>      // std::from_chars: diagnosing a bad action
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint32_t
#include <memory>        // std::shared_ptr: csv_error's text, shared by copies
#include <span>          // a rank's ops
#include <string>        // the written text, messages
#include <string_view>   // the text read
#include <system_error>  // std::errc
#include <utility>       // std::move
#include <vector>        // ops and annotations

#include "ctpipe/core/error.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/lower/transfer.hpp"  // is_move

namespace ctpipe::io {

/// Largest text parse_csv() reads: 256 MiB. Every file the `ctpipe` tool writes fits
/// (at most 2^21 compute ops, so about 6.3 million with the transfers, at most 16 bytes
/// a cell). The reader's working memory is linear in the text: about 8 bytes per op
/// (each takes at least 3 bytes of text) and 12 more per op of the longest row.
inline constexpr std::size_t max_csv_bytes = std::size_t{1} << 28;

/// The error parse_csv() raises: a ctpipe::error (catch it as one) whose what() is a
/// line built at run time, `ctpipe: CSV row 2 (rank 1), cell 3 "1F0x": ...`, naming
/// the row and the cell. Copies share the text (copying never allocates).
class csv_error : public error {
 public:
  explicit csv_error(const std::string& message)
      : error("ctpipe: bad CSV schedule"), message_(std::make_shared<const std::string>(message)) {}
  const char* what() const noexcept override { return message_->c_str(); }

 private:
  std::shared_ptr<const std::string> message_;
};

/// An action that parse_csv() reads and to_csv() writes back but ctpipe does not model:
/// PyTorch's FSDP actions `<stage>UNSHARD`, `<stage>RESHARD` and `<stage>REDUCE_GRAD`
/// (a micro-batch after the kind is accepted, as PyTorch's reader does). It is no op:
/// validate(), simulate() and lower() never see it.
struct csv_annotation {
  int rank = 0;              ///< the rank (row, from 0) that holds it
  std::size_t position = 0;  ///< how many of that rank's ops come before it
  std::string text;          ///< the action as written, trimmed and unquoted: `0UNSHARD`

  /// Equal rank, position and text.
  friend bool operator==(const csv_annotation&, const csv_annotation&) = default;
};

/// What parse_csv() returns: the ops, a ctpipe::schedule like any other (move it into a
/// schedule to drop the annotations), and the file's annotations in file order.
/// to_csv() of it writes both; to_csv() of its view(), or of a lower()ed copy, writes
/// the ops only.
struct csv_schedule : schedule {
  /// The UNSHARD, RESHARD and REDUCE_GRAD actions, by rank then position, file order.
  std::vector<csv_annotation> annotations;
};

namespace detail {

/// The kinds parse_csv() keeps as annotations (PyTorch's `_ComputationType`s for FSDP).
inline constexpr std::string_view annotation_kinds[] = {"UNSHARD", "RESHARD", "REDUCE_GRAD"};

/// The stage of `text` when it is an annotation action, `<stage><kind>[<micro-batch>]`
/// with a kind of annotation_kinds, the stage below 4096 and the micro-batch below
/// 65536; -1 otherwise (why_not_action() says why when it is nothing else either).
inline int annotation_stage(std::string_view text) {
  std::size_t i = 0;
  long stage = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && stage < max_stages)
    stage = stage * 10 + (text[i++] - '0');
  if (i == 0 || stage >= max_stages) return -1;
  const std::string_view rest = text.substr(i);
  for (const std::string_view kind : annotation_kinds) {
    if (!rest.starts_with(kind)) continue;
    long microbatch = 0;
    std::size_t j = i + kind.size();
    while (j < text.size() && text[j] >= '0' && text[j] <= '9' && microbatch < max_microbatches) {
      microbatch = microbatch * 10 + (text[j++] - '0');
    }
    return j == text.size() && microbatch < max_microbatches ? static_cast<int>(stage) : -1;
  }
  return -1;
}

/// The CSV text of `v` with `annotations` (any order) written before the op at their
/// position; see to_csv().
inline std::string write_csv(schedule_view v, const std::vector<csv_annotation>& annotations) {
  check_view(v);
  std::vector<const csv_annotation*> order;
  order.reserve(annotations.size());
  std::size_t annotation_bytes = 0;
  for (const csv_annotation& a : annotations) {
    ctpipe::detail::require(a.rank >= 0 && a.rank < v.shape.P && a.position <= v.rank(a.rank).size(),
                            "ctpipe: to_csv(): an annotation's rank or position is outside the schedule");
    ctpipe::detail::require(annotation_stage(a.text) >= 0,
                            "ctpipe: to_csv(): an annotation is not an UNSHARD, RESHARD or REDUCE_GRAD action");
    ctpipe::detail::require(annotation_stage(a.text) < v.shape.stages(),
                            "ctpipe: to_csv(): an annotation's stage is not a stage of the schedule");
    order.push_back(&a);
    annotation_bytes += a.text.size() + 1;
  }
  // By rank, then position; annotations at one position keep their order.
  std::stable_sort(order.begin(), order.end(), [](const csv_annotation* a, const csv_annotation* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->position < b->position;
  });
  std::string out;
  out.reserve(v.size() * 6 + static_cast<std::size_t>(v.shape.P) + annotation_bytes);
  auto next = order.begin();
  for (const csv_annotation* a : order) {
    const std::span<const op> ops = v.rank(a->rank);
    ctpipe::detail::require(a->position == 0 || ops[a->position - 1].kind() != op_kind::overlap_f_b,
                            "ctpipe: to_csv(): an annotation's position falls inside an overlapped pair");
  }
  for (int r = 0; r < v.shape.P; ++r) {
    bool first = true;
    auto cell = [&](const std::string& text) {
      if (!first) out += ',';
      out += text;
      first = false;
    };
    const std::span<const op> ops = v.rank(r);
    for (std::size_t i = 0; i <= ops.size(); ++i) {
      for (; next != order.end() && (*next)->rank == r && (*next)->position == i; ++next) cell((*next)->text);
      if (i == ops.size()) break;
      ctpipe::detail::require(static_cast<int>(ops[i].kind()) < op_kind_count,
                              "ctpipe: to_csv() writes ops of the 11 kinds only");
      if (ops[i].kind() != op_kind::overlap_f_b) {
        cell(action(ops[i]));
        continue;
      }
      ctpipe::detail::require(
          i + 1 < ops.size() && ops[i + 1].kind() == op_kind::B,
          "ctpipe: to_csv(): an overlapped pair's word (OVERLAP_F_B) must be followed by its B on its rank");
      cell(pair_action(ops[i], ops[i + 1]));
      ++i;  // the pair's B word: written in the pair's cell
    }
    out += '\n';
  }
  return out;
}

}  // namespace detail

/// Schedule `v` in PyTorch's CSV format: rank r's ops, in order, as the (r+1)-th row;
/// cells are action strings (`0F3`, `1SEND_B2`) separated by commas, no spaces, no
/// quotes, no idle cells; each row ends in `\n` (PyTorch's reader accepts it; Python's
/// writer would end rows in `\r\n`, which parse_csv() accepts too). It writes the ops of
/// the view as they are: a compute schedule gives a compute-only file, a lowered one
/// (`to_csv(lower(v).view())`) a file with communication. A rank without ops gives an
/// empty row, which parse_csv() rejects (every rank owns a stage, so such a schedule is
/// invalid anyway). An overlapped pair (an op_kind::overlap_f_b word and the B word right
/// after it) is one cell, PyTorch's `(<s>F<j>;<s2>B<j2>)OVERLAP_F_B`, the forward first
/// (io::pair_action()); lowered lists keep a pair's two words adjacent (lower()), so they
/// write the same way. Raises check_view()'s messages, `ctpipe: to_csv() writes ops of
/// the 11 kinds only` for an op decoded from raw bits with an unused kind, and `ctpipe:
/// to_csv(): an overlapped pair's word (OVERLAP_F_B) must be followed by its B on its
/// rank` for a pair word at the end of its rank's list or before anything but a B (no
/// cell would read back as it). Linear in the op count.
inline std::string to_csv(schedule_view v) { return detail::write_csv(v, {}); }

/// A schedule read by parse_csv() written back with its annotations in place: each
/// before the op at its position on its rank's row (after the last op when the position
/// is the row's op count), annotations at one position in their order in the vector.
/// So `to_csv(parse_csv(text))` is `text` with idle cells, spaces, quotes and blank
/// lines dropped, row ends as `\n` and overlapped pairs with their F first. Raises
/// to_csv(view)'s messages, `ctpipe: to_csv(): an annotation's rank or position is
/// outside the schedule`, `ctpipe: to_csv(): an annotation's position falls inside an
/// overlapped pair` (between a pair's word and its B: the pair is one cell), `ctpipe:
/// to_csv(): an annotation is not an UNSHARD, RESHARD or REDUCE_GRAD action` and
/// `ctpipe: to_csv(): an annotation's stage is not a stage of the schedule` (edited
/// annotations that would not read back).
/// Linear in the op count, n log n in the annotation count.
inline std::string to_csv(const csv_schedule& s) { return detail::write_csv(s.view(), s.annotations); }

namespace detail {

/// A piece of the input as a message shows it: at most 40 bytes, bytes outside
/// printable ASCII as '?', so a message stays one printable line.
inline std::string echo(std::string_view text) {
  std::string out;
  for (const char ch : text.substr(0, 40)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  if (text.size() > 40) out += "...";
  return out;
}

/// Why parse_action() rejected `text` (called only after it did), in words.
inline std::string why_not_action(std::string_view text) {
  const char* const end = text.data() + text.size();
  unsigned long long value = 0;
  const auto stage = std::from_chars(text.data(), end, value);
  if (stage.ec == std::errc::invalid_argument) return "not an action (expected <stage><kind><micro-batch> such as 0F3)";
  if (stage.ec == std::errc::result_out_of_range || value >= static_cast<unsigned>(max_stages)) {
    return "stage must be at most 4095";
  }
  const char* p = stage.ptr;
  while (p < end && ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_')) ++p;
  const std::string_view kind(stage.ptr, static_cast<std::size_t>(p - stage.ptr));
  if (kind == kind_name(op_kind::overlap_f_b)) {
    return "OVERLAP_F_B is an overlapped pair, written (<stage>F<micro-batch>;<stage>B<micro-batch>)OVERLAP_F_B";
  }
  bool known = false;
  for (int k = 0; k < op_kind_count; ++k) {
    known = known || (k != static_cast<int>(op_kind::overlap_f_b) && kind == kind_name(static_cast<op_kind>(k)));
  }
  bool annotation = false;
  for (const std::string_view name : annotation_kinds) annotation = annotation || kind == name;
  if (!known && !annotation) {
    return kind.empty() ? "not an action (expected <stage><kind><micro-batch> such as 0F3)"
                        : fmt::format(
                              "unknown action kind \"{}\" (known: F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, "
                              "SEND_ACT, RECV_ACT, UNSHARD, RESHARD, REDUCE_GRAD)",
                              echo(kind));
  }
  const auto microbatch = std::from_chars(p, end, value);
  if (microbatch.ec == std::errc::invalid_argument) {
    return annotation ? "trailing characters after the kind" : "missing micro-batch after the kind";
  }
  if (microbatch.ec == std::errc::result_out_of_range || value >= static_cast<unsigned>(max_microbatches)) {
    return "micro-batch must be at most 65535";
  }
  return "trailing characters after the micro-batch";
}

/// The reader's state: ops so far, per-rank offsets, the row of each stage, the
/// annotations with the stage and cell of each.
struct csv_reader {
  std::vector<op> ops;
  std::vector<std::uint32_t> offsets{0};
  std::vector<csv_annotation> annotations;
  std::vector<int> annotation_stages;
  std::vector<std::size_t> annotation_cells;
  std::vector<int> row_of_stage = std::vector<int>(static_cast<std::size_t>(max_stages), -1);
  // This row's Is and Ws as (stage << 16 | micro-batch) << 32 | position << 1 | is W
  // (sorted, they group by stage and micro-batch in row order), and each op's cell.
  std::vector<std::uint64_t> backwards;
  std::vector<std::uint32_t> cell_of;
  int row = 0;           // 0-based; messages say row + 1
  std::size_t cell = 0;  // 1-based
  std::string_view cell_text;

  [[noreturn]] void fail_cell(const std::string& why) const {
    throw csv_error(
        fmt::format("ctpipe: CSV row {} (rank {}), cell {} \"{}\": {}", row + 1, row, cell, echo(cell_text), why));
  }

  /// Stage `stage` is on this row: fails when an earlier row holds it.
  void own(int stage) {
    int& owner = row_of_stage[static_cast<std::size_t>(stage)];
    if (owner >= 0 && owner != row) {
      fail_cell(
          fmt::format("stage {} is already on row {} (rank {}); a stage lives on one rank", stage, owner + 1, owner));
    }
    owner = row;
  }

  /// What an overlapped group must hold, for its messages.
  static constexpr const char* pair_rule =
      "an overlapped group holds exactly one F and one B, such as (7F4;0B0)OVERLAP_F_B";

  /// The op of action string `text` (a cell, or one action of an overlapped group);
  /// fails the cell with why_not_action()'s words when it is none.
  op parse(std::string_view text) const {
    try {
      return parse_action(text);
    } catch (const error&) {
      fail_cell(text.size() == cell_text.size() ? why_not_action(text)
                                                : fmt::format("\"{}\": {}", echo(text), why_not_action(text)));
    }
  }

  /// Op `o`, appended to this row (its stage owned by the row; an activation copy's
  /// stage may live on another row: the host's copies name the home's stage).
  void push(op o) {
    const std::uint64_t position = ops.size() - offsets.back();
    if (!is_move(o.kind())) own(o.stage());
    if (o.kind() == op_kind::I || o.kind() == op_kind::W) {
      const std::uint64_t key =
          (static_cast<std::uint64_t>(o.stage()) << 16) | static_cast<std::uint64_t>(o.microbatch());
      backwards.push_back((key << 32) | (position << 1) | (o.kind() == op_kind::W ? 1 : 0));
    }
    cell_of.push_back(static_cast<std::uint32_t>(cell));
    ops.push_back(o);
  }

  /// One action string of a cell (not a group), appended: an annotation or an op.
  void add(std::string_view text) {
    const std::uint64_t position = ops.size() - offsets.back();
    if (const int stage = annotation_stage(text); stage >= 0) {
      own(stage);
      annotations.push_back({row, static_cast<std::size_t>(position), std::string(text)});
      annotation_stages.push_back(stage);
      annotation_cells.push_back(cell);
      return;
    }
    push(parse(text));
  }

  /// `text` without the spaces and tabs around it.
  static std::string_view trim(std::string_view text) {
    constexpr std::string_view blank = " \t\v\f";
    const std::size_t first = text.find_first_not_of(blank);
    return first == std::string_view::npos ? std::string_view{}
                                           : text.substr(first, text.find_last_not_of(blank) - first + 1);
  }

  /// Trimmed, unquoted cell text.
  static std::string_view trim_cell(std::string_view text) {
    text = trim(text);
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
    return text;
  }

  /// After row `line` parsed: the first W (in row order) with no I of its stage and
  /// micro-batch before it. Sorting keeps the memory linear whatever the stages and
  /// micro-batches (a table indexed by them would not be).
  void check_w_after_i(std::string_view line) {
    std::sort(backwards.begin(), backwards.end());
    std::uint64_t first_bad = ~std::uint64_t{0};
    std::uint64_t key = ~std::uint64_t{0};
    bool input = false;
    for (const std::uint64_t entry : backwards) {
      if (entry >> 32 != key) {
        key = entry >> 32;
        input = false;
      }
      if ((entry & 1) == 0)
        input = true;
      else if (!input)
        first_bad = std::min(first_bad, (entry & 0xFFFFFFFFu) >> 1);
    }
    if (first_bad == ~std::uint64_t{0}) return;
    const op w = ops[offsets.back() + first_bad];
    cell = cell_of[first_bad];
    for (std::size_t c = 1; c < cell; ++c) line = line.substr(line.find(',') + 1);
    cell_text = trim_cell(line.substr(0, line.find(',')));
    fail_cell(fmt::format(
        "W with no I of stage {}, micro-batch {} before it on its row (a W follows its I; a full B has no W)",
        w.stage(), w.microbatch()));
  }

  /// One cell: trimmed, unquoted; empty (idle), an overlapped group, or one action. A
  /// group of one F and one B (either order) becomes an overlapped pair: its word (the
  /// F's stage and micro-batch), then its B word.
  void add_cell(std::string_view text) {
    text = trim_cell(text);
    cell_text = text;
    if (text.empty()) return;
    if (text.front() != '(') {
      add(text);
      return;
    }
    constexpr std::string_view overlap = ")OVERLAP_F_B";
    if (!text.ends_with(overlap)) fail_cell("an overlapped group is (<action>;<action>)OVERLAP_F_B");
    std::string_view group = text.substr(1, text.size() - 1 - overlap.size());
    if (trim(group).empty()) fail_cell("empty overlapped group");
    // Each action parsed (a bad one named first), then the group's content checked.
    op forward, backward;
    int forwards = 0, backwards_in_group = 0, others = 0;
    while (true) {
      const std::size_t semicolon = group.find(';');
      const std::string_view piece = trim(group.substr(0, semicolon));
      if (annotation_stage(piece) >= 0) {
        ++others;
      } else {
        const op o = parse(piece);
        if (o.kind() == op_kind::F)
          forward = o, ++forwards;
        else if (o.kind() == op_kind::B)
          backward = o, ++backwards_in_group;
        else
          ++others;
      }
      if (semicolon == std::string_view::npos) break;
      group = group.substr(semicolon + 1);
    }
    if (forwards != 1 || backwards_in_group != 1 || others != 0) fail_cell(pair_rule);
    push(op{op_kind::overlap_f_b, forward.stage(), forward.microbatch()});
    push(backward);
  }

  /// One row (a line without its end).
  void add_row(const std::string_view line) {
    backwards.clear();
    cell_of.clear();
    cell = 0;
    for (std::string_view rest = line;;) {
      const std::size_t comma = rest.find(',');
      ++cell;
      add_cell(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    check_w_after_i(line);
    if (ops.size() == offsets.back()) {
      const bool annotated = !annotations.empty() && annotations.back().rank == row;
      throw csv_error(fmt::format("ctpipe: CSV row {} (rank {}): no ops ({})", row + 1, row,
                                  annotated
                                      ? "UNSHARD, RESHARD and REDUCE_GRAD are no ops; every rank needs at least one op"
                                      : "every rank needs a row with at least one action"));
    }
    offsets.push_back(static_cast<std::uint32_t>(ops.size()));
  }
};

/// The rows of a CSV file, each cell parsed (csv_reader::add_row); a UTF-8 byte order
/// mark, CRLF line ends and blank lines after the last row are accepted.
inline csv_reader read_csv_rows(std::string_view text) {
  if (text.size() > max_csv_bytes)
    throw csv_error("ctpipe: CSV input is larger than 268435456 bytes (the reader's limit)");
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  // Blank lines after the last row (an editor's extra newline) are no rows.
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  csv_reader reader;
  while (!text.empty()) {
    if (reader.row == max_stages) throw csv_error("ctpipe: CSV has more than 4096 rows (P is at most 4096 ranks)");
    const std::size_t end = text.find_first_of("\r\n");
    reader.add_row(text.substr(0, end));
    const bool crlf =
        end != std::string_view::npos && text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n';
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + (crlf ? 2 : 1));
    ++reader.row;
  }
  if (reader.row == 0) throw csv_error("ctpipe: CSV has no rows (one row per rank expected)");
  return reader;
}

/// The shape of the rows read: S and m from the compute ops (a stray transfer with a
/// large stage or micro-batch then shows as out of shape instead of growing the shape;
/// from all ops when there is no compute op), V = S / P, and the placement that puts
/// every stage on its row: the loop, else the V-shape (bidirectional when each
/// micro-batch stays in its half).
inline pipeline_shape csv_shape(const csv_reader& reader, bool any_compute) {
  const int P = reader.row;
  int S = 0;
  int m = 0;
  for (const op o : reader.ops) {
    if (any_compute && !is_compute(o.kind())) continue;
    S = std::max(S, o.stage() + 1);
    m = std::max(m, o.microbatch() + 1);
  }
  // Every row holds a stage of its own, so S >= P.
  if (S % P != 0) {
    throw csv_error(fmt::format(
        "ctpipe: CSV has {} stages (0 to {}) on {} rows: the stage count must be a multiple of the row count "
        "(is a rank's row missing?)",
        S, S - 1, P));
  }
  const pipeline_shape loop{P, m, S / P, placement::loop};
  // The first stage (in order) that each placement puts elsewhere; S when none.
  auto first_misplaced = [&](const pipeline_shape& candidate) {
    for (int s = 0; s < S; ++s) {
      const int row = reader.row_of_stage[static_cast<std::size_t>(s)];
      if (row >= 0 && row != candidate.rank_of(s)) return s;
    }
    return S;
  };
  const int loop_breaks = first_misplaced(loop);
  if (loop_breaks == S) return loop;
  const pipeline_shape v_shape{P, m, 2, placement::v_shape};
  const int v_breaks = S / P == 2 ? first_misplaced(v_shape) : 0;
  if (v_breaks == S) {
    // Two model copies (DualPipe): every micro-batch's compute ops lie in its own half,
    // the down pipeline's stages (below P) for j < m/2, the up pipeline's for the others.
    const pipeline_shape both{P, m, 2, placement::bidirectional};
    const bool halves = any_compute && std::all_of(reader.ops.begin(), reader.ops.end(), [&](op o) {
                          return !is_compute(o.kind()) || (o.stage() >= both.first_stage(o.microbatch()) &&
                                                           o.stage() <= both.last_stage(o.microbatch()));
                        });
    return halves ? both : v_shape;
  }
  const bool loop_fits_longer = loop_breaks >= v_breaks;
  const int s = loop_fits_longer ? loop_breaks : v_breaks;
  const int row = reader.row_of_stage[static_cast<std::size_t>(s)];
  throw csv_error(
      fmt::format("ctpipe: CSV stage {} is on row {} (rank {}), but the {} puts it on rank {}, and no placement fits",
                  s, row + 1, row,
                  loop_fits_longer ? "loop placement (stage s on rank s % P)"
                                   : "V-shape placement (rank r holds stages r and 2P-1-r)",
                  loop_fits_longer ? loop.rank_of(s) : v_shape.rank_of(s)));
}

/// What the shape alone does not check: every annotation's stage has compute ops, and a
/// file with compute ops has a backward (forward-only files are not supported).
inline void check_csv_contents(const csv_reader& reader, int S, bool any_compute) {
  for (std::size_t k = 0; k < reader.annotations.size(); ++k) {
    if (reader.annotation_stages[k] < S) continue;
    const csv_annotation& a = reader.annotations[k];
    throw csv_error(
        fmt::format("ctpipe: CSV row {} (rank {}), cell {} \"{}\": stage {} of this annotation has no compute op "
                    "(the file's stages are 0 to {})",
                    a.rank + 1, a.rank, reader.annotation_cells[k], echo(a.text), reader.annotation_stages[k], S - 1));
  }
  const bool any_backward = std::any_of(reader.ops.begin(), reader.ops.end(), [](op o) {
    return o.kind() == op_kind::B || o.kind() == op_kind::I || o.kind() == op_kind::W;
  });
  if (any_compute && !any_backward) {
    throw csv_error(
        "ctpipe: CSV has forward ops (F) only: forward-only (evaluation) schedules are not supported "
        "(ctpipe checks training steps, where every F has its backward)");
  }
}

}  // namespace detail

/// Reads a schedule in PyTorch's CSV format (see to_csv() and the file comment) into an
/// owning schedule, with the file's UNSHARD, RESHARD and REDUCE_GRAD actions as
/// annotations (csv_schedule). Its shape comes from the file:
/// - `P` = the number of rows; `m` = 1 + the largest micro-batch and `S = P*V` = 1 + the
///   largest stage of a compute op (of any op when there is none), so `V = S / P`;
/// - the placement from which row holds which stage: the loop placement when every stage
///   `s` is on row `s % P`, else the V-shape when `V = 2` and row `r` holds stages `r`
///   and `2P-1-r`; the V-shape is read as the bidirectional placement (DualPipe's two
///   copies) when every compute op of a micro-batch j < m/2 lies below stage P and every
///   other one from stage P on. When both fit (P = 1, where the two are the same
///   placement, or a file without ops on the later stages) it is the loop. A stage with no op in the file fits any
///   placement (validate() then names its missing ops).
///
/// Text rules: rows end in `\n`, `\r\n` or `\r` (Python's csv module writes `\r\n`); blank
/// lines after the last row add no row; a UTF-8 byte order mark at the start is skipped.
/// Cells are split at every comma; spaces and tabs around a cell (and around each action
/// of an overlapped group) are trimmed; one pair of double quotes around a whole cell is
/// removed (no action holds a comma or a quote, so no other quoting is needed); an empty
/// cell is idle and skipped. Stages and micro-batches have any number of digits
/// (`12F10`, leading zeros allowed) within the op limits. An overlapped group
/// `(a;b)OVERLAP_F_B` holds exactly one F and one B, in either order (ctpipe and
/// PyTorch's DualPipeV write the F first): it becomes an overlapped pair, an
/// op_kind::overlap_f_b word with the F's stage and micro-batch, then the B word. A lone
/// `<stage>OVERLAP_F_B<micro-batch>` (what io::action() prints for a pair's word) is no
/// action.
/// `<stage>UNSHARD`, `<stage>RESHARD` and `<stage>REDUCE_GRAD` (optionally followed by
/// a micro-batch) become annotations: each keeps its rank, its position among the
/// rank's ops and its text; its stage must live on its row like an op's and be one of
/// the compute ops' stages.
///
/// Errors (ctpipe::error, as csv_error); rows and cells are numbered from 1 as an editor
/// or spreadsheet shows them, the rank (row - 1) in brackets, the cell echoed (at most
/// 40 bytes, non-printable bytes as '?'):
/// - `ctpipe: CSV input is larger than 268435456 bytes (the reader's limit)`
/// - `ctpipe: CSV has no rows (one row per rank expected)`
/// - `ctpipe: CSV has more than 4096 rows (P is at most 4096 ranks)`
/// - `ctpipe: CSV row R (rank r), cell C "X": ` followed by one of
///   `not an action (expected <stage><kind><micro-batch> such as 0F3)`,
///   `stage must be at most 4095`,
///   `unknown action kind "K" (known: F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B,
///   UNSHARD, RESHARD, REDUCE_GRAD)`,
///   `OVERLAP_F_B is an overlapped pair, written
///   (<stage>F<micro-batch>;<stage>B<micro-batch>)OVERLAP_F_B` (`1OVERLAP_F_B1`),
///   `missing micro-batch after the kind`, `micro-batch must be at most 65535`,
///   `trailing characters after the micro-batch` (`1F0x`),
///   `trailing characters after the kind` (`0UNSHARD-1`),
///   `an overlapped group is (<action>;<action>)OVERLAP_F_B`,
///   `empty overlapped group`,
///   `an overlapped group holds exactly one F and one B, such as (7F4;0B0)OVERLAP_F_B`
///   (two Fs, an I, W, transfer or annotation, one action or three),
///   `stage S is already on row R2 (rank r2); a stage lives on one rank`,
///   `W with no I of stage S, micro-batch J before it on its row (a W follows its I; a full B
///   has no W)` (the first such W of the row,
///   checked once the row's cells have parsed);
///   inside an overlapped group the bad action comes first: `"7X3": unknown action kind ...`
/// - `ctpipe: CSV row R (rank r): no ops (every rank needs a row with at least one action)`
///   (an empty line, or only empty cells: a rank's row is missing), or `no ops
///   (UNSHARD, RESHARD and REDUCE_GRAD are no ops; every rank needs at least one op)`
/// - `ctpipe: CSV has S stages (0 to S-1) on P rows: the stage count must be a multiple
///   of the row count (is a rank's row missing?)`
/// - `ctpipe: CSV stage S is on row R (rank r), but the loop placement (stage s on rank
///   s % P) puts it on rank q, and no placement fits` (or `the V-shape placement (rank r
///   holds stages r and 2P-1-r)`, whichever fits more of the first stages).
/// - `ctpipe: CSV row R (rank r), cell C "X": stage S of this annotation has no compute
///   op (the file's stages are 0 to S2)`
/// - `ctpipe: CSV has forward ops (F) only: forward-only (evaluation) schedules are not
///   supported (ctpipe checks training steps, where every F has its backward)`: the
///   file has compute ops, none of them B, I or W (see the file comment).
/// It never reads out of bounds, loops or allocates more than linear memory on any
/// bytes (fuzzed: fuzz/csv_fuzz.cpp). Checks the format only: validate() (compute-only)
/// or validate_lowered() (with transfers) check that the schedule runs. Linear.
inline csv_schedule parse_csv(std::string_view text) {
  detail::csv_reader reader = detail::read_csv_rows(text);
  const bool any_compute = std::any_of(reader.ops.begin(), reader.ops.end(), [](op o) { return is_compute(o.kind()); });
  const pipeline_shape shape = detail::csv_shape(reader, any_compute);
  detail::check_csv_contents(reader, shape.stages(), any_compute);
  csv_schedule out{schedule{shape, reader.ops.size()}, std::move(reader.annotations)};
  std::copy(reader.ops.begin(), reader.ops.end(), out.ops().begin());
  std::copy(reader.offsets.begin(), reader.offsets.end(), out.offsets().begin());
  return out;
}

}  // namespace ctpipe::io
