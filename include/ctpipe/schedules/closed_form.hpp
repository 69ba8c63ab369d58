// ctpipe/schedules/closed_form.hpp: the type of a family's closed forms, and the pieces
// several families share. Each family's formulas sit beside its generator
// (schedules/<family>.hpp); analysis/formulas.hpp asks the family table for them.
#pragma once

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe {

/// A closed form for one quantity. With P = 1 nothing crosses ranks, so the latency
/// t_c never matters there. The functions that give them expect a valid spec
/// (`spec_error(s) == nullptr`) and, for peaks, 0 <= r < P.
struct closed_form {
  bool holds = false;          ///< a formula applies to these parameters
  rational value{};            ///< its exact value (when holds)
  const char* formula = "";    ///< the formula, in the article's letters
  const char* source = "";     ///< paper or framework it comes from
  const char* condition = "";  ///< when it applies (or, when !holds, why not)
};

namespace detail {
/// No closed form, and why.
constexpr closed_form no_formula(const char* why) { return {false, rational{0}, "", "", why}; }

/// The bubble fraction of a schedule whose every rank idles `idle`: idle / T (0 for
/// T = 0), where makespan T holds, with T's source and condition. Callers compute
/// `idle` only once T holds (outside its range its terms may not be representable).
constexpr closed_form idle_fraction(const closed_form& T, rational idle, const char* text) {
  if (!T.holds) return T;
  return {true, T.value == rational{0} ? rational{0} : idle / T.value, text, T.source, T.condition};
}

/// The span bubble of a schedule whose rank 0 starts at 0 and ends last (GPipe, 1F1B,
/// interleaved 1F1B, looped BFS): rank 0's idle, T - m(t_f+t_b), when makespan T holds.
constexpr closed_form rank0_span_bubble(const schedule_spec& s, const costs& c, const closed_form& T) {
  if (!T.holds) return T;
  const char* text = s.family == schedule_family::gpipe && c.c != rational{0} ? "(P-1)(t_f+t_b+2t_c)"
                     : s.shape.V > 1                                          ? "(P-1)(t_f+t_b)/V"
                                                                              : "(P-1)(t_f+t_b)";
  return {true, T.value - rational{s.shape.m} * (c.f + c.b), text, T.source, T.condition};
}
}  // namespace detail

}  // namespace ctpipe
