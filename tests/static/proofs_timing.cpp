// Compile-time proofs, timing for every m: GPipe's and looped BFS's makespan, bubble
// fraction and peak closed forms (analysis/formulas.hpp) hold for every m >= 1, and each
// rank idles T - m(t_f + t_b), each proof one periodic certificate of the family's phased
// program (analysis/periodic.hpp; docs/proofs.md "Phased programs") and the direct
// simulations of the m below its m0, at a cost that does not depend on m:
// - GPipe for every P <= 16 at the article's costs (t_f = 1, t_b = 2), and for P <= 8 at
//   four more (t_b = t_f, fractional costs, t_b < t_f, and a latency t_c = 1/4, which its
//   formulas include): these replaced the grids P <= 8 x m <= 32 (16) that were here;
// - looped BFS for every P <= 16 and V <= 4 at the article's costs (its forms from m = P
//   where V > 1, and m0 = P there). From P = 11 at V >= 2 the certificate and the direct
//   simulations below m0 are two static_asserts (prove_phased_from_m0(),
//   prove_phased_below()): together they pass 80% of Clang 14's steps (checked with the
//   limits lowered to 80%).
// Each static_assert is one constant evaluation within the default limits of GCC 12 and
// Clang 14, with no -fconstexpr-* flag. The run-time twin is
// tests/runtime/analysis_test.cpp, through the same function (tests/static/proofs.hpp).
#include "proofs.hpp"

namespace {

using ctpipe::costs;
using ctpipe::rational;
using ctpipe::tests::prove_every_m_phased;
using ctpipe::tests::prove_phased_below;
using ctpipe::tests::prove_phased_from_m0;

constexpr auto gpipe = ctpipe::schedule_family::gpipe;
constexpr auto looped_bfs = ctpipe::schedule_family::looped_bfs;

constexpr costs article{};                                    // t_f = 1, t_b = 2
constexpr costs equal{rational{1}, rational{1}};              // t_f = t_b = 1
constexpr costs uneven{rational{1, 2}, rational{5, 3}};       // t_f = 1/2, t_b = 5/3
constexpr costs light_backward{rational{3}, rational{1, 2}};  // t_b < t_f
constexpr costs with_latency{rational{1}, rational{2}, rational{1}, rational{1}, rational{1, 4}};

// One (P, V) per static_assert past the smallest: Clang's step budget binds first.
#define CTPIPE_GPIPE_UP_TO_8(c, name)                                                     \
  static_assert(prove_every_m_phased(gpipe, c, 1, 4), "GPipe, every m, P <= 4, " name);   \
  static_assert(prove_every_m_phased(gpipe, c, 5, 6), "GPipe, every m, P 5 .. 6, " name); \
  static_assert(prove_every_m_phased(gpipe, c, 7, 7), "GPipe, every m, P = 7, " name);    \
  static_assert(prove_every_m_phased(gpipe, c, 8, 8), "GPipe, every m, P = 8, " name)

CTPIPE_GPIPE_UP_TO_8(article, "the article's costs");
static_assert(prove_every_m_phased(gpipe, article, 9, 10), "GPipe, every m, P 9 .. 10");
static_assert(prove_every_m_phased(gpipe, article, 11, 12), "GPipe, every m, P 11 .. 12");
static_assert(prove_every_m_phased(gpipe, article, 13, 14), "GPipe, every m, P 13 .. 14");
static_assert(prove_every_m_phased(gpipe, article, 15, 16), "GPipe, every m, P 15 .. 16");
CTPIPE_GPIPE_UP_TO_8(equal, "t_f = t_b");
CTPIPE_GPIPE_UP_TO_8(uneven, "fractional costs");
CTPIPE_GPIPE_UP_TO_8(light_backward, "t_b < t_f");
CTPIPE_GPIPE_UP_TO_8(with_latency, "t_c = 1/4");

#define CTPIPE_LOOPED_EACH_V(P)                                                                                   \
  static_assert(prove_every_m_phased(looped_bfs, article, P, P, 1, 1), "looped BFS, every m, P = " #P ", V = 1"); \
  static_assert(prove_every_m_phased(looped_bfs, article, P, P, 2, 2), "looped BFS, every m, P = " #P ", V = 2"); \
  static_assert(prove_every_m_phased(looped_bfs, article, P, P, 3, 3), "looped BFS, every m, P = " #P ", V = 3"); \
  static_assert(prove_every_m_phased(looped_bfs, article, P, P, 4, 4), "looped BFS, every m, P = " #P ", V = 4")

CTPIPE_LOOPED_EACH_V(1);
CTPIPE_LOOPED_EACH_V(2);
CTPIPE_LOOPED_EACH_V(3);
CTPIPE_LOOPED_EACH_V(4);
CTPIPE_LOOPED_EACH_V(5);
CTPIPE_LOOPED_EACH_V(6);
CTPIPE_LOOPED_EACH_V(7);
CTPIPE_LOOPED_EACH_V(8);
CTPIPE_LOOPED_EACH_V(9);
CTPIPE_LOOPED_EACH_V(10);
// From P = 11 at V >= 2 the certificate (m0 = P) and the m below it are separate
// static_asserts: together they pass 80% of Clang 14's steps (P = 16, V = 4: about 750
// thousand and 505 thousand).
#define CTPIPE_LOOPED_IN_PARTS(P, V)                                                                                  \
  static_assert(prove_phased_from_m0(looped_bfs, article, P, V, P), "looped BFS, every m >= P, P = " #P ", V = " #V); \
  static_assert(prove_phased_below(looped_bfs, article, P, V, P), "looped BFS, every m < P, P = " #P ", V = " #V)
#define CTPIPE_LOOPED_V_2_TO_4(P) \
  CTPIPE_LOOPED_IN_PARTS(P, 2);   \
  CTPIPE_LOOPED_IN_PARTS(P, 3);   \
  CTPIPE_LOOPED_IN_PARTS(P, 4)

CTPIPE_LOOPED_V_2_TO_4(11);
CTPIPE_LOOPED_V_2_TO_4(12);
CTPIPE_LOOPED_V_2_TO_4(13);
CTPIPE_LOOPED_V_2_TO_4(14);
CTPIPE_LOOPED_V_2_TO_4(15);
CTPIPE_LOOPED_V_2_TO_4(16);
static_assert(prove_every_m_phased(looped_bfs, article, 11, 11), "looped BFS, every m, P = 11, V = 1");
static_assert(prove_every_m_phased(looped_bfs, article, 12, 12), "looped BFS, every m, P = 12, V = 1");
static_assert(prove_every_m_phased(looped_bfs, article, 13, 13), "looped BFS, every m, P = 13, V = 1");
static_assert(prove_every_m_phased(looped_bfs, article, 14, 14), "looped BFS, every m, P = 14, V = 1");
static_assert(prove_every_m_phased(looped_bfs, article, 15, 15), "looped BFS, every m, P = 15, V = 1");
static_assert(prove_every_m_phased(looped_bfs, article, 16, 16), "looped BFS, every m, P = 16, V = 1");

}  // namespace
