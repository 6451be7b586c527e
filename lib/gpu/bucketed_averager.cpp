// BucketedAverager (gpu/bucketed_averager.h): per-step bookkeeping of which buckets are ready,
// their launch in plan order on the communication stream, the host wait that watches NCCL's
// asynchronous error, and the event timings.
#include "gpu/bucketed_averager.h"

#include <nccl.h>

#include <algorithm>
#include <string>
#include <thread>

#include "comm/backends/nccl_communicator.h"
#include "core/error.h"
#include "gpu/bucketed_averager_kernels.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 10, 0)
#error "the bucketed averager needs NCCL >= 2.10 (ncclAvg)"
#endif

namespace scalelab::gpu {
namespace {

// Local checks rather than gpu/cuda_check.h, which includes cuDNN's and cuBLAS's headers: this
// file is built with CUDA and NCCL alone.
void check_cuda(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw_runtime("gradient averaging: CUDA " + what + " failed: " + cudaGetErrorString(rc));
}
void check_nccl(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess) {
    throw_comm("gradient averaging: NCCL " + what + " failed: " + ncclGetErrorString(rc) +
               "; set NCCL_DEBUG=WARN for NCCL's own account");
  }
}

}  // namespace

BucketedAverager::BucketedAverager(comm::Communicator& comm, nn::StepPlan plan, float* grads)
    : comm_(comm), plan_(std::move(plan)), grads_(grads) {
  const comm::NcclHandle h = comm::nccl_handle(comm);  // usage error unless the backend is nccl
  nccl_ = h.comm;
  device_ = h.device;
  const std::size_t buckets = plan_.size();
  recorded_.assign(buckets, 0);
  ready_.assign(buckets, nullptr);
  start_.assign(buckets, nullptr);
  end_.assign(buckets, nullptr);
  try {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creation of the communication stream");
    if (fp16() && plan_.largest_count() > 0) {
      check_cuda(cudaMalloc(&wire_, plan_.largest_count() * 2), "cudaMalloc of the float16 wire buffer");
    }
    for (std::size_t k = 0; k < buckets; ++k) {
      // Ordering events carry no timestamps (cheaper); the timing events do.
      check_cuda(cudaEventCreateWithFlags(&ready_[k], cudaEventDisableTiming), "cudaEventCreate");
      check_cuda(cudaEventCreate(&start_[k]), "cudaEventCreate");
      check_cuda(cudaEventCreate(&end_[k]), "cudaEventCreate");
    }
    check_cuda(cudaEventCreate(&backward_end_), "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&extra_ready_, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&extra_done_, cudaEventDisableTiming), "cudaEventCreate");
  } catch (...) {
    release();
    throw;
  }
}

BucketedAverager::~BucketedAverager() { release(); }

void BucketedAverager::release() noexcept {
  for (auto* list : {&ready_, &start_, &end_}) {
    for (cudaEvent_t& e : *list) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
  }
  for (cudaEvent_t* e : {&backward_end_, &extra_ready_, &extra_done_}) {
    if (*e) cudaEventDestroy(*e);
    *e = nullptr;
  }
  if (wire_) cudaFree(wire_);
  wire_ = nullptr;
  if (stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

std::string BucketedAverager::describe() const {
  std::string s = plan_.describe();
  s += fp16() ? ", float16 on the wire (ncclSum of gradients pre-scaled by 1/size)" : ", ncclAvg in float32";
  s += ", launched as backward produces them";
  return s;
}

void BucketedAverager::param_ready(std::size_t param, cudaStream_t compute_stream) {
  if (!ready_params_.mark(param)) return;
  const std::size_t k = plan_.bucket_of(param);
  // Everything enqueued on the compute stream so far includes this bucket's last gradient.
  check_cuda(cudaEventRecord(ready_[k], compute_stream), "cudaEventRecord");
  recorded_[k] = 1;
  launch_ready();
}

void BucketedAverager::launch_ready() {
  // Strictly in plan order: every rank must issue the same NCCL calls in the same order.
  while (next_ < plan_.size() && recorded_[next_]) launch(next_++);
}

void BucketedAverager::launch(std::size_t k) {
  const nn::Bucket& b = plan_.buckets()[k];
  float* g = grads_ + b.offset;
  check_cuda(cudaStreamWaitEvent(stream_, ready_[k], 0), "cudaStreamWaitEvent");
  check_cuda(cudaEventRecord(start_[k], stream_), "cudaEventRecord");
  if (fp16()) {
    const float scale = 1.0f / static_cast<float>(comm_.size());
    check_cuda(launch_scale_to_half(g, wire_, b.count, scale, stream_), "launch of the float16 conversion");
    check_nccl(ncclAllReduce(wire_, wire_, b.count, ncclFloat16, ncclSum, nccl_, stream_),
               "ncclAllReduce of gradient bucket " + std::to_string(k));
    check_cuda(launch_half_to_float(wire_, g, b.count, stream_), "launch of the float16 expansion");
  } else {
    check_nccl(ncclAllReduce(g, g, b.count, ncclFloat32, ncclAvg, nccl_, stream_),
               "ncclAllReduce of gradient bucket " + std::to_string(k));
  }
  check_cuda(cudaEventRecord(end_[k], stream_), "cudaEventRecord");
}

void BucketedAverager::allreduce_sum(float* data, std::size_t count, cudaStream_t compute_stream) {
  check_cuda(cudaEventRecord(extra_ready_, compute_stream), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(stream_, extra_ready_, 0), "cudaStreamWaitEvent");
  check_nccl(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, nccl_, stream_), "ncclAllReduce of " +
             std::to_string(count) + " statistics");
  check_cuda(cudaEventRecord(extra_done_, stream_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(compute_stream, extra_done_, 0), "cudaStreamWaitEvent");
}

void BucketedAverager::finish(cudaStream_t compute_stream) {
  check_cuda(cudaEventRecord(backward_end_, compute_stream), "cudaEventRecord");
  // Buckets whose parameters were not all marked (an engine that does not report per layer):
  // ready now, at the end of backward.
  for (std::size_t k = next_; k < plan_.size(); ++k) {
    if (!recorded_[k]) {
      check_cuda(cudaEventRecord(ready_[k], compute_stream), "cudaEventRecord");
      recorded_[k] = 1;
    }
  }
  launch_ready();
  // The communication stream runs in order: the last bucket's end implies all of them.
  if (!plan_.buckets().empty()) check_cuda(cudaStreamWaitEvent(compute_stream, end_.back(), 0), "cudaStreamWaitEvent");
  ready_params_.reset();
  std::fill(recorded_.begin(), recorded_.end(), 0);
  next_ = 0;
  timed_step_ = true;
}

void BucketedAverager::wait_stream(cudaStream_t stream, const char* what) {
  for (;;) {
    const cudaError_t rc = cudaStreamQuery(stream);
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) check_cuda(rc, std::string("wait for ") + what);
    ncclResult_t async = ncclSuccess;
    const ncclResult_t q = ncclCommGetAsyncError(nccl_, &async);
    if (q != ncclSuccess) async = q;
    if (async != ncclSuccess && async != ncclInProgress) {
      // A peer died or NCCL failed: the collective will never complete. Bring every rank down.
      comm_.abort("gradient averaging: NCCL failed while waiting for " + std::string(what) + ": " +
                      ncclGetErrorString(async) + "; set NCCL_DEBUG=WARN for NCCL's own account",
                  1);
    }
    std::this_thread::yield();
  }
}

void BucketedAverager::synchronize(cudaStream_t compute_stream) {
  wait_stream(stream_, "the gradient allreduce");
  wait_stream(compute_stream, "the training step");
}

AllreduceTiming BucketedAverager::last_timing() const {
  AllreduceTiming t;
  if (!timed_step_ || plan_.buckets().empty()) return t;
  auto ms = [](cudaEvent_t from, cudaEvent_t to) {
    float v = 0.0f;
    check_cuda(cudaEventElapsedTime(&v, from, to), "cudaEventElapsedTime (call synchronize() first)");
    return static_cast<double>(v);
  };
  t.buckets = plan_.size();
  for (std::size_t k = 0; k < plan_.size(); ++k) t.allreduce_ms += ms(start_[k], end_[k]);
  t.span_ms = ms(start_.front(), end_.back());
  // Buckets all launched by finish() start a little after backward's end (the launch itself):
  // what is exposed is then the whole span, not more.
  t.exposed_ms = std::clamp(ms(backward_end_, end_.back()), 0.0, t.span_ms);
  t.overlapped_ms = std::max(0.0, t.span_ms - t.exposed_ms);
  return t;
}

}  // namespace scalelab::gpu
