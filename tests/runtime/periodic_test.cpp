// Periodic programs and certificates at run time (schedules/program.hpp,
// analysis/periodic.hpp; docs/proofs.md "Proofs for every m"): the twin of
// tests/static/proofs_periodic.cpp through the same functions, and the larger P, other
// costs and bad programs that the compile-time proofs do not reach.
#include <ctpipe/ctpipe.hpp>
#include <ctpipe/io/format.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "tool_runner.hpp"

using namespace ctpipe;
using ctpipe::tests::run_tool;

namespace {

constexpr schedule_family with_program[] = {schedule_family::one_f_one_b, schedule_family::zb_h1,
                                            schedule_family::zb_h2, schedule_family::zbv};

schedule_spec spec_of(schedule_family family, int P) {
  schedule_spec s{};
  s.family = family;
  const bool v = family == schedule_family::zbv;
  s.shape = {P, 1, v ? 2 : 1, v ? placement::v_shape : placement::loop};
  return s;
}

bool same_ops(schedule_view a, schedule_view b) {
  if (a.size() != b.size() || a.offsets.size() != b.offsets.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a.ops[k] != b.ops[k]) return false;
  }
  for (std::size_t r = 0; r < a.offsets.size(); ++r) {
    if (a.offsets[r] != b.offsets[r]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("periodic programs expand to the families' generators op for op", "[periodic]") {
  for (const schedule_family family : with_program) {
    for (int P = 1; P <= 12; ++P) {
      schedule_spec s = spec_of(family, P);
      const periodic_program p = program_of(s);
      for (int m = p.m_min; m <= p.m_min + 3 * P + 4; ++m) {
        INFO(family_name(family) << " P = " << P << " m = " << m);
        s.shape.m = m;
        REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(s).view()));
      }
    }
  }
  REQUIRE_THROWS_WITH(expand(program_of(spec_of(schedule_family::one_f_one_b, 4)), 2),
                      "ctpipe: a periodic program holds for m >= its m_min");
  REQUIRE_THROWS_WITH(program_of(schedule_spec{schedule_family::v_half, {4, 8, 2, placement::v_shape}}),
                      "ctpipe: no periodic program for this schedule family yet (docs/proofs.md lists the families "
                      "with one)");
}

namespace {

/// Calls f(spec) for each interleaved 1F1B of the grid: P <= P_most, V <= 4, the three
/// variants, warm-up factors 1 and 2, for megatron the groups P (default), P + 1 and 2P,
/// and every class of m modulo the group that the variant accepts (spec's m in it).
template <class F>
void each_interleaved_class(int P_most, F&& f) {
  for (int variant = 0; variant < 3; ++variant)
    for (int P = 1; P <= P_most; ++P)
      for (int V = 1; V <= 4; ++V)
        for (int k = 1; k <= 2; ++k)
          for (const int g : {0, P + 1, 2 * P}) {
            if (variant != 0 && g != 0) continue;
            const int G = g != 0 ? g : P;
            for (int residue = 0; residue < G; ++residue) {
              schedule_spec s{schedule_family::interleaved_1f1b, {P, residue + 4 * G, V, placement::loop}};
              s.variant = static_cast<interleaved_variant>(variant);
              s.group = g;
              s.warmup_factor = k;
              if (spec_error(s) != nullptr) continue;
              if (s.variant == interleaved_variant::torch && residue != 0) continue;
              f(s);
            }
          }
}

}  // namespace

TEST_CASE("interleaved 1F1B's programs, one per class of m modulo its group, expand to its generator op for op",
          "[periodic]") {
  int classes = 0;
  each_interleaved_class(6, [&](const schedule_spec& s) {
    const periodic_program p = program_of(s);
    REQUIRE(p.m_residue == s.shape.m % p.m_step);
    ++classes;
    for (int m = p.m_min; m <= p.m_min + 4 * p.m_step; m += p.m_step) {
      INFO(variant_name(s.variant) << " P = " << s.shape.P << " V = " << s.shape.V << " g = " << s.group
                                   << " k = " << s.warmup_factor << " m = " << m);
      schedule_spec at = s;
      at.shape.m = m;
      REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(at).view()));
    }
  });
  REQUIRE(classes == 576);
  schedule_spec torch{schedule_family::interleaved_1f1b, {4, 6, 2, placement::loop}};
  torch.variant = interleaved_variant::torch;
  REQUIRE_THROWS_WITH(program_of(torch),
                      "ctpipe: PyTorch's interleaved 1F1B has a periodic program for m a multiple of P only (its "
                      "group m / (m / P) changes with m otherwise)");
  REQUIRE_THROWS_WITH(program_of(schedule_spec{schedule_family::interleaved_1f1b, {4, 6, 2, placement::loop}}),
                      "ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or m % group >= P");
  const periodic_program p = program_of(schedule_spec{schedule_family::interleaved_1f1b, {4, 8, 2, placement::loop}});
  REQUIRE_THROWS_WITH(expand(p, 10),
                      "ctpipe: this periodic program holds for m = m_residue (mod m_step) only "
                      "(interleaved 1F1B: one program per class of m modulo its group)");
}

TEST_CASE(
    "interleaved ZB's programs expand to its generator, and its certificates give a formula where none is "
    "claimed",
    "[periodic]") {
  // PyTorch's ScheduleInterleavedZeroBubble: a program for the multiples of P (its group
  // m / (m / P) is P there), equal to the generator for P <= 8, V <= 4; no closed form is
  // claimed for it (formulas.hpp), so the certificate is its only formula: checked
  // against direct simulations, with latency and t_i != t_w too.
  int proved = 0;
  for (int P = 1; P <= 8; ++P)
    for (int V = 1; V <= 4; ++V) {
      const schedule_spec s{schedule_family::interleaved_zb, {P, 4 * P, V, placement::loop}};
      INFO("P = " << P << " V = " << V);
      const periodic_program p = program_of(s);
      REQUIRE(p.m_step == P);
      for (int m = p.m_min; m <= p.m_min + 5 * p.m_step; m += p.m_step) {
        schedule_spec at = s;
        at.shape.m = m;
        REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(at).view()));
      }
      if (P > 5 || V > 3) continue;
      for (const costs& c : {costs{rational{1}, rational{2}, rational{1}, rational{1}},
                             costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 2}}}) {
        const periodic_certificate cert = periodic_certificate_of(s, c);
        REQUIRE(cert.proved);
        ++proved;
        for (int m = cert.m0; m < cert.m0 + 3 * cert.cycle; m += cert.m_step)
          REQUIRE(cert.makespan(m) == direct_makespan(s, m, c));
        REQUIRE_FALSE(makespan_formula(s, c).holds);
      }
    }
  REQUIRE(proved == 30);
  REQUIRE_THROWS_WITH(program_of(schedule_spec{schedule_family::interleaved_zb, {4, 6, 2, placement::loop}}),
                      "ctpipe: PyTorch's interleaved ZB has a periodic program for m a multiple of P only (its group "
                      "m / (m / P) changes with m otherwise)");
}

