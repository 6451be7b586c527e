// make_engine and the --device names (train/engine.h).
#include "train/engine.h"

#include "core/error.h"
#include "train/engine_cpu.h"

namespace scalelab::train {

void check_device_name(const std::string& device, const std::string& flag) {
  if (device != "cpu" && device != "cuda") throw_usage(flag + " " + device + ": unknown device; use cpu or cuda");
}

std::unique_ptr<Engine> make_engine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape,
                                    std::size_t classes) {
  check_device_name(config.device, "--device");
  if (config.device == "cuda") return make_cuda_engine(config, comm, sample_shape, classes);
  return std::make_unique<CpuEngine>(config, comm, sample_shape, classes);
}

}  // namespace scalelab::train
