// ProgressPrinter (train/progress.h).
#include "train/progress.h"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

#include "core/launch_env.h"
#include "core/timer.h"

namespace scalelab::train {

std::string progress_bar(std::size_t step, std::size_t steps) {
  constexpr std::size_t kWidth = 30;
  std::string bar = "[";
  const std::size_t filled = steps == 0 ? kWidth : step * kWidth / steps;
  for (std::size_t i = 0; i < kWidth; ++i) {
    if (i + 1 < filled || (i + 1 == filled && step >= steps)) {
      bar += '=';
    } else if (i + 1 == filled) {
      bar += '>';
    } else {
      bar += '.';
    }
  }
  return bar + "]";
}

std::string keras_timing(double seconds, std::size_t steps) {
  const double per = steps == 0 ? 0.0 : seconds / static_cast<double>(steps);
  const std::string per_step = per >= 1.0    ? fmt::format("{:.0f}s/step", per)
                               : per >= 1e-3 ? fmt::format("{:.0f}ms/step", per * 1e3)
                                             : fmt::format("{:.0f}us/step", per * 1e6);
  return fmt::format("{:.0f}s {}", std::floor(seconds), per_step);
}

// Under mpirun a rank's stdout is a pseudo-terminal even when mpirun's own output goes to a file
// or a pipe, so in-place updates are kept for runs without a launcher.
ProgressPrinter::ProgressPrinter(bool enabled, std::FILE* out, double log_interval_s)
    : enabled_(enabled),
      tty_(::isatty(::fileno(out)) != 0 && read_launch_env().launcher == "none"),
      log_interval_s_(log_interval_s),
      out_(out) {}

void ProgressPrinter::begin_epoch(int epoch, int epochs, std::size_t steps) {
  steps_ = steps;
  start_ = now_seconds();
  last_print_ = start_;
  if (enabled_) {
    std::fprintf(out_, "Epoch %d/%d\n", epoch, epochs);
    std::fflush(out_);
  }
}

void ProgressPrinter::update(std::size_t step, double loss, double accuracy) {
  if (!enabled_) return;
  const double now = now_seconds();
  if (tty_) {
    if (now - last_print_ < 0.2 && step < steps_) return;
  } else if (step >= steps_ || now - last_print_ < log_interval_s_) {
    return;
  }
  last_print_ = now;
  const double elapsed = now - start_;
  const double eta = step == 0 ? 0.0 : elapsed / static_cast<double>(step) * static_cast<double>(steps_ - step);
  const int w = static_cast<int>(std::to_string(steps_).size());
  std::fprintf(out_, "%s%*zu/%zu %s - ETA: %.0fs - loss: %.4f - accuracy: %.4f%s", tty_ ? "\r" : "", w, step, steps_,
               progress_bar(step, steps_).c_str(), eta, loss, accuracy, tty_ ? "" : "\n");
  std::fflush(out_);
}

void ProgressPrinter::end_epoch(double seconds, double loss, double accuracy, double test_loss, double test_accuracy) {
  if (!enabled_) return;
  std::string text = fmt::format("{}/{} {} - {} - loss: {:.4f} - accuracy: {:.4f}", steps_, steps_,
                                 progress_bar(steps_, steps_), keras_timing(seconds, steps_), loss, accuracy);
  if (test_loss >= 0) text += fmt::format(" - val_loss: {:.4f} - val_accuracy: {:.4f}", test_loss, test_accuracy);
  std::fprintf(out_, "%s%s\n", tty_ ? "\r\033[K" : "", text.c_str());
  std::fflush(out_);
}

void ProgressPrinter::line(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

}  // namespace scalelab::train