TEST_CASE(
    "interleaved 1F1B's certificates: every m of the class equals a direct simulation, and the closed forms "
    "hold for every m",
    "[periodic]") {
  const costs article{};
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  int proved = 0;
  each_interleaved_class(4, [&](const schedule_spec& s) {
    if (s.shape.V > 3) return;
    INFO(variant_name(s.variant) << " P = " << s.shape.P << " V = " << s.shape.V << " g = " << s.group
                                 << " k = " << s.warmup_factor << " class of m = " << s.shape.m);
    for (const costs& c : {article, latency}) {
      const periodic_certificate cert = periodic_certificate_of(s, c);
      REQUIRE(cert.proved);
      ++proved;
      for (int m = cert.m0; m < cert.m0 + 2 * cert.cycle + 2 * cert.m_step; m += cert.m_step) {
        schedule_spec at = s;
        at.shape.m = m;
        const schedule sched = generate(at);
        const simulation sim = simulate(sched.view(), c);
        REQUIRE(cert.makespan(m) == sim.makespan());
        REQUIRE(cert.bubble_fraction(m) == sim.bubble_fraction());
        for (int r = 0; r < s.shape.P; ++r)
          REQUIRE(cert.peak[static_cast<std::size_t>(r)] == in_flight(sched.view()).peak(r));
      }
    }
    // t_c = 0: the closed forms hold for every m of the class the variant accepts.
    const periodic_certificate cert = periodic_certificate_of(s, article);
    const every_m_result holds = closed_forms_hold_for_every_m(cert, s, article);
    REQUIRE(holds.makespan.correct);
    REQUIRE(holds.peaks.correct);
    REQUIRE(holds.makespan.from > 0);
    REQUIRE(holds.peaks.from > 0);
  });
  REQUIRE(proved == 2 * 252);
}

TEST_CASE("combined 1F1B's programs expand to its generator, and its certificates hold for every m of the class",
          "[periodic]") {
  // Megatron's combined 1F1B: interleaved's program with one more warm-up forward, its
  // pairs fused (overlap_f_b words) or split; P <= 6, V <= 4, groups P, P + 1 and 2P,
  // every class Megatron accepts.
  int classes = 0, proved = 0;
  const costs article{};
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  for (const pair_model pairs : {pair_model::fused, pair_model::split})
    for (int P = 1; P <= 6; ++P)
      for (int V = 1; V <= 4; ++V)
        for (const int g : {0, P + 1, 2 * P}) {
          const int G = g != 0 ? g : P;
          for (int residue = 0; residue < G; ++residue) {
            schedule_spec s{schedule_family::combined_1f1b, {P, residue + 4 * G, V, placement::loop}};
            s.group = g;
            s.pairs = pairs;
            if (spec_error(s) != nullptr) continue;
            ++classes;
            INFO("P = " << P << " V = " << V << " g = " << g << " class of m = " << s.shape.m);
            const periodic_program p = program_of(s);
            for (int m = p.m_min; m <= p.m_min + 4 * p.m_step; m += p.m_step) {
              schedule_spec at = s;
              at.shape.m = m;
              REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(at).view()));
            }
            if (P > 4 || V > 3) continue;
            for (const costs& c : {article, latency}) {
              const periodic_certificate cert = periodic_certificate_of(s, c);
              REQUIRE(cert.proved);
              ++proved;
              for (int m = cert.m0; m < cert.m0 + 2 * cert.cycle + 2 * cert.m_step; m += cert.m_step)
                REQUIRE(cert.makespan(m) == direct_makespan(s, m, c));
            }
            REQUIRE(bool(closed_forms_hold_for_every_m(periodic_certificate_of(s, article), s, article)));
          }
        }
  REQUIRE(classes == 250);
  REQUIRE(proved == 188);
}

TEST_CASE("DualPipeV's and DualPipe's programs expand to their generators, and their certificates hold for every m",
          "[periodic]") {
  // DeepSeek's eight phases recorded once per (half-)rank: the warm-up, step 4's pairs
  // repeated, the cool-down counted from m (DualPipe: m/2 per direction, m_step 2). From
  // the structural minimum on, fused and split pairs, every P the families take up to 10.
  int programs = 0, proved = 0;
  const costs article{};
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  const costs overlap{rational{1}, rational{2}, rational{1}, rational{1}, rational{0}, rational{5, 2}};
  for (const schedule_family family : {schedule_family::dualpipev, schedule_family::dualpipe})
    for (const pair_model pairs : {pair_model::fused, pair_model::split})
      for (int P = 1; P <= 10; ++P) {
        const bool dual = family == schedule_family::dualpipe;
        schedule_spec s{family, {P, 2 * P, 2, dual ? placement::bidirectional : placement::v_shape}};
        s.pairs = pairs;
        s.structural_minimum = true;
        if (spec_error(s) != nullptr) continue;
        ++programs;
        INFO(family_name(family) << " P = " << P << (pairs == pair_model::fused ? " fused" : " split"));
        const periodic_program p = program_of(s);
        REQUIRE(p.m_min == (dual ? std::max(2 * P - 2, P + 2) : std::max(2 * P - 1, P + 1)));
        REQUIRE(p.m_step == (dual ? 2 : 1));
        for (int m = p.m_min; m <= p.m_min + (3 * P + 4) * p.m_step; m += p.m_step) {
          schedule_spec at = s;
          at.shape.m = m;
          REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(at).view()));
        }
        if (P > 6) continue;
        for (const costs& c : {article, latency, overlap}) {
          const periodic_certificate cert = periodic_certificate_of(s, c);
          REQUIRE(cert.proved);
          ++proved;
          for (int m = cert.m0; m < cert.m0 + 2 * cert.cycle + 2 * cert.m_step; m += cert.m_step)
            REQUIRE(cert.makespan(m) == direct_makespan(s, m, c));
        }
        if (pairs == pair_model::fused) {
          REQUIRE(bool(closed_forms_hold_for_every_m(periodic_certificate_of(s, article), s, article)));
        }
      }
  REQUIRE(programs == 30);
  REQUIRE(proved == 54);
}

