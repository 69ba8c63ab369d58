// The `ctpipe` tool's --layout: Megatron-LM's pipeline layout strings
// (`--pipeline-model-parallel-layout`, megatron/core/transformer/pipeline_parallel_layer_layout.py),
// read and written (docs/memory.md, "Megatron-LM's layout strings"). Header-only, so
// that every program built on the tool's request parser (options.cpp, model.cpp: the
// tool, the Python package, the page) has it with no source of its own to list. A
// recursive-descent reader of the grammar, the validation with the counts, the writer.
#pragma once

#include <algorithm>  // std::count
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::pair
#include <vector>

#include <fmt/format.h>

#include "ctpipe/analysis/model.hpp"
#include "options.hpp"

namespace ctpipe::tool {

/// A layout as written: its text and its stages in order (stage s = virtual stage s / P
/// of rank s mod P, Megatron's order), each the string of its entries, `E` the
/// embedding, `t` a decoder layer, `m` an MTP layer, `L` the loss (with the LM head).
struct megatron_layout {
  std::string text;
  std::vector<std::string> stages;
};

/// The largest layout parse_layout() expands: 2^20 entries and separators (Megatron
/// expands `t*n` in memory as well; ctpipe's shapes have at most 4096 stages).
inline constexpr std::int64_t max_layout_entries = std::int64_t{1} << 20;

/// Parses Megatron-LM's layout grammar (commas anywhere are cosmetic and skipped, as
/// Megatron removes them first; positions count from 1 in `text` as given):
///
///     layout := item*            item := atom ('*' count)?     count := digit+
///     atom   := 'E' | 't' | 'm' | 'L' | '|' | '(' item+ ')'    (a group needs '*' count)
///
/// `x*n` repeats one entry (or `|`) n times, n >= 0; `(...)*n` repeats a group, which may
/// hold `|` but no group. Megatron reads the same strings (its two regular-expression
/// passes) except strings with a stray character those passes happen to absorb, which
/// ctpipe refuses: `(tt)*2*3` (Megatron: six t, its second count repeating the last t
/// only), `t)*0`. Raises usage_error(`ctpipe: --layout 'TEXT': ...`) naming the
/// character and its position: not a layer, `(` with no `)`, `)` closing no `(`, a group
/// inside a group, an empty group, a group without `*n`, `*` with no count, `*`
/// repeating nothing or a repetition, a count over max_layout_entries, or an expansion
/// over it.
inline megatron_layout parse_layout(std::string_view text);

/// What a layout gives each stage of a pipeline: its decoder layers, its role (the
/// embedding E, the loss L), its MTP layers (counted, not costed: ctpipe's model has no
/// MTP module).
struct layout_split {
  std::vector<std::int64_t> layers;  ///< per stage: decoder layers `t`
  std::vector<stage_role> roles;     ///< per stage: first = holds E, last = holds L
  std::vector<std::int64_t> mtp;     ///< per stage: MTP layers `m`
};

/// Megatron-LM's validation of `layout` (validate_layer_layout) for P ranks, V virtual
/// stages per rank and a model of `decoder_layers` layers, with the counts in the
/// messages (usage_error):
/// - `ctpipe: --layout has 7 stages, P*V = 8`
/// - `ctpipe: --layout 'TEXT' holds 2 embeddings (E), Megatron-LM needs exactly 1` (and
///   the loss L)
/// - `ctpipe: --layout 'TEXT': its first entry is 't' (stage 0); Megatron-LM needs the
///   embedding E first` (and the loss L last)
/// - `ctpipe: --layout holds 28 decoder layers, the model has 30`
/// - an MTP layer m before a decoder layer, on a rank's virtual stage other than its last,
///   or MTP layers on more than one stage (Megatron also matches their count with
///   mtp_num_layers; ctpipe's model has none to match).
inline layout_split check_layout(const megatron_layout& layout, int P, int V, std::int64_t decoder_layers);

/// The layout string of `layers` decoder layers per stage (S entries) with the
/// embedding on the stage `roles` marks first and the loss on the one it marks last
/// (role_of() of one pipeline when `roles` is empty: stage 0 and S-1): each stage `E`,
/// `t*n` (or `t`), `L`; a run of equal stages before the last stage as `(X|)*k`. Parsed
/// back by parse_layout() to the same stages.
inline std::string layout_of(std::span<const std::int64_t> layers, std::span<const stage_role> roles = {});

// Definitions (inline: the programs built on the tool's request parser, the tool, the
// Python package and the page, compile them with options.cpp and model.cpp).

namespace layout_detail {

/// The reader: one member function a rule of the grammar (parse_layout()), over `text` with
/// its commas skipped, expanding into `out` ('E', 't', 'm', 'L', '|').
class layout_reader {
 public:
  explicit layout_reader(std::string_view text) : text_(text) {}

