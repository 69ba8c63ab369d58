// ctpipe/dispatch/hana.hpp (opt-in: Boost.Hana is heavy to include): a frozen schedule's
// rank as a hana::tuple of op types, for code written with Hana's algorithms.
#pragma once

#include <boost/hana/tuple.hpp>  // hana::tuple, hana::make_tuple

#include <cstddef>  // std::size_t
#include <utility>  // std::index_sequence

#include "ctpipe/dispatch/op_types.hpp"

namespace ctpipe {

namespace detail {
template <const auto& S, int R, std::size_t... I>
constexpr auto hana_rank_ops(std::index_sequence<I...>) {
  return boost::hana::make_tuple(op_c<S.ops[S.offsets[R] + I].bits>{}...);
}
}  // namespace detail

/// Rank R's ops of the frozen schedule S as a `hana::tuple` of op_c values, in
/// execution order: `hana::for_each(hana_rank_ops<S, 0>, f)`, `hana::size(...)`, ...
template <const auto& S, int R>
inline constexpr auto hana_rank_ops =
    detail::hana_rank_ops<S, R>(std::make_index_sequence<S.offsets[R + 1] - S.offsets[R]>{});

}  // namespace ctpipe
