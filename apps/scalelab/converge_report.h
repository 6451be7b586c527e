// What `scalelab converge` reports about its configurations, from their JSON records (so that
// `--from` can redraw the table and charts from earlier runs without training again):
//   - one record per configuration: settings, schedule, per-epoch records, final test accuracy
//     and loss, training time, and the epoch and training time at which test accuracy first
//     reached the target (null if never): time to accuracy, not images/sec, is what counts;
//   - the course's table, with each configuration's gap to the baseline in points;
//   - charts of test accuracy and test loss against epoch and against the training time on each
//     configuration's own devices (SVG+PNG);
//   - runs that diverged (test accuracy at chance to the end) marked so in all of these.
// Training time is the sum of the epochs' training seconds (test evaluation excluded), measured
// on this machine, where emulated workers run one after another.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "converge_plan.h"
#include "optim/schedule.h"
#include "train/trainer.h"

namespace scalelab::cli {

// The record of one finished configuration (docs/results-schema.md, "scalelab.converge").
[[nodiscard]] nlohmann::json converge_record(const ConvergeRun& run, const optim::LrSchedule& schedule,
                                             const train::TrainConfig& config, const train::TrainResult& result,
                                             double target_accuracy);

// Earlier runs' records read back (`scalelab converge --from`): every file's configurations in
// order, and the target accuracy of the last file that names one (else `target_accuracy`). A file
// that is not a converge record, or a configuration lacking a field the table and charts use (or
// holding it as another type), is an input error naming the file and the entry.
struct ConvergeRecords {
  nlohmann::json configurations = nlohmann::json::array();
  double target_accuracy = 0;
};
// The scalelab.converge schema version written and the newest read.
inline constexpr int kConvergeSchemaVersion = 1;

[[nodiscard]] ConvergeRecords read_converge_records(const std::vector<std::string>& files, double target_accuracy);

// A run has diverged when its test accuracy falls below kDivergedAccuracy (twice chance for ten
// classes) and stays there to its last epoch: its weights blew up or its ReLUs died. Returns the
// first such epoch, or null when the run did not diverge. The table says "diverged" where it would
// say "never", and the charts draw such a run up to that epoch, marked "diverged".
inline constexpr double kDivergedAccuracy = 0.2;
[[nodiscard]] nlohmann::json diverged_at_epoch(const nlohmann::json& epochs);

// Prints the table of `records` (an array of converge_record()s). The gap column is against the
// record named "baseline" when present.
void print_converge_table(std::ostream& out, const nlohmann::json& records, double target_accuracy);

// The time a configuration's training would take on its own `workers` devices: this machine's
// time (where emulated workers run one after another) / (workers x kDeviceScalingEfficiency, Lab
// 1's scaling-efficiency bar); a 1-worker configuration's time as measured.
inline constexpr double kDeviceScalingEfficiency = 0.9;
[[nodiscard]] double device_seconds(const nlohmann::json& record, double train_seconds);

// Writes <dir>/converge_{accuracy,loss}_{epoch,time}.{dat,gp,svg,png}; returns the SVG paths. The
// titles carry the key figures (final accuracies; the first configuration to the target on its
// own devices); the time charts' x axis is device_seconds().

std::vector<std::string> write_converge_charts(const nlohmann::json& records, const std::string& dir);

}  // namespace scalelab::cli
