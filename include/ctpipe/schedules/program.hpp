// ctpipe/schedules/program.hpp: schedules as periodic programs (docs/proofs.md, "Proofs
// for every m").
//
// A periodic program describes every rank's op list for every m >= m_min at once, with
// storage independent of m: per rank a sequence of segments, each a short list of op
// templates repeated a number of times that is affine in m, each template's micro-batch
// affine in the repetition index i and in m:
//
//     rank r:  segment_0^{n_0(m)} · segment_1^{n_1(m)} · ...
//     n(m) = repetitions + repetitions_per_step * steps(m)
//     steps(m) = (m - m_residue) / m_step
//     micro-batch(i, m) = microbatch + per_repetition * i + per_m * m
//
// m_step is 1 (steps(m) = m) except for interleaved 1F1B, whose table runs in groups of
// g micro-batches: its program holds for one residue class m = m_residue (mod g), and
// its steady segment runs once per group. In most families exactly one segment per rank
// grows with m (repetitions_per_step = 1): its repeated pattern is the steady state, the
// segments before it the warm-up, the ones after it the cool-down. GPipe and looped BFS
// are phased programs (`phases` > 1): each rank runs `phases` growing segments one after
// the other (GPipe's forwards, then its backwards), the same number on every rank.
// analysis/periodic.hpp proves a family's makespan for every m of the class from finite
// simulations of its program. program_of() gives the programs of GPipe, 1F1B, ZB-H1,
// ZB-H2, ZB-V, interleaved 1F1B, looped BFS, combined 1F1B (interleaved's with one more
// warm-up forward and its pairs), interleaved ZB (for m a multiple of P), DualPipeV and
// DualPipe;
// expand() writes the ops, equal op for op to generate() of the same family wherever
// tested (tests/runtime/periodic_test.cpp: P <= 12, m_min <= m <= m_min + 3P + 4, and
// interleaved 1F1B over P <= 6, V <= 4, its groups and residues; the certificate checks
// it again over two cycles).
#pragma once

#include <array>
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::int64_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/family.hpp"  // warmup_forwards, spec_error
#include "ctpipe/schedules/spec.hpp"

namespace ctpipe {

/// One op of a segment: its kind and stage, and its micro-batch at repetition i of its
/// segment under m micro-batches, `microbatch + per_repetition * i + per_m * m +
/// per_step * steps(m)`.
struct op_template {
  op_kind kind = op_kind::F;
  int stage = 0;
  int microbatch = 0;      ///< at i = 0, m = 0
  int per_repetition = 0;  ///< added per repetition of the segment
  int per_m = 0;           ///< added per micro-batch of m (cool-down ops count from m)
  int per_step = 0;        ///< added per step of m (DualPipe's up pipeline: its m/2 steps)

  /// The op at repetition `i` under `m` micro-batches, `n` = steps(m).
  constexpr op at(int i, int m, int n) const {
    return detail::make_op(kind, stage, microbatch + per_repetition * i + per_m * m + per_step * n);
  }
};

/// Templates [first, first + count) of a program, repeated `repetitions +
/// repetitions_per_step * n` times, n = periodic_program::steps(m).
struct program_segment {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  int repetitions = 0;           ///< at n = 0
  int repetitions_per_step = 0;  ///< 1 for the rank's steady segment, 0 for the others

  /// How many times the segment runs at `n` steps of m (>= 0 for m >= m_min).
  constexpr int times(int n) const { return repetitions + repetitions_per_step * n; }
};

/// A schedule family's op lists for every m >= m_min with m = m_residue (mod m_step)
/// (see the file comment). `shape` holds P, V and the placement (its m is not used). Per
/// rank r its segments are `segments[rank_segments[r] .. rank_segments[r + 1])`;
/// `steady[r]` is the index of its (first) growing segment.
struct periodic_program {
  pipeline_shape shape{};
  int m_min = 1;
  int m_step = 1;     ///< micro-batches per steady repetition (interleaved 1F1B: its group g)
  int m_residue = 0;  ///< the class of m the program holds for, in [0, m_step)
  int phases = 1;     ///< growing segments per rank (GPipe 2, looped BFS 2V, the others 1)
  detail::buffer<op_template> templates;
  detail::buffer<program_segment> segments;
  detail::buffer<std::uint32_t> rank_segments;  ///< P + 1 offsets into segments
  detail::buffer<std::uint32_t> steady;         ///< P entries: index into segments

  /// Room for `n_templates` templates and `n_segments` segments over P ranks.
  constexpr periodic_program(pipeline_shape s, int m_least, std::size_t n_templates, std::size_t n_segments)
      : shape(s),
        m_min(m_least),
        templates(n_templates),
        segments(n_segments),
        rank_segments(static_cast<std::size_t>(s.P) + 1),
        steady(static_cast<std::size_t>(s.P)) {}

  /// The steps of m, `(m - m_residue) / m_step` (m itself when m_step is 1).
  constexpr int steps(int m) const { return (m - m_residue) / m_step; }

