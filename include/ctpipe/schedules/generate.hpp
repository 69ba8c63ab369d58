// ctpipe/schedules/generate.hpp: one entry point for every family, at run time
// (generate) and frozen at compile time (schedule_v).
//
// Where a family has a periodic program (schedules/program.hpp) for the spec's m, the
// schedule is that program expanded: the program is the schedule. Below the program's
// m_min, for a class of m it has no program for (PyTorch's interleaved 1F1B when P does
// not divide m) and for the families without one (V-Half, V-Min), the family's
// generator writes it. The generators stay the reference the programs are
// tested against (detail::fill_by_generator(), tests/runtime/periodic_test.cpp), equal op
// for op on every grid and vector tried.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/schedules/family.hpp"
#include "ctpipe/schedules/program.hpp"

namespace ctpipe {

/// Writes rank `r`'s ops of schedule `s` into `out` (a callable taking an op), in
/// execution order: its periodic program expanded where it applies (file comment), else
/// the family's generator (family_table). Does not check `s`: call check_spec first
/// (generate does). For V-Half and V-Min, built for all ranks at once, each call runs
/// the whole greedy: to get every rank, call generate() once.
template <class Out>
constexpr void generate_rank(const schedule_spec& s, int r, Out&& out) {
  if (program_exists(s)) {
    const periodic_program p = program_of(s);
    if (s.shape.m >= p.m_min) {
      expand_rank(p, r, s.shape.m, out);
      return;
    }
  }
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

/// Fills `ops` (total_ops(s) entries) and `offsets` (P+1 entries) with schedule s
/// through its family's generator, proving on the way that each rank r got exactly
/// ops_of_rank(s, r) ops (for a family built for all ranks at once: that they are rank
/// r's). The reference the periodic programs are tested against.
constexpr void fill_by_generator(const schedule_spec& s, op* ops, std::uint32_t* offsets) {
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

/// Fills `ops` and `offsets` as fill_by_generator() does, from `s`'s periodic program
/// where it applies (the file comment), proving each rank's count the same way.
constexpr void fill_schedule(const schedule_spec& s, op* ops, std::uint32_t* offsets) {
  if (!program_exists(s)) return fill_by_generator(s, ops, offsets);
  const periodic_program p = program_of(s);
  if (s.shape.m < p.m_min) return fill_by_generator(s, ops, offsets);
  const int m = s.shape.m;
  offsets[0] = 0;
  op* out = ops;
  for (int r = 0; r < s.shape.P; ++r) {
    require(p.rank_ops(r, m) == ops_of_rank(s, r), "ctpipe: internal error: a program wrote a wrong number of ops");
    out = detail::write_rank(p, r, m, out);
    offsets[r + 1] = static_cast<std::uint32_t>(out - ops);
  }
}

/// Schedule `s` written by its family's generator (fill_by_generator()), not its
/// periodic program: the reference for tests of the programs. Raises check_spec()'s
/// messages.
constexpr schedule generate_by_generator(const schedule_spec& s) {
  check_spec(s);
  schedule out{s.shape, total_ops(s)};
  fill_by_generator(s, out.ops().data(), out.offsets().data());
  return out;
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