TEST_CASE("periodic certificates: the makespan of every m from m0 on equals a direct simulation", "[periodic]") {
  const costs cost_sets[] = {
      costs{},                                                                          // the article's
      costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}},        // latency
      costs{rational{1}, rational{3}, rational{2}, rational{1}, rational{1, 3}},        // split, latency
      costs{rational{3}, rational{1, 2}, rational{1, 4}, rational{1, 4}, rational{0}},  // t_b < t_f
  };
  for (const schedule_family family : with_program) {
    for (const int P : {1, 2, 3, 4, 5, 7, 8}) {
      for (const costs& c : cost_sets) {
        const schedule_spec s = spec_of(family, P);
        const periodic_certificate cert = periodic_certificate_of(s, c);
        INFO(family_name(family) << " P = " << P << " t_c = " << c.c.to_double());
        REQUIRE(cert.proved);
        REQUIRE(cert.m0 >= program_of(s).m_min);
        for (int m = cert.m0; m < cert.m0 + 3 * cert.cycle + 12; ++m) {
          REQUIRE(cert.makespan(m) == direct_makespan(s, m, c));
          schedule_spec at = s;
          at.shape.m = m;
          const schedule sched = generate(at);
          const simulation sim = simulate(sched.view(), c);
          REQUIRE(cert.bubble_fraction(m) == sim.bubble_fraction());
          for (int r = 0; r < P; ++r) {
            REQUIRE(cert.idle(r, m) == sim.idle(r));
            REQUIRE(cert.peak[static_cast<std::size_t>(r)] == in_flight(sched.view()).peak(r));
          }
        }
      }
    }
  }
}

TEST_CASE("periodic certificates: the search's first attempt repeats at the article's costs, every P <= 16",
          "[periodic]") {
  // first_search_periods()'s room for a cycle of one step: the compile-time proofs pay
  // for one attempt only.
  std::vector<schedule_spec> specs;
  for (int P = 1; P <= 16; ++P) {
    for (const schedule_family family : with_program) specs.push_back(spec_of(family, P));
    for (const auto family : {schedule_family::dualpipev, schedule_family::dualpipe}) {
      const bool dual = family == schedule_family::dualpipe;
      schedule_spec s{family, {P, 2 * P, 2, dual ? placement::bidirectional : placement::v_shape}};
      s.structural_minimum = true;
      if (!dual || P % 2 == 0) specs.push_back(s);
    }
    for (int V = 2; V <= 4; ++V) {
      schedule_spec s{};
      s.family = schedule_family::interleaved_1f1b;
      s.shape = {P, 2 * P, V, placement::loop};
      if (P > 1) specs.push_back(s);
    }
  }
  for (const schedule_spec& s : specs) {
    const periodic_program p = program_of(s);
    INFO(family_name(s.family) << " P = " << s.shape.P << " V = " << s.shape.V);
    REQUIRE(p.phases == 1);
    const periodic_certificate first = detail::certify_within(p, costs{}, {}, rational{1}, first_search_periods(p));
    REQUIRE(first.proved);
    REQUIRE(first.m0 == periodic_certificate_of(s, costs{}).m0);
  }
}

TEST_CASE("periodic certificates: the phased programs' first attempt repeats at the article's costs, every P <= 16",
          "[periodic]") {
  // first_search_periods(): 1 for two phases (GPipe, looped BFS at V = 1), whose m0 is
  // then 1; the least m_a >= P (and 3 at least) for looped BFS at V >= 2, whose driven
  // edges are slack from m = P on at these costs, and whose m0 is then m_a.
  for (int P = 1; P <= 16; ++P) {
    for (int V = 1; V <= 4; ++V) {
      for (const auto family : {schedule_family::gpipe, schedule_family::looped_bfs}) {
        if (family == schedule_family::gpipe && V > 1) continue;
        const schedule_spec s{family, {P, 1, V, placement::loop}};
        const periodic_program p = program_of(s);
        INFO(family_name(family) << " P = " << P << " V = " << V);
        const periodic_certificate first = detail::certify_phased(p, costs{}, {}, rational{1}, first_search_periods(p));
        REQUIRE(first.proved);
        REQUIRE(first.m0 == (V == 1 || P == 1 ? 1 : std::max(P, 3)));
        REQUIRE(first.m0 == periodic_certificate_of(s, costs{}).m0);
      }
    }
  }
}

