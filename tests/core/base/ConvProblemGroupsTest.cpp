// Grouped and depthwise problems (ConvProblem::groups): the filter holds one group's
// input channels, the flops shrink by the group count, the key says the groups (and
// stays what it was without them), and groups that do not divide both channel counts
// are refused naming them.
#include <gtest/gtest.h>

#include "core/base/ConvProblem.h"
#include "core/base/Error.h"

namespace tunescope {
namespace {

ConvProblem grouped(int64_t c, int64_t k, int64_t groups) {
  return ConvProblem{{2, c, 8, 8}, k, 3, 3, 1, 1, 1, 1, Layout::NHWC, groups};
}

TEST(ConvProblemGroups, FilterAndFlopsCountOneGroupsInputs) {
  const ConvProblem depthwise = grouped(32, 32, 32);
  EXPECT_EQ(depthwise.filter(), (Shape4{32, 1, 3, 3}));
  // 2 x outputs x taps of one group: 2 * (2 * 32 * 8 * 8) * (1 * 3 * 3)
  EXPECT_DOUBLE_EQ(depthwise.flops(), 2.0 * 2 * 32 * 8 * 8 * 9);
  const ConvProblem four = grouped(16, 32, 4);
  EXPECT_EQ(four.filter(), (Shape4{32, 4, 3, 3}));
  EXPECT_DOUBLE_EQ(four.flops(), grouped(16, 32, 1).flops() / 4);
  EXPECT_EQ(four.output(), grouped(16, 32, 1).output());
}

TEST(ConvProblemGroups, KeyNamesGroupsOnlyWhenThereAreSome) {
  EXPECT_EQ(grouped(16, 32, 4).key(), "n2c16h8w8_k32r3s3_u1v1_p1q1_nhwc_g4_f32");
  EXPECT_EQ(grouped(16, 32, 1).key(), "n2c16h8w8_k32r3s3_u1v1_p1q1_nhwc_f32");
}

TEST(ConvProblemGroups, GroupsMustDivideBothChannelCounts) {
  grouped(16, 32, 4).validate();
  for (const ConvProblem& bad : {grouped(16, 30, 4), grouped(18, 32, 4)}) {
    try {
      bad.validate();
      ADD_FAILURE() << bad.key() << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("4 groups do not divide"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(grouped(16, 32, 0).validate(), Error);
}

}  // namespace
}  // namespace tunescope