  /// Rank r's ops under m micro-batches.
  constexpr std::size_t rank_ops(int r, int m) const {
    std::size_t n = 0;
    for (std::uint32_t g = rank_segments[static_cast<std::size_t>(r)];
         g < rank_segments[static_cast<std::size_t>(r) + 1]; ++g) {
      n += static_cast<std::size_t>(segments[g].times(steps(m))) * segments[g].count;
    }
    return n;
  }

  /// Every rank's ops under m micro-batches.
  constexpr std::size_t total_ops(int m) const {
    std::size_t n = 0;
    for (int r = 0; r < shape.P; ++r) n += rank_ops(r, m);
    return n;
  }
};

namespace detail {

/// Writes a program rank by rank: `segment()` opens a segment of the current rank,
/// `add()` puts a template in it, `next_rank()` closes the rank. Capacity is the caller's.
struct program_writer {
  periodic_program& p;
  std::uint32_t templates = 0, segments = 0;
  int rank = 0;
  bool grown = false;  // whether the current rank has had its first growing segment

  constexpr void segment(int repetitions, int repetitions_per_step) {
    if (repetitions_per_step != 0 && !grown) p.steady[static_cast<std::size_t>(rank)] = segments;
    grown = grown || repetitions_per_step != 0;
    p.segments[segments++] = {templates, 0, repetitions, repetitions_per_step};
  }
  constexpr void add(op_kind k, int stage, int microbatch, int per_repetition, int per_m = 0, int per_step = 0) {
    p.templates[templates++] = {k, stage, microbatch, per_repetition, per_m, per_step};
    ++p.segments[segments - 1].count;
  }
  constexpr void next_rank() {
    p.rank_segments[static_cast<std::size_t>(++rank)] = segments;
    grown = false;
  }
};

/// GPipe (schedules/gpipe.hpp) for m >= 1, a phased program: rank r's forwards F(i), then
/// its backwards B(i), each m times.
constexpr periodic_program gpipe_program(int P) {
  periodic_program p{{P, 0, 1, placement::loop}, 1, 2 * static_cast<std::size_t>(P), 2 * static_cast<std::size_t>(P)};
  p.phases = 2;
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    out.segment(0, 1);
    out.add(op_kind::F, r, 0, 1);
    out.segment(0, 1);
    out.add(op_kind::B, r, 0, 1);
    out.next_rank();
  }
  return p;
}

/// Looped BFS (schedules/interleaved.hpp) for m >= 1, a phased program of 2V phases: rank
/// r's forwards of chunk 0, 1, .. V-1 (stage cP + r), F(i) m times each; then its
/// backwards of chunk V-1, .. 0, B(m-1-i) m times each (reverse micro-batch order).
constexpr periodic_program looped_bfs_program(int P, int V) {
  const auto n = 2 * static_cast<std::size_t>(P) * static_cast<std::size_t>(V);
  periodic_program p{{P, 0, V, placement::loop}, 1, n, n};
  p.phases = 2 * V;
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    for (int c = 0; c < V; ++c) {
      out.segment(0, 1);
      out.add(op_kind::F, c * P + r, 0, 1);
    }
    for (int c = V - 1; c >= 0; --c) {
      out.segment(0, 1);
      out.add(op_kind::B, c * P + r, -1, -1, 1);
    }
    out.next_rank();
  }
  return p;
}

/// 1F1B (schedules/one_f_one_b.hpp) for m >= P-1: rank r's w = P-1-r warm-up forwards,
/// the steady pair [F(w+i), B(i)] m-w times, the w cool-down backwards B(m-w+i).
constexpr periodic_program one_f_one_b_program(int P) {
  periodic_program p{
      {P, 0, 1, placement::loop}, P > 1 ? P - 1 : 1, 4 * static_cast<std::size_t>(P), 3 * static_cast<std::size_t>(P)};
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    const int w = P - 1 - r;
    out.segment(w, 0);
    out.add(op_kind::F, r, 0, 1);
    out.segment(-w, 1);
    out.add(op_kind::F, r, w, 1);
    out.add(op_kind::B, r, 0, 1);
    out.segment(w, 0);
    out.add(op_kind::B, r, -w, 1, 1);
    out.next_rank();
  }
  return p;
}

/// ZB-H1 (k = 1) and ZB-H2 (k = 2) (schedules/zero_bubble.hpp) for m >= k(P-1): rank
/// r's w = k(P-1-r) warm-up forwards; k*r times [F(w+i), I(i)]; the steady triple
/// [F(w+kr+i), I(kr+i), W(i)] m-w-kr times; w times [I(m-w+i), W(m-w-kr+i)]; the kr
/// Ws left, W(m-kr+i).
constexpr periodic_program zb_program(int P, int k) {
  periodic_program p{{P, 0, 1, placement::loop},
                     P > 1 ? k * (P - 1) : 1,
                     9 * static_cast<std::size_t>(P),
                     5 * static_cast<std::size_t>(P)};
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    const int w = k * (P - 1 - r), h = k * r;
    out.segment(w, 0);
    out.add(op_kind::F, r, 0, 1);
    out.segment(h, 0);
    out.add(op_kind::F, r, w, 1);
    out.add(op_kind::I, r, 0, 1);
    out.segment(-w - h, 1);
    out.add(op_kind::F, r, w + h, 1);
    out.add(op_kind::I, r, h, 1);
    out.add(op_kind::W, r, 0, 1);
    out.segment(w, 0);
    out.add(op_kind::I, r, -w, 1, 1);
    out.add(op_kind::W, r, -w - h, 1, 1);
    out.segment(h, 0);
    out.add(op_kind::W, r, -h, 1, 1);
    out.next_rank();
  }
  return p;
}

