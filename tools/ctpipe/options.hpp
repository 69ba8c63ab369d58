// Parsing of the `ctpipe` tool's --costs option.
#pragma once

#include <string>
#include <string_view>

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"

namespace ctpipe::tool {

/// Parses `f=1,b=2,i=1,w=1,c=0` (any subset, any order; values exact: `1/2`, `0.25`).
/// Keys not given keep the defaults, except `b`, which becomes `i + w` when `i` or `w`
/// is given without it (docs/spec.md §1: t_b = t_i + t_w). Raises ctpipe::error with
/// `ctpipe: --costs takes key=value pairs ...`, the parse_rational() message, or the
/// check_costs() messages.
inline costs parse_costs(std::string_view text) {
  constexpr const char* bad =
      "ctpipe: --costs takes key=value pairs separated by commas, keys f, b, i, w, c, each once (e.g. f=1,b=2)";
  costs out{};
  bool seen[5] = {};
  constexpr std::string_view keys = "fbiwc";
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    detail::require(comma == std::string_view::npos || !text.empty(), bad);  // no trailing comma
    detail::require(item.size() >= 3 && item[1] == '=', bad);
    const std::size_t key = keys.find(item[0]);
    detail::require(key != std::string_view::npos && !seen[key], bad);
    seen[key] = true;
    rational* field[] = {&out.f, &out.b, &out.i, &out.w, &out.c};
    *field[key] = parse_rational(item.substr(2));
  }
  if (!seen[1] && (seen[2] || seen[3])) out.b = out.i + out.w;
  check_costs(out);
  return out;
}

}  // namespace ctpipe::tool
