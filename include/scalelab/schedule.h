// scalelab's public API, the learning rate: scale it with the global batch (linear: Goyal et al.
// 2017) and warm it up over the first epochs (Horovod's LearningRateWarmupCallback), then decay.
//
//   scalelab::LrSchedule schedule({.base_lr = 0.05, .scaling = "linear", .reference_batch = 64,
//                                  .global_batch = 64 * scalelab::size(), .warmup = "horovod",
//                                  .warmup_epochs = 0.5, .workers = scalelab::size(),
//                                  .epochs = 2, .steps_per_epoch = steps});
//   float lr = static_cast<float>(schedule.lr(global_step));
#pragma once
#include <memory>
#include <string>

namespace scalelab {

namespace optim { class LrSchedule; }

struct LrScheduleOptions {
  double base_lr = 0.1;              // the lr tuned at reference_batch
  std::string scaling = "none";      // none | linear | sqrt: peak = base_lr * (global/reference)^{1, 1/2}
  int reference_batch = 256;
  int global_batch = 256;            // samples per optimizer step, all ranks together
  std::string warmup = "none";       // none | gradual | constant | horovod
  double warmup_epochs = 0.0;
  int workers = 1;                   // `size` in Horovod's warm-up formula
  std::string decay = "constant";    // constant | cosine | polynomial (step needs milestones: use the CLI)
  double end_lr = 0.0;               // cosine / polynomial floor
  double epochs = 1.0;
  long steps_per_epoch = 1;
};

class LrSchedule {
 public:
  // Bad options throw ApiError naming the field.
  explicit LrSchedule(const LrScheduleOptions& options);
  ~LrSchedule();
  LrSchedule(LrSchedule&&) noexcept;
  LrSchedule& operator=(LrSchedule&&) noexcept;

  // The learning rate of global optimizer step `step` (0-based).
  [[nodiscard]] double lr(long step) const;
  [[nodiscard]] double peak_lr() const;
  [[nodiscard]] long warmup_steps() const;
  // A short description and a table of the lr at notable steps.
  [[nodiscard]] std::string table() const;

 private:
  std::unique_ptr<optim::LrSchedule> impl_;
};

}  // namespace scalelab
