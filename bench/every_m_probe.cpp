// Probe for the cost of a proof for every m (docs/proofs.md, "Proofs for every m"): the
// makespan, bubble fraction and peak closed forms of CTPIPE_FAMILY at P = CTPIPE_P hold
// for every m >= 1, from one periodic certificate and the direct simulations below its
// m0, as tests/static/proofs_periodic.cpp proves them. Compile with
// -DCTPIPE_FAMILY=one_f_one_b|zb_h1|zb_h2 -DCTPIPE_P=..; bench/every_m_cost.sh times it
// beside bench/largest_proof.cpp at one m.
#include <ctpipe/ctpipe.hpp>

using namespace ctpipe;

constexpr schedule_spec spec{schedule_family::CTPIPE_FAMILY, {CTPIPE_P, 1}};

constexpr bool every_m() {
  const periodic_certificate cert = periodic_certificate_of(spec, costs{});
  return cert.proved && bool(closed_forms_hold_from_m0(cert, spec, costs{})) &&
         bool(closed_forms_hold_directly(spec, costs{}, 1, cert.m0));
}
static_assert(every_m());

int main() { return 0; }