  std::string read() { return sequence(std::string_view::npos); }

 private:
  std::string_view text_;
  std::size_t at_ = 0;

  /// The next character that is not a comma (at_ moves past the commas), or '\0' at the end
  /// (a NUL byte in the text is a character: at_ < size tells them apart).
  char peek() {
    while (at_ < text_.size() && text_[at_] == ',') ++at_;
    return at_ < text_.size() ? text_[at_] : '\0';
  }

  /// `text` with each byte that is not printable ASCII as \xNN (a message stays one line
  /// of text).
  static std::string shown(std::string_view text) {
    std::string out;
    for (const char ch : text) {
      const unsigned char c = static_cast<unsigned char>(ch);
      out += c >= 0x20 && c < 0x7f ? std::string(1, ch) : fmt::format("\\x{:02x}", c);
    }
    return out;
  }

  /// `'x' (position N)`, the character at `at` quoted.
  std::string where(std::size_t at) const {
    return fmt::format("'{}' (position {})", shown(text_.substr(at, 1)), at + 1);
  }

  /// A layout as messages quote it: whole up to 80 bytes, else its first 60 and last 16
  /// with the length between (a message stays one readable line).
  static std::string quoted(std::string_view text) {
    if (text.size() <= 80) return shown(text);
    return fmt::format("{}...({} bytes)...{}", shown(text.substr(0, 60)), text.size(),
                       shown(text.substr(text.size() - 16)));
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw usage_error(fmt::format("ctpipe: --layout '{}': {}", quoted(text_), what));
  }

  /// The items up to the end, or up to the ')' of the group opened at `open` (npos: none).
  std::string sequence(std::size_t open) {
    std::string out;
    while (true) {
      const char c = peek();
      if (at_ >= text_.size()) {
        if (open != std::string_view::npos) fail(fmt::format("{} has no ')'", where(open)));
        return out;
      }
      if (c == ')') {
        if (open == std::string_view::npos) fail(fmt::format("{} closes no '('", where(at_)));
        return out;
      }
      if (c == '(') {
        if (open != std::string_view::npos) {
          fail(fmt::format("{} opens a group inside the group at position {} (Megatron-LM's groups do not nest)",
                           where(at_), open + 1));
        }
        append(out, group());
        continue;
      }
      if (c == '*') fail(fmt::format("{} repeats nothing (a count follows one entry or a group, once)", where(at_)));
      if (c != 'E' && c != 't' && c != 'm' && c != 'L' && c != '|') {
        fail(
            fmt::format("{} is not a layer (E embedding, t decoder layer, m MTP layer, L loss, | between stages, "
                        "x*n and (...)*n repeat)",
                        where(at_)));
      }
      ++at_;
      const std::int64_t n = peek() == '*' ? count() : 1;
      append(out, std::string(1, c), n);
    }
  }

