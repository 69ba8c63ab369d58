// ctpipe/ctpipe.hpp: the whole library (core, schedules, analysis). Defines nothing.
// Run-time I/O (text timeline, JSON) is opt-in under ctpipe/io/.
#pragma once

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/op.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"
#include "ctpipe/core/shape.hpp"
#include "ctpipe/schedules/generate.hpp"
#include "ctpipe/schedules/gpipe.hpp"
#include "ctpipe/schedules/interleaved.hpp"
#include "ctpipe/schedules/one_f_one_b.hpp"
#include "ctpipe/schedules/spec.hpp"
#include "ctpipe/schedules/zero_bubble.hpp"
#include "ctpipe/analysis/communication.hpp"
#include "ctpipe/analysis/formulas.hpp"
#include "ctpipe/analysis/memory.hpp"
#include "ctpipe/analysis/simulate.hpp"
#include "ctpipe/analysis/validate.hpp"
#include "ctpipe/analysis/walk.hpp"
