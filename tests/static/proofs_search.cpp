// Compile-time proofs of searched_v (ctpipe/analysis/search.hpp): the frozen schedules
// are valid, within their memory limit, and have the span search() finds without local
// repair (tests/runtime/search_test.cpp compares them op for op).
#include "proofs_search.hpp"

namespace {
using namespace ctpipe;
using ctpipe::tests::largest_peak;
using ctpipe::tests::largest_span;
using ctpipe::tests::searched_authors;
using ctpipe::tests::searched_small;

constexpr auto& small = searched_v<searched_small>;
static_assert(small.size() == 96);
static_assert(validate(small.view()).ok());
static_assert(largest_peak(small.view(), rational{1}) <= rational{2});
static_assert(largest_span(small.view(), costs{}) == rational{48});  // the groups of 2: a fixed order

constexpr auto& authors = searched_v<searched_authors>;
static_assert(authors.size() == 768);
static_assert(validate(authors.view()).ok());
static_assert(largest_peak(authors.view(), rational{16, 37}) <= rational{8});
}  // namespace