TEST_CASE("periodic structure: the certificate given its window and width apart is the certificate", "[periodic]") {
  // periodic_structure_of() and periodic_certificate_of(p, c, known), the two constant
  // evaluations of tests/static's every_m_apart(): for families of one phase, with
  // latency too, the same m0, cycle, base and peaks as the search's.
  const costs latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  std::vector<schedule_spec> specs;
  for (int P = 1; P <= 6; ++P) {
    for (const auto family :
         {schedule_family::one_f_one_b, schedule_family::zb_h1, schedule_family::zb_h2, schedule_family::zbv})
      specs.push_back(spec_of(family, P));
    schedule_spec s{};
    s.family = schedule_family::interleaved_1f1b;
    s.shape = {P, 2 * P, 3, placement::loop};
    if (P > 1) specs.push_back(s);
  }
  for (const schedule_spec& s : specs) {
    for (const costs& c : {costs{}, latency}) {
      const periodic_program p = program_of(s);
      INFO(family_name(s.family) << " P = " << s.shape.P << " t_c = " << c.c.num << "/" << c.c.den);
      const periodic_certificate searched = periodic_certificate_of(p, c);
      REQUIRE(searched.proved);
      // The search's last attempt: the least doubling of the first at which it repeats.
      int periods = first_search_periods(p);
      while (!detail::certify_within(p, c, {}, rational{1}, periods).proved) periods *= 2;
      const periodic_structure known = periodic_structure_of(p, periods);
      REQUIRE(known.lo < known.hi);
      REQUIRE(known.width >= 1);
      const periodic_certificate given = periodic_certificate_of(p, c, known);
      REQUIRE(given.proved);
      REQUIRE(given.m0 == searched.m0);
      REQUIRE(given.cycle == searched.cycle);
      REQUIRE(given.increment == searched.increment);
      for (std::size_t j = 0; j < given.base.size(); ++j) REQUIRE(given.base[j] == searched.base[j]);
      for (int r = 0; r < s.shape.P; ++r) REQUIRE(given.peak_at(r, given.m0) == searched.peak_at(r, searched.m0));
    }
  }
  // The numbers of tests/static/proofs_periodic_p16_i.cpp's points, at a P that runs fast.
  const periodic_program p12 =
      program_of(schedule_spec{schedule_family::interleaved_1f1b, {12, 24, 4, placement::loop}});
  REQUIRE(periodic_structure_of(p12, 4) == periodic_structure{4, 2, 4, 2});
  // At run time a structure that is not the program's raises; a window that never runs
  // free is no certificate.
  REQUIRE_THROWS_WITH(periodic_certificate_of(p12, costs{}, periodic_structure{4, 2, 4, 1}),
                      "ctpipe: the structure given is not the program's (periodic_structure_of())");
  const periodic_program one = program_of(spec_of(schedule_family::one_f_one_b, 4));
  REQUIRE(periodic_structure_of(one, 1) == periodic_structure{1, 0, 0, 0});
  const periodic_certificate none = periodic_certificate_of(one, costs{}, periodic_structure{1, 0, 0, 0});
  REQUIRE_FALSE(none.proved);
  REQUIRE(std::string(none.reason).find("never run free") != std::string::npos);
  REQUIRE_THROWS_WITH(periodic_structure_of(program_of(spec_of(schedule_family::one_f_one_b, 4)), 0),
                      "ctpipe: periodic_structure_of() needs periods >= 1");
  REQUIRE_THROWS_WITH(periodic_structure_of(program_of(schedule_spec{schedule_family::gpipe, {4, 1}}), 2),
                      "ctpipe: periodic_structure_of() takes a program of one phase");
}

TEST_CASE("periodic certificate: 1F1B with latency has no closed form, and repeats every P micro-batches",
          "[periodic]") {
  // The example, measured with an independent simulator: P = 4, t_f = 1, t_b = 2,
  // t_c = 1/2; rank 0's forwards advance 3, 4, 4, 4 (15 per cycle of 4); m = 24, 25, 26
  // take 101, 105, 108.
  const schedule_spec s = spec_of(schedule_family::one_f_one_b, 4);
  const costs c{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}};
  const periodic_certificate cert = periodic_certificate_of(s, c);
  REQUIRE(cert.proved);
  REQUIRE(cert.cycle == 4);
  REQUIRE(cert.increment == rational{15});
  REQUIRE(cert.makespan(24) == rational{101});
  REQUIRE(cert.makespan(25) == rational{105});
  REQUIRE(cert.makespan(26) == rational{108});
  REQUIRE_FALSE(makespan_formula(schedule_spec{schedule_family::one_f_one_b, {4, 24}}, c).holds);
  // A cycle of P micro-batches at every P tried.
  for (const int P : {2, 3, 5, 6, 8}) {
    INFO("P = " << P);
    REQUIRE(periodic_certificate_of(spec_of(schedule_family::one_f_one_b, P), c).cycle == P);
  }
}

TEST_CASE("closed forms for every m: the compile-time sets (twin), and P up to 16 at run time", "[periodic]") {
  const costs article{};
  for (const schedule_family family : with_program) {
    for (int P = 1; P <= 16; ++P) {
      INFO(family_name(family) << " P = " << P);
      const schedule_spec s = spec_of(family, P);
      const periodic_certificate cert = periodic_certificate_of(s, article);
      const every_m_result holds = closed_forms_hold_for_every_m(cert, s, article);
      REQUIRE(holds.makespan.correct);
      REQUIRE(holds.bubble_fraction.correct);
      REQUIRE(holds.peaks.correct);
      // From where each holds at every m: 1F1B everywhere; the Zero Bubble forms from
      // their thresholds (formulas.hpp: ZB-H1 m >= P, ZB-H2 and ZB-V m >= 2P-1).
      const int from = family == schedule_family::one_f_one_b ? 1 : family == schedule_family::zb_h1 ? P : 2 * P - 1;
      REQUIRE(holds.makespan.from == from);
      REQUIRE(holds.bubble_fraction.from == from);
      REQUIRE(holds.peaks.from <= from);
    }
  }
  // m0 at the article's costs, as docs/proofs.md gives it: 2P-1 (1F1B, ZB-H1), 4P-4
  // (ZB-H2), 4P-2 (ZB-V).
  for (int P = 2; P <= 12; ++P) {
    INFO("P = " << P);
    REQUIRE(periodic_certificate_of(spec_of(schedule_family::one_f_one_b, P), article).m0 == 2 * P - 1);
    REQUIRE(periodic_certificate_of(spec_of(schedule_family::zb_h1, P), article).m0 == 2 * P - 1);
    REQUIRE(periodic_certificate_of(spec_of(schedule_family::zb_h2, P), article).m0 == 4 * P - 4);
    REQUIRE(periodic_certificate_of(spec_of(schedule_family::zbv, P), article).m0 == 4 * P - 2);
  }
  // gamma < 1: ZB-H1's peaks (P-r) + r*gamma.
  const schedule_spec h1 = spec_of(schedule_family::zb_h1, 6);
  const periodic_certificate weighted = periodic_certificate_of(h1, article, {}, rational{3, 7});
  REQUIRE(closed_forms_hold_from_m0(weighted, h1, article, rational{3, 7}).peaks.from == weighted.m0);
  REQUIRE(weighted.peak[5] == rational{1} + rational{5} * rational{3, 7});
  // A closed form claimed where it is false is caught: 1F1B's makespan at t_c = 1/2 does
  // not hold, and a wrong cost set's certificate disagrees with the article's forms.
  const schedule_spec f = spec_of(schedule_family::one_f_one_b, 4);
  const costs other{rational{1}, rational{1}};
  const periodic_certificate cert_other = periodic_certificate_of(f, other);
  REQUIRE_FALSE(closed_forms_hold_from_m0(cert_other, f, article).makespan.correct);
  // Below m0 a form that holds is compared with a direct simulation too: ZB-H1's peaks
  // claim nothing below m = P, and from there they are the simulated ones.
  const every_m_result zb = closed_forms_hold_directly(spec_of(schedule_family::zb_h1, 4), article, 1, 7);
  REQUIRE(zb.peaks.correct);
  REQUIRE(zb.peaks.from == 4);
}

