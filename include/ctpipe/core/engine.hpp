// ctpipe/core/engine.hpp: the per-op engine that every pass over per-rank op lists is
// built on (simulate, validate, lower, validate_lowered, execute, messages): the kind
// codes and the fields of an op word, the stage table, and the worklist of ranks.
//
// The constant-evaluation discipline, stated once (docs/compile-time.md measures each
// rule). The proofs run at the compilers' default limits: Clang 14 allows about 1M
// evaluation steps (a step per statement and per call) and keeps a map node per local
// declared in a loop body, per iteration; GCC 12 allows 33M operations and counts a read
// of a named constant (a namespace-scope constexpr variable, an enumerator, a `const`
// local array, an array through a pointer into a struct) as operations of its own.
// So the per-op loops of those passes:
// - decode the op word by hand, with literals: `bits >> 28` the kind code (kind_code's
//   values, named in a comment where not obvious), `(bits >> 16) & 0xFFF` the stage,
//   `bits & 0xFFFF` the micro-batch (op_word's fields; op::kind(), op::stage() and
//   op::microbatch() everywhere off the per-op path);
// - read per-(kind, stage) facts from a stage_table through raw pointers copied into
//   locals, never ask the shape (pipeline_shape::rank_of) per op;
// - keep their per-op values in variables declared outside the loop, assigned in one
//   comma expression; rare cases such as an overlapped pair go in a function of their
//   own, called from a branch the loop already takes for an op it cannot run (the walk's
//   pair step written inline, on a branch never taken without pairs, still cut GCC's
//   largest rendezvous lowered_v below m = 720; as a member function it costs nothing);
// - run ranks through a rank_worklist, its pop loop written around the per-op loop.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe::detail {

/// The kind code of an op word (`bits >> 28`): op_kind's values. Codes 11 to 15 are
/// unused; an op word read from raw bits may carry one (validate() names it). For tables
/// and code off the per-op path; the per-op loops write the literal (file comment).
enum kind_code : std::uint32_t {
  code_f = 0,
  code_b = 1,
  code_i = 2,
  code_w = 3,
  code_send_f = 4,
  code_recv_f = 5,
  code_send_b = 6,
  code_recv_b = 7,
  code_overlap_f_b = 8,  ///< an overlapped pair's word (its forward); its B is the next word
  code_send_act = 9,     ///< a copy of an activation out (op_kind::send_act)
  code_recv_act = 10,    ///< a copy of an activation in (op_kind::recv_act)
  code_rows = 11,        ///< the codes with rows in stage_table's `channel` and `peer`
  code_count = 16,       ///< the codes a 4-bit field can hold
};

/// The fields of an op word (core/op.hpp): kind in bits 28..31, stage in 16..27,
/// micro-batch in 0..15.
enum op_word : std::uint32_t {
  kind_shift = 28,
  stage_shift = 16,
  stage_mask = 0xFFFu,
  microbatch_mask = 0xFFFFu,
};

/// The facts of each (kind code, stage) of a shape that the per-op loops read, computed
/// once in O(P*V). `S` = P*V stages; rows are indexed `code * S + stage`.
/// Code 8 (an overlapped pair's word) has the rows of F: the word stands for the pair's
/// forward, and its B half is an ordinary B word.
/// - `owner` [S]: the rank that holds the stage.
/// - `channel` [11*S]: the message an op of that kind on that stage takes its input from
///   (F from the stage below, B/I from the stage above), sends (SEND_F, SEND_B) or
///   receives (RECV_F, RECV_B), as `2 * edge + (gradient ? 1 : 0)` (edge e joins stages
///   e and e+1); `none` (= 2*S) when the input is local, W, no partner stage, or the
///   partner lives on the same rank (the V-shape turn), and for the activation copies
///   (codes 9, 10: they use the copy channels, not messages). Message (channel, j) is
///   slot `channel * m + j`. Only codes 0 to 10 have rows: the passes read it for ops
///   that validate() accepted.
/// - `sends` [16*S]: 1 when an op of that code on that stage sends a message to another
///   rank (F up, B and I down), 0 for every other code (W, transfers, unused codes).
/// - `peer` [11*S]: for F, B, I the rank its output goes to (its own rank when it sends
///   nothing); for a transfer the rank of its partner stage (its own rank when there is
///   none); for an activation copy its own rank (its partner is in the lists).
struct stage_table {
  std::uint32_t S = 0;
  std::uint32_t none = 0;
  buffer<std::uint32_t> owner, channel, sends, peer;

