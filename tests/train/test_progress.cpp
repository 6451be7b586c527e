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