TEST_CASE("periodic certificate: unequal stages repeat too", "[periodic]") {
  for (const schedule_family family : with_program) {
    const schedule_spec s = spec_of(family, 4);
    std::vector<rational> factors;  // 1, 3/2, 1, 5/4, ... one per stage
    for (int k = 0; k < s.shape.stages(); ++k)
      factors.push_back(k % 2 == 0 ? rational{1} : rational{k % 4 == 1 ? 3 : 5, k % 4 == 1 ? 2 : 4});
    const costs c{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};
    const periodic_certificate cert = periodic_certificate_of(s, c, factors);
    INFO(family_name(family));
    REQUIRE(cert.proved);
    for (int m = cert.m0; m < cert.m0 + 2 * cert.cycle + 8; ++m)
      REQUIRE(cert.makespan(m) == direct_makespan(s, m, c, factors));
  }
}

namespace {

/// GPipe (V = 1) or looped BFS at P and V, loop placement.
schedule_spec phased_spec(schedule_family family, int P, int V) { return {family, {P, 1, V, placement::loop}}; }

/// Requires certificate `cert` of `s` (stage factors `scale`) to equal direct simulations
/// at every m in [m0, m0 + 3 cycles + 6): makespan, idle and busy per rank, bubble, peaks.
void require_certificate_matches(const periodic_certificate& cert, const schedule_spec& s, const costs& c,
                                 const std::vector<rational>& scale) {
  REQUIRE(cert.proved);
  for (int m = cert.m0; m < cert.m0 + 3 * cert.cycle + 6; ++m) {
    INFO("m = " << m);
    schedule_spec at = s;
    at.shape.m = m;
    const schedule sched = generate(at);
    const simulation sim = simulate(sched.view(), c, cost_scale{scale, {}});
    const in_flight_profile memory = in_flight(sched.view());
    REQUIRE(cert.makespan(m) == sim.makespan());
    REQUIRE(cert.bubble_fraction(m) == sim.bubble_fraction());
    for (int r = 0; r < s.shape.P; ++r) {
      REQUIRE(cert.idle(r, m) == sim.idle(r));
      REQUIRE(cert.peak_at(r, m) == memory.peak(r));
    }
  }
}

}  // namespace

TEST_CASE("phased programs: GPipe's and looped BFS's expand to their generators and are certified for every m",
          "[periodic]") {
  for (int P = 1; P <= 8; ++P) {
    for (int V = 1; V <= 4; ++V) {
      for (const schedule_family family : {schedule_family::gpipe, schedule_family::looped_bfs}) {
        if (family == schedule_family::gpipe && V > 1) continue;
        schedule_spec s = phased_spec(family, P, V);
        const periodic_program p = program_of(s);
        INFO(family_name(family) << " P = " << P << " V = " << V);
        REQUIRE(p.phases == (family == schedule_family::gpipe ? 2 : 2 * V));
        for (int m = 1; m <= 2 * P + 4; ++m) {
          s.shape.m = m;
          REQUIRE(same_ops(expand(p, m).view(), detail::generate_by_generator(s).view()));
        }
        for (const costs& c : {costs{}, costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}},
                               costs{rational{3}, rational{1, 2}, rational{1}, rational{1}, rational{2}}}) {
          const periodic_certificate cert = periodic_certificate_of(s, c);
          require_certificate_matches(cert, s, c, {});
          // Peaks grow with m: m per rank for GPipe, mV for looped BFS.
          REQUIRE(cert.peak_per_m[0] == rational{V});
          // The closed forms: GPipe's for every m, with latency too; looped BFS's from m = P
          // (V > 1) at t_c = 0 (chunked_timing_exception()), none with latency.
          const every_m_result holds = closed_forms_hold_for_every_m(cert, s, c);
          REQUIRE(holds.makespan.correct);
          REQUIRE(holds.peaks.from == 1);
          const bool claimed = family == schedule_family::gpipe || c.c == rational{0} || P == 1;
          REQUIRE(holds.makespan.from == (!claimed ? 0 : family == schedule_family::looped_bfs && V > 1 ? P : 1));
        }
      }
    }
  }
}

TEST_CASE("phased programs: unequal stages are certified where each phase runs at one rate, refused elsewhere",
          "[periodic]") {
  // GPipe's forwards flow from rank 0, its backwards from rank P-1: with the slowest stage
  // at both ends every rank of each phase keeps its pace; with a slower stage inside, the
  // ranks ahead of it run at their own rate and no state repeats as one shift.
  const schedule_spec s = phased_spec(schedule_family::gpipe, 4, 1);
  const costs c{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};
  const std::vector<rational> ends{rational{3, 2}, rational{1}, rational{5, 4}, rational{3, 2}};
  require_certificate_matches(periodic_certificate_of(s, c, ends), s, c, ends);
  const std::vector<rational> inside{rational{1}, rational{3, 2}, rational{1}, rational{1}};
  const periodic_certificate refused = periodic_certificate_of(s, c, inside);
  REQUIRE_FALSE(refused.proved);
  REQUIRE(std::string(refused.reason).find("the ranks of a phase run at different rates") != std::string::npos);
  // The refusal is final: a larger bound gives it at once (a tester's finding: the search
  // doubled up to the bound, 79 s at P = 16 with --max-periods 9999999, to this answer).
  const periodic_certificate at_once = periodic_certificate_of(s, c, inside, rational{1}, 9999999);
  REQUIRE(std::string(at_once.reason) == refused.reason);
  REQUIRE(at_once.last_differences.size() == refused.last_differences.size());
  // Where the search ends early, the reason says so and a larger bound helps (a
  // tester's finding: --max-periods 1 was refused with "the phases' cycles pass the bound").
  REQUIRE(periodic_certificate_of(program_of(s), c, {}, rational{1}, 1).proved);
}