  /// `(...)*n` from its '(' (at_), expanded.
  std::string group() {
    const std::size_t open = at_++;
    std::string body = sequence(open);
    ++at_;  // the ')'
    // Megatron's pattern needs a character inside, commas removed: '()' and '(,)' are no
    // groups there, while '(t*0)' is one (of nothing).
    if (text_.substr(open + 1, at_ - open - 2).find_first_not_of(',') == std::string_view::npos)
      fail(fmt::format("{} opens an empty group", where(open)));
    if (peek() != '*') fail(fmt::format("the group at position {} needs *n after its ')'", open + 1));
    const std::int64_t n = count();
    std::string out;
    append(out, body, n);
    return out;
  }

  /// The count after a '*' (at_), commas skipped; refuses a '*' right after it.
  std::int64_t count() {
    const std::size_t star = at_++;
    std::int64_t n = 0;
    bool digits = false;
    for (char c = peek(); c >= '0' && c <= '9'; c = peek()) {
      n = n * 10 + (c - '0');
      if (n > max_layout_entries) fail(fmt::format("the count after {} is over {}", where(star), max_layout_entries));
      digits = true;
      ++at_;
    }
    if (!digits) fail(fmt::format("{} needs a count (t*3, (t|)*2)", where(star)));
    if (peek() == '*') fail(fmt::format("{} repeats a repetition (write one count: t*6)", where(at_)));
    return n;
  }

