// Choosing a communicator backend by name: what `--backend` maps to.
//
// Backends (all behind comm::Communicator, communicator.h):
//   mpi    Open MPI, host memory. One rank per process, launched by mpirun/srun; the world is a
//          duplicate of MPI_COMM_WORLD, local rank/size come from MPI_Comm_split_type(SHARED).
//          Library collectives are MPI_Allreduce & co. (float16 through a user-defined MPI op).
//   nccl   NVIDIA NCCL, device memory (memory_space() == device). One GPU per rank, chosen by
//          local rank; the ncclUniqueId travels over MPI. Built only when CUDA and NCCL are found
//          (SCALELAB_HAVE_NCCL); with no usable GPU it throws one line naming the cause and
//          suggesting --backend mpi. The "one process, several GPUs" mode is
//          run_nccl_single_process (backends/nccl_communicator.h).
//   local  N threads in one process (comm/local.h, run_local): for tests and demonstrations, not
//          reachable from make_communicator since it needs the threads around it.
//
//   auto comm = scalelab::comm::make_communicator("mpi");   // calls ensure_mpi_initialized()
//   comm->allreduce(buf, buf, n, DataType::f32, ReduceOp::sum);
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::comm {

// Names make_communicator accepts in this build ("mpi", and "nccl" when compiled in).
[[nodiscard]] std::vector<std::string> backend_names();
// True when `name` is a known backend but was not compiled into this build ("nccl" without NCCL).
[[nodiscard]] bool backend_known_but_absent(std::string_view name);
// Builds the communicator for this process. Unknown names are usage errors naming --backend and
// listing the valid ones; a backend that cannot start (no GPU, no NCCL) is a runtime error.
[[nodiscard]] std::unique_ptr<Communicator> make_communicator(std::string_view backend);

}  // namespace scalelab::comm
