// Keras-style progress lines, printed by rank 0 only:
//   Epoch 1/5
//   468/468 [==============================] - 52s 111ms/step - loss: 0.4512 - accuracy: 0.8390 - val_loss: 0.3551 - val_accuracy: 0.8712
// On a terminal, when no launcher is involved (mpirun gives ranks a pseudo-terminal whatever its
// own output is), the line updates in place during the epoch (with an ETA, showing rank 0's running
// metrics); elsewhere (a pipe, a log file, under mpirun or srun) a whole line is printed every
// `log_interval_s` seconds during an epoch (5 by default, so that a class never watches a silent
// screen), then the final line of each epoch, whose metrics are averaged over every rank:
//   120/468 [=======>......................] - ETA: 14s - loss: 0.6120 - accuracy: 0.7801
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>

namespace scalelab::train {

// The bar itself: "[=========>....................]" for step of steps, 30 wide like Keras.
[[nodiscard]] std::string progress_bar(std::size_t step, std::size_t steps);
// "52s 111ms/step" / "1s 16ms/step" / "350us/step" as Keras prints them.
[[nodiscard]] std::string keras_timing(double seconds, std::size_t steps);

class ProgressPrinter {
 public:
  ProgressPrinter(bool enabled, std::FILE* out = stdout, double log_interval_s = 5.0);
  void begin_epoch(int epoch, int epochs, std::size_t steps);
  // Called after each step; on a terminal updates the line at most every 0.2 s, elsewhere prints a
  // line at most every log_interval_s (none after the last step: end_epoch prints that one).
  void update(std::size_t step, double loss, double accuracy);
  // The final line; test metrics < 0 are left out.
  void end_epoch(double seconds, double loss, double accuracy, double test_loss, double test_accuracy);
  // A free line (throughput, notes), printed when enabled.
  void line(const std::string& text);

 private:
  bool enabled_;
  bool tty_;
  double log_interval_s_;
  std::FILE* out_;
  std::size_t steps_ = 0;
  double start_ = 0;
  double last_print_ = 0;
};

}  // namespace scalelab::train
