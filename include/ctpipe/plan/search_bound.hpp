// ctpipe/plan/search_bound.hpp: the lower bound on the largest per-rank span of every
// valid schedule of a search problem (docs/search.md), which search() compares its span
// with (search_report::lower_bound, search_report::optimal). Run time.
#pragma once

#include <algorithm>  // std::min
#include <cstdint>    // std::int64_t

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/plan/search_problem.hpp"

namespace ctpipe {

/// A lower bound on the largest per-rank span of every valid schedule of `p`, in time
/// units (docs/search.md). Per rank r, with C_r = (P-1-r)(t_f + t_i + 2 t_c) (the round
/// trip from an F's end to its I through the ranks after r) and n = min(floor(limit), m):
/// - work: m(t_f + t_i + t_w);
/// - front: until its first I starts the rank runs only Fs, at most n of them (each holds
///   an activation), in a window of at least t_f + C_r: idle >= t_f + C_r - n t_f;
/// - tail: after its last F ends its I waits at least C_r, and the work it can run
///   meanwhile is a Is with their Ws and p pending Ws with a + 1 + p gamma <= limit and
///   a + p <= m - 1 (the level after that F): idle >= C_r - max(a(t_i + t_w) + p t_w);
/// - front + tail when m > n (some F then follows the first I, so the windows are
///   disjoint), else the larger;
/// - memory over time: an activation is held whole from its F's start to its I's end (at
///   least t_f + C_r + t_i) and gamma of it until its W ends (at least t_w), and the level
///   stays within the limit over the span: span >= m (t_f + C_r + t_i + gamma t_w) / limit.
/// The bound is the largest over ranks. O(P m).
///
/// On the V-shape (a chunk's op costs t/2 and holds half an activation), per rank r:
/// - work: m(t_f + t_i + t_w), as above;
/// - front: its first op is a chunk-0 F and its first I a chunk-1 I; from the start of
///   that micro-batch's chunk-0 F to the start of that I runs the chain of 2P - r chunk
///   Fs (stages r .. 2P-1) and r chunk Is (stages 2P-1 .. 2P-r) with 2P - 2 transfers,
///   D_r = (2P - r) t_f / 2 + r t_i / 2 + (2P - 2) t_c, and the rank runs only Fs in it,
///   at most n = min(floor(2 limit), 2m) of them: idle >= D_r - n t_f / 2;
/// - memory over time: chunk 0's half activation is held from its F's start to its I's
///   end, at least H_0 = (2P - r)(t_f + t_i) / 2 + 2(2P - 2 - r) t_c, chunk 1's at least
///   H_1 = (r + 1)(t_f + t_i) / 2 + 2 r t_c, and gamma of each half until its W ends (t_w
///   / 2 after the I at least): span >= m ((H_0 + H_1) / 2 + gamma t_w / 2) / limit.
inline rational search_lower_bound(const search_problem& p) {
  check_search_problem(p);
  const pipeline_shape& s = p.shape;
  const costs& c = p.cost;
  const rational work = rational{s.m} * (c.f + c.i + c.w);
  rational best = work;
  if (s.layout == placement::v_shape) {
    const rational half{1, 2};
    for (int r = 0; r < s.P; ++r) {
      const rational limit = p.limit(r);
      const rational chunks = limit * rational{2};
      const std::int64_t n = std::min<std::int64_t>(chunks.num / chunks.den, 2 * static_cast<std::int64_t>(s.m));
      const rational chain =
          rational{2 * s.P - r} * c.f * half + rational{r} * c.i * half + rational{2 * s.P - 2} * c.c;
      best = max(best, work + max(rational{0}, chain - rational{n} * c.f * half));
      const rational h0 = rational{2 * s.P - r} * (c.f + c.i) * half + rational{2 * (2 * s.P - 2 - r)} * c.c;
      const rational h1 = rational{r + 1} * (c.f + c.i) * half + rational{2 * r} * c.c;
      best = max(best, rational{s.m} * ((h0 + h1) * half + p.gamma * c.w * half) / limit);
    }
    return best;
  }
  for (int r = 0; r < s.P; ++r) {
    const rational limit = p.limit(r);
    const rational floor_limit{limit.num / limit.den};
    const int n = floor_limit < rational{s.m} ? static_cast<int>(floor_limit.num) : s.m;
    const rational round_trip = rational{s.P - 1 - r} * (c.f + c.i + rational{2} * c.c);
    const rational front = max(rational{0}, c.f + round_trip - rational{n} * c.f);
    rational fill{0};
    for (int a = 0; a < s.m && rational{a + 1} <= limit; ++a) {
      // the most pending Ws beside a Is: p gamma <= limit - a - 1, p <= m - 1 - a
      std::int64_t w = s.m - 1 - a;
      if (p.gamma > rational{0}) {
        const rational room = (limit - rational{a + 1}) / p.gamma;
        w = std::min<std::int64_t>(w, room.num / room.den);
      }
      fill = max(fill, rational{a} * (c.i + c.w) + rational{w} * c.w);
    }
    const rational tail = max(rational{0}, round_trip - fill);
    const rational idle = s.m > n ? front + tail : max(front, tail);
    best = max(best, work + idle);
    // memory over time: each activation is held whole from its F's start to its I's end
    // (at least t_f + C_r + t_i) and gamma of it until its W ends (at least t_w); the
    // level never passes the limit over the span
    best = max(best, rational{s.m} * (c.f + round_trip + c.i + p.gamma * c.w) / limit);
  }
  return best;
}

}  // namespace ctpipe