TEST_CASE("phased programs: malformed ones are refused, and a driven edge that always binds", "[periodic]") {
  // Looped BFS with t_b = 0 and latency: each backward chunk's last rank waits for the
  // chunk before it at every m (a tester's finding: the reason said only "raise").
  const periodic_certificate bound =
      periodic_certificate_of(phased_spec(schedule_family::looped_bfs, 4, 2),
                              costs{rational{1}, rational{0}, rational{1}, rational{1}, rational{1, 2}});
  REQUIRE_FALSE(bound.proved);
  REQUIRE(std::string(bound.reason).find("(a driven edge binds) at the m the search reached") != std::string::npos);
  periodic_program p = program_of(phased_spec(schedule_family::gpipe, 3, 1));
  p.phases = 3;  // two growing segments per rank, three declared
  REQUIRE_THROWS_WITH(periodic_certificate_of(p, costs{}),
                      "ctpipe: a phased program has `phases` growing segments on every rank");
  periodic_program q = program_of(phased_spec(schedule_family::looped_bfs, 3, 2));
  q.templates[q.segments[q.steady[1]].first].per_repetition = 2;  // rank 1's chunk-0 forwards skip
  REQUIRE_THROWS_WITH(periodic_certificate_of(q, costs{}),
                      "ctpipe: a phased program's steady ops advance the same number of micro-batches per repetition "
                      "within each phase, and per step of m each phase's ops move alike and a fixed segment as the "
                      "phase before it ends");
}

TEST_CASE("periodic certificate: bad programs get no certificate, with the reason", "[periodic]") {
  // An unbalanced period: 1F1B's program with rank 1's steady B made an F.
  periodic_program unbalanced = program_of(spec_of(schedule_family::one_f_one_b, 3));
  const program_segment& steady = unbalanced.segments[unbalanced.steady[1]];
  unbalanced.templates[steady.first + 1].kind = op_kind::F;
  const periodic_certificate refused = periodic_certificate_of(unbalanced, costs{});
  REQUIRE_FALSE(refused.proved);
  REQUIRE(std::string(refused.reason) == "an unbalanced period: its forwards differ from its backwards (B or I)");
  REQUIRE(refused.unbalanced_rank == 1);
  REQUIRE(refused.unbalanced_forwards == 2);
  REQUIRE(refused.unbalanced_backwards == 0);
  // No repeat within a bound too small for the state: the last differences come back.
  const periodic_certificate short_search = periodic_certificate_of(
      program_of(spec_of(schedule_family::one_f_one_b, 4)),
      costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}}, {}, rational{1}, 5);
  REQUIRE_FALSE(short_search.proved);
  REQUIRE(std::string(short_search.reason).find("within the bound") != std::string::npos);
  REQUIRE(short_search.last_differences.size() == 8);  // one per steady op: 2 per rank
  // A program whose lists cannot run (1F1B's with rank 0's steady forwards shifted by one
  // micro-batch: its ranks wait for ops that never come) is refused by the simulation, never
  // certified.
  periodic_program shifted = program_of(spec_of(schedule_family::one_f_one_b, 3));
  shifted.templates[shifted.segments[shifted.steady[0]].first].microbatch += 1;
  REQUIRE_THROWS_WITH(periodic_certificate_of(shifted, costs{}),
                      "ctpipe: schedule deadlocks (validate() names the stuck ops)");
  // A malformed program (a warm-up that moves with m) is refused outright.
  periodic_program malformed = program_of(spec_of(schedule_family::one_f_one_b, 3));
  malformed.templates[0].per_m = 1;
  REQUIRE_THROWS_WITH(periodic_certificate_of(malformed, costs{}),
                      "ctpipe: a periodic program's steady ops advance the same number of micro-batches per "
                      "repetition, and per step of m its warm-up and steady ops move alike and its cool-down that much "
                      "more");
}

