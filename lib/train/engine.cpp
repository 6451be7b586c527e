// make_engine and the --device names (train/engine.h).
#include "train/engine.h"

#include <fmt/format.h>

#include "core/error.h"
#include "train/engine_cpu.h"

namespace scalelab::train {

void check_one_gpu_per_rank(int local_ranks, int gpus) {
  if (local_ranks <= gpus) return;
  throw_parameter(ErrorKind::usage, "device",
                  fmt::format("cuda: {} ranks on this node but {} GPU{}; one GPU per rank: launch at most {} rank{} "
                              "per node",
                              local_ranks, gpus, gpus == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s"));
}

std::unique_ptr<Engine> make_engine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape,
                                    std::size_t classes) {
  config.validate();
  if (config.device == "cuda") return make_cuda_engine(config, comm, sample_shape, classes);
  return std::make_unique<CpuEngine>(config, comm, sample_shape, classes);
}

nn::StepPlan make_step_plan(const TrainConfig& config, const nn::ParameterSet& params) {
  return nn::StepPlan(params.params(), {.bucket_cap_bytes = config.bucket_cap_bytes,
                                        .fp16_wire = config.fp16_allreduce,
                                        .backward_passes_per_step = config.backward_passes_per_step});
}

}  // namespace scalelab::train
