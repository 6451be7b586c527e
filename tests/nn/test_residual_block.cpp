// ResidualBlock: shape, parameter count, and gradients through both paths (identity shortcut and
// projection shortcut) against finite differences.
#include <gtest/gtest.h>

#include "grad_check.h"
#include "nn/residual_block.h"

namespace scalelab::nn {
namespace {

TEST(ResidualBlock, IdentityShortcutGradientsMatchFiniteDifferences) {
  testing::SkipKinks kinks;
  ResidualBlock block(3, 1);
  testing::LayerHarness h(block, Shape{3, 5, 5}, 2);
  EXPECT_EQ(block.output_shape(Shape{3, 5, 5}), (Shape{3, 5, 5}));
  EXPECT_EQ(h.params.count(), 6u);  // conv1, bn1 (2), conv2, bn2 (2)
  EXPECT_LT(h.input_error(), 5e-3);
  EXPECT_LT(h.worst_param_error(1e-3f), 5e-3);
}

TEST(ResidualBlock, ProjectionShortcutGradientsMatchFiniteDifferences) {
  testing::SkipKinks kinks;
  ResidualBlock block(4, 2);
  testing::LayerHarness h(block, Shape{2, 6, 6}, 2);
  EXPECT_EQ(block.output_shape(Shape{2, 6, 6}), (Shape{4, 3, 3}));
  EXPECT_EQ(h.params.count(), 9u);
  EXPECT_EQ(block.parameter_count(), 4u * 2 * 9 + 8 + 4u * 4 * 9 + 8 + 4u * 2 + 8);
  EXPECT_LT(h.input_error(), 5e-3);
  EXPECT_LT(h.worst_param_error(1e-3f), 5e-3);
}

}  // namespace
}  // namespace scalelab::nn
