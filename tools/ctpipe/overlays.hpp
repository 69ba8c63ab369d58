// The `ctpipe` tool's bubble fills and rebalancings (docs/spec.md §8, docs/tool.md):
// `--fill` requests parsed into jobs, and the overlays the views draw, shared by
// `ctpipe fill`, `ctpipe rebalance` and `ctpipe compare`.
#pragma once

#include <string>
#include <vector>

#include "ctpipe/io/report.hpp"

namespace ctpipe::tool {

/// How `ctpipe fill` places the jobs: `best` (fill_bubbles_optimal(): max-flow,
/// branch-and-bound, or the greedy with the flow's bound) or `greedy` (fill_bubbles(), the
/// passes a constant expression runs).
enum class fill_method { best, greedy };

/// Parses the `--fill` requests (each `encoder:f=T,b=T[,piece=T]` or
/// `job:t=T[,name=N][,rank=R][,after=ACTION][,before=ACTION][,piece=T][,count=N]`) into
/// `out.jobs` (names stored in `out.names`) for schedule `v`, and sets `out.request`.
/// Raises usage_error naming the bad part, and the library's messages.
void parse_fill(const std::vector<std::string>& requests, schedule_view v, io::fill_overlay& out);

/// Fills `rep`'s bubbles with `requests` (parse_fill()) by `method`, one iteration and,
/// with `steady`, back-to-back iterations; with `stretch`, also stretches the pipeline to
/// take what one iteration left out (stretch_fill()), or, when that would take more work
/// than its default limit allows, records why not (rep.fill->stretch_refused) and keeps
/// the fill; sets rep.fill. Raises the library's other messages.
void apply_fill(io::report& rep, const std::vector<std::string>& requests, bool steady, fill_method method,
                bool stretch = false);

/// Rebalances `rep`'s activations under `rep.cost` (t_move = its `move`) for rep.gamma:
/// at `capacity` (one number for every rank, or P comma-separated; empty: the least
/// uniform capacity the planner reaches), with BPipe's pairing beside it; sets
/// rep.rebalance. With `runtime`, the plan is also written into that model's lowered lists
/// as activation copies and run (run_moves(): rep.rebalance->executed). Raises usage_error
/// for a bad capacity list, and the library's messages.
void apply_rebalance(io::report& rep, const std::string& capacity, const runtime_model* runtime = nullptr);

}  // namespace ctpipe::tool
