// ctpipe/dispatch/op_types.hpp: a frozen schedule's ops as types, for code that wants
// every op as a compile-time constant (Boost.MP11).
//
// Types are derived from the constexpr values, never the other way round: rank_ops<S, r>
// reads schedule_v's static arrays. The cost is one template instantiation per op of the
// rank asked for; ranks not asked for cost nothing.
//
// Overlapped pairs (op_kind::overlap_f_b): rank_ops, for_each_op and dispatch_table
// (table.hpp) see a rank's words, so a pair is two entries, `op_c` of its word (kind
// overlap_f_b, the forward's stage and micro-batch) then `op_c` of its B word; a handler
// that runs the whole pair at its word must skip the B word that comes next (an op_c of
// a B does not say whether it is a pair's). rank_actions and for_each_action see the
// rank's actions instead: a pair is one `pair_c` type, every other op its op_c.
#pragma once

#include <boost/mp11/algorithm.hpp>  // mp_for_each, mp_with_index
#include <boost/mp11/list.hpp>       // mp_list

#include <array>    // the action starts of a rank
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

/// An overlapped pair as one type: its word `word` (an op_c of kind overlap_f_b) and its
/// B word `backward` (an op_c of kind B). `forward` is the pair's forward as a plain F op
/// (the word's stage and micro-batch), `value` the word.
template <std::uint32_t WordBits, std::uint32_t BackwardBits>
struct pair_c {
  using word = op_c<WordBits>;          ///< the pair's word: kind overlap_f_b
  using backward = op_c<BackwardBits>;  ///< the pair's B word
  static constexpr op value = word::value;
  static constexpr op forward = op{op_kind::F, word::stage, word::microbatch};
  static_assert(word::kind == op_kind::overlap_f_b && backward::kind == op_kind::B,
                "ctpipe: pair_c is an overlap_f_b word and a B word");
};

/// Whether a type of rank_actions is a pair_c (an overlapped pair) rather than an op_c.
template <class T>
inline constexpr bool is_pair_c = false;
template <std::uint32_t W, std::uint32_t B>
inline constexpr bool is_pair_c<pair_c<W, B>> = true;

namespace detail {
template <const auto& S, int R, std::size_t... I>
boost::mp11::mp_list<op_c<S.ops[S.offsets[R] + I].bits>...> rank_ops_of(std::index_sequence<I...>);

/// Whether word k (an index into S.ops) of rank R of S starts an overlapped pair: a pair
/// word followed on its rank by a B word.
template <const auto& S, int R>
constexpr bool pair_at(std::size_t k) {
  return S.ops[k].kind() == op_kind::overlap_f_b && k + 1 < S.offsets[R + 1] && S.ops[k + 1].kind() == op_kind::B;
}

/// The number of actions of rank R of S: its words, a pair counting once.
template <const auto& S, int R>
constexpr std::size_t action_count() {
  std::size_t n = 0;
  for (std::size_t k = S.offsets[R]; k < S.offsets[R + 1]; ++k, ++n) k += pair_at<S, R>(k) ? 1 : 0;
  return n;
}

/// Where each action of rank R of S starts, as an index into S.ops.
template <const auto& S, int R>
constexpr std::array<std::size_t, action_count<S, R>()> make_action_starts() {
  std::array<std::size_t, action_count<S, R>()> starts{};
  std::size_t n = 0;
  for (std::size_t k = S.offsets[R]; k < S.offsets[R + 1]; ++k) {
    starts[n++] = k;
    k += pair_at<S, R>(k) ? 1 : 0;
  }
  return starts;
}
template <const auto& S, int R>
inline constexpr std::array<std::size_t, action_count<S, R>()> action_starts = make_action_starts<S, R>();

/// The type of the action that starts at word K of S: pair_c or op_c.
template <const auto& S, std::size_t K, bool Pair>
struct action_type {
  using type = op_c<S.ops[K].bits>;
};
template <const auto& S, std::size_t K>
struct action_type<S, K, true> {
  using type = pair_c<S.ops[K].bits, S.ops[K + 1].bits>;
};

template <const auto& S, int R, std::size_t... I>
boost::mp11::mp_list<typename action_type<S, action_starts<S, R>[I], pair_at<S, R>(action_starts<S, R>[I])>::type...>
    rank_actions_of(std::index_sequence<I...>);
}  // namespace detail

/// Rank R's ops of the frozen schedule S (a schedule_v<spec>, or any frozen_schedule
/// with static storage) as an `mp_list` of op_c types, in execution order.
template <const auto& S, int R>
using rank_ops = decltype(detail::rank_ops_of<S, R>(std::make_index_sequence<S.offsets[R + 1] - S.offsets[R]>{}));

/// Rank R's actions of the frozen schedule S as an `mp_list`, in execution order: an
/// overlapped pair (its word and its B word) as one pair_c, every other op as its op_c.
/// Without pairs it is rank_ops<S, R>.
template <const auto& S, int R>
using rank_actions = decltype(detail::rank_actions_of<S, R>(std::make_index_sequence<detail::action_count<S, R>()>{}));

/// Calls `handler(op_c<...>{})` for each op of rank R of S, in order, as straight-line
/// code (a fold over the list): every call has constant arguments and can be inlined.
/// An overlapped pair is two calls, its word's then its B word's (file comment).
template <const auto& S, int R, class Handler>
constexpr void for_each_op(Handler&& handler) {
  boost::mp11::mp_for_each<rank_ops<S, R>>(handler);
}

/// Calls `handler(T{})` for each type T of rank_actions<S, R>, in order: one call per
/// overlapped pair (`pair_c<...>{}`) and per other op (`op_c<...>{}`).
template <const auto& S, int R, class Handler>
constexpr void for_each_action(Handler&& handler) {
  boost::mp11::mp_for_each<rank_actions<S, R>>(handler);
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
