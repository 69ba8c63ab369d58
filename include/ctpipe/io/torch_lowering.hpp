// ctpipe/io/torch_lowering.hpp (run time, opt-in): a compute-only schedule lowered as
// PyTorch's `_PipelineScheduleRuntime` lowers it, and as three proposed changes would.
//
// PyTorch's compute-only route (`_prepare_schedule_with_comms`, torch/distributed/
// pipelining/schedules.py, torch 2.13.0) runs, per rank, `_add_unshard_reshard` and
// `_add_reduce_grad` (io/torch_passes.hpp reproduces both), then `_add_send_recv` over all
// ranks, and with `defer_pp_recv=True` `_defer_recv_ops`. Four orders, named as the tool
// names them:
//
// - `torch-asap`, `_add_send_recv`: rounds over the ranks in increasing order, each rank
//   looking at the head of its list once per round. A head that is ready goes out: the
//   action itself, then for each of its sub-actions (an OVERLAP_F_B pair's F, then its B)
//   whose output crosses to another rank, its SEND on this rank and the matching RECV
//   appended to the receiver's list as it is at that moment. F of stage s > 0 is ready
//   once F of stage s-1 (same micro-batch) went out, on any rank; B or I of stage s below
//   the last once B or I of stage s+1 went out; everything else (F of stage 0, B or I of
//   the last stage, W, UNSHARD, RESHARD, REDUCE_GRAD) at once; a pair when both its
//   sub-actions are. UNSHARD, RESHARD and REDUCE_GRAD are in the lists while this runs and
//   each takes a round, so which passes ran changes the order. A ready rank goes on next
//   round; a rank that is not waits for the op it needs and tries again in the first
//   round after it went out (its own round when it went out on a lower rank, else the
//   next): the same order as trying every rank every round.
// - `torch-parity`, `_defer_recv_ops` on torch-asap's lists (pytorch/pytorch PR #178815,
//   in torch 2.13.0 as `defer_pp_recv=True`): each rank's RECVs are held back; a SEND to
//   a higher rank first releases, in the order they were held, every held RECV from that
//   rank (the lower rank of a pair receives first); a compute action releases the RECVs
//   it consumes (a pair: its F's, then its B's) before it. A second RECV of one key is
//   dropped, as PyTorch's dict keeps one.
// - `torch-consumer`, PR #172833 ("move RECV right before F/B"; not in torch 2.13.0):
//   the same without the SEND rule, each RECV right before its consumer. The PR's diff
//   was not retrievable; this rule reproduces the lists its description prints, token
//   for token (Interleaved1F1B, P = 2, m = 4).
// - `torch-warmup`, PR #165664 ("during the warmup phase, recv is set after the
//   forwards"; not in torch 2.13.0). Its diff was not retrievable either, and the one
//   list it prints (rank 0's first actions) fits several rules. ctpipe's decision: on
//   each rank the warm-up is torch-asap's list before the rank's first backward (the
//   first action holding a B or an I); every RECV in it is held back and goes right
//   before its consumer when that consumer is in the warm-up, else, with the others
//   still held, in their order, right before that first backward. After the warm-up the
//   list is torch-asap's. It reproduces the printed prefix.
//
// Every non-RECV action keeps torch-asap's relative order in the three later orders, and
// the UNSHARD, RESHARD and REDUCE_GRAD actions come back as io::csv_annotation values
// beside the ops (csv_schedule), so to_csv() writes PyTorch's list token for token.
#pragma once

#include <fmt/format.h>

#include <algorithm>    // std::stable_sort
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int32_t, std::uint8_t
#include <functional>   // std::greater
#include <memory>       // std::shared_ptr: torch_lowering_error's text
#include <queue>        // the rounds' events
#include <span>         // a rank's ops
#include <string>       // annotation texts, messages
#include <string_view>  // names
#include <utility>      // std::pair, std::move
#include <vector>       // lists

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/io/torch_passes.hpp"
#include "ctpipe/lower/execute.hpp"
#include "ctpipe/lower/lower.hpp"
#include "ctpipe/lower/runtime.hpp"
#include "ctpipe/lower/streams.hpp"
#include "ctpipe/lower/transfer.hpp"

