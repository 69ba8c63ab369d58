// The interleaved grid as variable templates: one constant evaluation per point.
#pragma once

#include <utility>  // std::integer_sequence

#include "proofs.hpp"

namespace ctpipe::tests {

/// One point: Megatron's rule with group size G (a rejected G is not a point: true).
template <int P, int V, int M, int G>
inline constexpr bool megatron_point = prove_interleaved_point(
    schedule_spec{schedule_family::interleaved_1f1b, {P, M, V}, interleaved_variant::megatron, G}, false);

template <int P, int V, int M, int... G>
constexpr bool every_group(std::integer_sequence<int, G...>) {
  return (megatron_point<P, V, M, G + 1> && ...);
}

template <int P, int V, int... M>
constexpr bool every_m(std::integer_sequence<int, M...>) {
  return (every_group<P, V, M + 1>(std::make_integer_sequence<int, M + 1>{}) && ...);
}

template <int P, int... V>
constexpr bool every_v(std::integer_sequence<int, V...>) {
  return (every_m<P, V + 1>(std::make_integer_sequence<int, 4 * P>{}) && ...);
}

/// Every V in [1, 4], m in [1, 4P] and g in [1, m] for one P.
template <int P>
constexpr bool interleaved_grid() {
  return every_v<P>(std::make_integer_sequence<int, 4>{});
}

}  // namespace ctpipe::tests
