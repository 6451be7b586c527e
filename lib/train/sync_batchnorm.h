// SyncBatchNorm: BatchNorm whose batch statistics are those of the GLOBAL batch. Every BatchNorm
// layer of a model gets a statistics reducer (nn/batch_norm.h's hook) that sums its per-channel
// statistics over all ranks with one small in-place allreduce in forward ([sum x, sum x^2,
// count], 2C+1 floats) and one in backward ([sum dy, sum dy*xhat], 2C floats). The output on each
// rank is then exactly what one rank would compute on the concatenated batch.
// Without it (the default) each rank normalises with its local batch's statistics, as Horovod
// does unless hvd.SyncBatchNormalization is used. Large global batches made of small per-rank
// batches are where the difference shows.
//
//   Trainer t(config, comm);
//   if (sync_bn) t.enable_sync_batchnorm();   // the engine's: this hook on the CPU, the device
//                                             // layers' own exchange over NCCL on the GPU
#pragma once
#include "comm/communicator.h"
#include "nn/model.h"

namespace scalelab::train {

// Installs the allreducing reducer on every BatchNorm layer of `model` (a no-op for models
// without BatchNorm). `comm` must outlive the model's use. Allocates nothing per call.
void enable_sync_batchnorm(nn::Model& model, comm::Communicator& comm);
// Removes it again: local statistics.
void disable_sync_batchnorm(nn::Model& model);

}  // namespace scalelab::train
