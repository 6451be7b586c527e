// require_same_model and broadcast_from_rank0 (train/replicate.h).
#include "train/replicate.h"

#include <functional>
#include <string>
#include <vector>

#include "comm/consistency.h"
#include "core/error.h"

namespace scalelab::train {
void require_same_model(comm::Communicator& comm, const nn::ParameterSet& params) {
  comm::require_same(comm, params.size(), "the model: ranks built different parameter counts");
  comm::require_same(comm, params.count(), "the model: ranks built different numbers of parameter tensors");
  comm::require_same(comm, comm::fingerprint(params.layout_signature()),
                     "the model: ranks built different tensor shapes (layout fingerprints)");
  comm::require_same(comm, params.state().size(), "the model: ranks built different non-trainable state sizes");
}

void broadcast_from_rank0(comm::Communicator& comm, nn::ParameterSet& params, optim::Optimizer& optimizer,
                          std::int64_t* counters, std::size_t counter_count) {
  optimizer.bind(params);
  comm::require_same(comm, optimizer.state().size(), "the optimizer: ranks hold different state sizes");
  comm.broadcast(params.values().data(), params.values().size(), comm::DataType::f32, 0);
  if (!params.state().empty()) comm.broadcast(params.state().data(), params.state().size(), comm::DataType::f32, 0);
  if (!optimizer.state().empty()) {
    comm.broadcast(optimizer.state().data(), optimizer.state().size(), comm::DataType::f32, 0);
  }
  std::vector<double> c(counter_count + 1);
  c[0] = static_cast<double>(optimizer.step_count());
  for (std::size_t i = 0; i < counter_count; ++i) c[i + 1] = static_cast<double>(counters[i]);
  comm.broadcast(c.data(), c.size(), comm::DataType::f64, 0);
  optimizer.set_step_count(static_cast<std::int64_t>(c[0]));
  for (std::size_t i = 0; i < counter_count; ++i) counters[i] = static_cast<std::int64_t>(c[i + 1]);
}

}  // namespace scalelab::train