TEST_CASE("ctpipe formula: the certificate as text and JSON, and its refusals", "[periodic][tool]") {
  const auto text = run_tool("formula -P 4 --costs c=1/2");
  REQUIRE(text.exit_code == 0);
  REQUIRE(text.err.empty());
  REQUIRE(text.out.find("for every m >= 7, with j = (m - 7) mod 4 and k = floor((m - 7) / 4):") != std::string::npos);
  REQUIRE(text.out.find("makespan(m) = base[j] + 15 k   base = 37 41 45 48 (m = 7 .. 10)") != std::string::npos);
  REQUIRE(text.out.find("peak in flight per rank (chunks): 4 3 2 1") != std::string::npos);
  REQUIRE(text.out.find("makespan: not for every m from some m on; bubble fraction: not for every m from some m on; "
                        "peaks: holds for every m") != std::string::npos);

  // Interleaved 1F1B answers for one class of m modulo its group, chosen by -m.
  const auto classes = run_tool("formula -s interleaved-1f1b -P 4 -V 2 --group 5 -m 9 --costs c=1/2");
  REQUIRE(classes.exit_code == 0);
  REQUIRE(classes.out.find("for every m >= 29 with m = 4 (mod 5):\n  makespan(m) = 98 + 15 (m - 29) / 5\n") !=
          std::string::npos);
  REQUIRE(classes.out.find("peak in flight per rank (chunks): 12 10 8 6") != std::string::npos);
  REQUIRE(classes.out.find("for m = 9, 14, 19, 24 of the class (simulated directly): makespan 38 53 68 83") !=
          std::string::npos);
  schedule_spec at{schedule_family::interleaved_1f1b, {4, 34, 2, placement::loop}};
  at.group = 5;
  REQUIRE(simulate(generate(at).view(), costs{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 2}})
              .makespan() == rational{113});  // 98 + 15 (34 - 29) / 5

  // GPipe: a phased program (its forwards, then its backwards), its peaks growing with m;
  // looped BFS: 2V phases, its closed forms from m = P.
  const auto gpipe = run_tool("formula -s gpipe -P 4");
  REQUIRE(gpipe.exit_code == 0);
  REQUIRE(gpipe.out.find("2 phases: the state of each") != std::string::npos);
  REQUIRE(gpipe.out.find("for every m >= 1:\n  makespan(m) = 12 + 3 (m - 1)\n") != std::string::npos);
  REQUIRE(gpipe.out.find("peak in flight per rank (chunks) = a + b (m - 1)   a = 1 1 1 1   b = 1 1 1 1") !=
          std::string::npos);
  REQUIRE(gpipe.out.find("makespan: holds for every m; bubble fraction: holds for every m; peaks: holds for every m") !=
          std::string::npos);
  const nlohmann::json lj = nlohmann::json::parse(run_tool("formula -s looped-bfs -P 4 -V 2 --format json").out);
  REQUIRE(lj["phases"] == 4);
  REQUIRE(lj["peak_in_flight_per_m"] == nlohmann::json::array({"2", "2", "2", "2"}));
  REQUIRE(lj["closed_forms"]["makespan"]["from"] == 4);

  // The parameters that decide the program, in the header and the JSON (a tester's
  // finding: --warmup-factor 1 and fb changed the answer but not the header).
  REQUIRE(run_tool("formula -s interleaved-1f1b -P 4 -V 2 --warmup-factor 1")
              .out.starts_with("interleaved-1f1b  P = 4  V = 2  placement loop  variant megatron  g = 4  warmup factor "
                               "1  costs"));
  const auto combined = run_tool("formula -s combined-1f1b -P 4 -V 2 --costs fb=2 --format json");
  REQUIRE(combined.exit_code == 0);
  const nlohmann::json cj = nlohmann::json::parse(combined.out);
  REQUIRE(cj["pairs"] == "fused");
  REQUIRE(cj["group"] == 4);
  REQUIRE(cj["variant"].is_null());
  REQUIRE(cj["costs"]["fb"] == "2");
  // Below m0, busy per rank as simulated (not the affine form of m >= m0): at m = 4 each
  // rank's warm-up holds every forward, so it runs no overlapped pair.
  REQUIRE(cj["below_m"] == nlohmann::json::array({4, 8, 12}));
  REQUIRE(cj["below_busy"][0] == nlohmann::json::array({"12", "12", "23/2", "21/2"}));
  schedule_spec at4{schedule_family::combined_1f1b, {4, 4, 2, placement::loop}};
  costs fb2{};
  fb2.fb = rational{2};
  REQUIRE(simulate(generate(at4).view(), fb2).busy(2) == rational{23, 2});
  // The search goes as far as the op limit allows instead of refusing at the default
  // bound (P = 32 needed 4,464,640 ops for the whole default bound).
  const auto large = run_tool("formula -s interleaved-1f1b -P 32 -V 2 --costs c=1/2");
  REQUIRE(large.exit_code == 0);
  REQUIRE(large.out.find("for every m >= 160 with m = 0 (mod 32):") != std::string::npos);
  // A bound past the limits (2^31 - 1 repetitions of 4 micro-batches overflowed an int).
  const auto capped = run_tool(
      "formula -s interleaved-1f1b -P 4 -V 2 --stage-scale 1,1,1,1,1,1,1,999999/1000000 --max-periods 2147483647");
  REQUIRE(capped.exit_code == 2);
  REQUIRE(
      capped.err.starts_with("ctpipe: no certificate: the state does not repeat within the bound (16382 "
                             "repetitions, as far as the search's limits go: 2097152 ops, 65536 micro-batches)"));

  const auto json = run_tool("formula -s zb-h1 -P 4 --costs f=1,i=1,w=1 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  REQUIRE(j["m0"] == 7);
  REQUIRE(j["m_step"] == 1);
  REQUIRE(j["m_residue"] == 0);
  REQUIRE(j["cycle"] == 1);
  REQUIRE(j["increment"] == "3");
  REQUIRE(j["peak_in_flight"] == nlohmann::json::array({"4", "4", "4", "4"}));                 // (P-r) + r*gamma
  REQUIRE(j["closed_forms"]["makespan"] == nlohmann::json({{"from", 4}, {"correct", true}}));  // m >= P
  REQUIRE(j["gamma"] == "1");
  REQUIRE(j["below"] == nlohmann::json::array({"9", "11", "13", "15", "18", "21"}));
  // base: the direct simulation's makespan at m0
  const schedule_spec s{schedule_family::zb_h1, {4, 7}};
  REQUIRE(j["base"][0] == io::to_string(simulate(generate(s).view(), costs{}).makespan()));

  const struct {
    const char* args;
    const char* message;
  } refusals[] = {
      {"formula -s gpipe --stage-scale 1,3/2,1,1",
       "ctpipe: no certificate: the ranks of a phase run at different rates where the search ends (unequal "
       "stages"},
      {"formula -s v-half", "ctpipe: no formula for v-half: its warm-up and cool-down are moved op by op by a greedy"},
      {"formula --foo 1", "ctpipe: formula does not take '--foo 1' (`ctpipe formula --help` lists its options)"},
      // m0 = 8015: the direct simulations below it would grow as m0 squared.
      {"formula -s zb-h2 --stage-scale 1,1,1,4001/4000 --max-periods 100000",
       "ctpipe: formula: 385393260 ops are too many for the direct simulations below m0 = 8015 (at most 268435456)"},
      {"formula -s interleaved-zb -m 6",
       "ctpipe: PyTorch's interleaved ZB has a periodic program for m a multiple of P only"},
      {"formula -m 8",
       "ctpipe: formula answers for every m; -m is not taken (but for the classes of interleaved-1f1b, "
       "combined-1f1b and interleaved-zb)\n"},
      {"formula -s interleaved-1f1b -V 2 -m 6", "ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or"},
      {"formula -s interleaved-1f1b -V 2 -m 6 --variant torch",
       "ctpipe: PyTorch's interleaved 1F1B has a periodic program for m a multiple of P only"},
      {"formula --microbatch-scale 1,2", "ctpipe: formula needs micro-batches of equal cost"},
      {"formula -P 4 --costs c=1/2 --max-periods 5",
       "ctpipe: no certificate: the state does not repeat within the bound (raise --max-periods) (last state "
       "differences: 4 4 4 4 3 4 4 4)\n"},
      {"formula -P 2000", "ctpipe: formula: "},
      // A fresh tester's findings: 2P overflowed into "m must be >= 1"; DualPipeV's program
      // (10 P^2 templates) was built before the op limit refused it; the hint to raise
      // --max-periods was missing from one reason.
      {"formula -s dualpipev -P 1073741824", "ctpipe: P*V must be at most 4096 stages"},
      {"formula -s dualpipev -P 2048", "ctpipe: formula: 39844864 ops are too many for the certificate's search"},
      {"formula -P 4 --max-periods 3",
       "ctpipe: no certificate: the steady segments never run free of the warm-up and the cool-down within the "
       "bound (raise --max-periods)\n"},
      {"formula --max-periods x", "ctpipe: --max-periods takes a whole number, not 'x'\n"},
  };
  for (const auto& r : refusals) {
    INFO(r.args);
    const auto run = run_tool(r.args);
    REQUIRE(run.exit_code == 2);
    REQUIRE(run.out.empty());
    REQUIRE(run.err.starts_with(r.message));
  }
}

