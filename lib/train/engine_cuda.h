// CudaEngine: the engine (train/engine.h) on the GPU of this rank's local rank. Built by
// make_cuda_engine (engine_factory_cuda.cpp) for --device cuda, in builds with CUDA and NCCL.
//   - device: one GPU per rank (cudaSetDevice(local rank)); more ranks on a node than GPUs, or no
//     usable GPU, is one error line on every rank, raised before any communication;
//   - layers: gpu::DeviceModel (cuDNN convolutions, cuBLAS dense layers, our kernels), every
//     buffer allocated in the constructor; batches staged through pinned host buffers;
//   - loss and correct count summed on the device; the trainer's per-step progress reads a copy
//     that may lag a step (peek), the epoch's figures wait for the exact sums;
//   - gradients: gpu::BucketedAverager over an NCCL communicator of its own (the trainer's
//     communicator stays the host one, --backend mpi, for its small host-memory collectives),
//     buckets of the step plan (nn/step_plan.h: at most the bucket cap) started as backward finalises them;
//   - optimizer: gpu::DeviceOptimizer on the flat device buffers;
//   - precision (TrainConfig::precision, gpu/precision.h): fp32, tf32, or bf16/fp16 activations with
//     float32 master weights; fp16 with dynamic loss scaling (gpu::LossScaler), its overflowed steps
//     skipped on the device and counted (skipped_steps());
//   - CUDA graphs (cuda_graphs on, one backward pass per step): a full training step is deferred
//     until step(lr): the host work (the batch and labels copied in, Dropout's keys and the
//     optimizer's scalars written to device memory) is enqueued, then the step's kernels, NCCL
//     buckets included, run as one graph, captured at the third step (the first two run kernel by
//     kernel, so that cuBLAS, cuDNN and NCCL finish their lazy set-up outside the capture) and
//     replayed after. Evaluation and partial batches run kernel by kernel. In such a step forward(),
//     backward() and average_gradients() only stage their inputs: the loss reaches the tally and
//     the gradients exist only once step() has launched the graph (nothing may read them between).
//     A capture that fails is one runtime error on the rank where it failed; capture failures are
//     expected to be the same on every rank (the same code, GPU and libraries), otherwise the
//     others wait in the graph's NCCL calls until the stall watchdog ends them.
// The host model and optimizer hold the copies broadcast, checkpointed and compared.
#pragma once
#include <exception>
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>

#include "gpu/bucketed_averager.h"
#include "gpu/device_buffer.h"
#include "gpu/device_model.h"
#include "gpu/device_optimizer.h"
#include "gpu/loss_scaler.h"
#include "train/engine.h"

namespace scalelab::train {

class CudaEngine final : public Engine {
 public:
  CudaEngine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape, std::size_t classes);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  [[nodiscard]] std::string device() const override { return device_name_; }
  [[nodiscard]] std::string averaging() const override { return averager_->describe(); }
  [[nodiscard]] std::string execution() const override { return execution_; }
  [[nodiscard]] std::string precision() const override { return gpu::precision_in_words(device_model_->precision()); }
  [[nodiscard]] std::uint64_t skipped_steps() override;
  [[nodiscard]] nn::Model& model() override { return *model_; }
  [[nodiscard]] optim::Optimizer& optimizer() override { return *host_optimizer_; }
  void load_from_host() override;
  void store_to_host() override;
  void skip_random(std::uint64_t forwards) override { device_model_->skip_random(forwards); }
  void zero_grad() override { device_model_->zero_grad(); }
  void forward(const float* images, std::size_t n, bool training) override;
  void backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool last_pass) override;
  void average_gradients() override;
  void step(float lr) override;
  void evaluate(const float* images, const std::int32_t* labels, std::size_t n) override;
  [[nodiscard]] Tally train_tally() override;
  [[nodiscard]] Tally peek_train_tally() override;
  [[nodiscard]] Tally eval_tally() override;
  void reset_tallies() override;
  // SyncBatchNorm: the device BatchNorm layers exchange their statistics through the averager's
  // NCCL communicator and stream (BucketedAverager::allreduce_sum), in the order every rank issues.
  void enable_sync_batchnorm(comm::Communicator& comm) override;

 private:
  // Frees the stream, events and device objects (the destructor, and a constructor that fails).
  void release() noexcept;
  // Collective over the host communicator: every rank says whether its set-up failed (`failure`
  // set); a rank whose own set-up succeeded throws when another's did not.
  static void agree_set_up_succeeded(comm::Communicator& comm, const std::exception_ptr& failure);
  void stage_images(const float* images, std::size_t n);
  void stage_labels(const std::int32_t* labels, std::size_t n);
  void read_tally_exact();  // waits for the stream; throws on labels out of range
  // A deferred step's kernels (forward, loss, backward, averaging, optimizer), enqueued on stream_
  // after its host work; what capture() records.
  void enqueue_training_step();
  // The end of every step after the gradients are averaged (fp16: unscaled and checked), and the
  // optimizer; its scalars already written (DeviceOptimizer::prepare).
  void enqueue_update();
  void capture();

  std::size_t batch_;
  nn::Shape sample_;
  std::size_t classes_;
  int device_ = 0;
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t images_copied_ = nullptr, labels_copied_ = nullptr, peek_copied_ = nullptr;
  std::unique_ptr<nn::Model> model_;                    // host copy: layout, broadcast, checkpoints
  std::unique_ptr<optim::Optimizer> host_optimizer_;
  std::unique_ptr<gpu::DeviceModel> device_model_;
  std::unique_ptr<gpu::DeviceOptimizer> device_optimizer_;
  std::unique_ptr<gpu::LossScaler> loss_scaler_;        // fp16 only
  std::unique_ptr<comm::Communicator> nccl_;
  std::unique_ptr<gpu::BucketedAverager> averager_;
  std::unique_ptr<gpu::PinnedBuffer<float>> images_host_;
  std::unique_ptr<gpu::PinnedBuffer<std::int32_t>> labels_host_;
  std::unique_ptr<gpu::PinnedBuffer<double>> tally_host_;  // [0..3] exact, [4..5] peek
  std::unique_ptr<gpu::PinnedBuffer<unsigned long long>> bad_host_;
  gpu::DeviceBuffer<float> images_, dlogits_;
  gpu::DeviceBuffer<std::int32_t> labels_;
  gpu::DeviceBuffer<double> tally_;                     // train loss, train correct, eval loss, eval correct
  gpu::DeviceBuffer<unsigned long long> bad_;           // labels outside [0, classes)
  const float* logits_ = nullptr;
  double train_samples_ = 0, eval_samples_ = 0;
  Tally peeked_;
  double peek_samples_ = 0;
  bool peek_pending_ = false;
  std::function<void(std::size_t)> on_final_, no_final_;
  bool graphs_ = false;        // defer full training steps and run them as one CUDA graph
  std::string execution_;
  bool deferred_ = false;      // this step's forward and backward wait for step()
  int steps_before_capture_ = 2;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace scalelab::train
