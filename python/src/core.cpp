// ctpipe._core: the Python extension (nanobind). A thin layer over the library's headers
// and the tool's request and readouts (tools/ctpipe/request.hpp, invoke.hpp): a request is
// parsed by the tool's own option parser, every readout is the tool's, and the numbers
// come from the same functions (generate, lower, simulate). The Python API over it is
// python/ctpipe/__init__.py; docs/python.md documents both.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/io/format.hpp"
#include "ctpipe/io/csv.hpp"
#include "ctpipe/schedules/generate.hpp"
#include "invoke.hpp"
#include "lowered.hpp"
#include "options.hpp"
#include "output.hpp"
#include "request.hpp"

namespace nb = nanobind;

namespace {

using ctpipe::tool::request;

/// The Python exception every library and tool message is raised as (ctpipe.Error).
nb::object error_type;

/// Runs `f`, turning the library's and the tool's rejections into ctpipe.Error with their
/// `ctpipe:` message.
template <class F>
auto guarded(F&& f) {
  try {
    return f();
  } catch (const ctpipe::tool::invalid_schedule& e) {
    std::string text;
    for (const std::string& line : e.lines) text += (text.empty() ? "" : "\n") + line;
    PyErr_SetString(error_type.ptr(), text.c_str());
  } catch (const ctpipe::tool::usage_error& e) {
    PyErr_SetString(error_type.ptr(), e.what());
  } catch (const ctpipe::error& e) {
    PyErr_SetString(error_type.ptr(), e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(error_type.ptr(), "ctpipe: out of memory");
  }
  throw nb::python_error();
}

/// An exact number as Python's (numerator, denominator).
nb::tuple fraction(ctpipe::rational x) { return nb::make_tuple(x.num, x.den); }

/// The largest schedule the package generates: the tool's largest view (--format text),
/// 2^24 ops, about 64 MiB of ops and a simulation of some hundreds of MiB.
constexpr long long max_ops = ctpipe::tool::max_text_ops;

/// generate(), or ctpipe.Error when the request has more than max_ops ops.
ctpipe::schedule generate_within_limit(const request& req) {
  return guarded([&] {
    ctpipe::tool::check_op_limit(static_cast<long long>(ctpipe::total_ops(req.spec)), max_ops,
                                 "the Python package");  // the tool's text view's limit
    return ctpipe::generate(req.spec);
  });
}

/// One request with its generated schedule (ctpipe.Schedule holds one).
class schedule_request {
 public:
  explicit schedule_request(const std::vector<std::string>& args)
      : req_(guarded([&] { return ctpipe::tool::parse_request(args); })), sched_(generate_within_limit(req_)) {}

  const request& req() const { return req_; }
  ctpipe::schedule_view view() const { return sched_.view(); }

  /// The lowered lists (compute ops with SEND/RECV, PyTorch's UNSHARD, RESHARD and
  /// REDUCE_GRAD of --torch-passes as annotations) for the request's --runtime and
  /// --lowering, as `--format csv-comms` writes them.
  ctpipe::io::csv_schedule lowered() const {
    return guarded([&] {
      return ctpipe::tool::lowered_lists(&req_.spec, sched_.view(), req_.cost, req_.opts.runtime, req_.scale(),
                                         req_.opts);
    });
  }

 private:
  request req_;
  ctpipe::schedule sched_;
};

/// Per rank, PyTorch's action strings of `v`, with `notes` (by rank, then position, as
/// torch_annotations() and lower_torch() give them) in place: to_csv()'s cells.
std::vector<std::vector<std::string>> action_rows(ctpipe::schedule_view v,
                                                  const std::vector<ctpipe::io::csv_annotation>& notes) {
  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(v.shape.P));
  std::size_t next = 0;
  for (int r = 0; r < v.shape.P; ++r) {
    const auto ops = v.rank(r);
    auto& row = rows[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i <= ops.size(); ++i) {
      for (; next < notes.size() && notes[next].rank == r && notes[next].position == i; ++next)
        row.push_back(notes[next].text);
      if (i == ops.size()) break;
      if (ops[i].kind() == ctpipe::op_kind::overlap_f_b && i + 1 < ops.size()) {
        row.push_back(ctpipe::io::pair_action(ops[i], ops[i + 1]));
        ++i;
      } else {
        row.push_back(ctpipe::io::action(ops[i]));
      }
    }
  }
  return rows;
}

/// The ops of `v` as four byte strings: kind codes (uint8, core/op.hpp's op_kind),
/// stages and micro-batches (int32, native order), per-rank offsets (int64, P + 1).
nb::tuple op_arrays(ctpipe::schedule_view v) {
  const std::size_t n = v.ops.size();
  std::string kinds(n, '\0');
  std::vector<std::int32_t> stages(n);
  std::vector<std::int32_t> microbatches(n);
  for (std::size_t i = 0; i < n; ++i) {
    kinds[i] = static_cast<char>(v.ops[i].kind());
    stages[i] = v.ops[i].stage();
    microbatches[i] = v.ops[i].microbatch();
  }
  std::vector<std::int64_t> offsets(v.offsets.begin(), v.offsets.end());
  auto bytes_of = [](const auto& vec) {
    return nb::bytes(reinterpret_cast<const char*>(vec.data()), vec.size() * sizeof(vec[0]));
  };
  return nb::make_tuple(nb::bytes(kinds.data(), kinds.size()), bytes_of(stages), bytes_of(microbatches),
                        bytes_of(offsets));
}

/// ctpipe.Error (error_type): the exception every rejection is raised as.
void bind_error(nb::module_& m) {
  // A Schedule held by a global at exit (a training script's) is freed after nanobind's
  // check for leaks runs when torch is loaded too; the report would be noise.
  nb::set_leak_warnings(false);
  error_type = nb::borrow(PyErr_NewExceptionWithDoc(
      "ctpipe.Error",
      "A rejected request, schedule or file: the message is the library's or the tool's `ctpipe:` line.",
      PyExc_ValueError, nullptr));
  m.attr("Error") = error_type;
}

/// invoke(args): the tool run in this process.
void bind_invoke(nb::module_& m) {
  m.def(
      "invoke",
      [](const std::vector<std::string>& args) {
        const ctpipe::tool::invocation run = ctpipe::tool::invoke(args);
        return nb::make_tuple(run.exit_code, nb::bytes(run.out.data(), run.out.size()), run.err);
      },
      nb::arg("args"),
      "Runs the ctpipe tool on `args` (no program name) in this process: (exit code, stdout bytes, stderr text).");
}

/// Request's constructor and its shape: family, P, m, V, placement, num_stages, num_ops,
/// stages_of(rank).
void bind_request_shape(nb::class_<schedule_request>& c) {
  c.def(nb::init<const std::vector<std::string>&>(), nb::arg("args"),
        "Parses the tool's options `args` (without --format); raises ctpipe.Error with the tool's message.")
      .def_prop_ro("family",
                   [](const schedule_request& s) { return std::string(ctpipe::family_name(s.req().spec.family)); })
      .def_prop_ro("P", [](const schedule_request& s) { return s.req().spec.shape.P; })
      .def_prop_ro("m", [](const schedule_request& s) { return s.req().spec.shape.m; })
      .def_prop_ro("V", [](const schedule_request& s) { return s.req().spec.shape.V; })
      .def_prop_ro(
          "placement",
          [](const schedule_request& s) { return std::string(ctpipe::placement_name(s.req().spec.shape.layout)); })
      .def_prop_ro("num_stages", [](const schedule_request& s) { return s.req().spec.shape.stages(); })
      .def_prop_ro("num_ops", [](const schedule_request& s) { return s.view().ops.size(); })
      .def(
          "stages_of",
          [](const schedule_request& s, int rank) {
            const ctpipe::pipeline_shape& shape = s.req().spec.shape;
            return guarded([&] {
              ctpipe::detail::require(rank >= 0 && rank < shape.P, "ctpipe: stages_of(rank): rank must be in [0, P)");
              std::vector<int> out;
              for (int c = 0; c < shape.V; ++c) out.push_back(shape.stage_of(rank, c));
              return out;
            });
          },
          nb::arg("rank"));
}

/// Request's readouts: actions(comms), arrays(comms), simulate().
void bind_request_readouts(nb::class_<schedule_request>& c) {
  c.def(
       "actions",
       [](const schedule_request& s, bool comms) {
         return guarded([&] {
           if (!comms) return action_rows(s.view(), {});
           const ctpipe::io::csv_schedule lowered = s.lowered();
           return action_rows(lowered.view(), lowered.annotations);
         });
       },
       nb::arg("comms") = false)
      .def(
          "arrays",
          [](const schedule_request& s, bool comms) {
            return guarded([&] {
              if (!comms) return op_arrays(s.view());
              const ctpipe::io::csv_schedule lowered = s.lowered();
              return op_arrays(lowered.view());
            });
          },
          nb::arg("comms") = false)
      .def("simulate", [](const schedule_request& s) {
        return guarded([&] {
          const ctpipe::simulation sim = ctpipe::simulate(s.view(), s.req().cost, s.req().scale());
          nb::list idle;
          for (int r = 0; r < s.req().spec.shape.P; ++r) idle.append(fraction(sim.idle(r)));
          nb::dict out;
          out["makespan"] = fraction(sim.makespan());
          out["bubble_fraction"] = fraction(sim.bubble_fraction());
          out["idle"] = idle;
          return out;
        });
      });
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ctpipe's C++ core (nanobind); use the ctpipe package, not this module.";
  bind_error(m);
  bind_invoke(m);
  nb::class_<schedule_request> request_class(m, "Request", "One checked request and its generated schedule.");
  bind_request_shape(request_class);
  bind_request_readouts(request_class);
}