TEST_CASE("ctpipe formula: the m below m0 that DualPipe(V) take are named", "[periodic][tool]") {
  // Below m0 the family's rule decides the m simulated: DualPipeV's from 2P (8 .. 14 at P
  // = 4, DeepSeek's makespans m(t_f+t_b) + (P-1)(F&B+B-3W)/2 = 3m + 3), P = 1 only m = 2,
  // DualPipe's even m of its class.
  const auto v4 = run_tool("formula -s dualpipev -P 4");
  REQUIRE(v4.exit_code == 0);
  REQUIRE(v4.out.find("for m = 8 .. 14 (simulated directly): makespan 27 30 33 36 39 42 45\n") != std::string::npos);
  const auto v1 = run_tool("formula -s dualpipev -P 1");
  REQUIRE(v1.out.find("for m = 2 (simulated directly): makespan 6\n") != std::string::npos);
  const auto d4 = run_tool("formula -s dualpipe -P 4");
  REQUIRE(d4.out.find("for m = 8, 10, 12 of the class (simulated directly): makespan 26 32 38\n") != std::string::npos);
  REQUIRE(d4.out.find("pairs fused") != std::string::npos);
  REQUIRE(d4.out.find("g = ") == std::string::npos);
}

TEST_CASE("periodic_schedule_v: a runtime's loop over the periodic program, any m, storage independent of m",
          "[periodic][dispatch]") {
  constexpr auto& program = periodic_schedule_v<schedule_spec{schedule_family::one_f_one_b, {4, 8}}>;
  // The same size whatever m the spec names (its m is not read).
  STATIC_REQUIRE(sizeof(program) ==
                 sizeof(periodic_schedule_v<schedule_spec{schedule_family::one_f_one_b, {4, 4096}}>));
  REQUIRE(sizeof(program) == 624);  // 16 templates, 12 segments, 5 offsets: bench/RESULTS.md
  for (int m = 3; m <= 40; ++m) {
    const schedule g = generate(schedule_spec{schedule_family::one_f_one_b, {4, m}});
    for (int r = 0; r < 4; ++r) {
      std::vector<program_op> ops;
      program.for_each_op(r, m, [&](program_op o) { ops.push_back(o); });
      const auto want = g.view().rank(r);
      REQUIRE(ops.size() == want.size());
      for (std::size_t k = 0; k < ops.size(); ++k) {
        REQUIRE(ops[k].kind == want[k].kind());
        REQUIRE(ops[k].stage == want[k].stage());
        REQUIRE(ops[k].microbatch == want[k].microbatch());
      }
    }
  }
  // Beyond the 2^16 micro-batches an op word holds: rank 3 at m = 2^24 runs 2^25 ops, the
  // last B(2^24 - 1).
  long long count = 0;
  program_op last{};
  program.for_each_op(3, 1 << 24, [&](program_op o) { ++count, last = o; });
  REQUIRE(count == 2LL << 24);
  REQUIRE(last.kind == op_kind::B);
  REQUIRE(last.microbatch == (1 << 24) - 1);
  REQUIRE_THROWS_WITH(program.for_each_op(0, 2, [](program_op) {}),
                      "ctpipe: a periodic program holds for m >= its m_min");
  // Interleaved 1F1B's, for the class of m = 5 (mod 6) with group 6: m = 35 is m_residue
  // + 5 steps; an m outside the class is refused.
  constexpr schedule_spec grouped = [] {
    schedule_spec s{schedule_family::interleaved_1f1b, {4, 11, 2, placement::loop}};
    s.group = 6;
    return s;
  }();
  constexpr auto& interleaved = periodic_schedule_v<grouped>;
  STATIC_REQUIRE(interleaved.m_step == 6);
  STATIC_REQUIRE(interleaved.m_residue == 5);
  schedule_spec at35 = grouped;
  at35.shape.m = 35;
  const schedule g35 = generate(at35);
  for (int r = 0; r < 4; ++r) {
    std::vector<program_op> ops;
    interleaved.for_each_op(r, 35, [&](program_op o) { ops.push_back(o); });
    const auto want = g35.view().rank(r);
    REQUIRE(ops.size() == want.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      REQUIRE(ops[k].stage == want[k].stage());
      REQUIRE(ops[k].microbatch == want[k].microbatch());
    }
  }
  REQUIRE_THROWS_WITH(interleaved.for_each_op(0, 36, [](program_op) {}),
                      "ctpipe: this periodic program holds for m = m_residue (mod m_step) only (interleaved 1F1B: one "
                      "program per class of m modulo its group)");
  // ZB-V's, on the V-shape.
  constexpr auto& zbv = periodic_schedule_v<schedule_spec{schedule_family::zbv, {3, 8, 2, placement::v_shape}}>;
  const schedule g = generate(schedule_spec{schedule_family::zbv, {3, 11, 2, placement::v_shape}});
  std::size_t k = 0;
  bool same = true;
  zbv.for_each_op(1, 11, [&](program_op o) {
    same = same && k < g.view().rank(1).size() && g.view().rank(1)[k].microbatch() == o.microbatch &&
           g.view().rank(1)[k].stage() == o.stage;
    ++k;
  });
  REQUIRE(same);
  REQUIRE(k == g.view().rank(1).size());
}
