// scalelab's public API in one include: what a data-parallel training program needs.
//   runtime.h     Runtime (init/finalize), rank/size/local_rank, broadcast, metric averaging, rank-0 guard
//   data.h        data sets, batches, the sharded sampler
//   model.h       the model zoo, a training step on one batch
//   optimizer.h   optimizers, DistributedOptimizer (averaging, accumulation, fp16 wire)
//   schedule.h    learning-rate scaling, warm-up and decay
//   checkpoint.h  checkpoints
// Reference and a complete example: docs/api.md. Link scalelab::scalelab (find_package(scalelab)).
#pragma once
#include "scalelab/checkpoint.h"
#include "scalelab/data.h"
#include "scalelab/model.h"
#include "scalelab/optimizer.h"
#include "scalelab/runtime.h"
#include "scalelab/schedule.h"
