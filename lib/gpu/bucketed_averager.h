// BucketedAverager: averages the flat device gradient buffer over every rank with NCCL, bucket
// by bucket as a StepPlan says (nn/step_plan.h, the plan the CPU averager executes too), each bucket's allreduce starting as soon as backward has
// produced all of its gradients, on a communication stream of its own, so that communication
// overlaps the rest of backward (PyTorch DDP's reducer, Horovod's background allreduce).
//
// Ordering is by CUDA events only: param_ready() records an event on the compute stream when the
// last parameter of a bucket is marked ready; the communication stream waits on that event and
// enqueues the bucket's allreduce (in place, ncclAvg; with fp16 compression: scale by 1/size,
// round to float16 into a wire buffer allocated once, ncclSum in float16, expand back, as
// train/gradient_averager.h does on the CPU). Buckets are launched strictly in plan order on
// every rank, as NCCL requires (a bucket ready early waits for the ones before it). finish()
// launches whatever is left (parameters never marked count as ready at that point, so an engine
// that does not report per layer still gets correct, unoverlapped averaging) and makes the
// compute stream wait for the last bucket, so the optimizer step enqueued after it sees averaged
// gradients. Nothing here blocks the host except
// synchronize(), which waits while polling ncclCommGetAsyncError and brings the whole job down
// with one line naming the NCCL error instead of hanging.
//
// Per step, on the last micro-batch's backward:
//   avg.param_ready(i, compute);   // after the backward of the layer owning parameter i
//   ...
//   avg.finish(compute);           // before the optimizer step on `compute`
//   optimizer.step(...);
//   avg.synchronize(compute);      // instead of cudaStreamSynchronize(compute)
//   AllreduceTiming t = avg.last_timing();
// Runs the allreduce at one rank too (NCCL then copies in place), so a single GPU exercises the
// same path. Compiled only with CUDA and NCCL.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "nn/step_plan.h"

struct ncclComm;  // nccl.h: typedef struct ncclComm* ncclComm_t

namespace scalelab::gpu {

// Where the allreduce time of the last step went, from CUDA events (milliseconds).
struct AllreduceTiming {
  std::size_t buckets = 0;
  double allreduce_ms = 0.0;   // sum over buckets of each one's allreduce (fp16 conversions included)
  double span_ms = 0.0;        // first bucket's start to last bucket's end on the communication stream
  double exposed_ms = 0.0;     // end of backward (the finish() call) to the last bucket's end, in [0, span_ms]
  double overlapped_ms = 0.0;  // span_ms - exposed_ms: communication hidden behind backward
};

class BucketedAverager {
 public:
  // comm: the nccl backend (comm/backends/nccl_communicator.h), else usage error. plan: the
  // buckets, their order and the wire precision. grads: the device gradient buffer of the
  // plan's parameter set (every bucket's range inside it).
  BucketedAverager(comm::Communicator& comm, nn::StepPlan plan, float* grads);
  ~BucketedAverager();
  BucketedAverager(const BucketedAverager&) = delete;
  BucketedAverager& operator=(const BucketedAverager&) = delete;

  [[nodiscard]] const nn::StepPlan& plan() const { return plan_; }
  [[nodiscard]] bool fp16() const { return plan_.options().fp16_wire; }
  // "3 buckets of <= 25 MiB, ncclAvg in float32, overlapping backward"
  [[nodiscard]] std::string describe() const;

  // Parameter `param` (declaration index) has its final gradient on `compute_stream` (everything
  // enqueued there so far). Each parameter at most once per step; launches what became ready.
  void param_ready(std::size_t param, cudaStream_t compute_stream);
  // Launches the remaining buckets (after the work enqueued on compute_stream so far) and makes
  // compute_stream wait for all of them. Ends the step: param_ready starts the next one.
  void finish(cudaStream_t compute_stream);
  // Blocks the host until compute_stream and the communication stream are idle, checking NCCL's
  // asynchronous error while it waits; on an error, aborts the job (every rank) with one line.
  void synchronize(cudaStream_t compute_stream);
  // A small in-place ncclSum of `count` floats of device memory (SyncBatchNorm's statistics) in
  // the middle of a step: on the communication stream, after the work enqueued on compute_stream
  // so far, and compute_stream waits for it. Queued behind the buckets already launched, on the
  // same NCCL communicator and stream, so every rank issues all its NCCL calls in one order (as
  // PyTorch's SyncBatchNorm shares its process group's stream with DDP's buckets).
  void allreduce_sum(float* data, std::size_t count, cudaStream_t compute_stream);
  // The last finished step's timing; valid after synchronize() and until the next param_ready().
  // Not for steps replayed from a captured CUDA graph: a replay does not re-record the events, so
  // the figures (or an error) are those of the capture.
  [[nodiscard]] AllreduceTiming last_timing() const;

 private:
  void release() noexcept;  // frees what the constructor made (also when it throws halfway)
  void launch_ready();
  void launch(std::size_t bucket);
  void wait_stream(cudaStream_t stream, const char* what);

  comm::Communicator& comm_;
  ::ncclComm* nccl_ = nullptr;
  int device_ = 0;
  nn::StepPlan plan_;
  float* grads_;
  cudaStream_t stream_ = nullptr;          // communication stream
  void* wire_ = nullptr;                   // fp16 wire buffer (largest bucket), device
  nn::BucketReadiness ready_params_{plan_};  // which buckets backward has completed this step
  std::vector<char> recorded_;             // per bucket: its ready event is recorded
  std::size_t next_ = 0;                   // next bucket to launch
  std::vector<cudaEvent_t> ready_;         // per bucket, on the compute stream (no timing)
  std::vector<cudaEvent_t> start_, end_;   // per bucket, on the communication stream
  cudaEvent_t backward_end_ = nullptr;     // recorded by finish() on the compute stream
  cudaEvent_t extra_ready_ = nullptr, extra_done_ = nullptr;  // allreduce_sum's ordering (no timing)
  bool timed_step_ = false;                // a finished step whose events can be read
};

}  // namespace scalelab::gpu