/// ZB-V's cool-down of rank r (zbv_program()), each micro-batch counted from m.
constexpr void zbv_cool_down(program_writer& out, int P, int r, int c0, int c1) {
  out.segment(P - r - 1, 0);
  out.add(op_kind::I, c0, -2 * P + r + 1, 1, 1);
  out.add(op_kind::W, c0, -2 * P + r + 1, 1, 1);
  out.add(op_kind::F, c1, -P + r + 1, 1, 1);
  out.add(op_kind::I, c1, -P + 1, 1, 1);
  out.add(op_kind::W, c1, -P + 1, 1, 1);
  out.segment(r, 0);
  out.add(op_kind::I, c0, -P, 1, 1);
  out.add(op_kind::I, c1, -r, 1, 1);
  out.segment(P - r, 0);
  out.add(op_kind::I, c0, -P + r, 1, 1);
  out.add(op_kind::W, c0, -P, 1, 1);
  out.segment(r, 0);
  out.add(op_kind::W, c1, -r, 1, 1);
  out.segment(r, 0);
  out.add(op_kind::W, c0, -r, 1, 1);
}

/// ZB-V (schedules/zero_bubble.hpp) for m >= 2P-1, rank r with chunk-0 stage c0 = r and
/// chunk-1 stage c1 = 2P-1-r: the 2(P-r)-1 chunk-0 warm-up forwards; r pairs [F1(i),
/// F0(2P-r-1+i)]; P-r triples [F1(r+i), I1(i), W1(i)]; the steady six [F0(2P-r-1+i),
/// I0(i), W0(i), F1(P+i), I1(P-r+i), W1(P-r+i)] m-2P+r+1 times; then, counted from m:
/// P-r-1 fives [I0, W0, F1, I1, W1]; r pairs of Is; P-r pairs [I0, W0]; the r chunk-1
/// Ws left, then the r chunk-0 Ws left.
constexpr periodic_program zbv_program(int P) {
  periodic_program p{
      {P, 0, 2, placement::v_shape}, 2 * P - 1, 23 * static_cast<std::size_t>(P), 9 * static_cast<std::size_t>(P)};
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    const int c0 = r, c1 = 2 * P - 1 - r, a = 2 * (P - r) - 1;
    out.segment(a, 0);
    out.add(op_kind::F, c0, 0, 1);
    out.segment(r, 0);
    out.add(op_kind::F, c1, 0, 1);
    out.add(op_kind::F, c0, a, 1);
    out.segment(P - r, 0);
    out.add(op_kind::F, c1, r, 1);
    out.add(op_kind::I, c1, 0, 1);
    out.add(op_kind::W, c1, 0, 1);
    out.segment(-2 * P + r + 1, 1);
    out.add(op_kind::F, c0, a + r, 1);
    out.add(op_kind::I, c0, 0, 1);
    out.add(op_kind::W, c0, 0, 1);
    out.add(op_kind::F, c1, P, 1);
    out.add(op_kind::I, c1, P - r, 1);
    out.add(op_kind::W, c1, P - r, 1);
    zbv_cool_down(out, P, r, c0, c1);
    out.next_rank();
  }
  return p;
}

/// Interleaved 1F1B's table (schedules/interleaved.hpp) read by entry for the program of
/// one residue class m = n*g + s: entry e counted from the start (a full group), or the
/// entry x places before the end (x >= 1; the last group holds s micro-batches), as
/// its chunk and its micro-batch, the latter relative to m for an entry from the end.
struct interleaved_entries {
  int g, V, s;

  /// Entry e from the start: its chunk and micro-batch (e in the full groups).
  constexpr void from_start(int e, int& chunk, int& microbatch) const {
    const int p = e % (g * V);
    chunk = p / g;
    microbatch = e / (g * V) * g + p % g;
  }
  /// The entry x >= 1 places before the end: its chunk and its micro-batch less m.
  constexpr void from_end(int x, int& chunk, int& microbatch) const {
    if (x <= s * V) {  // in the last group, of s micro-batches
      const int off = s * V - x;
      chunk = off / s;
      microbatch = -s + off % s;
      return;
    }
    const int y = x - s * V, G = g * V;  // y entries before the last group's start
    const int p = (G - y % G) % G;
    chunk = p / g;
    microbatch = -s - g * ((y + G - 1) / G) + p % g;
  }
};

