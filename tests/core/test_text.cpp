// split_list: every list flag (--ranks 1,2,4, -H a:4,b:2, --gpus 0,3, --lr-steps 3,4) reads its
// items through it, so empty items must reach the caller (to be rejected or skipped), not vanish.
#include <gtest/gtest.h>

#include "core/text.h"

namespace scalelab {
namespace {

using Items = std::vector<std::string>;

TEST(SplitList, ItemsInOrder) { EXPECT_EQ(split_list("1,2,4"), (Items{"1", "2", "4"})); }

TEST(SplitList, OneItemWithoutSeparator) { EXPECT_EQ(split_list("8"), (Items{"8"})); }

TEST(SplitList, EmptyTextHasNoItems) { EXPECT_TRUE(split_list("").empty()); }

TEST(SplitList, EmptyItemsAreKept) {
  EXPECT_EQ(split_list("1,,2"), (Items{"1", "", "2"}));
  EXPECT_EQ(split_list("1,"), (Items{"1", ""}));
  EXPECT_EQ(split_list(",1"), (Items{"", "1"}));
}

TEST(SplitList, OtherSeparator) { EXPECT_EQ(split_list("/usr/bin:/bin", ':'), (Items{"/usr/bin", "/bin"})); }

TEST(ListItems, DropsEmptyItemsLeavingTheRestInOrder) {
  EXPECT_EQ(list_items("1,2,"), (Items{"1", "2"}));
  EXPECT_EQ(list_items(",a,,b"), (Items{"a", "b"}));
  EXPECT_TRUE(list_items(",,").empty());
}

// The joiner is the splitter's inverse for lists without empty items.
TEST(JoinList, CommaAndSpaceByDefaultAnyOtherSeparator) {
  EXPECT_EQ(join_list({}), "");
  EXPECT_EQ(join_list({"ring"}), "ring");
  EXPECT_EQ(join_list({"ring", "tree", "library"}), "ring, tree, library");
  EXPECT_EQ(join_list({"/usr/bin", "/bin"}, ":"), "/usr/bin:/bin");
  EXPECT_EQ(split_list(join_list({"1", "2", "4"}, ","), ','), (Items{"1", "2", "4"}));
}

}  // namespace
}  // namespace scalelab
