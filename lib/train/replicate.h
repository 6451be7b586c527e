// Horovod's first two promises, made explicit: every rank built the same model, and every rank
// starts from rank 0's parameters, running statistics and optimizer state
// (hvd.broadcast_parameters / broadcast_optimizer_state). Both are collective.
#pragma once
#include <cstdint>

#include "comm/communicator.h"
#include "nn/parameter.h"
#include "optim/optimizer.h"

namespace scalelab::train {

// Compares the parameter count and the layout (every tensor's name and shape) across ranks;
// a mismatch throws a comm error on every rank naming the ranks that differ from rank 0.
void require_same_model(comm::Communicator& comm, const nn::ParameterSet& params);
// Broadcasts values, non-trainable state, the optimizer's state and step count, and `counters`
// (epoch and step counters, e.g. after rank 0 read a checkpoint) from rank 0.
void broadcast_from_rank0(comm::Communicator& comm, nn::ParameterSet& params, optim::Optimizer& optimizer,
                          std::int64_t* counters, std::size_t counter_count);

}  // namespace scalelab::train