namespace ctpipe::io {

/// The four orders of PyTorch's lowering (file comment): `asap` (`_add_send_recv`, torch
/// 2.13.0's default), `parity` (`_defer_recv_ops`, `defer_pp_recv=True`, PR #178815),
/// `warmup` (PR #165664's rule as ctpipe decided it), `consumer` (PR #172833's rule).
enum class torch_lowering : std::uint8_t { asap, parity, warmup, consumer };

/// Number of torch lowerings.
inline constexpr int torch_lowering_count = 4;

/// Every torch lowering, in the order the tool lists them.
inline constexpr torch_lowering all_torch_lowerings[] = {torch_lowering::asap, torch_lowering::warmup,
                                                         torch_lowering::consumer, torch_lowering::parity};

/// `torch-asap`, `torch-parity`, `torch-warmup` or `torch-consumer`, as the tool, the JSON
/// and the Python package spell it; `?` for a value cast from another number.
constexpr const char* torch_lowering_name(torch_lowering l) {
  constexpr const char* names[] = {"torch-asap", "torch-parity", "torch-warmup", "torch-consumer"};
  return static_cast<int>(l) < torch_lowering_count ? names[static_cast<int>(l)] : "?";
}

/// The lowering called `name`, or false when there is none (then `out` is unchanged).
constexpr bool torch_lowering_from_name(std::string_view name, torch_lowering& out) {
  for (const torch_lowering l : all_torch_lowerings) {
    if (name == torch_lowering_name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

/// The error defer_recv_ops() raises for a RECV that nothing consumes: a ctpipe::error
/// (catch it as one) whose what() is a line built at run time, naming the rank and the
/// RECV. Copies share the text.
class torch_lowering_error : public error {
 public:
  explicit torch_lowering_error(const std::string& message)
      : error("ctpipe: a RECV has no consumer"), message_(std::make_shared<const std::string>(message)) {}
  const char* what() const noexcept override { return message_->c_str(); }

 private:
  std::shared_ptr<const std::string> message_;
};

namespace detail {

/// One entry of a rank's list while the passes run: an op (an overlapped pair: its word
/// in `action`, its B word in `pair_b`), or an annotation (`note` >= 0, its text's index).
struct torch_entry {
  op action{};
  op pair_b{};
  std::int32_t note = -1;

  constexpr bool is_pair() const { return note < 0 && action.kind() == op_kind::overlap_f_b; }
  constexpr bool is_compute() const { return note < 0 && ctpipe::is_compute(action.kind()); }
  constexpr bool is_recv() const {
    return note < 0 && (action.kind() == op_kind::recv_f || action.kind() == op_kind::recv_b);
  }
  constexpr bool is_send() const { return note < 0 && ctpipe::is_send(action.kind()); }
  /// Holds a backward that sends a gradient or ends the warm-up: B, I, or a pair.
  constexpr bool holds_backward() const {
    return note < 0 && (action.kind() == op_kind::B || action.kind() == op_kind::I || is_pair());
  }
};

/// Per rank, the entries in order; the annotations' texts.
struct torch_lists {
  std::vector<std::vector<torch_entry>> rows;
  std::vector<std::string> notes;
};

/// The compute-only lists of `v` with the annotations of `passes` in place, one entry per
/// action (torch_annotations()' positions count ops, so a pair's position is its word's).
inline torch_lists compute_entries(schedule_view v, const torch_passes& passes) {
  const std::vector<csv_annotation> annotations = torch_annotations(v, passes);
  torch_lists out;
  out.rows.resize(static_cast<std::size_t>(v.shape.P));
  std::size_t next = 0;  // by rank, then position (torch_annotations()' order)
  for (int r = 0; r < v.shape.P; ++r) {
    const std::span<const op> ops = v.rank(r);
    std::vector<torch_entry>& row = out.rows[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i <= ops.size(); ++i) {
      for (; next < annotations.size() && annotations[next].rank == r && annotations[next].position == i; ++next) {
        row.push_back({op{}, op{}, static_cast<std::int32_t>(out.notes.size())});
        out.notes.push_back(annotations[next].text);
      }
      if (i == ops.size()) break;
      torch_entry e{ops[i], op{}, -1};
      if (ops[i].kind() == op_kind::overlap_f_b) e.pair_b = ops[++i];  // a valid view: its B word follows
      row.push_back(e);
    }
  }
  return out;
}

/// The messages a compute entry sends, as (SEND, RECV) pairs, in sub-action order
/// (`_has_comms`: none to a stage on the same rank, none from the ends of the pipeline).
inline int entry_messages(const pipeline_shape& shape, const torch_entry& e, op (&out)[2][2]) {
  int n = 0;
  const op subs[2] = {e.is_pair() ? op{op_kind::F, e.action.stage(), e.action.microbatch()} : e.action, e.pair_b};
  for (int h = 0; h < (e.is_pair() ? 2 : 1); ++h) {
    const op o = subs[h];
    const bool forward = o.kind() == op_kind::F;
    if (!forward && o.kind() != op_kind::B && o.kind() != op_kind::I) continue;
    const int to = forward ? o.stage() + 1 : o.stage() - 1;
    if (to < 0 || to >= shape.stages() || shape.rank_of(to) == shape.rank_of(o.stage())) continue;
    out[n][0] = op{forward ? op_kind::send_f : op_kind::send_b, o.stage(), o.microbatch()};
    out[n][1] = op{forward ? op_kind::recv_f : op_kind::recv_b, to, o.microbatch()};
    ++n;
  }
  return n;
}

/// torch-asap's state: which forwards and backwards (B or I) went out, per stage * m +
/// micro-batch; the rank waiting for each (-1: none); the output rows; the round queue.
struct asap_rounds {
  const pipeline_shape& shape;
  const torch_lists& in;
  torch_lists out;
  std::vector<std::uint8_t> forward_out, backward_out;
  std::vector<int> waits_forward, waits_backward;
  std::vector<std::size_t> cursor;
  using event = std::pair<long long, int>;  // (round, rank)
  std::priority_queue<event, std::vector<event>, std::greater<event>> queue;

  asap_rounds(const pipeline_shape& s, const torch_lists& lists)
      : shape(s),
        in(lists),
        out{std::vector<std::vector<torch_entry>>(lists.rows.size()), lists.notes},
        forward_out(static_cast<std::size_t>(s.stages()) * static_cast<std::size_t>(s.m), 0),
        backward_out(forward_out.size(), 0),
        waits_forward(forward_out.size(), -1),
        waits_backward(forward_out.size(), -1),
        cursor(lists.rows.size(), 0) {}

  std::size_t key(int stage, int microbatch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(shape.m) + static_cast<std::size_t>(microbatch);
  }

  /// Registers `rank` as waiting for what sub-action `o` needs and returns false when
  /// that has not gone out (`_ready_to_schedule`), else true.
  bool ready(op o, int rank) {
    if (o.kind() == op_kind::F && o.stage() > 0 && forward_out[key(o.stage() - 1, o.microbatch())] == 0) {
      waits_forward[key(o.stage() - 1, o.microbatch())] = rank;
      return false;
    }
    const bool backward = o.kind() == op_kind::B || o.kind() == op_kind::I;
    if (backward && o.stage() + 1 < shape.stages() && backward_out[key(o.stage() + 1, o.microbatch())] == 0) {
      waits_backward[key(o.stage() + 1, o.microbatch())] = rank;
      return false;
    }
    return true;
  }

  /// Marks sub-action `o` of rank `rank` out in round `round`, waking the rank that waits
  /// for it: in this round when that rank comes later in it, else in the next.
  void went_out(op o, long long round, int rank) {
    const bool forward = o.kind() == op_kind::F;
    if (!forward && o.kind() != op_kind::B && o.kind() != op_kind::I) return;
    const std::size_t k = key(o.stage(), o.microbatch());
    (forward ? forward_out : backward_out)[k] = 1;
    int& waiter = (forward ? waits_forward : waits_backward)[k];
    if (waiter >= 0) queue.push({waiter > rank ? round : round + 1, waiter});
    waiter = -1;
  }

  /// Rank `rank`'s turn in round `round` (file comment).
  void turn(long long round, int rank) {
    const auto r = static_cast<std::size_t>(rank);
    const torch_entry& e = in.rows[r][cursor[r]];
    const op first = e.is_pair() ? op{op_kind::F, e.action.stage(), e.action.microbatch()} : e.action;
    if (e.note < 0 && (!ready(first, rank) || (e.is_pair() && !ready(e.pair_b, rank)))) return;
    out.rows[r].push_back(e);
    if (e.note < 0) {
      op messages[2][2];
      const int n = entry_messages(shape, e, messages);
      went_out(first, round, rank);
      if (e.is_pair()) went_out(e.pair_b, round, rank);
      for (int h = 0; h < n; ++h) {
        out.rows[r].push_back({messages[h][0], op{}, -1});
        out.rows[static_cast<std::size_t>(shape.rank_of(messages[h][1].stage()))].push_back({messages[h][1], op{}, -1});
      }
    }
    if (++cursor[r] < in.rows[r].size()) queue.push({round + 1, rank});
  }
};

/// torch-asap (`_add_send_recv`) of compute lists `in`.
inline torch_lists add_send_recv(const pipeline_shape& shape, const torch_lists& in) {
  asap_rounds rounds(shape, in);
  for (int r = 0; r < shape.P; ++r) {
    if (!in.rows[static_cast<std::size_t>(r)].empty()) rounds.queue.push({0, r});
  }
  while (!rounds.queue.empty()) {
    const auto [round, rank] = rounds.queue.top();
    rounds.queue.pop();
    rounds.turn(round, rank);
  }
  for (std::size_t r = 0; r < in.rows.size(); ++r) {
    ctpipe::detail::require(rounds.cursor[r] == in.rows[r].size(),
                            "ctpipe: lower_torch(): PyTorch's _add_send_recv makes no progress on this schedule "
                            "(\"Malformed compute schedule, can't schedule sends/recvs\")");
  }
  return std::move(rounds.out);
}

/// The rank a RECV receives from, or a SEND sends to.
inline int transfer_peer(const pipeline_shape& shape, op o) {
  const bool up = o.kind() == op_kind::send_f || o.kind() == op_kind::recv_b;
  return shape.rank_of(up ? o.stage() + 1 : o.stage() - 1);
}

/// The RECVs held back on one rank, in the order they were held.
struct held_recvs {
  std::vector<torch_entry> held;

  /// Holds `e`, unless a RECV of its key is held already (PyTorch's dict keeps one).
  void hold(const torch_entry& e) {
    for (const torch_entry& h : held) {
      if (h.action == e.action) return;
    }
    held.push_back(e);
  }
  /// Moves every held RECV for which `take(op)` holds to `out`, in held order.
  template <class Take>
  void release(std::vector<torch_entry>& out, Take&& take) {
    std::size_t w = 0;
    for (const torch_entry& h : held) {
      if (take(h.action)) {
        out.push_back(h);
      } else {
        held[w++] = h;
      }
    }
    held.resize(w);
  }
  /// Moves the RECV that compute entry `e` consumes (a pair: its F's, then its B's).
  void release_consumed(std::vector<torch_entry>& out, const torch_entry& e) {
    const op subs[2] = {e.is_pair() ? op{op_kind::F, e.action.stage(), e.action.microbatch()} : e.action, e.pair_b};
    for (int h = 0; h < (e.is_pair() ? 2 : 1); ++h) {
      const op o = subs[h];
      if (o.kind() == op_kind::W) continue;
      const op recv{o.kind() == op_kind::F ? op_kind::recv_f : op_kind::recv_b, o.stage(), o.microbatch()};
      release(out, [recv](op x) { return x == recv; });
    }
  }
};

/// Rank `rank`'s list `row` with its RECVs deferred by rule `rule` (parity, warmup or
/// consumer; file comment). Raises `ctpipe: defer_recv_ops(): rank R: RECV X has no
/// consumer after it ...` when a held RECV is never released.
inline std::vector<torch_entry> defer_row(const pipeline_shape& shape, int rank, const std::vector<torch_entry>& row,
                                          torch_lowering rule) {
  std::vector<torch_entry> out;
  out.reserve(row.size());
  held_recvs held;
  bool warmup = rule == torch_lowering::warmup;
  for (const torch_entry& e : row) {
    if (rule == torch_lowering::warmup && !warmup) {
      out.push_back(e);
      continue;
    }
    if (e.is_recv()) {
      held.hold(e);
      continue;
    }
    const int peer = e.is_send() ? transfer_peer(shape, e.action) : -1;
    if (rule == torch_lowering::parity && rank < peer) {
      held.release(out, [&](op x) { return transfer_peer(shape, x) == peer; });
    }
    if (warmup && e.holds_backward()) {
      held.release(out, [](op) { return true; });
      warmup = false;
    }
    if (e.is_compute()) held.release_consumed(out, e);
    out.push_back(e);
  }
  if (!held.held.empty()) {
    throw torch_lowering_error(fmt::format(
        "ctpipe: defer_recv_ops(): rank {}: RECV {} has no consumer after it (PyTorch raises \"leftover RECV ops "
        "with no consumer found\")",
        rank, action(held.held.front().action)));
  }
  return out;
}

/// `lists` as a csv_schedule of shape `shape`: the ops, and the annotations where they
/// stand.
inline csv_schedule to_csv_schedule(const pipeline_shape& shape, const torch_lists& lists) {
  std::size_t total = 0;
  for (const auto& row : lists.rows) {
    for (const torch_entry& e : row) total += e.note >= 0 ? 0 : e.is_pair() ? 2 : 1;
  }
  csv_schedule out{schedule{shape, total}, {}};
  const std::span<op> ops = out.ops();
  const std::span<std::uint32_t> offsets = out.offsets();
  std::size_t w = 0;
  for (std::size_t r = 0; r < lists.rows.size(); ++r) {
    for (const torch_entry& e : lists.rows[r]) {
      if (e.note >= 0) {
        out.annotations.push_back({static_cast<int>(r), w - offsets[r], lists.notes[static_cast<std::size_t>(e.note)]});
        continue;
      }
      ops[w++] = e.action;
      if (e.is_pair()) ops[w++] = e.pair_b;
    }
    offsets[r + 1] = static_cast<std::uint32_t>(w);
  }
  return out;
}

/// The entries of a lowered schedule `s` with its annotations in place (an overlapped
/// pair's word and its B one entry; a pair word without its B is left to to_csv()'s
/// message).
inline torch_lists lowered_entries(const csv_schedule& s) {
  const schedule_view v = s.view();
  torch_lists out;
  out.rows.resize(static_cast<std::size_t>(v.shape.P));
  std::vector<const csv_annotation*> notes;
  for (const csv_annotation& a : s.annotations) notes.push_back(&a);
  std::stable_sort(notes.begin(), notes.end(), [](const csv_annotation* a, const csv_annotation* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->position < b->position;
  });
  std::size_t next = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    const std::span<const op> ops = v.rank(r);
    std::vector<torch_entry>& row = out.rows[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i <= ops.size(); ++i) {
      for (; next < notes.size() && notes[next]->rank == r && notes[next]->position == i; ++next) {
        row.push_back({op{}, op{}, static_cast<std::int32_t>(out.notes.size())});
        out.notes.push_back(notes[next]->text);
      }
      if (i == ops.size()) break;
      torch_entry e{ops[i], op{}, -1};
      if (ops[i].kind() == op_kind::overlap_f_b && i + 1 < ops.size()) e.pair_b = ops[++i];
      row.push_back(e);
    }
  }
  return out;
}

/// lower_torch()'s gate: a valid compute-only schedule PyTorch's format holds.
inline void check_torch_lowerable(schedule_view v, torch_lowering which) {
  check_view(v);
  ctpipe::detail::require(static_cast<int>(which) < torch_lowering_count, "ctpipe: unknown torch lowering");
  for (const op o : v.ops) {
    ctpipe::detail::require(
        is_compute(o.kind()),
        "ctpipe: lower_torch() takes a compute-only schedule; this one has SEND, RECV or copy ops (it is lowered "
        "already)");
  }
  ctpipe::detail::require(v.shape.layout != placement::bidirectional,
                          "ctpipe: lower_torch(): dualpipe's two model copies (the bidirectional placement) do not "
                          "run in PyTorch's one-copy runtime (docs/pytorch.md)");
  ctpipe::detail::require(validate(v).ok(),
                          "ctpipe: lower_torch() takes a valid compute schedule (validate() names the problems)");
}

}  // namespace detail

/// PyTorch's `_defer_recv_ops` (torch 2.13.0, `defer_pp_recv=True`, PR #178815) applied
/// to lowered lists `lowered` (ops with SEND/RECV, annotations beside them): per rank,
/// each RECV held back until a SEND to a higher rank releases the RECVs from that rank or
/// a compute action consumes it (file comment, `torch-parity`); every other action keeps
/// its place in order. Same shape. Raises check_view()'s messages and `ctpipe:
/// defer_recv_ops(): rank R: RECV X has no consumer after it (...)` (PyTorch's
/// AssertionError). Linear in the ops times the RECVs held at once.
inline csv_schedule defer_recv_ops(const csv_schedule& lowered) {
  check_view(lowered.view());
  detail::torch_lists lists = detail::lowered_entries(lowered);
  const pipeline_shape& shape = lowered.view().shape;
  for (int r = 0; r < shape.P; ++r) {
    auto& row = lists.rows[static_cast<std::size_t>(r)];
    row = detail::defer_row(shape, r, row, torch_lowering::parity);
  }
  return detail::to_csv_schedule(shape, lists);
}

/// Compute-only schedule `v` lowered by `which` (file comment) after PyTorch's passes
/// `passes` (io::torch_passes: UNSHARD/RESHARD and REDUCE_GRAD, which take rounds in
/// torch-asap): the ops (compute, SEND_F/RECV_F/SEND_B/RECV_B with PyTorch's names and
/// stage convention, docs/spec.md §6; an overlapped pair's two words adjacent) and the
/// passes' actions as annotations at their positions, so that to_csv() of the result is
/// the list PyTorch's `_prepare_schedule_with_comms` makes for `v` (torch-asap;
/// torch-parity with `defer_pp_recv=True`), token for token (PyTorch reshards several
/// stages in its set's order, increasing below stage 8; io/torch_passes.hpp). Neighbouring
/// stages on one rank (the V-shape's turn, P = 1) get no message, as `_has_comms` says.
/// Same shape as `v`, `v.size() + 2 * messages(v)` ops, CSR.
///
/// Errors: check_view()'s messages; `ctpipe: unknown torch lowering`; `ctpipe:
/// lower_torch() takes a compute-only schedule; this one has SEND, RECV or copy ops (it is
/// lowered already)`; `ctpipe: lower_torch(): dualpipe's two model copies ...`; `ctpipe:
/// lower_torch() takes a valid compute schedule (validate() names the problems)`;
/// torch_annotations()' messages. Time O(n log P) for torch-asap (n ops and annotations),
/// plus O(n h) for the deferrals (h RECVs held at once).
inline csv_schedule lower_torch(schedule_view v, torch_lowering which, const torch_passes& passes = {}) {
  detail::check_torch_lowerable(v, which);
  detail::torch_lists lists = detail::add_send_recv(v.shape, detail::compute_entries(v, passes));
  if (which != torch_lowering::asap) {
    for (int r = 0; r < v.shape.P; ++r) {
      auto& row = lists.rows[static_cast<std::size_t>(r)];
      row = detail::defer_row(v.shape, r, row, which);
    }
  }
  return detail::to_csv_schedule(v.shape, lists);
}

/// What lower_least_loss() found: the lists it keeps, which order they are, their loss
/// under the model (execute()'s makespan minus simulate()'s) and stream_loss_bound().
struct least_loss_lowering {
  schedule lists;          ///< lowered ops (compute and SEND/RECV), same shape as the input
  const char* order = "";  ///< "stream" (lower()'s), "deadline" (lower_by_deadline()) or "torch-asap+stream-turn"
  rational loss;           ///< exact, time units, >= bound
  rational bound;          ///< no order of the transfers loses less (stream_loss_bound())
};

/// The fastest of three orders for stream model `model` (is_stream_model()) under costs
/// `c`: lower(v, c, model)'s stream order (proved: never deadlocks, no loss where
/// stream_spacing() holds); lower_by_deadline()'s; and torch-asap's lists (PyTorch's
/// `_add_send_recv`, default passes) with each RECV moved up to just after the previous
/// transfer of its own stream, the stream order's last step (never slower than
/// torch-asap). A candidate that is empty or does not complete is skipped; ties keep the
/// earlier one. A search of three at run time: where the loss equals `bound` no order does
/// better; elsewhere it is the least ctpipe found (docs/runtimes.md). The two-copy
/// schedules (DualPipe), which PyTorch's format does not hold, skip torch-asap. Errors:
/// lower()'s, lower_torch()'s, `ctpipe: lower_least_loss() takes a stream model`.
inline least_loss_lowering lower_least_loss(schedule_view v, const costs& c, runtime_model model) {
  ctpipe::detail::require(is_stream_model(model), "ctpipe: lower_least_loss() takes a stream model");
  const rational simulated = simulate(v, c).makespan();
  least_loss_lowering out{lower(v, c, model), "stream", rational{0}, stream_loss_bound(v, c, model)};
  out.loss = execute(out.lists.view(), c, model).makespan() - simulated;
  const auto consider = [&](schedule lists, const char* order) {
    if (out.loss == out.bound || lists.view().size() == 0) return;
    const execution run = execute(lists.view(), c, model);
    if (run.completed() && run.makespan() - simulated < out.loss)
      out.lists = std::move(lists), out.order = order, out.loss = run.makespan() - simulated;
  };
  if (out.loss == out.bound) return out;
  consider(lower_by_deadline(v, c, model), "deadline");
  if (v.shape.layout != placement::bidirectional && out.loss != out.bound) {
    schedule asap = lower_torch(v, torch_lowering::asap);
    ctpipe::detail::receive_at_stream_turn(asap, model);
    consider(std::move(asap), "torch-asap+stream-turn");
  }
  return out;
}

}  // namespace ctpipe::io
