// ctpipe/schedules/spec.hpp: which schedule, on which shape.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string_view>  // family names

#include "ctpipe/core/error.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// The schedule families ctpipe generates (SPEC.md §4).
/// - `gpipe`: GPipe (Huang et al. 2019), PyTorch's `ScheduleGPipe`.
/// - `one_f_one_b`: 1F1B / PipeDream-Flush (Narayanan et al. 2021), Megatron-LM's
///   `forward_backward_pipelining_without_interleaving`, PyTorch's `Schedule1F1B`.
enum class schedule_family : std::uint8_t { gpipe, one_f_one_b };

/// Every family, in the order the tool lists them.
inline constexpr schedule_family all_families[] = {schedule_family::gpipe,
                                                   schedule_family::one_f_one_b};

/// The family's name as the tool, JSON and the vectors spell it: `gpipe`, `1f1b`.
constexpr const char* family_name(schedule_family f) {
  switch (f) {
    case schedule_family::gpipe: return "gpipe";
    case schedule_family::one_f_one_b: return "1f1b";
  }
  return "?";
}

/// The family called `name`, or false if there is none (then `out` is unchanged).
constexpr bool family_from_name(std::string_view name, schedule_family& out) {
  for (schedule_family f : all_families) {
    if (name == family_name(f)) {
      out = f;
      return true;
    }
  }
  return false;
}

/// A schedule request: family and shape. A structural type, so it is the template
/// argument of schedule_v: `schedule_v<schedule_spec{schedule_family::gpipe, {4, 8}}>`.
struct schedule_spec {
  schedule_family family = schedule_family::one_f_one_b;  ///< which schedule
  pipeline_shape shape{};                                 ///< P, m, V, placement

  friend constexpr bool operator==(const schedule_spec&, const schedule_spec&) = default;
};

/// The gate of every generator. Raises the check_shape() messages, and
/// `ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)`.
constexpr void check_spec(const schedule_spec& s) {
  check_shape(s.shape);
  detail::require(s.shape.V == 1,
                  "ctpipe: gpipe and 1f1b have one model chunk per rank (V must be 1)");
}

/// Ops each rank runs: every one of its `m*V` (micro-batch, chunk) pairs has an F and a
/// B. A closed form: generate() proves each generator writes exactly this many.
constexpr std::size_t ops_per_rank(const schedule_spec& s) {
  return static_cast<std::size_t>(s.shape.m) * static_cast<std::size_t>(s.shape.V) * 2;
}

}  // namespace ctpipe
