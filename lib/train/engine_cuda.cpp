// CudaEngine (train/engine_cuda.h): device checks, buffers, and the step's work enqueued on one
// compute stream; the only host waits are the staging buffers' reuse, the exact tallies and the
// copies back to the host.
#include "train/engine_cuda.h"

#include <cstring>

#include <fmt/format.h>

#include "comm/backends/nccl_communicator.h"
#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/layer_kernels.h"
#include "gpu/precision.h"
#include "optim/factory.h"

namespace scalelab::train {
namespace {

// The GPU of this rank's local rank, or one line naming why there is none. Local, so every rank
// fails the same way before any collective.
int pick_device(const comm::Communicator& comm) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    throw_parameter(ErrorKind::runtime, "device",
                    fmt::format("cuda: no usable GPU: cudaGetDeviceCount failed with {} ({}); use the cpu device",
                                cudaGetErrorName(rc), cudaGetErrorString(rc)));
  }
  if (count == 0) {
    throw_parameter(ErrorKind::runtime, "device", "cuda: no GPU on this node (cudaGetDeviceCount found 0); use the cpu device");
  }
  check_one_gpu_per_rank(comm.local_size(), count);
  return comm.local_rank();
}

}  // namespace

CudaEngine::CudaEngine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape,
                       std::size_t classes)
    : batch_(config.batch_size), sample_(sample_shape), classes_(classes) {
  if (comm.memory_space() != comm::MemorySpace::host) {
    throw_parameter(ErrorKind::usage, "backend",
                    comm.backend() + ": the CUDA engine needs the mpi backend (the default) and opens its own NCCL "
                    "communicator for the gradients");
  }
  device_ = pick_device(comm);
  gpu::cuda_check(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
  cudaDeviceProp prop{};
  gpu::cuda_check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
  device_name_ = fmt::format("cuda:{} ({})", device_, prop.name);
  bool agreed = false;  // whether this rank has taken part in agree_set_up_succeeded
  try {
    gpu::cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (cudaEvent_t* e : {&images_copied_, &labels_copied_, &peek_copied_})
      gpu::cuda_check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    model_ = nn::make_model(config.model, sample_shape, classes, config.seed);
    model_->reseed(config.seed, static_cast<std::uint64_t>(comm.rank()));
    host_optimizer_ = optim::make_optimizer(config.optimizer, config.optimizer_options);
    host_optimizer_->bind(model_->parameters());
    const gpu::Precision precision = gpu::parse_precision(config.precision);
    device_model_ = std::make_unique<gpu::DeviceModel>(*model_, batch_, config.seed, static_cast<std::uint64_t>(comm.rank()),
                                                       stream_, precision);
    if (precision == gpu::Precision::fp16) {
      loss_scaler_ = std::make_unique<gpu::LossScaler>();
      device_model_->set_loss_scale(loss_scaler_->scale());
    }
    device_optimizer_ =
        std::make_unique<gpu::DeviceOptimizer>(config.optimizer, config.optimizer_options, model_->parameters());
    // NCCL's set-up waits for every rank: agree first, over the host communicator, that every
    // rank's GPU set-up above succeeded (one rank out of memory must not leave the others waiting).
    agreed = true;
    agree_set_up_succeeded(comm, nullptr);
    nccl_ = comm::make_nccl_communicator();
    averager_ = std::make_unique<gpu::BucketedAverager>(*nccl_, make_step_plan(config, model_->parameters()),
                                                        device_model_->grads());

    const std::size_t per_batch = batch_ * sample_.numel();
    images_host_ = std::make_unique<gpu::PinnedBuffer<float>>(per_batch, "the staged images");
    labels_host_ = std::make_unique<gpu::PinnedBuffer<std::int32_t>>(batch_, "the staged labels");
    tally_host_ = std::make_unique<gpu::PinnedBuffer<double>>(6, "the loss tally");
    bad_host_ = std::make_unique<gpu::PinnedBuffer<unsigned long long>>(1, "the bad-label count");
    images_.resize(per_batch, "the input batch");
    labels_.resize(batch_, "the labels");
    dlogits_.resize(batch_ * classes_, "the logit gradients");
    tally_.resize(4, "the loss tally");
    bad_.resize(1, "the bad-label count");
    on_final_ = [this](std::size_t param) { averager_->param_ready(param, stream_); };
    graphs_ = config.cuda_graphs == "on" && config.backward_passes_per_step == 1;
    if (graphs_) {
      execution_ = fmt::format("one CUDA graph per training step of {} samples (captured at step {})", batch_,
                               steps_before_capture_ + 1);
    } else if (config.cuda_graphs == "on") {
      execution_ = fmt::format("kernel by kernel: CUDA graphs capture steps of one backward pass, this run has {}",
                               config.backward_passes_per_step);
    } else {
      execution_ = "kernel by kernel (CUDA graphs off)";
    }
    reset_tallies();
    // Every stream and copy of the set-up (some on the legacy default stream) done before the first step.
    gpu::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after setting up the CUDA engine");
  } catch (...) {
    const std::exception_ptr failure = std::current_exception();
    if (!agreed) {
      try {
        agree_set_up_succeeded(comm, failure);  // the others are waiting for this rank's word
      } catch (...) {  // this rank's own error is the one to report
      }
    }
    release();
    std::rethrow_exception(failure);
  }
}

CudaEngine::~CudaEngine() { release(); }

void CudaEngine::release() noexcept {
  if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);  // nothing may still use the buffers
  if (graph_exec_ != nullptr) (void)cudaGraphExecDestroy(graph_exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  graph_exec_ = nullptr;
  graph_ = nullptr;
  averager_.reset();
  loss_scaler_.reset();
  device_optimizer_.reset();
  device_model_.reset();
  for (cudaEvent_t* e : {&images_copied_, &labels_copied_, &peek_copied_}) {
    if (*e != nullptr) (void)cudaEventDestroy(*e);
    *e = nullptr;
  }
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaEngine::agree_set_up_succeeded(comm::Communicator& comm, const std::exception_ptr& failure) {
  std::int32_t failed = failure ? 1 : 0, any = 0;
  comm.allreduce(&failed, &any, 1, comm::DataType::i32, comm::ReduceOp::max);
  if (any != 0 && !failure) {
    throw_parameter(ErrorKind::runtime, "device",
                    "cuda: another rank failed to set up its GPU (its own line says why); stopping this one too");
  }
}

void CudaEngine::load_from_host() {
  device_model_->load_values(model_->parameters());
  device_optimizer_->copy_state_from(*host_optimizer_);
  // The state copy is not on our (non-blocking) stream: wait for it before the next step.
  gpu::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after loading the host copies");
}

void CudaEngine::store_to_host() {
  averager_->synchronize(stream_);
  device_model_->store_values(model_->parameters());
  device_optimizer_->copy_state_to(*host_optimizer_);
}

// Copies through a pinned buffer so that the copy is asynchronous (a pageable source would make
// cudaMemcpyAsync wait for the stream); waits only until the previous batch left that buffer.
void CudaEngine::stage_images(const float* images, std::size_t n) {
  if (n > batch_) {
    throw_runtime("CUDA engine: a batch of " + std::to_string(n) + " for an engine sized for " + std::to_string(batch_));
  }
  const std::size_t bytes = n * sample_.numel() * sizeof(float);
  gpu::cuda_check(cudaEventSynchronize(images_copied_), "cudaEventSynchronize (previous batch staged)");
  std::memcpy(images_host_->data(), images, bytes);
  gpu::cuda_check(cudaMemcpyAsync(images_.data(), images_host_->data(), bytes, cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync of the batch to the GPU");
  gpu::cuda_check(cudaEventRecord(images_copied_, stream_), "cudaEventRecord");
}

void CudaEngine::stage_labels(const std::int32_t* labels, std::size_t n) {
  gpu::cuda_check(cudaEventSynchronize(labels_copied_), "cudaEventSynchronize (previous labels staged)");
  std::memcpy(labels_host_->data(), labels, n * sizeof(std::int32_t));
  gpu::cuda_check(cudaMemcpyAsync(labels_.data(), labels_host_->data(), n * sizeof(std::int32_t),
                                  cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync of the labels to the GPU");
  gpu::cuda_check(cudaEventRecord(labels_copied_, stream_), "cudaEventRecord");
}

void CudaEngine::forward(const float* images, std::size_t n, bool training) {
  stage_images(images, n);
  if (graphs_ && training && n == batch_) {
    device_model_->prepare_forward(true);  // Dropout's keys for this step, on the stream
    deferred_ = true;
    return;
  }
  logits_ = device_model_->forward(images_.data(), n, training);
}

void CudaEngine::backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool last_pass) {
  stage_labels(labels, n);
  train_samples_ += static_cast<double>(n);
  if (deferred_) {
    // Graphs only with one backward pass per step, so the scale is 1; a captured loss kernel
    // would keep any other value for every replay.
    if (grad_scale != 1.0f) throw_runtime("CUDA engine: a deferred (graph) step needs a loss scale of 1");
    return;
  }
  gpu::softmax_cross_entropy(logits_, labels_.data(), n, classes_, dlogits_.data(), grad_scale, tally_.data(),
                             bad_.data(), stream_);
  device_model_->backward(dlogits_.data(), n, last_pass ? on_final_ : no_final_);
}

void CudaEngine::average_gradients() {
  if (!deferred_) averager_->finish(stream_);
}

void CudaEngine::step(float lr) {
  device_optimizer_->prepare(lr, stream_);
  if (!deferred_) {
    enqueue_update();
    return;
  }
  deferred_ = false;
  if (graph_exec_ == nullptr && steps_before_capture_ > 0) {
    --steps_before_capture_;
    enqueue_training_step();
    return;
  }
  if (graph_exec_ == nullptr) capture();
  gpu::cuda_check(cudaGraphLaunch(graph_exec_, stream_), "cudaGraphLaunch of the training step");
}

void CudaEngine::enqueue_training_step() {
  logits_ = device_model_->enqueue_forward(images_.data(), batch_, true);
  gpu::softmax_cross_entropy(logits_, labels_.data(), batch_, classes_, dlogits_.data(), 1.0f,
                             tally_.data(), bad_.data(), stream_);
  device_model_->backward(dlogits_.data(), batch_, on_final_);
  averager_->finish(stream_);
  enqueue_update();
}

void CudaEngine::enqueue_update() {
  if (loss_scaler_) loss_scaler_->unscale(device_model_->grads(), device_model_->size(), device_optimizer_->skip_flag(), stream_);
  device_optimizer_->apply(device_model_->values(), device_model_->grads(), stream_);
  if (loss_scaler_) loss_scaler_->update(device_optimizer_->skip_flag(), stream_);
}

std::uint64_t CudaEngine::skipped_steps() {
  if (!loss_scaler_) return 0;
  if (deferred_) throw_runtime("CUDA engine: the skipped steps were read between a step's backward and step()");
  averager_->synchronize(stream_);
  return loss_scaler_->read(stream_).skipped;
}

// Thread-local capture: the loader's threads make no CUDA calls, and nothing else of this thread
// runs while the step is enqueued.
void CudaEngine::capture() {
  gpu::cuda_check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture of the training step");
  try {
    enqueue_training_step();
  } catch (const std::exception& e) {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream_, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    throw_parameter(ErrorKind::runtime, "cuda_graphs",
                    fmt::format("on: capturing the training step as a CUDA graph failed ({}); turn CUDA graphs off",
                                e.what()));
  }
  gpu::cuda_check(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture of the training step");
  const cudaError_t rc = cudaGraphInstantiate(&graph_exec_, graph_, 0);
  if (rc != cudaSuccess) {
    (void)cudaGraphDestroy(graph_);
    graph_ = nullptr;
    graph_exec_ = nullptr;
    gpu::cuda_check(rc, "cudaGraphInstantiate of the training step");
  }
}

void CudaEngine::evaluate(const float* images, const std::int32_t* labels, std::size_t n) {
  stage_images(images, n);
  stage_labels(labels, n);
  const float* logits = device_model_->forward(images_.data(), n, false);
  gpu::softmax_cross_entropy(logits, labels_.data(), n, classes_, nullptr, 1.0f, tally_.data() + 2, bad_.data(), stream_);
  eval_samples_ += static_cast<double>(n);
}

void CudaEngine::read_tally_exact() {
  gpu::cuda_check(cudaMemcpyAsync(tally_host_->data(), tally_.data(), 4 * sizeof(double), cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync of the loss tally");
  gpu::cuda_check(cudaMemcpyAsync(bad_host_->data(), bad_.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                  stream_),
                  "cudaMemcpyAsync of the bad-label count");
  averager_->synchronize(stream_);  // watches NCCL's error state while it waits
  if (bad_host_->data()[0] != 0) {
    throw_parameter(ErrorKind::input, "dataset",
                    fmt::format(": {} labels outside [0, {}) reached the GPU; check the dataset's labels",
                                bad_host_->data()[0], classes_));
  }
}

Tally CudaEngine::train_tally() {
  if (deferred_) throw_runtime("CUDA engine: the training tally was read between a step's backward and step()");
  read_tally_exact();
  return {tally_host_->data()[0], tally_host_->data()[1], train_samples_};
}

Tally CudaEngine::peek_train_tally() {
  if (peek_pending_ && cudaEventQuery(peek_copied_) == cudaSuccess) {
    peeked_ = {tally_host_->data()[4], tally_host_->data()[5], peek_samples_};
    peek_pending_ = false;
  }
  if (!peek_pending_) {
    gpu::cuda_check(cudaMemcpyAsync(tally_host_->data() + 4, tally_.data(), 2 * sizeof(double), cudaMemcpyDeviceToHost,
                                    stream_),
                    "cudaMemcpyAsync of the loss tally");
    gpu::cuda_check(cudaEventRecord(peek_copied_, stream_), "cudaEventRecord");
    peek_samples_ = train_samples_;
    peek_pending_ = true;
  }
  return peeked_;
}

Tally CudaEngine::eval_tally() {
  read_tally_exact();
  return {tally_host_->data()[2], tally_host_->data()[3], eval_samples_};
}

void CudaEngine::reset_tallies() {
  gpu::cuda_check(cudaMemsetAsync(tally_.data(), 0, 4 * sizeof(double), stream_), "cudaMemsetAsync of the loss tally");
  gpu::cuda_check(cudaMemsetAsync(bad_.data(), 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync");
  train_samples_ = eval_samples_ = 0;
  peeked_ = Tally{};
  if (peek_pending_) {
    gpu::cuda_check(cudaEventSynchronize(peek_copied_), "cudaEventSynchronize (tally copy)");
    peek_pending_ = false;
  }
}

void CudaEngine::enable_sync_batchnorm(comm::Communicator& comm) {
  if (comm.size() == 1) return;  // one rank: the local batch is the global batch
  device_model_->set_statistics_sync(
      [this](float* sums, std::size_t count) { averager_->allreduce_sum(sums, count, stream_); });
}

}  // namespace scalelab::train
