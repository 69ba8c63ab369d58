// ctpipe/dispatch/op_types.hpp: a frozen schedule's ops as types, for code that wants
// every op as a compile-time constant (Boost.MP11).
//
// Types are derived from the constexpr values, never the other way round: rank_ops<S, r>
// reads schedule_v's static arrays. The cost is one template instantiation per op of the
// rank asked for; ranks not asked for cost nothing.
#pragma once

#include <boost/mp11/algorithm.hpp>  // mp_for_each, mp_with_index
#include <boost/mp11/list.hpp>       // mp_list

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <utility>  // std::index_sequence

#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"

namespace ctpipe {

/// One op as a type: `op_c<bits>::value` is the op, and `kind`, `stage`, `microbatch`
/// its fields as constants. `bits` is op::bits (kind in bits 28..31, stage 16..27,
/// micro-batch 0..15).
template <std::uint32_t Bits>
struct op_c {
  static constexpr op value = [] {
    op o;
    o.bits = Bits;
    return o;
  }();
  static constexpr op_kind kind = value.kind();
  static constexpr int stage = value.stage();
  static constexpr int microbatch = value.microbatch();
};

namespace detail {
template <const auto& S, int R, std::size_t... I>
boost::mp11::mp_list<op_c<S.ops[S.offsets[R] + I].bits>...> rank_ops_of(std::index_sequence<I...>);
}  // namespace detail

/// Rank R's ops of the frozen schedule S (a schedule_v<spec>, or any frozen_schedule
/// with static storage) as an `mp_list` of op_c types, in execution order.
template <const auto& S, int R>
using rank_ops = decltype(detail::rank_ops_of<S, R>(std::make_index_sequence<S.offsets[R + 1] - S.offsets[R]>{}));

/// Calls `handler(op_c<...>{})` for each op of rank R of S, in order, as straight-line
/// code (a fold over the list): every call has constant arguments and can be inlined.
template <const auto& S, int R, class Handler>
constexpr void for_each_op(Handler&& handler) {
  boost::mp11::mp_for_each<rank_ops<S, R>>(handler);
}

/// Turns a run-time rank (0 <= rank < P of S) into the compile-time one:
/// `f(std::integral_constant<std::size_t, r>{})`, through `mp_with_index`. A rank outside
/// [0, P) raises `ctpipe: rank must lie in [0, P)` (ctpipe::error at run time, a compile
/// error in a constant expression) before `f` is called.
template <const auto& S, class F>
constexpr decltype(auto) with_rank(std::size_t rank, F&& f) {
  detail::require(rank < static_cast<std::size_t>(S.shape.P), "ctpipe: rank must lie in [0, P)");
  return boost::mp11::mp_with_index<static_cast<std::size_t>(S.shape.P)>(rank, f);
}

/// Runs rank `rank`'s program of S (chosen at run time, unrolled at compile time) against
/// `handler`: `with_rank` + `for_each_op`. A rank outside [0, P) raises
/// `ctpipe: rank must lie in [0, P)` (through with_rank) and runs no op.
template <const auto& S, class Handler>
constexpr void run_rank(std::size_t rank, Handler&& handler) {
  with_rank<S>(rank, [&](auto r) { for_each_op<S, static_cast<int>(decltype(r)::value)>(handler); });
}

}  // namespace ctpipe
