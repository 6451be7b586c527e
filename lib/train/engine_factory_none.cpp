// make_cuda_engine in a build without CUDA (CMake compiles this file or engine_factory_cuda.cpp):
// --device cuda is one clear error, raised on every rank before any communication.
#include "core/error.h"
#include "train/engine.h"

namespace scalelab::train {

std::unique_ptr<Engine> make_cuda_engine(const TrainConfig& /*config*/, comm::Communicator& /*comm*/,
                                         const nn::Shape& /*sample_shape*/, std::size_t /*classes*/) {
  throw_parameter(ErrorKind::usage, "device", "cuda: this scalelab was built without CUDA; rebuild with the CUDA toolkit or use cpu");
}

}  // namespace scalelab::train
