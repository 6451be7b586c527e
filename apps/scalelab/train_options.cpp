// The shared training options (train_options.h): one declaration per flag, read into
// train::TrainConfig and optim::ScheduleConfig, then validated by the library.
#include "train_options.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "collectives/algorithm.h"
#include "core/error.h"
#include "core/text.h"
#include "core/size_parse.h"
#include "model/predict.h"
#include "model/profile.h"
#include "nn/model.h"
#include "nn/step_plan.h"
#include "optim/factory.h"

namespace scalelab::cli {
namespace {

// A count the library keeps unsigned: read signed, so that -1 is an error rather than 2^64-1.
template <typename T>
T count(const po::variables_map& vm, const char* option, const char* parameter) {
  const long long v = vm[option].as<long long>();
  if (v < 0) throw_parameter(ErrorKind::usage, parameter, std::to_string(v) + ": must not be negative");
  return static_cast<T>(v);
}

bool declared(const po::variables_map& vm, const char* option) { return vm.count(option) != 0; }

}  // namespace

void add_train_options(po::options_description& o, TrainOptionSet set) {
  const train::TrainConfig d;
  const bool full = set == TrainOptionSet::full;
  auto add = o.add_options();
  add("model", po::value<std::string>()->default_value(d.model), ("model: " + join_list(nn::model_names())).c_str());
  add("dataset", po::value<std::string>()->default_value(d.dataset.name),
      "fashion-mnist, synthetic, a folder of MNIST-format IDX files, or jpeg:DIR (scalelab data make-jpeg; its test set in DIR/test)");
  add("augment", po::value<std::string>()->default_value(d.dataset.augment),
      "jpeg:DIR only: the loader's augmentation, simple (crop, flip) or complex (random-resized crop, rotation, jitter)");
  add("decode", po::value<std::string>()->default_value(d.dataset.decode), "jpeg:DIR only: libjpeg-turbo's IDCT, accurate or fast");
  add("crop", po::value<int>()->default_value(d.dataset.crop), "jpeg:DIR only: the model's input width and height (0: 7/8 of the images)");
  add("on-bad-sample", po::value<std::string>()->default_value(d.dataset.on_bad_sample),
      "jpeg:DIR only: a sample that cannot be decoded stops training (stop: one line, exit 2) or is replaced by the next good one and counted (skip)");
  add("synthetic-data", po::bool_switch(),
      "prepare the first batch's samples once and train on them every step: the input pipeline's cost left out");
  add("data-dir", po::value<std::string>()->default_value(d.dataset.data_dir),
      "folder of the Fashion-MNIST IDX files (default $SCALELAB_DATA_DIR, else /usr/share/datasets/fashion-mnist)");
  add("epochs", po::value<int>()->default_value(d.epochs), "epochs to train (in total, when resuming)");
  if (full) add("batch-size", po::value<long long>()->default_value(static_cast<long long>(d.batch_size)),
                "samples per rank per backward pass");
  add("lr", po::value<double>()->default_value(d.lr, "0.001"),
      "learning rate (at --base-batch when the lr is scaled)");
  add("optimizer", po::value<std::string>()->default_value(d.optimizer), ("optimizer: " + join_list(optim::optimizer_names())).c_str());
  add("momentum", po::value<double>()->default_value(d.optimizer_options.momentum, "0.9"), "momentum in [0, 1) (sgd, lars)");
  add("weight-decay", po::value<float>()->default_value(d.optimizer_options.weight_decay, "0"), "L2 weight decay (>= 0)");
  add("lr-schedule", po::value<std::string>()->default_value("constant"), "decay: constant, step, cosine, polynomial");
  if (full) add("lr-scaling", po::value<std::string>()->default_value("none"),
                "scale --lr by global batch / --base-batch: none, linear, sqrt");
  add("base-batch", po::value<int>()->default_value(32), "global batch --lr was tuned at (the scaling rules' reference)");
  add("warmup", po::value<std::string>()->default_value("gradual"),
      "learning-rate warm-up: gradual, constant, horovod, none (default: gradual when --warmup-epochs > 0)");
  add("warmup-epochs", po::value<double>()->default_value(0.0), "learning-rate warm-up length in epochs (may be fractional; 0: none)");
  add("lr-steps", po::value<std::string>()->default_value(""), "step decay milestones in epochs, e.g. 3,4");
  add("lr-gamma", po::value<double>()->default_value(0.1, "0.1"), "step decay factor in (0, 1]");
  add("lr-power", po::value<double>()->default_value(2.0), "polynomial decay power");
  add("sync-batchnorm", po::bool_switch(), "allreduce BatchNorm statistics across ranks (SyncBatchNorm)");
  add("threads", po::value<int>()->default_value(d.threads), "compute threads per rank");
  add("device", po::value<std::string>()->default_value(d.device),
      "where each rank computes: cpu, or cuda (the GPU of its local rank; needs a CUDA build)");
  add("cuda-graphs", po::value<std::string>()->default_value(d.cuda_graphs),
      "on: the CUDA engine captures a training step once and replays it as one CUDA graph (off: launch "
      "kernel by kernel)");
  add("precision", po::value<std::string>()->default_value(d.precision),
      "what the engine computes in: fp32 (cuDNN may use TF32 for convolutions, as PyTorch's default), tf32 (matrix "
      "products too), bf16 or fp16 (GPU only: 16-bit activations and products, float32 master weights; fp16 with "
      "dynamic loss scaling)");
  add("max-steps", po::value<long long>()->default_value(static_cast<long long>(d.max_steps)),
      "cap on steps per epoch (0: the whole shard)");
  add("seed", po::value<long long>()->default_value(static_cast<long long>(d.seed)),
      "seed for initialisation, shuffling, dropout, synthetic data");
  if (full) {
    add("checkpoint", po::value<std::string>()->default_value(""), "rank 0 writes a checkpoint here after every epoch (atomically)");
    add("resume", po::value<std::string>()->default_value(""), "continue from this checkpoint");
    add("timeline", po::value<std::string>()->default_value(""), "write a Chrome trace JSON timeline of every step (Perfetto)");
  }
  add("algo", po::value<std::string>()->default_value(d.algo),
      ("allreduce algorithm for the gradients: " + join_list(collectives::algorithm_names(collectives::Collective::allreduce)) +
       ", or auto (CPU ranks: the fastest the calibrated cost model predicts for the largest bucket; library when "
       "this machine has no calibration profile)").c_str());
  add("bucket-cap", po::value<std::string>()->default_value(default_bucket_cap()),
      "float32 gradient bytes per allreduce bucket, with K, M, G suffixes (HOROVOD_FUSION_THRESHOLD, PyTorch DDP's "
      "bucket_cap_mb); 0: one allreduce per tensor. --fusion-threshold is its deprecated spelling");
  add("fp16-allreduce", po::bool_switch(), "send gradients as float16 (Horovod's Compression.fp16)");
  add("overlap", po::value<std::string>()->default_value(d.overlap),
      "CPU ranks: average each gradient bucket on a communication thread while backward goes on: on, off, or "
      "auto (on where the rank has a core to spare for the thread); GPUs always overlap");
  if (full) add("backward-passes-per-step", po::value<int>()->default_value(d.backward_passes_per_step),
                "micro-batches accumulated locally per optimizer step");
  add("loader-workers", po::value<int>()->default_value(d.loader_workers), "data loader threads per rank");
  add("prefetch", po::value<int>()->default_value(d.prefetch), "batches the loader prepares ahead");
  add("throughput-skip", po::value<long long>()->default_value(static_cast<long long>(d.throughput_skip)),
      "steps left out of images/sec at the start of each epoch");
  if (full) add("no-eval", po::bool_switch(), "skip the test-set evaluation after each epoch");
  add("stall-timeout", po::value<double>()->default_value(d.stall_timeout_s, "300"),
      "end a rank after this many seconds without a finished step (a peer stopped or died); 0: never");
  add("backend", po::value<std::string>()->default_value("mpi"), "communicator backend: mpi or nccl");
  add("quiet", po::bool_switch(), "no progress lines");
  add("progress-interval", po::value<double>()->default_value(d.progress_interval_s, "5"),
      "seconds between progress lines when the output is not a terminal (a log file, a pipe, a batch job)");
  if (full) {
    add("gpu-monitor", po::value<std::string>()->default_value(""),
        "sample this node's GPUs to this CSV while training (nvidia-smi -l style, NVML; each node's local rank 0)");
    add("gpu-monitor-interval", po::value<double>()->default_value(5.0), "seconds between --gpu-monitor samples");
  }
}

TrainOptions read_train_options(const po::variables_map& vm) {
  TrainOptions t;
  train::TrainConfig& c = t.config;
  c.model = vm["model"].as<std::string>();
  c.dataset.name = vm["dataset"].as<std::string>();
  c.dataset.data_dir = vm["data-dir"].as<std::string>();
  c.dataset.augment = vm["augment"].as<std::string>();
  c.dataset.decode = vm["decode"].as<std::string>();
  c.dataset.crop = vm["crop"].as<int>();
  c.dataset.on_bad_sample = vm["on-bad-sample"].as<std::string>();
  if (c.dataset.name.rfind("jpeg:", 0) != 0) {
    for (const char* jpeg_only : {"augment", "decode", "crop", "on-bad-sample"}) {
      if (!vm[jpeg_only].defaulted()) {
        throw_usage(std::string("--") + jpeg_only + " applies to JPEG data sets only; give --dataset jpeg:DIR, or leave it out");
      }
    }
  }
  // --data-dir says where fashion-mnist's files are; another dataset never reads it.
  if (c.dataset.name != "fashion-mnist" && !vm["data-dir"].defaulted() && !c.dataset.data_dir.empty()) {
    throw_usage("--data-dir applies to --dataset fashion-mnist; give that dataset, or leave it out (--dataset " +
                c.dataset.name + " names its own data)");
  }
  c.synthetic_data = vm["synthetic-data"].as<bool>();
  c.epochs = vm["epochs"].as<int>();
  if (declared(vm, "batch-size")) c.batch_size = count<std::size_t>(vm, "batch-size", "batch_size");
  c.lr = vm["lr"].as<double>();
  c.optimizer = vm["optimizer"].as<std::string>();
  const double momentum = vm["momentum"].as<double>();
  c.optimizer_options.momentum = static_cast<float>(momentum);
  // The optimizers keep float32 state: a momentum just below 1 would become 1 without a word.
  if (momentum < 1.0 && !(c.optimizer_options.momentum < 1.0f)) {
    throw_usage(fmt::format("--momentum {}: rounds to 1 in float32; give at most 0.9999999", momentum));
  }
  // Only sgd and lars read a momentum. converge also runs LARS whatever --optimizer says, so
  // there the flag always counts; train and scale (the full set) name one optimizer.
  if (!vm["momentum"].defaulted() && declared(vm, "batch-size") && c.optimizer != "sgd" && c.optimizer != "lars") {
    throw_usage("--momentum applies to --optimizer sgd and lars; " + c.optimizer +
                " takes no momentum (its moment estimates play that part): leave it out, or choose sgd");
  }
  c.optimizer_options.weight_decay = vm["weight-decay"].as<float>();
  c.threads = vm["threads"].as<int>();
  c.device = vm["device"].as<std::string>();
  c.cuda_graphs = vm["cuda-graphs"].as<std::string>();
  c.precision = vm["precision"].as<std::string>();
  c.overlap = vm["overlap"].as<std::string>();
  c.max_steps = count<std::size_t>(vm, "max-steps", "max_steps");
  c.seed = count<std::uint64_t>(vm, "seed", "seed");
  c.dataset.seed = c.seed;
  if (declared(vm, "checkpoint")) c.checkpoint = vm["checkpoint"].as<std::string>();
  if (declared(vm, "resume")) c.resume = vm["resume"].as<std::string>();
  if (declared(vm, "timeline")) c.timeline = vm["timeline"].as<std::string>();
  c.algo = vm["algo"].as<std::string>();
  c.choose_algorithm = [](const collectives::ChoiceQuery& q) -> std::string {
    const auto profile = model::try_load_profile(model::default_profile_path());
    if (!profile) return "";
    return model::Predictor(*profile, q.ranks).choose(q);
  };
  c.bucket_cap_bytes = parse_size(vm["bucket-cap"].as<std::string>(), "--bucket-cap");
  c.fp16_allreduce = vm["fp16-allreduce"].as<bool>();
  if (declared(vm, "backward-passes-per-step")) c.backward_passes_per_step = vm["backward-passes-per-step"].as<int>();
  c.loader_workers = vm["loader-workers"].as<int>();
  c.prefetch = vm["prefetch"].as<int>();
  c.throughput_skip = count<std::size_t>(vm, "throughput-skip", "throughput_skip");
  if (declared(vm, "no-eval")) c.evaluate = !vm["no-eval"].as<bool>();
  c.verbose = !vm["quiet"].as<bool>();
  c.progress_interval_s = vm["progress-interval"].as<double>();
  c.stall_timeout_s = vm["stall-timeout"].as<double>();
  t.backend = vm["backend"].as<std::string>();
  t.sync_batchnorm = vm["sync-batchnorm"].as<bool>();
  if (declared(vm, "gpu-monitor")) {
    t.gpu_monitor.csv_path = vm["gpu-monitor"].as<std::string>();
    t.gpu_monitor.interval_s = vm["gpu-monitor-interval"].as<double>();  // checked by monitor::NodeMonitor
    if (t.gpu_monitor.csv_path.empty() && !vm["gpu-monitor-interval"].defaulted()) {
      throw_parameter(ErrorKind::usage, "interval_s",
                      fmt::format("{}: nothing is sampled without the GPU monitor's CSV file; give it too",
                                  t.gpu_monitor.interval_s));
    }
  }

  optim::ScheduleConfig& s = t.schedule;
  s.base_lr = c.lr;
  if (declared(vm, "lr-scaling")) s.scaling = optim::parse_scaling_rule(vm["lr-scaling"].as<std::string>());
  s.reference_batch = vm["base-batch"].as<int>();
  s.warmup_epochs = vm["warmup-epochs"].as<double>();
  t.warmup_named = optim::parse_warmup_kind(vm["warmup"].as<std::string>());
  if (vm["warmup"].defaulted()) {
    s.warmup = s.warmup_epochs > 0 ? optim::WarmupKind::gradual : optim::WarmupKind::none;
  } else {
    s.warmup = t.warmup_named;
  }
  s.decay = optim::parse_decay_kind(vm["lr-schedule"].as<std::string>());
  for (const std::string& m : split_list(vm["lr-steps"].as<std::string>())) {
    if (m.empty()) continue;
    try {
      std::size_t used = 0;
      s.step_epochs.push_back(std::stod(m, &used));
      if (used != m.size()) throw std::invalid_argument(m);
    } catch (const std::exception&) {
      throw_parameter(ErrorKind::usage, "step_epochs", m + ": not a number of epochs; give milestones like 3,4");
    }
  }
  s.step_gamma = vm["lr-gamma"].as<double>();
  s.poly_power = vm["lr-power"].as<double>();
  s.epochs = c.epochs;
  // One rank and one step per epoch until MPI and the data are up; enough to check every value.
  s.global_batch = static_cast<int>(c.batch_size * static_cast<std::size_t>(std::max(1, c.backward_passes_per_step)));
  s.workers = 1;
  s.steps_per_epoch = 1;

  c.validate();
  s.validate();
  // A flag the schedule given never reads is a misunderstanding, not a no-op.
  auto given = [&](const char* name) { return declared(vm, name) && !vm[name].defaulted(); };
  for (const char* step_only : {"lr-steps", "lr-gamma"}) {
    if (s.decay != optim::DecayKind::step && given(step_only)) {
      throw_usage(std::string("--") + step_only + " applies to --lr-schedule step; give --lr-schedule step, or leave it out");
    }
  }
  if (s.decay != optim::DecayKind::polynomial && given("lr-power")) {
    throw_usage("--lr-power applies to --lr-schedule polynomial; give --lr-schedule polynomial, or leave it out");
  }
  if (given("warmup") && s.warmup == optim::WarmupKind::none && s.warmup_epochs > 0) {
    throw_usage(fmt::format("--warmup none with --warmup-epochs {}: give one or the other", s.warmup_epochs));
  }
  return t;
}

bool shared_by_every_run(const std::string& option) {
  return option == "checkpoint" || option == "resume" || option == "timeline" || option == "gpu-monitor";
}

std::string default_bucket_cap() {
  static_assert(nn::kDefaultBucketCapBytes % (std::size_t{1} << 20) == 0, "written in MiB below");
  return std::to_string(nn::kDefaultBucketCapBytes >> 20) + "M";
}

}  // namespace scalelab::cli
