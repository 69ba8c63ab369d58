// Bytes per op of frozen schedules (schedule_v): the op array plus the P+1 offsets plus
// the shape, divided by the op count. Prints a Markdown table.
#include <ctpipe/ctpipe.hpp>

#include <cstdio>

using namespace ctpipe;

template <const auto& S>
void row(const char* name) {
  std::printf("| %s | %zu | %zu | %.3f |\n", name, S.size(), sizeof(S),
              static_cast<double>(sizeof(S)) / static_cast<double>(S.size()));
}

constexpr auto& a = schedule_v<schedule_spec{schedule_family::one_f_one_b, {4, 8}}>;
constexpr auto& b = schedule_v<schedule_spec{schedule_family::one_f_one_b, {32, 512}}>;
constexpr auto& c = schedule_v<schedule_spec{schedule_family::interleaved_1f1b, {8, 64, 4}}>;
constexpr auto& d = schedule_v<schedule_spec{schedule_family::zbv, {8, 128, 2, placement::v_shape}}>;

int main() {
  std::printf("| schedule | ops | bytes | bytes per op |\n|---|---|---|---|\n");
  row<a>("1F1B P=4 m=8");
  row<b>("1F1B P=32 m=512");
  row<c>("interleaved P=8 m=64 V=4");
  row<d>("ZB-V P=8 m=128");
}