  /// Appends `n` copies of `piece` to `out`, refusing more than max_layout_entries in all.
  void append(std::string& out, const std::string& piece, std::int64_t n = 1) const {
    if (static_cast<std::int64_t>(out.size()) + static_cast<std::int64_t>(piece.size()) * n > max_layout_entries) {
      fail(fmt::format("it expands to more than {} entries and separators", max_layout_entries));
    }
    for (std::int64_t k = 0; k < n; ++k) out += piece;
  }
};

/// `1 decoder layer`, `2 decoder layers`.
inline std::string layout_counted(std::int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// Megatron's MTP rules: every m after every t; m only on a rank's last virtual stage;
/// all m on one stage.
inline void check_layout_mtp(const megatron_layout& layout, int P, int V) {
  const std::string& text = layout.text;
  int mtp_stages = 0;
  bool seen_m = false;
  for (std::size_t s = 0; s < layout.stages.size(); ++s) {
    const std::string& stage = layout.stages[s];
    const std::size_t m = stage.find('m');
    if (seen_m || m != std::string::npos) {
      const std::size_t from = seen_m ? 0 : m;
      if (stage.find('t', from) != std::string::npos) {
        throw usage_error(
            fmt::format("ctpipe: --layout '{}' puts a decoder layer (t) after an MTP layer (m), on stage "
                        "{}; Megatron-LM needs every t before the m",
                        text, s));
      }
    }
    if (m == std::string::npos) continue;
    seen_m = true;
    ++mtp_stages;
    const int v = static_cast<int>(s) / P;
    if (v != V - 1) {
      throw usage_error(
          fmt::format("ctpipe: --layout '{}' puts MTP layers (m) on stage {} (rank {}, virtual stage {} "
                      "of {}); Megatron-LM needs them on a rank's last virtual stage",
                      text, s, static_cast<int>(s) % P, v, V));
    }
  }
  if (mtp_stages > 1) {
    throw usage_error(fmt::format(
        "ctpipe: --layout '{}' spreads its MTP layers (m) over {} stages; Megatron-LM needs them all on one", text,
        mtp_stages));
  }
}

/// The first (`first`) or last entry of the layout and its stage, or '\0'.
inline std::pair<char, std::size_t> layout_end(const megatron_layout& layout, bool first) {
  const std::size_t S = layout.stages.size();
  for (std::size_t k = 0; k < S; ++k) {
    const std::size_t s = first ? k : S - 1 - k;
    const std::string& stage = layout.stages[s];
    if (!stage.empty()) return {first ? stage.front() : stage.back(), s};
  }
  return {'\0', 0};
}

}  // namespace layout_detail

inline megatron_layout parse_layout(std::string_view text) {
  megatron_layout out{std::string(text), {}};
  const std::string entries = layout_detail::layout_reader(text).read();
  std::size_t from = 0;
  while (true) {
    const std::size_t bar = entries.find('|', from);
    out.stages.push_back(entries.substr(from, bar == std::string::npos ? std::string::npos : bar - from));
    if (bar == std::string::npos) return out;
    from = bar + 1;
  }
}

inline layout_split check_layout(const megatron_layout& layout, int P, int V, std::int64_t decoder_layers) {
  const std::string& text = layout.text;
  const std::size_t S = layout.stages.size();
  if (S != static_cast<std::size_t>(P) * static_cast<std::size_t>(V))
    throw usage_error(fmt::format("ctpipe: --layout has {}, P*V = {}",
                                  layout_detail::layout_counted(static_cast<std::int64_t>(S), "stage", "stages"),
                                  P * V));
  layout_split out;
  std::int64_t embeddings = 0, losses = 0, decoders = 0;
  for (const std::string& stage : layout.stages) {
    const auto n = [&stage](char c) { return static_cast<std::int64_t>(std::count(stage.begin(), stage.end(), c)); };
    out.layers.push_back(n('t'));
    out.mtp.push_back(n('m'));
    out.roles.push_back(stage_role{n('E') > 0, n('L') > 0});
    embeddings += n('E');
    losses += n('L');
    decoders += n('t');
  }
  if (embeddings != 1) {
    throw usage_error(fmt::format("ctpipe: --layout '{}' holds {}, Megatron-LM needs exactly 1", text,
                                  layout_detail::layout_counted(embeddings, "embedding (E)", "embeddings (E)")));
  }
  if (losses != 1) {
    throw usage_error(fmt::format("ctpipe: --layout '{}' holds {}, Megatron-LM needs exactly 1", text,
                                  layout_detail::layout_counted(losses, "loss (L)", "losses (L)")));
  }
  for (const bool first : {true, false}) {
    const auto [c, s] = layout_detail::layout_end(layout, first);
    if (c != (first ? 'E' : 'L')) {
      throw usage_error(
          fmt::format("ctpipe: --layout '{}': its {} entry is '{}' (stage {}); Megatron-LM needs the {} {}", text,
                      first ? "first" : "last", c, s, first ? "embedding E" : "loss L", first ? "first" : "last"));
    }
  }
  if (decoders != decoder_layers) {
    throw usage_error(fmt::format("ctpipe: --layout holds {}, the model has {}",
                                  layout_detail::layout_counted(decoders, "decoder layer", "decoder layers"),
                                  decoder_layers));
  }
  layout_detail::check_layout_mtp(layout, P, V);
  return out;
}

inline std::string layout_of(std::span<const std::int64_t> layers, std::span<const stage_role> roles) {
  const std::size_t S = layers.size();
  std::vector<std::string> stages;
  for (std::size_t s = 0; s < S; ++s) {
    const stage_role role = roles.empty() ? stage_role{s == 0, s + 1 == S} : roles[s];
    const std::int64_t n = layers[s];
    stages.push_back(std::string(role.first ? "E" : "") +
                     (n == 0   ? ""
                      : n == 1 ? "t"
                               : fmt::format("t*{}", n)) +
                     (role.last ? "L" : ""));
  }
  std::string out;
  for (std::size_t s = 0; s < S;) {
    std::size_t run = 1;  // equal stages from s, the last stage left out (a group ends with '|')
    while (s + run + 1 < S && stages[s + run] == stages[s]) ++run;
    if (run >= 2) {
      out += fmt::format("({}|)*{},", stages[s], run);  // the comma, cosmetic, as in Megatron's examples
    } else {
      out += stages[s] + (s + 1 < S ? "|" : "");
    }
    s += run;
  }
  return out;
}

}  // namespace ctpipe::tool