/// Adds entry `e` of the table as rank r's forward (F or a pair's word) or backward (B,
/// I or W: chunk V-1-c).
constexpr void add_entry(program_writer& out, op_kind k, int P, int V, int r, int chunk, int microbatch,
                         int per_repetition, int per_m) {
  const int c = k == op_kind::F || k == op_kind::overlap_f_b ? chunk : V - 1 - chunk;
  out.add(k, c * P + r, microbatch, per_repetition, per_m);
}

/// Rank r's program of interleaved 1F1B for m = n*g + s, with w warm-up forwards and a
/// = ceil(w / gV): the w forwards of entries 0 .. w-1; the steady gV pairs [F(w + j),
/// B(j)], j < gV, n - a times (g micro-batches further each time); the tail of sV + a*gV
/// - w pairs whose forwards reach the table's end, counted from it; the w backwards left.
/// Combined 1F1B is the same with its one more warm-up forward and each pair's forward
/// `step` (op_kind::overlap_f_b when its pairs are fused, else F).
constexpr void interleaved_rank(program_writer& out, const interleaved_entries& t, int P, int r, int w,
                                op_kind step = op_kind::F) {
  const int G = t.g * t.V, a = (w + G - 1) / G;
  int chunk = 0, mb = 0;
  out.segment(1, 0);
  for (int e = 0; e < w; ++e) {
    t.from_start(e, chunk, mb);
    add_entry(out, op_kind::F, P, t.V, r, chunk, mb, 0, 0);
  }
  out.segment(-a, 1);
  for (int j = 0; j < G; ++j) {
    t.from_start(w + j, chunk, mb);
    add_entry(out, step, P, t.V, r, chunk, mb, t.g, 0);
    t.from_start(j, chunk, mb);
    add_entry(out, op_kind::B, P, t.V, r, chunk, mb, t.g, 0);
  }
  out.segment(1, 0);
  for (int x = t.s * t.V + a * G; x > w; --x) {
    t.from_end(x - w, chunk, mb);
    add_entry(out, step, P, t.V, r, chunk, mb, 0, 1);
    t.from_end(x, chunk, mb);
    add_entry(out, op_kind::B, P, t.V, r, chunk, mb, 0, 1);
  }
  out.segment(1, 0);
  for (int x = w; x >= 1; --x) {
    t.from_end(x, chunk, mb);
    add_entry(out, op_kind::B, P, t.V, r, chunk, mb, 0, 1);
  }
  out.next_rank();
}

/// Rank r's program of interleaved ZB (PyTorch's ScheduleInterleavedZeroBubble) for m =
/// n*g + s, w warm-up forwards and a = ceil((w + r) / gV): interleaved 1F1B's order with
/// I for B, each I from the (r+1)-th on followed by the W of the oldest I pending. So:
/// the w forwards; r pairs [F(w + k), I(k)]; the steady gV triples [F(w + r + j), I(r +
/// j), W(j)] n - a times; the tail of triples whose forwards reach the table's end,
/// counted from it; the w cool-down pairs [I, W] (each W r entries behind); the r Ws left.
constexpr void interleaved_zb_rank(program_writer& out, const interleaved_entries& t, int P, int r, int w) {
  const int G = t.g * t.V, a = (w + r + G - 1) / G;
  int chunk = 0, mb = 0;
  const auto start = [&](op_kind k, int e, int per_repetition) {
    t.from_start(e, chunk, mb);
    add_entry(out, k, P, t.V, r, chunk, mb, per_repetition, 0);
  };
  const auto end = [&](op_kind k, int x) {
    t.from_end(x, chunk, mb);
    add_entry(out, k, P, t.V, r, chunk, mb, 0, 1);
  };
  out.segment(1, 0);
  for (int e = 0; e < w; ++e) start(op_kind::F, e, 0);
  for (int k = 0; k < r; ++k) {
    start(op_kind::F, w + k, 0);
    start(op_kind::I, k, 0);
  }
  out.segment(-a, 1);
  for (int j = 0; j < G; ++j) {
    start(op_kind::F, w + r + j, t.g);
    start(op_kind::I, r + j, t.g);
    start(op_kind::W, j, t.g);
  }
  out.segment(1, 0);
  for (int x = t.s * t.V + a * G - r; x > w; --x) {  // the I's entry, x from the end
    end(op_kind::F, x - w);
    end(op_kind::I, x);
    end(op_kind::W, x + r);
  }
  out.segment(1, 0);
  for (int x = w; x >= 1; --x) {
    end(op_kind::I, x);
    end(op_kind::W, x + r);
  }
  for (int x = r; x >= 1; --x) end(op_kind::W, x);
  out.next_rank();
}

