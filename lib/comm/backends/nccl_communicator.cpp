// The nccl backend (nccl_communicator.h). Host-side C++ only (no kernels): NCCL does the
// reductions on the GPU. int32 avg goes through NCCL's sum and one division on the host, so that
// it truncates exactly as the other backends do (reduce.h).
#include "comm/backends/nccl_communicator.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/backends/mpi_communicator.h"
#include "comm/reduce.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw_runtime(std::string("CUDA ") + what + " failed: " + cudaGetErrorString(rc));
}
void check_nccl(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) {
    throw_comm(std::string("NCCL ") + what + " failed: " + ncclGetErrorString(rc) +
               "; set NCCL_DEBUG=WARN for NCCL's own account");
  }
}

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::f32: return ncclFloat32;
    case DataType::f64: return ncclFloat64;
    case DataType::f16: return ncclFloat16;
    case DataType::i32: return ncclInt32;
  }
  return ncclFloat32;
}
ncclRedOp_t nccl_op(DataType t, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::avg: return t == DataType::i32 ? ncclSum : ncclAvg;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  return ncclSum;
}

class NcclCommunicator final : public Communicator {
 public:
  // control: the MPI communicator in one-process-per-GPU mode, which then owns `comm`. In
  // single-process mode control is null, the runner owns the comms, and `stop` tells this
  // thread that another GPU's thread failed.
  NcclCommunicator(ncclComm_t comm, int device, int rank, int size, int local_rank, int local_size,
                   std::unique_ptr<MpiCommunicator> control, const std::atomic<bool>* stop)
      : comm_(comm), device_(device), rank_(rank), size_(size), local_rank_(local_rank),
        local_size_(local_size), control_(std::move(control)), stop_(stop) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~NcclCommunicator() override {
    if (small_) cudaFree(small_);
    if (stream_) cudaStreamDestroy(stream_);
    if (comm_ && control_) ncclCommDestroy(comm_);
  }

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int local_rank() const override { return local_rank_; }
  [[nodiscard]] int local_size() const override { return local_size_; }
  [[nodiscard]] std::string backend() const override { return "nccl"; }
  [[nodiscard]] MemorySpace memory_space() const override { return MemorySpace::device; }
  [[nodiscard]] ncclComm_t handle() const { return comm_; }
  [[nodiscard]] int device() const { return device_; }

