// SyncBatchNorm wiring (see sync_batchnorm.h).
#include "train/sync_batchnorm.h"

namespace scalelab::train {

void enable_sync_batchnorm(nn::Model& model, comm::Communicator& comm) {
  if (comm.size() == 1) {
    disable_sync_batchnorm(model);  // one rank: the local batch is the global batch
    return;
  }
  model.set_statistics_reducer([&comm](float* sums, std::size_t n) {
    comm.allreduce(sums, sums, n, comm::DataType::f32, comm::ReduceOp::sum);
  });
}

void disable_sync_batchnorm(nn::Model& model) { model.set_statistics_reducer(nn::StatisticsReducer{}); }

}  // namespace scalelab::train
