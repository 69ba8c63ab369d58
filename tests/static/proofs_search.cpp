// Compile-time proofs of searched_v (ctpipe/plan/search.hpp): the frozen schedules,
// on the loop placement and the V-shape, are valid, within their memory limit, and have
// the span search() finds without local repair (tests/runtime/search_test.cpp compares
// them op for op).
#include "proofs_search.hpp"

namespace {
using namespace ctpipe;
using ctpipe::tests::searched_authors;
using ctpipe::tests::searched_moderate;
using ctpipe::tests::searched_small;
using ctpipe::tests::searched_v_authors;
using ctpipe::tests::searched_v_moderate;
using ctpipe::tests::searched_v_small;

constexpr auto& small = searched_v<searched_small>;
static_assert(small.size() == 96);
static_assert(validate(small.view()).ok());
static_assert(in_flight(small.view(), rational{1}).largest_peak() <= rational{2});
static_assert(simulate(small.view(), costs{}).largest_span() == rational{48});  // the groups of 2: a fixed order

constexpr auto& authors = searched_v<searched_authors>;
static_assert(authors.size() == 768);
static_assert(validate(authors.view()).ok());
static_assert(in_flight(authors.view(), rational{16, 37}).largest_peak() <= rational{8});

// P = 8, m = 32 at every construction (each its own constant evaluation): ctpipe's
// constructions beat the authors' 8 (2483794)
constexpr auto& moderate = searched_v<searched_moderate>;
static_assert(moderate.size() == 768);
static_assert(validate(moderate.view()).ok());
static_assert(in_flight(moderate.view(), rational{16, 37}).largest_peak() <= rational{16});
static_assert(simulate(moderate.view(), searched_moderate.cost).largest_span() == rational{2480628});

// the V-shape: peaks in chunks, two to a full activation
constexpr auto& v_small = searched_v<searched_v_small>;
static_assert(v_small.size() == 192);
static_assert(validate(v_small.view()).ok());
static_assert(in_flight(v_small.view(), rational{1}).largest_peak() <= rational{4});
static_assert(simulate(v_small.view(), costs{}).largest_span() == rational{59, 2});

constexpr auto& v_authors = searched_v<searched_v_authors>;
static_assert(v_authors.size() == 1536);
static_assert(validate(v_authors.view()).ok());
static_assert(in_flight(v_authors.view(), rational{16, 37}).largest_peak() <= rational{16});
static_assert(simulate(v_authors.view(), searched_v_authors.cost).largest_span() == rational{2585621});

// the V-shape at P = 8, m = 32, limit 24 (k = 3), every construction: no bubble, the span
// is the work 32 (t_f + t_i + t_w) (the authors' 4: 2474512)
constexpr auto& v_moderate = searched_v<searched_v_moderate>;
static_assert(v_moderate.size() == 1536);
static_assert(validate(v_moderate.view()).ok());
static_assert(in_flight(v_moderate.view(), rational{16, 37}).largest_peak() <= rational{48});
static_assert(simulate(v_moderate.view(), searched_v_moderate.cost).largest_span() ==
              rational{32} * (searched_v_moderate.cost.f + searched_v_moderate.cost.i + searched_v_moderate.cost.w));
}  // namespace
