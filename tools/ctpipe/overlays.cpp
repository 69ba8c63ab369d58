// The `ctpipe` tool's bubble fills and rebalancings (see overlays.hpp).
#include "overlays.hpp"

#include <fmt/format.h>

#include <string_view>

#include "ctpipe/plan/fill_optimal.hpp"
#include "ctpipe/plan/fill_stretch.hpp"
#include "ctpipe/analysis/graph.hpp"  // detail::op_index
#include "ctpipe/io/format.hpp"
#include "options.hpp"

namespace ctpipe::tool {
namespace {

/// `key=value` pairs of one request after its `name:`; raises usage_error(`bad`) on a
/// pair without '=' or an empty value, or a repeated key.
std::vector<std::pair<std::string, std::string>> pairs_of(std::string_view text, const std::string& bad) {
  std::vector<std::pair<std::string, std::string>> out;
  for (bool more = !text.empty(); more;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    more = comma != std::string_view::npos;
    text = more ? text.substr(comma + 1) : std::string_view{};
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      throw usage_error(fmt::format("{}: '{}' is no key=value", bad, item));
    }
    for (const auto& [k, v] : out) {
      if (k == item.substr(0, eq)) throw usage_error(fmt::format("{}: key '{}' given twice", bad, k));
    }
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

/// usage_error for key `key` that request kind `help` does not take.
[[noreturn]] void unknown_key(const char* help, const std::string& key) {
  throw usage_error(fmt::format("{}: unknown key '{}'", help, key));
}

/// A compute op of `v` named by its action string (`0B3`): raises usage_error unless it
/// is one of the schedule's ops.
op op_of(const std::string& text, schedule_view v, const char* key) {
  const op o = io::parse_action(text);
  const detail::op_index index(v);
  if (index.find(o) == 0)
    throw usage_error(fmt::format("ctpipe: --fill {}={} is not an op of this schedule", key, text));
  return o;
}

/// `rank=R`: a pipeline rank in [0, P); raises usage_error naming the value and P.
int rank_of(const std::string& text, int P) {
  const int r = parse_whole(text, "--fill job rank");
  if (r < 0 || r >= P)
    throw usage_error(fmt::format("ctpipe: --fill job rank={} is not a pipeline rank: any, or 0 to {}", text, P - 1));
  return r;
}

constexpr const char* encoder_help = "ctpipe: --fill encoder takes f=T,b=T[,piece=T] (e.g. encoder:f=1/4,b=1/2)";
constexpr const char* job_help =
    "ctpipe: --fill job takes t=T[,name=N][,rank=R][,after=ACTION][,before=ACTION][,piece=T][,count=N] (e.g. "
    "job:t=1/2,after=0B3)";

void parse_encoder(std::string_view text, schedule_view v, io::fill_overlay& out) {
  std::optional<rational> f, b, piece;
  for (const auto& [key, value] : pairs_of(text, encoder_help)) {
    if (key == "f")
      f = parse_rational(value);
    else if (key == "b")
      b = parse_rational(value);
    else if (key == "piece")
      piece = parse_rational(value);
    else
      unknown_key(encoder_help, key);
  }
  if (!f || !b) throw usage_error(encoder_help);
  detail::require(*f > rational{0} && *b > rational{0}, "ctpipe: a fill job needs a duration > 0");
  const detail::buffer<fill_job> jobs = encoder_jobs(v, *f, *b, piece);
  for (const fill_job& job : jobs.span()) out.jobs.push_back(job);
}

void parse_job(std::string_view text, schedule_view v, io::fill_overlay& out) {
  fill_job job;
  std::string name = "job";
  int count = 1;
  bool has_t = false;
  for (const auto& [key, value] : pairs_of(text, job_help)) {
    if (key == "t")
      job.duration = parse_rational(value), has_t = true;
    else if (key == "name")
      name = value;
    else if (key == "rank")
      job.rank = value == "any" ? any_rank : rank_of(value, v.shape.P);
    else if (key == "after")
      job.after = op_of(value, v, "after");
    else if (key == "before")
      job.before = op_of(value, v, "before");
    else if (key == "piece")
      job.divisible = true, job.min_piece = parse_rational(value);
    else if (key == "count")
      count = parse_whole(value, "--fill job count");
    else
      unknown_key(job_help, key);
  }
  if (!has_t) throw usage_error(job_help);
  if (count < 1 || count > 65536) throw usage_error("ctpipe: --fill job count must lie in [1, 65536]");
  out.names.push_back(name);
  job.name = out.names.back();
  for (int k = 0; k < count; ++k) {
    job.microbatch = count > 1 ? k : -1;
    out.jobs.push_back(job);
  }
}

}  // namespace

void parse_fill(const std::vector<std::string>& requests, schedule_view v, io::fill_overlay& out) {
  for (const std::string& request : requests) {
    const std::size_t colon = request.find(':');
    const std::string kind = request.substr(0, colon);
    const std::string_view rest =
        colon == std::string::npos ? std::string_view{} : std::string_view(request).substr(colon + 1);
    if (kind == "encoder")
      parse_encoder(rest, v, out);
    else if (kind == "job")
      parse_job(rest, v, out);
    else
      throw usage_error("ctpipe: --fill takes encoder:f=T,b=T[,piece=T] or job:t=T[,...] (see --help)");
    out.request += (out.request.empty() ? "" : "; ") + request;
  }
  if (out.jobs.empty()) throw usage_error("ctpipe: fill needs --fill (e.g. --fill encoder:f=1/4,b=1/2)");
  if (out.jobs.size() > (std::size_t{1} << 20)) throw usage_error("ctpipe: --fill asks for more than 2^20 jobs");
}

void apply_fill(io::report& rep, const std::vector<std::string>& requests, bool steady, fill_method method,
                bool stretch) {
  io::fill_overlay o;
  parse_fill(requests, rep.ops.view(), o);
  const auto run = [&](bool steady_state) {
    const fill_options options{steady_state};
    return method == fill_method::greedy ? fill_bubbles(rep.ops.view(), rep.cost, o.jobs, options, rep.scale())
                                         : fill_bubbles_optimal(rep.ops.view(), rep.cost, o.jobs, options, rep.scale());
  };
  o.result = run(false);
  if (steady) o.steady = run(true);
  if (stretch) {
    try {
      o.stretch = stretch_fill(rep.ops.view(), rep.cost, o.jobs, o.result, rep.scale());
    } catch (const stretch_limit_error& e) {  // too large: the fill stands, the views say why there is no stretch
      o.stretch_refused = io::stretch_refusal{e.remainders, e.work, e.limit};
    }
  }
  rep.fill = std::move(o);
}

void apply_rebalance(io::report& rep, const std::string& capacity, const runtime_model* runtime) {
  io::rebalance_overlay o;
  const schedule_view v = rep.ops.view();
  const cost_scale scale = rep.scale();
  o.least = least_capacity(v, rep.cost, rep.gamma, rebalance_pairing::any, scale).capacity.front();
  o.bpipe_least = least_capacity(v, rep.cost, rep.gamma, rebalance_pairing::bpipe, scale).capacity.front();
  std::vector<rational> caps;
  if (capacity.empty()) {
    caps.push_back(o.least);
    o.searched = true;
  } else {
    caps = parse_factors(capacity, "--capacity");
    if (caps.size() != 1 && caps.size() != static_cast<std::size_t>(v.shape.P)) {
      throw usage_error("ctpipe: --capacity takes one number for every rank, or one per rank (P of them)");
    }
  }
  o.plan = rebalance(v, rep.cost, caps, rep.gamma, rebalance_pairing::any, scale);
  o.bpipe = rebalance(v, rep.cost, caps, rep.gamma, rebalance_pairing::bpipe, scale);
  if (runtime != nullptr) o.executed = run_moves(v, rep.cost, o.plan, *runtime, rep.gamma, scale);
  if (!o.plan.feasible) o.delay = least_delay(v, rep.cost, caps, rep.gamma, rebalance_pairing::any, scale);
  rep.rebalance = std::move(o);
}

}  // namespace ctpipe::tool