/// Interleaved 1F1B (schedules/interleaved.hpp), combined 1F1B (schedules/combined.hpp)
/// and interleaved ZB (schedules/zero_bubble.hpp) for the class of `s`'s m modulo its
/// group g (m_step g, m_residue m mod g), loop placement, any variant, group, warm-up
/// factor and pair model (interleaved_rank() or interleaved_zb_rank() per rank). m_min: the least m of the class whose
/// steady segments run at least 0 times (2g + s or more for megatron-legacy, whose m = P differs). With V = 1, megatron
/// and megatron-legacy are 1F1B and get its program.
constexpr periodic_program interleaved_program(const schedule_spec& spec) {
  const int P = spec.shape.P, V = spec.shape.V, g = group_size(spec), s = spec.shape.m % g;
  schedule_spec at = spec;
  at.shape.m = s + 4 * g;  // the warm-up no longer bounded by mV
  const bool zb = spec.family == schedule_family::interleaved_zb;
  int a_most = 1;
  std::size_t n_templates = 0;  // per rank 2(gV + sV + a*gV), interleaved ZB 3(...)
  for (int r = 0; r < P; ++r) {
    const int a = (warmup_forwards(at, r) + (zb ? r : 0) + g * V - 1) / (g * V);
    a_most = a > a_most ? a : a_most;
    n_templates += static_cast<std::size_t>((zb ? 3 : 2) * (g * V + s * V + a * g * V));
  }
  if (spec.variant == interleaved_variant::megatron_legacy && a_most < 2) a_most = 2;
  periodic_program p{{P, 0, V, placement::loop}, s + g * a_most, n_templates, 4 * static_cast<std::size_t>(P)};
  p.m_step = g;
  p.m_residue = s;
  program_writer out{p};
  const op_kind step = spec.family == schedule_family::combined_1f1b && spec.pairs == pair_model::fused
                           ? op_kind::overlap_f_b
                           : op_kind::F;
  for (int r = 0; r < P; ++r) {
    if (zb) {
      interleaved_zb_rank(out, {g, V, s}, P, r, warmup_forwards(at, r));
    } else {
      interleaved_rank(out, {g, V, s}, P, r, warmup_forwards(at, r), step);
    }
  }
  return p;
}

/// DualPipeV's and DualPipe's phases (dual_phases()) recorded as one rank's program, the
/// Rank interface of dualpipev_rank: each chunk's next forward and backward micro-batch
/// is affine in the steps n of m, `next + per_step * n` (DualPipe's up pipeline starts at
/// m/2 = n); inside the steady segment each op also advances one per repetition.
struct dual_program_rank {
  program_writer& out;
  int stage[2];
  bool fused;
  int next_f[2] = {0, 0}, next_b[2] = {0, 0};  // at n = 0
  int step_f[2] = {0, 0}, step_b[2] = {0, 0};  // per step of m
  int per_repetition = 0;                      // 1 while the steady segment is recorded
  buffer<op_template> queued_w;                // DeepSeek's WeightGradStore, first in, first out
  std::size_t w_head = 0, w_tail = 0;

  /// Rank r of P; the queue holds room for the 2P-1-r Ws of a rank.
  constexpr dual_program_rank(program_writer& o, int P, int r, bool fuse, bool dual)
      : out(o), stage{r, 2 * P - 1 - r}, fused(fuse), queued_w(2 * static_cast<std::size_t>(P)) {
    if (!dual) return;
    if (2 * r >= P) stage[0] = 2 * P - 1 - r, stage[1] = r;
    for (int c = 0; c < 2; ++c) step_f[c] = step_b[c] = stage[c] >= P ? 1 : 0;
  }
  constexpr void emit(op_kind k, int c, int microbatch, int per_step) {
    out.add(k, stage[c], microbatch, per_repetition, 0, per_step);
  }
  constexpr void forward(int c, bool = true, bool = true) { emit(op_kind::F, c, next_f[c]++, step_f[c]); }
  constexpr void backward(int c, bool zero_bubble, bool = true, bool = true) {
    const int j = next_b[c]++;
    emit(zero_bubble ? op_kind::I : op_kind::B, c, j, step_b[c]);
    if (zero_bubble) queued_w[w_tail++] = {op_kind::W, stage[c], j, per_repetition, 0, step_b[c]};
  }
  constexpr void weight() {
    const op_template& w = queued_w[w_head++];
    out.add(w.kind, w.stage, w.microbatch, w.per_repetition, w.per_m, w.per_step);
  }
  constexpr void pair(int f, int b, bool = true) {
    emit(fused ? op_kind::overlap_f_b : op_kind::F, f, next_f[f]++, step_f[f]);
    backward(b, false);
  }
  constexpr void recv_forward(int) {}
  constexpr void send_forward(int) {}
  constexpr void send_backward(int) {}
  constexpr void commit() {}
  /// After one steady repetition recorded of `n0 + n` in all: every counter moves on by
  /// the other `n0 + n - 1` (each repetition takes one forward and one backward of each
  /// chunk).
  constexpr void skip_steady(int n0) {
    for (int c = 0; c < 2; ++c) next_f[c] += n0 - 1, next_b[c] += n0 - 1, ++step_f[c], ++step_b[c];
  }
};

