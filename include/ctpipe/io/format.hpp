// ctpipe/io/format.hpp (run time, opt-in): text forms of ctpipe's values.
// Exact numbers print as "33" or "3/11"; ops as PyTorch action strings "0F3".
#pragma once

#include <fmt/format.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"

namespace ctpipe::io {

/// "33", "-1/2", "3/11": the exact value, lowest terms.
inline std::string to_string(rational x) {
  return x.den == 1 ? fmt::format("{}", x.num) : fmt::format("{}/{}", x.num, x.den);
}

/// PyTorch's action string of an op: `<stage><kind><micro-batch>`, e.g. `0F3`, `2B5`,
/// `1SEND_F2` (torch.distributed.pipelining `_Action`). An overlapped pair's word alone
/// prints as `7OVERLAP_F_B4`, which parse_action() does not read: actions() writes a
/// whole pair.
inline std::string action(op o) { return fmt::format("{}{}{}", o.stage(), kind_name(o.kind()), o.microbatch()); }

/// PyTorch's action string of an overlapped pair (its word and its B word):
/// `(<forward>;<backward>)OVERLAP_F_B`, e.g. `(7F4;0B0)OVERLAP_F_B`.
inline std::string pair_action(op word, op backward) {
  return fmt::format("({}F{};{})OVERLAP_F_B", word.stage(), word.microbatch(), action(backward));
}

/// A rank's list as PyTorch action strings, one per action: an overlapped pair (its
/// word and the op after it) as pair_action(), every other op as action(). A pair word
/// at the list's end prints alone.
inline std::vector<std::string> actions(std::span<const op> rank_ops) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < rank_ops.size(); ++k) {
    if (rank_ops[k].kind() == op_kind::overlap_f_b && k + 1 < rank_ops.size()) {
      out.push_back(pair_action(rank_ops[k], rank_ops[k + 1]));
      ++k;
    } else {
      out.push_back(action(rank_ops[k]));
    }
  }
  return out;
}

/// Parses an action string such as `0F3` or `12SEND_B10`: digits, a kind name, digits,
/// nothing else. Raises ctpipe::error(`ctpipe: not an action string (expected
/// <stage><kind><micro-batch> such as 0F3)`) on anything else, including a stage of
/// 4096 or more or a micro-batch of 65536 or more.
inline op parse_action(std::string_view text) {
  constexpr const char* bad = "ctpipe: not an action string (expected <stage><kind><micro-batch> such as 0F3)";
  auto number = [&](std::size_t& i, long limit) {
    const std::size_t start = i;
    long value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && value < limit) value = value * 10 + (text[i++] - '0');
    detail::require(i > start && value < limit, bad);
    return static_cast<int>(value);
  };
  std::size_t i = 0;
  const int stage = number(i, max_stages);
  for (int k = static_cast<int>(op_kind::recv_act) + 1; k-- > 0;) {  // longest names first: SEND_F before F
    if (k == static_cast<int>(op_kind::overlap_f_b)) continue;       // a pair has a cell of its own
    const std::string_view name = kind_name(static_cast<op_kind>(k));
    if (text.substr(i, name.size()) == name) {
      i += name.size();
      const int microbatch = number(i, max_microbatches);
      detail::require(i == text.size(), bad);
      return op{static_cast<op_kind>(k), stage, microbatch};
    }
  }
  detail::fail(bad);
}

}  // namespace ctpipe::io
