// ctpipe/schedules/generate.hpp: one entry point for every family, at run time
// (generate) and frozen at compile time (schedule_v).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/schedules/family.hpp"

namespace ctpipe {

/// Writes rank `r`'s ops of schedule `s` into `out` (a callable taking an op), in
/// execution order, through the family's generator (family_table). Does not check `s`:
/// call check_spec first (generate does). For V-Half and V-Min, built for all ranks at
/// once, each call runs the whole greedy: to get every rank, call generate() once.
template <class Out>
constexpr void generate_rank(const schedule_spec& s, int r, Out&& out) {
  detail::buffer<op> ops(ops_of_rank(s, r));
  const op* end = family_of(s.family).fill_rank(s, r, ops.data());
  for (const op* o = ops.data(); o != end; ++o) out(*o);
}

namespace detail {

/// Whether ops [begin, end) all run on rank r (a family built for all ranks at once
/// proves its split by ranks this way).
constexpr bool all_on_rank(const pipeline_shape& shape, const op* begin, const op* end, int r) {
  for (const op* o = begin; o != end; ++o)
    if (shape.rank_of(o->stage()) != r) return false;
  return true;
}

/// Fills `ops` (total_ops(s) entries) and `offsets` (P+1 entries) with schedule s,
/// proving on the way that each rank r got exactly ops_of_rank(s, r) ops (for a
/// family built for all ranks at once: that they are rank r's).
constexpr void fill_schedule(const schedule_spec& s, op* ops, std::uint32_t* offsets) {
  std::size_t written = 0;
  offsets[0] = 0;
  const family_entry& family = family_of(s.family);
  const bool all_at_once = family.fill_all != nullptr;
  const op* end = all_at_once ? family.fill_all(s, ops) : nullptr;
  for (int r = 0; r < s.shape.P; ++r) {
    const std::size_t begin = written;
    if (!all_at_once) end = family.fill_rank(s, r, ops + written);
    written += ops_of_rank(s, r);
    require(all_at_once ? all_on_rank(s.shape, ops + begin, ops + written, r) : end == ops + written,
            "ctpipe: internal error: a generator wrote a wrong number of ops");
    offsets[r + 1] = static_cast<std::uint32_t>(written);
  }
  require(end == ops + written, "ctpipe: internal error: a generator wrote a wrong number of ops");
}

/// Total ops of s, after its gate (so an invalid spec fails here with its message).
constexpr std::size_t checked_total_ops(const schedule_spec& s) {
  check_spec(s);
  return total_ops(s);
}

/// Schedule S frozen: `size(S)` ops over P ranks, written by `fill(S, ops, offsets)`.
/// Shared by schedule_v (generate) and lowered_v (ctpipe/lower/lower.hpp). The spec
/// reaches `size` and `fill` as a function parameter, not as a constant: Clang 14
/// evaluates a local's initializer once more when it is a constant expression by itself.
template <schedule_spec S, std::size_t (*size)(const schedule_spec&),
          void (*fill)(const schedule_spec&, op*, std::uint32_t*)>
constexpr auto freeze() {
  frozen_schedule<size(S), static_cast<std::size_t>(S.shape.P)> f{};
  f.shape = S.shape;
  fill(S, f.ops, f.offsets);
  return f;
}

}  // namespace detail

/// Generates schedule `s` into free-store storage: at run time, or inside a constant
/// expression (transient allocation, freed before the evaluation ends).
/// Raises the messages of check_spec().
constexpr schedule generate(const schedule_spec& s) {
  schedule out{s.shape, detail::checked_total_ops(s)};
  detail::fill_schedule(s, out.ops().data(), out.offsets().data());
  return out;
}

/// Schedule `S` frozen at compile time: a frozen_schedule with `total_ops(S)` ops
/// in static storage. `schedule_v<S>.rank(r)` is rank r's op list as a
/// `std::span<const op>`, usable in constant expressions and by a runtime at zero cost.
/// An invalid `S` is a compile error showing the check_spec() message.
template <schedule_spec S>
inline constexpr auto schedule_v = detail::freeze<S, detail::checked_total_ops, detail::fill_schedule>();

}  // namespace ctpipe
