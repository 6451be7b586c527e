// make_cuda_engine in a build with CUDA and NCCL (CMake compiles this file or
// engine_factory_none.cpp): the CUDA engine of train/engine_cuda.h.
#include "train/engine_cuda.h"

namespace scalelab::train {

std::unique_ptr<Engine> make_cuda_engine(const TrainConfig& config, comm::Communicator& comm,
                                         const nn::Shape& sample_shape, std::size_t classes) {
  return std::make_unique<CudaEngine>(config, comm, sample_shape, classes);
}

}  // namespace scalelab::train
