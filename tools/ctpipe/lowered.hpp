// The lowered lists --lowering makes, shared by the default view (csv-comms, json's
// executed entry), `ctpipe validate` and the Python package: ctpipe's lower() for the
// runtime model, DeepSeek's step(), or one of PyTorch's four orders, each with PyTorch's
// UNSHARD, RESHARD and REDUCE_GRAD (--torch-passes) as annotations.
#pragma once

#include <nlohmann/json.hpp>

#include <utility>
#include <vector>

#include "ctpipe/io/csv.hpp"
#include "ctpipe/io/torch_lowering.hpp"
#include "ctpipe/io/torch_passes.hpp"
#include "ctpipe/lower/deepseek.hpp"
#include "ctpipe/lower/lower.hpp"
#include "executed.hpp"
#include "options.hpp"

namespace ctpipe::tool {

/// The lists --lowering `o` makes of compute schedule `compute`: lower(compute, c, model,
/// scale) for `own`; least_loss_lists() for `least-loss`; lower_deepseek(*spec) for `deepseek` (`spec`: the generated
/// schedule's, never null then); io::lower_torch(compute, order, o.passes) for a torch
/// order. PyTorch's actions of `o.passes` come as annotations: placed on the lists by
/// io::torch_annotations() for `own` and `deepseek`, where PyTorch's passes put them (they
/// take rounds) for a torch order. `--format csv-comms` writes io::to_csv() of it. Raises
/// the library's messages.
inline io::csv_schedule lowered_lists(const schedule_spec* spec, schedule_view compute, const costs& c,
                                      runtime_model model, const cost_scale& scale, const lowering_options& o) {
  io::torch_lowering order{};
  if (torch_order_of(o.lowering, order)) return io::lower_torch(compute, order, o.passes);
  schedule ops = o.lowering == lowering_choice::deepseek     ? lower_deepseek(*spec)
                 : o.lowering == lowering_choice::least_loss ? least_loss_lists(compute, c, model, scale)
                                                             : lower(compute, c, model, scale);
  std::vector<io::csv_annotation> notes = io::torch_annotations(ops.view(), o.passes);
  return io::csv_schedule{std::move(ops), std::move(notes)};
}

/// The JSON `executed` object for --lowering `o`: for `own` each model's own lists
/// (own_lowering_json()), else the one set of lists of lowered_lists() run under every
/// model, or only `*only`; costs scaled by `scale`.
inline nlohmann::ordered_json lowering_json(const schedule_spec* spec, schedule_view compute, const costs& c,
                                            const runtime_model* only, const cost_scale& scale,
                                            const lowering_options& o) {
  if (o.lowering == lowering_choice::own || o.lowering == lowering_choice::least_loss)
    return own_lowering_json(compute, c, only, scale, o.lowering == lowering_choice::least_loss);
  const io::csv_schedule lists = lowered_lists(spec, compute, c, runtime_model::blocking, scale, o);
  return executed_json(execute_models(lists.view(), c, only, scale));
}

}  // namespace ctpipe::tool
