// make_communicator and the list of backends (factory.h).
#include "comm/factory.h"

#include "comm/backends/mpi_communicator.h"
#include "core/error.h"
#ifdef SCALELAB_HAVE_NCCL
#include "comm/backends/nccl_communicator.h"
#endif

namespace scalelab::comm {

std::vector<std::string> backend_names() {
#ifdef SCALELAB_HAVE_NCCL
  return {"mpi", "nccl"};
#else
  return {"mpi"};
#endif
}

bool backend_known_but_absent(std::string_view name) {
#ifdef SCALELAB_HAVE_NCCL
  (void)name;
  return false;
#else
  return name == "nccl";
#endif
}

std::unique_ptr<Communicator> make_communicator(std::string_view backend) {
  if (backend == "mpi") return std::make_unique<MpiCommunicator>();
#ifdef SCALELAB_HAVE_NCCL
  if (backend == "nccl") return make_nccl_communicator();
#endif
  if (backend_known_but_absent(backend)) {
    throw_parameter(ErrorKind::usage, "backend",
                    "nccl: this scalelab was built without NCCL (no CUDA toolkit with NCCL was found at configure "
                    "time); use mpi, or rebuild where CUDA and NCCL are installed");
  }
  std::string valid;
  for (const auto& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw_parameter(ErrorKind::usage, "backend", ": unknown backend '" + std::string(backend) + "'; use one of " + valid);
}

}  // namespace scalelab::comm
