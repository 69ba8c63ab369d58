// Compile-time proofs of searched_v (ctpipe/analysis/search.hpp): the frozen schedules
// are valid, within their memory limit, and have the span search() finds without local
// repair (tests/runtime/search_test.cpp compares them op for op).
#include "proofs_search.hpp"

namespace {
using namespace ctpipe;
using ctpipe::tests::searched_authors;
using ctpipe::tests::searched_small;

constexpr auto& small = searched_v<searched_small>;
static_assert(small.size() == 96);
static_assert(validate(small.view()).ok());
static_assert(in_flight(small.view(), rational{1}).largest_peak() <= rational{2});
static_assert(simulate(small.view(), costs{}).largest_span() == rational{48});  // the groups of 2: a fixed order

constexpr auto& authors = searched_v<searched_authors>;
static_assert(authors.size() == 768);
static_assert(validate(authors.view()).ok());
static_assert(in_flight(authors.view(), rational{16, 37}).largest_peak() <= rational{8});
}  // namespace
