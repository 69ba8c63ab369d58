// The searched schedules the compile-time proofs (proofs_search.cpp) and the run-time
// tests (runtime/search_test.cpp) share: searched_v must equal search() without local
// repair, and the facts proved here are tested again at run time through the same
// functions (simulation::largest_span(), in_flight_profile::largest_peak()).
#pragma once

#include <ctpipe/ctpipe.hpp>

namespace ctpipe::tests {

/// P = 4, m = 8, the article's costs, limit 2: every construction (span 48, a fixed order's).
inline constexpr search_spec searched_small{pipeline_shape{4, 8, 1, placement::loop}, costs{}, rational{1},
                                            rational{2}};
/// P = 8, m = 32, the authors' P = 16 profile, gamma 16/37, limit 8 (k = 1): the
/// authors' 8 rule sets, the largest shape of the range.
inline constexpr search_spec searched_authors{
    pipeline_shape{8, 32, 1, placement::loop},
    costs{rational{28814}, rational{48112}, rational{28760}, rational{19352}, rational{1610}}, rational{16, 37},
    rational{8}, true};
/// The same shape and costs at limit 16 (k = 2) and every construction (the 72 rule sets
/// and 2 fixed orders, each a constant evaluation of its own): span 2480628, where the
/// authors' 8 give 2483794.
inline constexpr search_spec searched_moderate{searched_authors.shape, searched_authors.cost, rational{16, 37},
                                               rational{16}};

/// The V-shape, P = 4, m = 8, the article's costs, limit 2 full activations (4 chunks):
/// every construction (the 28 rule sets and the 8 fixed orders).
inline constexpr search_spec searched_v_small{pipeline_shape{4, 8, 2, placement::v_shape}, costs{}, rational{1},
                                              rational{2}};
/// The V-shape, P = 8, m = 32, the authors' P = 16 profile, gamma 16/37, limit 8 (k = 1):
/// their automatic ZB-V's 4 rule sets, the largest shape of the range.
inline constexpr search_spec searched_v_authors{
    pipeline_shape{8, 32, 2, placement::v_shape},
    costs{rational{28814}, rational{48112}, rational{28760}, rational{19352}, rational{1610}}, rational{16, 37},
    rational{8}, true};
/// The same shape and costs at limit 24 (k = 3) and every construction (the 28 rule sets
/// and 8 fixed orders): no bubble (span 2461632, the work), where the authors' 4 give
/// 2474512.
inline constexpr search_spec searched_v_moderate{searched_v_authors.shape, searched_v_authors.cost, rational{16, 37},
                                                 rational{24}};

}  // namespace ctpipe::tests
