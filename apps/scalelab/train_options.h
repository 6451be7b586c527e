// The training options, declared once for every command that trains: `scalelab train`,
// `scalelab converge` and `scalelab scale` (which passes them on to train). One declaration, one
// default and one help line per flag: train::TrainConfig{}'s defaults, and for the schedule a
// constant, unscaled lr without warm-up (--base-batch 32). Reading them checks nothing by hand:
// TrainConfig::validate and ScheduleConfig::validate do, and main() prints their errors under
// these flags (flag_names.cpp).
//
//   po::options_description o("options");
//   add_train_options(o, TrainOptionSet::full);
//   auto vm = parse(args, kUsage, o);
//   TrainOptions t = read_train_options(*vm);   // throws a usage error on a bad value
#pragma once
#include <string>

#include "cli.h"
#include "monitor/node_monitor.h"
#include "optim/schedule.h"
#include "train/config.h"

namespace scalelab::cli {

enum class TrainOptionSet {
  full,      // scalelab train and scale: every option
  converge,  // scalelab converge: all but those it sets per configuration (--batch-size,
             // --lr-scaling, --backward-passes-per-step) or that one run's files would share
             // (--checkpoint, --resume, --timeline, --gpu-monitor, --gpu-monitor-interval, --no-eval)
};

struct TrainOptions {
  train::TrainConfig config;
  // The schedule's flags. global_batch, workers and steps_per_epoch stay at one rank and one step
  // per epoch until the communicator and the data are up.
  optim::ScheduleConfig schedule;
  // The warm-up --warmup names (gradual by default). schedule.warmup is what a run uses: without
  // --warmup, gradual when --warmup-epochs is positive, else none.
  optim::WarmupKind warmup_named = optim::WarmupKind::gradual;
  bool sync_batchnorm = false;
  std::string backend = "mpi";
  monitor::NodeMonitorOptions gpu_monitor;  // --gpu-monitor: this node's GPUs sampled while training
};

// Adds the training options of `set` to `o`.
void add_train_options(po::options_description& o, TrainOptionSet set);

// Reads the options add_train_options declared into a TrainOptions and validates it (config and
// schedule). Options of the set that were not declared keep the library's defaults.
[[nodiscard]] TrainOptions read_train_options(const po::variables_map& vm);

// The bucket cap's default as the flag takes it ("64M"): nn::kDefaultBucketCapBytes.
[[nodiscard]] std::string default_bucket_cap();

// Whether `option` (a name add_train_options declares, e.g. "timeline") names one file that every
// run of `scalelab scale` would write (--checkpoint, --resume, --timeline, --gpu-monitor).
[[nodiscard]] bool shared_by_every_run(const std::string& option);

}  // namespace scalelab::cli
