// Compile-time checks of every value SPEC.md §5 and issue #2 claim for GPipe and 1F1B
// (tests/static/cases.hpp), of the frozen schedule_v path, and of the validator's
// verdicts on the faulty schedules of tests/static/faulty.hpp.
#include "cases.hpp"
#include "faulty.hpp"

namespace {

using namespace ctpipe;
using ctpipe::tests::claims;
using ctpipe::tests::holds;

static_assert(holds(claims[0]), "SPEC §5 1F1B P=4 m=8");
static_assert(holds(claims[1]), "SPEC §5 GPipe P=4 m=8");
static_assert(holds(claims[2]), "SPEC §5 1F1B P=4 m=2");
static_assert(holds(claims[3]), "1F1B P=8 m=1");
static_assert(holds(claims[4]), "GPipe P=4 m=2");
static_assert(holds(claims[5]), "1F1B P=4 m=4");
static_assert(holds(claims[6]), "1F1B P=3 m=4");
static_assert(holds(claims[7]), "1F1B P=1 m=4");
static_assert(holds(claims[8]), "GPipe P=1 m=4");
static_assert(holds(claims[9]), "GPipe t_f=t_b=1 P=8 m=32");
static_assert(holds(claims[10]), "1F1B t_f=t_b=1 P=8 m=32");
static_assert(std::size(claims) == 11, "a new claim needs its static_assert above");

// The frozen path: schedule_v holds the same ops as generate(), in static storage, and
// analyses read it in constant expressions.
constexpr schedule_spec article_default{schedule_family::one_f_one_b, {4, 8}};
constexpr auto& frozen = schedule_v<article_default>;
static_assert(frozen.size() == 64 && sizeof(frozen.ops) == 64 * 4, "4 bytes per op, no padding");
static_assert(frozen.rank(0).size() == 16 && frozen.rank(3).size() == 16);
static_assert(frozen.rank(0)[4] == op{op_kind::B, 0, 0}, "rank 0 does 3 warmup forwards then F3, B0");
static_assert(frozen.rank(3)[1] == op{op_kind::B, 3, 0}, "the last rank alternates from the start");
static_assert(validate(frozen.view()).ok());
static_assert(simulate(frozen.view(), costs{}).bubble_fraction() == rational{3, 11});
static_assert(in_flight(frozen.view()).peak(0) == rational{4});
static_assert([] {
  const schedule g = generate(article_default);
  for (std::size_t k = 0; k < g.size(); ++k) {
    if (g.view().ops[k] != frozen.ops[k]) return false;
  }
  return true;
}(), "schedule_v and generate() agree");

// The validator names the offending op (see faulty.hpp for each case).
using ctpipe::tests::fault_case;
using ctpipe::tests::first_issue;
static_assert(first_issue(fault_case::missing_backward) ==
              validation_issue{fault::missing, 2, -1, op{op_kind::B, 2, 3}, op{op_kind::B, 2, 3}});
static_assert(first_issue(fault_case::duplicate_forward) ==
              validation_issue{fault::duplicate, 0, 3, op{op_kind::F, 0, 2}, op{op_kind::F, 0, 2}});
static_assert(first_issue(fault_case::late_backward_before_forward) ==
              validation_issue{fault::out_of_order, 2, 9, op{op_kind::B, 2, 5}, op{op_kind::F, 2, 5}});
static_assert(first_issue(fault_case::cross_rank_deadlock) ==
              validation_issue{fault::deadlock, 0, 1, op{op_kind::B, 0, 0}, op{op_kind::B, 1, 0}});
static_assert(ctpipe::tests::issue_count(fault_case::cross_rank_deadlock) == 2,
              "both ranks are reported stuck");

}  // namespace
