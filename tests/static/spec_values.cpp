// Compile-time checks of every value docs/spec.md §5 and issue #2 claim for GPipe and 1F1B
// (tests/static/cases.hpp), of the frozen schedule_v path, and of the validator's
// verdicts on the faulty schedules of tests/static/faulty.hpp.
#include "cases.hpp"
#include "faulty.hpp"
#include "proofs.hpp"

#include <initializer_list>

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
static_assert(holds(claims[11]), "SPEC §5 interleaved P=4 m=8 V=2");
static_assert(holds(claims[12]), "SPEC §5 interleaved P=8 m=16 V=2");
static_assert(holds(claims[13]), "interleaved P=4 m=4 V=2");
static_assert(holds(claims[14]), "interleaved legacy P=4 m=4 V=2");
static_assert(holds(claims[15]), "interleaved P=2 m=4 V=2");
static_assert(holds(claims[16]), "interleaved P=4 m=10 V=2 g=5");
static_assert(holds(claims[17]), "torch interleaved P=4 m=3 V=2");
static_assert(holds(claims[18]), "SPEC §5 ZB-H1 P=4 m=8");
static_assert(holds(claims[19]), "SPEC §5 ZB-H2 P=4 m=8");
static_assert(holds(claims[20]), "SPEC §5 ZB-V P=4 m=8");
static_assert(holds(claims[21]), "interleaved ZB P=4 m=8 V=2");
static_assert(holds(claims[22]), "SPEC §5 DualPipeV P=4 m=8");
static_assert(holds(claims[23]), "SPEC §5 DualPipe P=4 m=8");
static_assert(holds(claims[24]), "SPEC §5 V-Half P=4 m=8");
static_assert(holds(claims[25]), "SPEC §5 V-Min P=4 m=8");
static_assert(holds(claims[26]), "SPEC §5 combined 1F1B P=4 m=8 V=2 g=4");
static_assert(holds(claims[27]), "combined 1F1B P=4 m=10 V=2 g=5");
static_assert(std::size(claims) == 28, "a new claim needs its static_assert above");

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
static_assert(
    [] {
      const schedule g = generate(article_default);
      for (std::size_t k = 0; k < g.size(); ++k) {
        if (g.view().ops[k] != frozen.ops[k]) return false;
      }
      return true;
    }(),
    "schedule_v and generate() agree");

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
static_assert(ctpipe::tests::issue_count(fault_case::cross_rank_deadlock) == 2, "both ranks are reported stuck");

}  // namespace

// Interleaved 1F1B (issue 7).
namespace interleaved_facts {
using ctpipe::tests::interleaved;

constexpr bool warmups_are(const schedule_spec& s, std::initializer_list<int> expected) {
  int r = 0;
  for (int w : expected) {
    if (warmup_forwards(s, r++) != w) return false;
  }
  return r == s.shape.P;
}
static_assert(warmups_are(interleaved(4, 8, 2), {10, 8, 6, 4}));
static_assert(warmups_are(interleaved(4, 4, 2), {8, 8, 6, 4}), "current Megatron: m = P is no special case");
static_assert(warmups_are(interleaved(4, 4, 2, interleaved_variant::megatron_legacy), {8, 8, 8, 8}),
              "Megatron-Core <= 0.9: with m = P every forward first");
// The article's example: P = 8, V = 2, rank 0 holds 2*7 + 8 + 1 = 23 chunks = 23/2 activations.
static_assert([] {
  const schedule s = generate(interleaved(8, 16, 2));
  return in_flight(s.view()).peak(0) == rational{23} && in_flight(s.view()).peak_activations(0) == rational{23, 2};
}());
// P = 2, V = 2: both neighbours of a rank are the same rank; the directions stay apart.
static_assert([] {
  const schedule s = generate(interleaved(2, 4, 2));
  return messages(s.view()) == 24 && messages_between(s.view(), 0, 1) == message_count{8, 4} &&
         messages_between(s.view(), 1, 0) == message_count{4, 8};
}());
// Loop placement, P = 4, V = 2, m = 8: 2V crossings per micro-batch per neighbouring pair,
// V - 1 on the wrap from rank 3 to rank 0.
static_assert([] {
  const schedule s = generate(interleaved(4, 8, 2));
  return messages_between(s.view(), 0, 1) == message_count{16, 0} &&
         messages_between(s.view(), 1, 0) == message_count{0, 16} &&
         messages_between(s.view(), 3, 0) == message_count{8, 0} &&
         messages_between(s.view(), 0, 3) == message_count{0, 8} &&
         messages_between(s.view(), 0, 2) == message_count{0, 0};
}());
// Accepted and rejected configurations.
static_assert(spec_error(interleaved(4, 10, 2, interleaved_variant::megatron, 5)) == nullptr);
static_assert(spec_error(interleaved(4, 6, 2, interleaved_variant::megatron, 4)) != nullptr);
static_assert(spec_error(interleaved(4, 7, 2, interleaved_variant::torch)) == nullptr);
static_assert(spec_error(interleaved(4, 10, 2, interleaved_variant::torch)) == nullptr);
static_assert(spec_error(interleaved(4, 9, 2, interleaved_variant::torch)) != nullptr);
static_assert(spec_error(interleaved(4, 14, 2, interleaved_variant::torch)) != nullptr);
// PyTorch's rule with m < P: no steady state, the bubble is 2/5, not the formula's 1/3.
static_assert(!bubble_fraction_formula(interleaved(4, 3, 2, interleaved_variant::torch), costs{}).holds);
// V = 1 is 1F1B for megatron and megatron-legacy; PyTorch's own rule for torch.
static_assert(
    [] {
      for (int P = 1; P <= 6; ++P) {
        for (int m = 1; m <= 12; ++m) {
          if (!ctpipe::tests::interleaved_v1_is_1f1b(P, m)) return false;
        }
      }
      return true;
    }(),
    "interleaved 1F1B with V = 1 is 1F1B (megatron, megatron-legacy)");
static_assert(
    [] {
      for (int P = 1; P <= 6; ++P) {
        for (int m = 1; m <= 18; ++m) {
          if (!ctpipe::tests::interleaved_torch_v1_is_pytorchs(P, m)) return false;
        }
      }
      return true;
    }(),
    "interleaved 1F1B (torch) with V = 1 is PyTorch's rule");
}  // namespace interleaved_facts