/// DualPipeV (schedules/dualpipe.hpp) for m >= 2P-1 (P = 1: m >= 2), and DualPipe for m
/// even >= 2P-2 (P = 2: m >= 4) (m_step 2: a step is one micro-batch per direction), from DeepSeek's phases as the
/// generator writes them (dual_phases()): per (half-)rank h of H, the warm-up (steps 1 to
/// 3), the last (half-)rank's first iteration of step 4 (not overlapped), step 4's pairs
/// (F0; B1), (F1; B0) repeated m' - 2H + h + 1 times (m' = m, or m/2 for DualPipe; one
/// less on the last), the cool-down (steps 5 to 8) counted from m'.
constexpr periodic_program dual_program(const schedule_spec& spec) {
  const bool dual = spec.family == schedule_family::dualpipe;
  const int P = spec.shape.P, H = dual ? P / 2 : P;
  std::size_t n_templates = 0, n_segments = 0;
  for (int r = 0; r < P; ++r) {
    const int h = r < P - 1 - r || !dual ? r : P - 1 - r;
    n_templates += static_cast<std::size_t>(10 * H - 5 * h - 1 + (h == H - 1 ? 4 : 0));
    n_segments += h == H - 1 ? 4 : 3;
  }
  // The structural minimum, m' >= 2H - 1, where the last (half-)rank still runs its first
  // iteration of step 4 (m' >= H + 1: P = 1, or DualPipe's P = 2, start one step later).
  const int least = 2 * H - 1 > H + 1 ? 2 * H - 1 : H + 1;
  periodic_program p{{P, 0, 2, dual ? placement::bidirectional : placement::v_shape},
                     dual ? 2 * least : least,
                     n_templates,
                     n_segments};
  p.m_step = dual ? 2 : 1;
  program_writer out{p};
  for (int r = 0; r < P; ++r) {
    const int h = r < P - 1 - r || !dual ? r : P - 1 - r;
    const bool last = h == H - 1;
    dual_program_rank g(out, P, r, spec.pairs == pair_model::fused, dual);
    out.segment(1, 0);
    dual_warmup(H, h, g);
    if (last) {
      out.segment(1, 0);
      dual_steady(H, h, 0, g);
    }
    const int n0 = -2 * H + h + 1 - (last ? 1 : 0);
    out.segment(n0, 1);
    g.per_repetition = 1;
    dual_steady(H, h, 1, g);
    g.per_repetition = 0;
    g.skip_steady(n0);
    out.segment(1, 0);
    dual_cooldown(H, h, g);
    out.next_rank();
  }
  return p;
}

}  // namespace detail

/// Whether `family` has a periodic program in this version (every family but V-Half and
/// V-Min; interleaved 1F1B, combined 1F1B and interleaved ZB per class of m; GPipe and
/// looped BFS phased: program_of()).
constexpr bool has_program(schedule_family family) {
  return family == schedule_family::gpipe || family == schedule_family::looped_bfs ||
         family == schedule_family::one_f_one_b || family == schedule_family::zb_h1 ||
         family == schedule_family::zb_h2 || family == schedule_family::zbv ||
         family == schedule_family::interleaved_1f1b || family == schedule_family::combined_1f1b ||
         family == schedule_family::interleaved_zb || family == schedule_family::dualpipev ||
         family == schedule_family::dualpipe;
}

/// Why `family` has no periodic program, for a refusal: V-Half's and V-Min's greedy;
/// for another family it is not written yet. Empty for a family with one.
constexpr const char* why_no_program(schedule_family family) {
  if (has_program(family)) return "";
  if (family == schedule_family::v_half || family == schedule_family::v_min) {
    return "its warm-up and cool-down are moved op by op by a greedy over the whole timeline (the Zero Bubble "
           "authors' zbv_greedy.py), so no program of a fixed shape is known to give it for every m (docs/proofs.md)";
  }
  return "its periodic program is not written yet (docs/proofs.md lists the families with one)";
}

