// The nccl backend: a Communicator over NVIDIA NCCL, buffers in device memory (see
// comm/factory.h). Compiled only when CUDA and NCCL are found (SCALELAB_HAVE_NCCL).
//
// Two ways to start it:
//   make_nccl_communicator()           one process per GPU under mpirun/srun: the GPU is chosen by
//                                      local rank and the ncclUniqueId is shared over MPI.
//   run_nccl_single_process(n, body)   one process driving n GPUs (ncclCommInitAll), body(comm)
//                                      on one thread per GPU, like comm/local.h's run_local.
// Every call enqueues on the communicator's stream and waits for it, checking NCCL's
// asynchronous error state while it waits, so a failed peer surfaces as an error.
// Without a usable GPU both throw one runtime error naming the cause and suggesting --backend mpi.
// nccl_handle(comm) gives code that enqueues its own NCCL calls (gpu/bucketed_averager.h) the
// ncclComm_t and GPU behind a Communicator of this backend.
#pragma once
#include <functional>
#include <memory>

#include "comm/communicator.h"

struct ncclComm;  // nccl.h: typedef struct ncclComm* ncclComm_t

namespace scalelab::comm {

struct NcclHandle {
  ::ncclComm* comm;  // an ncclComm_t; owned by the Communicator
  int device;        // the CUDA device it drives
};
// The NCCL communicator behind `comm`; throws usage if `comm` is not the nccl backend.
[[nodiscard]] NcclHandle nccl_handle(Communicator& comm);

[[nodiscard]] std::unique_ptr<Communicator> make_nccl_communicator();
void run_nccl_single_process(int ngpus, const std::function<void(Communicator&)>& body);
// The number of GPUs CUDA reports, or throws the runtime error above (checking the return code:
// with no driver cudaGetDeviceCount fails and leaves the count untouched).
[[nodiscard]] int cuda_device_count_or_throw();

}  // namespace scalelab::comm