  void send(const void* buf, std::size_t bytes, int dst, int /*tag*/) override {
    check_nccl(ncclSend(buf, bytes, ncclInt8, dst, comm_, stream_), "ncclSend");
    wait();
  }
  void recv(void* buf, std::size_t bytes, int src, int /*tag*/) override {
    check_nccl(ncclRecv(buf, bytes, ncclInt8, src, comm_, stream_), "ncclRecv");
    wait();
  }
  void sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf, std::size_t recv_bytes,
                int src, int /*tag*/) override {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    check_nccl(ncclSend(sendbuf, send_bytes, ncclInt8, dst, comm_, stream_), "ncclSend");
    check_nccl(ncclRecv(recvbuf, recv_bytes, ncclInt8, src, comm_, stream_), "ncclRecv");
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    wait();
  }

  void allreduce(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) override {
    check_nccl(ncclAllReduce(sendbuf, recvbuf, count, nccl_type(type), nccl_op(type, op), comm_, stream_),
               "ncclAllReduce");
    wait();
    if (type == DataType::i32 && op == ReduceOp::avg) divide_on_host(recvbuf, count, type, op);
  }
  void broadcast(void* buf, std::size_t count, DataType type, int root) override {
    check_nccl(ncclBroadcast(buf, buf, count, nccl_type(type), root, comm_, stream_), "ncclBroadcast");
    wait();
  }
  void allgather(const void* sendbuf, void* recvbuf, std::size_t count, DataType type) override {
    check_nccl(ncclAllGather(sendbuf, recvbuf, count, nccl_type(type), comm_, stream_), "ncclAllGather");
    wait();
  }
  void reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) override {
    check_nccl(ncclReduceScatter(sendbuf, recvbuf, count, nccl_type(type), nccl_op(type, op), comm_, stream_),
               "ncclReduceScatter");
    wait();
    if (type == DataType::i32 && op == ReduceOp::avg) divide_on_host(recvbuf, count, type, op);
  }
  void barrier() override {
    if (control_) {
      control_->barrier();
      return;
    }
    char token = 0;
    std::vector<char> all(static_cast<std::size_t>(size_));
    host_allgather(&token, all.data(), 1);
  }

  void local_copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0 || dst == src) return;
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
    wait();
  }

  // Through a small device buffer (grown once) and ncclAllGather: works in both modes.
  void host_allgather(const void* send, void* recv, std::size_t bytes_per_rank) override {
    if (control_) {
      control_->host_allgather(send, recv, bytes_per_rank);
      return;
    }
    const std::size_t total = bytes_per_rank * static_cast<std::size_t>(size_);
    if (total > small_bytes_) {
      if (small_) check_cuda(cudaFree(small_), "cudaFree");
      check_cuda(cudaMalloc(&small_, total), "cudaMalloc");
      small_bytes_ = total;
    }
    char* slot = static_cast<char*>(small_) + bytes_per_rank * static_cast<std::size_t>(rank_);
    check_cuda(cudaMemcpy(slot, send, bytes_per_rank, cudaMemcpyHostToDevice), "cudaMemcpy");
    check_nccl(ncclAllGather(slot, small_, bytes_per_rank, ncclInt8, comm_, stream_), "ncclAllGather");
    wait();
    check_cuda(cudaMemcpy(recv, small_, total, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

  [[noreturn]] void abort(const std::string& message, int exit_code) override {
    std::fprintf(stderr, "scalelab: rank %d: %s\n", rank_, message.c_str());
    std::fflush(stderr);
    if (control_) {
      if (comm_) ncclCommAbort(comm_);
      comm_ = nullptr;
      control_->abort(message, exit_code);
    }
    std::_Exit(exit_code);
  }

 private:
  // Waits for the stream, checking NCCL's asynchronous error (a peer that died or aborted).
  void wait() {
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(stream_);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) check_cuda(rc, "stream synchronisation");
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
      check_nccl(async, "collective (asynchronous error)");
      if (stop_ && stop_->load()) {
        throw_comm("nccl rank " + std::to_string(rank_) + ": another GPU's thread failed; abandoning this call");
      }
      std::this_thread::yield();
    }
  }
  void divide_on_host(void* device_buf, std::size_t count, DataType type, ReduceOp op) {
    const std::size_t bytes = count * size_of(type);
    host_.resize(bytes);
    check_cuda(cudaMemcpy(host_.data(), device_buf, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    finish_reduction(host_.data(), count, type, op, size_);
    check_cuda(cudaMemcpy(device_buf, host_.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int device_ = 0, rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::unique_ptr<MpiCommunicator> control_;
  const std::atomic<bool>* stop_ = nullptr;
  void* small_ = nullptr;  // host_allgather staging on the device
  std::size_t small_bytes_ = 0;
  std::vector<unsigned char> host_;  // int32 avg staging
};

}  // namespace

NcclHandle nccl_handle(Communicator& comm) {
  auto* nccl = dynamic_cast<NcclCommunicator*>(&comm);
  if (nccl == nullptr) {
    throw_parameter(ErrorKind::usage, "backend",
                    comm.backend() + ": GPU gradient averaging needs the nccl communicator; use nccl");
  }
  return {nccl->handle(), nccl->device()};
}

int cuda_device_count_or_throw() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    throw_parameter(ErrorKind::runtime, "backend",
                    std::string("nccl: no usable GPU (cudaGetDeviceCount: ") + cudaGetErrorString(rc) +
                        "); use mpi to run on the CPU");
  }
  if (count == 0) throw_parameter(ErrorKind::runtime, "backend", "nccl: CUDA reports no GPU; use mpi to run on the CPU");
  return count;
}

std::unique_ptr<Communicator> make_nccl_communicator() {
  auto control = std::make_unique<MpiCommunicator>();
  const int ngpus = cuda_device_count_or_throw();
  if (control->local_rank() >= ngpus) {
    throw_parameter(ErrorKind::runtime, "backend", "nccl: local rank " + std::to_string(control->local_rank()) + " needs GPU " +
                  std::to_string(control->local_rank()) + " but this node shows " + std::to_string(ngpus) +
                  "; launch at most " + std::to_string(ngpus) + (ngpus == 1 ? " rank" : " ranks") + " per node");
  }
  const int device = control->local_rank();
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  ncclUniqueId id;
  if (control->rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  control->broadcast(&id, sizeof(id), DataType::f16, 0);  // bytes travel as 2-byte elements
  static_assert(sizeof(ncclUniqueId) % 2 == 0);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, control->size(), id, control->rank()), "ncclCommInitRank");
  const int rank = control->rank(), size = control->size();
  const int local_rank = control->local_rank(), local_size = control->local_size();
  return std::make_unique<NcclCommunicator>(comm, device, rank, size, local_rank, local_size, std::move(control),
                                            nullptr);
}

void run_nccl_single_process(int ngpus, const std::function<void(Communicator&)>& body) {
  const int available = cuda_device_count_or_throw();
  if (ngpus < 1 || ngpus > available) {
    throw_usage("nccl single-process mode: asked for " + std::to_string(ngpus) + " GPUs but this machine shows " +
                std::to_string(available) + "; ask for 1.." + std::to_string(available));
  }
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(ngpus));
  std::vector<int> devices(static_cast<std::size_t>(ngpus));
  for (int i = 0; i < ngpus; ++i) devices[static_cast<std::size_t>(i)] = i;
  check_nccl(ncclCommInitAll(comms.data(), ngpus, devices.data()), "ncclCommInitAll");

  std::mutex mutex;
  std::exception_ptr first_error;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < ngpus; ++i) {
    threads.emplace_back([&, i] {
      try {
        NcclCommunicator comm(comms[static_cast<std::size_t>(i)], i, i, ngpus, i, ngpus, nullptr, &stop);
        body(comm);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first_error) first_error = std::current_exception();
        stop = true;  // the other threads' waits throw instead of hanging
      }
    });
  }
  for (auto& t : threads) t.join();
  // After a failure the comms may hold unfinished operations: abort them rather than destroy.
  for (ncclComm_t c : comms) {
    if (first_error) {
      ncclCommAbort(c);
    } else {
      ncclCommDestroy(c);
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace scalelab::comm