/// The periodic program of `s`'s family at its P: for interleaved 1F1B (V, variant,
/// group, warm-up factor read), combined 1F1B (V, group, pair model) and interleaved ZB
/// (V) the program of the class of s's m modulo its group g (the class's m from m_min
/// on); for DualPipeV and DualPipe (pair model read; the rest of the spec checked at m
/// = 2P) the program from the structural minimum on, DualPipe's for m even; GPipe's and
/// looped BFS's (V read; the spec checked) for every m >= 1; for the others s's m is not
/// read. Raises `ctpipe: no periodic program for this
/// schedule family yet (docs/proofs.md lists the families with one)` for a family
/// without one; for the three, check_spec()'s message for an m the family refuses, and
/// `ctpipe: PyTorch's interleaved 1F1B (or ZB) has a periodic program for m a multiple
/// of P only (...)` for PyTorch's.
constexpr periodic_program program_of(const schedule_spec& s) {
  detail::require(
      has_program(s.family),
      "ctpipe: no periodic program for this schedule family yet (docs/proofs.md lists the families with one)");
  if (s.family == schedule_family::combined_1f1b) {
    check_spec(s);
    return detail::interleaved_program(s);
  }
  if (s.family == schedule_family::interleaved_zb) {
    check_spec(s);
    detail::require(s.shape.m % s.shape.P == 0,
                    "ctpipe: PyTorch's interleaved ZB has a periodic program for m a multiple of P only (its group "
                    "m / (m / P) changes with m otherwise)");
    return detail::interleaved_program(s);
  }
  if (s.family == schedule_family::interleaved_1f1b) {
    if (s.shape.V == 1 && s.variant != interleaved_variant::torch) return detail::one_f_one_b_program(s.shape.P);
    check_spec(s);
    detail::require(s.variant != interleaved_variant::torch || s.shape.m % s.shape.P == 0,
                    "ctpipe: PyTorch's interleaved 1F1B has a periodic program for m a multiple of P only (its group "
                    "m / (m / P) changes with m otherwise)");
    return detail::interleaved_program(s);
  }
  if (s.family == schedule_family::dualpipev || s.family == schedule_family::dualpipe) {
    schedule_spec at = s;
    at.shape.m = 2 * s.shape.P;  // the program is m's: check the rest
    check_spec(at);
    return detail::dual_program(s);
  }
  if (s.family == schedule_family::one_f_one_b) return detail::one_f_one_b_program(s.shape.P);
  if (s.family == schedule_family::gpipe || s.family == schedule_family::looped_bfs) {
    check_spec(s);
    if (s.family == schedule_family::gpipe) return detail::gpipe_program(s.shape.P);
    return detail::looped_bfs_program(s.shape.P, s.shape.V);
  }
  if (s.family == schedule_family::zbv) return detail::zbv_program(s.shape.P);
  return detail::zb_program(s.shape.P, s.family == schedule_family::zb_h1 ? 1 : 2);
}

namespace detail {
/// Raises expand()'s messages unless program `p` holds at m.
constexpr void require_holds(int m_min, int m_step, int m_residue, int m) {
  require(m >= m_min && m >= 1, "ctpipe: a periodic program holds for m >= its m_min");
  require((m - m_residue) % m_step == 0,
          "ctpipe: this periodic program holds for m = m_residue (mod m_step) only (interleaved 1F1B: one program per "
          "class of m modulo its group)");
}
}  // namespace detail

/// Calls `out(op)` for each op of rank `r` of program `p` under `m` micro-batches, in
/// order. Does not check m: see expand().
template <class Out>
constexpr void expand_rank(const periodic_program& p, int r, int m, Out&& out) {
  const int n = p.steps(m);
  for (std::uint32_t g = p.rank_segments[static_cast<std::size_t>(r)];
       g < p.rank_segments[static_cast<std::size_t>(r) + 1]; ++g) {
    const program_segment& seg = p.segments[g];
    for (int i = 0; i < seg.times(n); ++i) {
      for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t) out(p.templates[t].at(i, m, n));
    }
  }
}

namespace detail {
/// Writes rank `r`'s ops of program `p` under `m` micro-batches from `out` on, as
/// expand_rank() gives them, and returns the end of what it wrote. Template by template:
/// each op word is the one before it in its template plus per_repetition (the
/// micro-batch is the word's low bits), written a segment's width apart. One statement
/// per op, and fewer operations than at() per op: the constexpr cost of generate()
/// (bench/RESULTS.md) and of the periodic certificate. Does not check m.
constexpr op* write_rank(const periodic_program& p, int r, int m, op* out) {
  const int n = p.steps(m);
  for (std::uint32_t g = p.rank_segments[static_cast<std::size_t>(r)];
       g < p.rank_segments[static_cast<std::size_t>(r) + 1]; ++g) {
    const program_segment& seg = p.segments[g];
    const auto times = static_cast<std::uint32_t>(seg.times(n));
    const op_template* t = p.templates.data() + seg.first;
    // Per template one statement: its word at repetition 0 (at(0, m, n), make_op()'s
    // encoding by hand), then a write per repetition; j an index, not a pointer (one past
    // the last op would not be one).
    for (std::uint32_t k = 0; k < seg.count; ++k) {
      for (std::uint32_t i = 0, j = k, step = static_cast<std::uint32_t>(t[k].per_repetition),
                         word = static_cast<std::uint32_t>(t[k].kind) << 28 |
                                static_cast<std::uint32_t>(t[k].stage) << 16 |
                                static_cast<std::uint32_t>(t[k].microbatch + t[k].per_m * m + t[k].per_step * n);
           i < times; ++i, j += seg.count, word += step)
        out[j].bits = word;
    }
    out += static_cast<std::size_t>(times) * seg.count;
  }
  return out;
}
}  // namespace detail

/// The ops of `p` under `m` micro-batches, as generate() stores a schedule (CSR by rank).
/// Raises `ctpipe: a periodic program holds for m >= its m_min` below it and `ctpipe:
/// this periodic program holds for m = m_residue (mod m_step) only (...)` outside its
/// class. Linear in the ops written.
constexpr schedule expand(const periodic_program& p, int m) {
  detail::require_holds(p.m_min, p.m_step, p.m_residue, m);
  schedule out{{p.shape.P, m, p.shape.V, p.shape.layout}, p.total_ops(m)};
  op *const ops = out.ops().data(), *at = ops;
  for (int r = 0; r < p.shape.P; ++r) {
    at = detail::write_rank(p, r, m, at);
    out.offsets()[static_cast<std::size_t>(r) + 1] = static_cast<std::uint32_t>(at - ops);
  }
  return out;
}

