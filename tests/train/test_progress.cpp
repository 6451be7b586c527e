// Keras' progress bar and timing text, as the course's notebooks show them.
#include <gtest/gtest.h>

#include "train/progress.h"

using namespace scalelab::train;

TEST(Progress, BarMatchesKeras) {
  EXPECT_EQ(progress_bar(58, 58), "[==============================]");
  EXPECT_EQ(progress_bar(0, 58), "[..............................]");
  EXPECT_EQ(progress_bar(29, 58), "[==============>...............]");
}

TEST(Progress, TimingMatchesKeras) {
  EXPECT_EQ(keras_timing(1.0, 58), "1s 17ms/step");
  EXPECT_EQ(keras_timing(52.4, 468), "52s 112ms/step");
  EXPECT_EQ(keras_timing(0.02, 100), "0s 200us/step");
}

// Into a file (or a pipe, or under mpirun), whole lines appear during the epoch, one per interval,
// so a long epoch is never silent; the last step's line is left to end_epoch.
namespace {
std::string printed(double interval_s) {
  std::FILE* f = std::tmpfile();
  {
    ProgressPrinter p(true, f, interval_s);
    p.begin_epoch(1, 1, 4);
    for (std::size_t s = 1; s <= 4; ++s) p.update(s, 0.5, 0.75);
    p.end_epoch(1.0, 0.5, 0.75, -1, -1);
  }
  std::rewind(f);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) text += buf;
  std::fclose(f);
  return text;
}
}  // namespace

TEST(Progress, OffATerminalALineEveryInterval) {
  const std::string every = printed(0.0);
  EXPECT_NE(every.find("Epoch 1/1\n1/4 " + progress_bar(1, 4) + " - ETA: "), std::string::npos) << every;
  EXPECT_NE(every.find("\n3/4 " + progress_bar(3, 4) + " - ETA: "), std::string::npos) << every;
  EXPECT_EQ(every.find("\n4/4 [==============================] - ETA"), std::string::npos) << every;
  EXPECT_NE(every.find("\n4/4 [==============================] - 1s 250ms/step - loss: 0.5000"), std::string::npos) << every;
  EXPECT_EQ(every.find('\r'), std::string::npos) << "no carriage returns in a log";
  const std::string rare = printed(3600.0);
  EXPECT_EQ(rare, "Epoch 1/1\n4/4 [==============================] - 1s 250ms/step - loss: 0.5000 - accuracy: 0.7500\n");
}
