// ctpipe/plan/search_problem.hpp: what search() is asked and what it answers
// (docs/search.md): the problem (search_problem, and search_spec, its structural form for
// the compile-time searched_v), the options, the report and the result, and the gates
// that check a problem (check_search_problem(), detail::check_search_spec()).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint8_t
#include <vector>

#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"

namespace ctpipe {

/// What search() is asked. `shape`: P >= 1, m >= 1, and V = 1 with loop placement (stage
/// r on rank r) or V = 2 with the V-shape (rank r holds stages r and 2P-1-r; a chunk's op
/// costs t/2). `cost`: t_f, t_i, t_w, t_c in time units (t_b, t_fb and t_move unused).
/// `gamma` = M_W / M_B in [0, 1]. `memory_limit`: full activations per rank, gamma-weighted
/// (1F1B's rank 0 holds P; a chunk's activation is half of one), one entry for every rank
/// or P entries (rank 0 first); each at least 1, the least any schedule needs (loop: a
/// rank's first F; V-shape: both chunks of one micro-batch before its first I).
struct search_problem {
  pipeline_shape shape{};
  costs cost{};
  rational gamma{1};
  std::vector<rational> memory_limit = std::vector<rational>(1, rational{1});

  /// Rank r's limit.
  rational limit(int r) const { return memory_limit[memory_limit.size() == 1 ? 0 : static_cast<std::size_t>(r)]; }
};

/// How a schedule was found: search() returns the best of its greedy constructions;
/// search_exact() (ctpipe/exact/search_cbc.hpp, needs CBC) also runs the exact method.
enum class search_method : std::uint8_t {
  greedy,  ///< the best of the greedy rule sets (detail::rule_set())
  local,   ///< then local repair (adjacent swaps on a rank kept when the span drops)
  exact,   ///< then CBC on the mixed-integer program, started from the greedy's schedule
};

/// What search() reports. Times in time units of `t_f`; memory in full activations.
struct search_report {
  search_method method = search_method::greedy;
  bool optimal = false;     ///< span == lower_bound (proved optimal)
  rational span{0};         ///< largest per-rank span of the schedule
  rational lower_bound{0};  ///< no valid schedule has a smaller largest span (search_lower_bound())
  rational bubble{0};       ///< the authors' bubble rate (span - m(t_f + t_i + t_w)) / span
  rational makespan{0};     ///< end of the last op
  rational peak{0};         ///< the largest per-rank peak of in-flight activations (full ones: chunks / V)
  int rule_sets = 0;  ///< greedy constructions tried (rule sets, on the V-shape each with its rounds, and fixed orders)
  int rule_sets_fitting = 0;  ///< of them, those that stayed within the limit
  int repairs = 0;            ///< local repair: swaps kept (each lowered the span)
  double seconds = 0;         ///< wall time of the search (steady clock)
};

/// A searched schedule (CSR, as generate()'s) and its report.
struct search_result {
  schedule ops;
  search_report report;
};

/// Options of search(): `authors_only` restricts the greedy to the authors' eight rule
/// sets (their `initial_solution`: the schedule their tool ships, for comparison);
/// `repair` runs local repair after the greedy, simulating at most `repair_ops` ops in all
/// (a budget in work, not seconds, so that the result does not depend on the machine).
struct search_options {
  bool authors_only = false;
  bool repair = true;
  std::int64_t repair_ops = 1'000'000;
};

/// A search problem as a structural type, for searched_v: one memory limit for every rank
/// (full activations, gamma-weighted), otherwise as search_problem. `authors_only`: the
/// authors' 8 rule sets alone (as search_options::authors_only; on the V-shape their 4),
/// about a ninth of the compile time.
struct search_spec {
  pipeline_shape shape{};
  costs cost{};
  rational gamma{1};
  rational memory_limit{1};
  bool authors_only = false;

  friend constexpr bool operator==(const search_spec&, const search_spec&) = default;
};

namespace detail {
/// Whether `s` is a shape search() takes: V = 1 with loop placement, or V = 2 on the
/// V-shape.
constexpr bool searchable(const pipeline_shape& s) {
  return (s.V == 1 && s.layout == placement::loop) || (s.V == 2 && s.layout == placement::v_shape);
}
}  // namespace detail

/// The problem's gate: `ctpipe: search takes V = 1 with loop placement (one stage per
/// rank) or V = 2 with the V-shape placement (two chunks per rank)`, `ctpipe: search takes
/// one memory limit for every rank or P of them`,
/// `ctpipe: search's memory limit must be >= 1 full activation per rank (the least any
/// schedule needs: one micro-batch in flight)`, check_shape(), check_costs() and check_gamma()
/// messages.
inline void check_search_problem(const search_problem& p) {
  check_shape(p.shape);
  check_costs(p.cost);
  check_gamma(p.gamma);
  detail::require(detail::searchable(p.shape),
                  "ctpipe: search takes V = 1 with loop placement (one stage per rank) or V = 2 with the V-shape "
                  "placement (two chunks per rank)");
  detail::require(p.memory_limit.size() == 1 || p.memory_limit.size() == static_cast<std::size_t>(p.shape.P),
                  "ctpipe: search takes one memory limit for every rank or P of them");
  for (const rational x : p.memory_limit) {
    detail::require(x >= rational{1},
                    "ctpipe: search's memory limit must be >= 1 full activation per rank (the least any schedule "
                    "needs: one micro-batch in flight)");
  }
}

namespace detail {
/// The gate of a search_spec: check_search_problem()'s messages (constexpr, for
/// searched_v's compile errors).
constexpr void check_search_spec(const search_spec& p) {
  check_shape(p.shape);
  check_costs(p.cost);
  check_gamma(p.gamma);
  require(searchable(p.shape),
          "ctpipe: search takes V = 1 with loop placement (one stage per rank) or V = 2 with the V-shape placement "
          "(two chunks per rank)");
  require(p.memory_limit >= rational{1},
          "ctpipe: search's memory limit must be >= 1 full activation per rank (the least any schedule needs: one "
          "micro-batch in flight)");
}
}  // namespace detail

}  // namespace ctpipe