/// Whether `s`'s family has a periodic program for the class of `s`'s m (program_of()
/// gives it without raising for a valid `s`): a family with one (has_program()), and for
/// PyTorch's interleaved 1F1B and interleaved ZB m a multiple of P. generate() expands it
/// where m >= its m_min.
constexpr bool program_exists(const schedule_spec& s) {
  if (!has_program(s.family)) return false;
  const bool torch_interleaved =
      s.family == schedule_family::interleaved_1f1b && s.variant == interleaved_variant::torch;
  return !((torch_interleaved || s.family == schedule_family::interleaved_zb) && s.shape.m % s.shape.P != 0);
}

/// One op of a periodic schedule at any m: its kind, stage and micro-batch, the last an
/// int (m up to 2^31 - 1, beyond the 2^16 micro-batches an `op` word encodes).
struct program_op {
  op_kind kind = op_kind::F;
  int stage = 0;
  int microbatch = 0;
};

/// A periodic program frozen in static storage (periodic_schedule_v): `NT` templates,
/// `NS` segments, `P` ranks, its size independent of m. for_each_op() runs a rank's ops
/// for any m >= m_min without an array of them.
template <std::size_t NT, std::size_t NS, std::size_t P>
struct frozen_program {
  pipeline_shape shape{};
  int m_min = 1;
  int m_step = 1;                           ///< as periodic_program's
  int m_residue = 0;                        ///< as periodic_program's
  std::array<op_template, NT> templates{};  ///< program_of()'s, per_m folded (freeze_program())
  std::array<program_segment, NS> segments{};
  std::array<std::uint32_t, P + 1> rank_segments{};

  /// Calls `f(program_op)` for each op of rank `r` under `m` micro-batches, in order: the
  /// ops expand() writes, for any m of its class in [m_min, 2^31 - 1]. Raises expand()'s
  /// messages elsewhere.
  template <class F>
  constexpr void for_each_op(int r, int m, F&& f) const {
    detail::require_holds(m_min, m_step, m_residue, m);
    for (std::uint32_t g = rank_segments[static_cast<std::size_t>(r)];
         g < rank_segments[static_cast<std::size_t>(r) + 1]; ++g) {
      const program_segment& seg = segments[g];
      const int n = (m - m_residue) / m_step, times = seg.times(n);
      for (int i = 0; i < times; ++i) {
        for (std::uint32_t t = seg.first; t < seg.first + seg.count; ++t) {
          const op_template& o = templates[t];
          // 64-bit: m and the offsets may pass 2^31 before they cancel. per_m is 0 here:
          // freeze_program() folds it into microbatch and per_step (m = m_residue + m_step n).
          const std::int64_t mb = o.microbatch + std::int64_t{o.per_repetition} * i + std::int64_t{o.per_step} * n;
          f(program_op{o.kind, o.stage, static_cast<int>(mb)});
        }
      }
    }
  }
};

namespace detail {

/// The program of S frozen: its sizes from one evaluation of program_of(), its contents
/// copied from another, each template's per_m folded into its microbatch and per_step
/// (one multiplication less per op in for_each_op()).
template <schedule_spec S>
constexpr auto freeze_program() {
  constexpr std::size_t NT = program_of(S).templates.size();
  constexpr std::size_t NS = program_of(S).segments.size();
  constexpr auto P = static_cast<std::size_t>(S.shape.P);
  const periodic_program p = program_of(S);
  frozen_program<NT, NS, P> out;
  out.shape = p.shape;
  out.m_min = p.m_min;
  out.m_step = p.m_step;
  out.m_residue = p.m_residue;
  for (std::size_t k = 0; k < NT; ++k) {
    op_template t = p.templates[k];  // per_m folded: per_m m = per_m m_residue + per_m m_step steps(m)
    t.microbatch += t.per_m * p.m_residue;
    t.per_step += t.per_m * p.m_step;
    t.per_m = 0;
    out.templates[k] = t;
  }
  for (std::size_t k = 0; k < NS; ++k) out.segments[k] = p.segments[k];
  for (std::size_t k = 0; k <= P; ++k) out.rank_segments[k] = p.rank_segments[k];
  return out;
}

}  // namespace detail

/// The periodic program of S's family at its P (S's m is read by interleaved 1F1B only,
/// for its class of m: program_of()) in static storage, for a runtime that takes any m
/// at a cost and a size independent of m:
/// `periodic_schedule_v<S>.for_each_op(r, m, f)` runs rank r's ops under m micro-batches
/// (docs/api.md; bench/dispatch_bench.cpp counts its instructions against the flat
/// list's). A family without a program is a compile error with program_of()'s message.
template <schedule_spec S>
inline constexpr auto periodic_schedule_v = detail::freeze_program<S>();

}  // namespace ctpipe