  constexpr explicit stage_table(const pipeline_shape& shape)
      : S(static_cast<std::uint32_t>(shape.stages())),
        none(2 * S),
        owner(S),
        channel(code_rows * static_cast<std::size_t>(S), 2 * S),
        sends(code_count * static_cast<std::size_t>(S)),
        peer(code_rows * static_cast<std::size_t>(S)) {
    for (std::uint32_t st = 0; st < S; ++st)
      owner[st] = static_cast<std::uint32_t>(shape.rank_of(static_cast<int>(st)));
    for (std::uint32_t st = 0; st < S; ++st) {
      const bool up = st + 1 < S && owner[st + 1] != owner[st];  // the stage above is on another rank
      const bool down = st > 0 && owner[st - 1] != owner[st];    // the stage below is
      const std::uint32_t above = st + 1 < S ? owner[st + 1] : owner[st], below = st > 0 ? owner[st - 1] : owner[st];
      if (down) channel[code_f * S + st] = channel[code_recv_f * S + st] = 2 * (st - 1);
      if (down) channel[code_send_b * S + st] = 2 * (st - 1) + 1;
      if (up) channel[code_b * S + st] = channel[code_i * S + st] = channel[code_recv_b * S + st] = 2 * st + 1;
      if (up) channel[code_send_f * S + st] = 2 * st;
      sends[code_f * S + st] = up ? 1 : 0;
      sends[code_b * S + st] = sends[code_i * S + st] = down ? 1 : 0;
      peer[code_f * S + st] = peer[code_send_f * S + st] = peer[code_recv_b * S + st] = above;
      peer[code_b * S + st] = peer[code_i * S + st] = peer[code_recv_f * S + st] = peer[code_send_b * S + st] = below;
      peer[code_w * S + st] = peer[code_send_act * S + st] = peer[code_recv_act * S + st] = owner[st];
      channel[code_overlap_f_b * S + st] = channel[code_f * S + st],
                                     sends[code_overlap_f_b * S + st] = sends[code_f * S + st],
                                     peer[code_overlap_f_b * S + st] = peer[code_f * S + st];
    }
  }
};

/// The worklist of ranks that every run over per-rank lists uses (the dependency walk of
/// simulate/validate/lower, validate_lowered's run, execute): per rank the position of
/// its next op in the flat array (`pos`, P entries), and a stack of runnable ranks
/// (`stack`, room for P; `top` entries), at first every rank with rank 0 on top. A rule
/// pops a rank, runs it from `pos[r]` until it finishes or must wait for an op of
/// another rank, records where it parks (its own table: a dependency, a message, a
/// batched group) and pushes it back (`stack[top++] = r`) when that op runs. Each rank
/// is pushed once at the start and once per wake, so the work is O(P + wakes) besides
/// the rule's own.
///
/// The pop loop (`while (top > 0) { r = stack[--top]; ... }`) is written inside each
/// rule's function, around its per-op loop, not behind a call per woken rank: in a 1F1B
/// walk a rank parks about once per micro-batch and stage, and such a call cut the
/// largest 1F1B proof (bench/RESULTS.md: m = 2816 under GCC, 2432 under Clang) below
/// m = 2688 under GCC when the rule was a lambda (GCC counts each read of a captured
/// pointer), and below 2432 under Clang when it was a member function per rank (its
/// locals set up again on each wake). execute(), whose run is not a compile-time proof's
/// bottleneck, calls a member function per woken rank.
struct rank_worklist {
  buffer<std::uint32_t> pos, stack;
  std::uint32_t top = 0;

  /// Every rank at the start of its list (`offsets`: P + 1 entries) and on the stack.
  constexpr rank_worklist(std::uint32_t P, const std::uint32_t* offsets) : pos(P), stack(P), top(P) {
    for (std::uint32_t r = 0; r < P; ++r) pos[r] = offsets[r], stack[r] = P - 1 - r;
  }

  /// Whether every rank ran its whole list (`offsets` as given to the constructor).
  constexpr bool finished(const std::uint32_t* offsets) const {
    for (std::size_t r = 0; r < pos.size(); ++r) {
      if (pos[r] != offsets[r + 1]) return false;
    }
    return true;
  }
};

}  // namespace ctpipe::detail
