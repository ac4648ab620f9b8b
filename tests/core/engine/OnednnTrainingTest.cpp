// The onednn:* conv algorithms in real training: one step of LeNet-5 (both layouts) and of
// resnet18-small through the engine with --conv onednn:direct / onednn:auto learns what
// the same step with `direct` learns, and no conv layer ran `direct`.
//
// Tolerance: loss within 1e-4 relative and each gradient within 1e-3 of its parameter's
// largest |gradient| (expect_gradients_near's default): float sums in another order, and
// for onednn:auto possibly Winograd's transforms (1e-3 per conv, ConvTestSupport.h); a
// wrong pass, layout or reorder is wrong by O(1).
#include <gtest/gtest.h>

#include <string>

#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

using test_support::expect_gradients_near;
using test_support::OneStep;
using test_support::train_one_step;

#ifdef TUNESCOPE_HAVE_ONEDNN
constexpr bool kOnednnBuilt = true;
#else
constexpr bool kOnednnBuilt = false;
#endif

// Calls of the step's kernels whose names start with `prefix`.
int kernels_named(const OneStep& step, const std::string& prefix) {
  int count = 0;
  for (const auto& [name, calls] : step.kernels)
    if (name.rfind(prefix, 0) == 0) count += calls;
  return count;
}

SessionOptions options(const std::string& model, const std::string& conv, Layout layout) {
  SessionOptions o = test_support::lenet_fake_options(conv);
  o.model = model;
  knobs::layout.set(o.knobs, layout);
  if (model == "resnet18-small") o.batch = 8;
  return o;
}

TEST(OnednnTraining, OneStepMatchesDirect) {
  if (!kOnednnBuilt)
    GTEST_SKIP() << "built without oneDNN (TUNESCOPE_ONEDNN=OFF or libdnnl-dev missing)";
  struct Case {
    const char* model;
    Layout layout;
  };
  for (const Case c : {Case{"lenet5", Layout::NCHW}, Case{"lenet5", Layout::NHWC},
                       Case{"resnet18-small", Layout::NHWC}}) {
    const OneStep reference = train_one_step(options(c.model, "direct", c.layout));
    for (const char* algorithm : {"onednn:direct", "onednn:auto"}) {
      const std::string what = std::string(c.model) + " " + to_string(c.layout) + " " + algorithm;
      const OneStep step = train_one_step(options(c.model, algorithm, c.layout));
      expect_gradients_near(step, reference, what);
      EXPECT_GT(kernels_named(step, std::string(algorithm) + ".fwd."), 0) << what;
      EXPECT_GT(kernels_named(step, std::string(algorithm) + ".bwd_filter."), 0) << what;
      EXPECT_EQ(kernels_named(step, "direct."), 0) << what;
    }
  }
}

}  // namespace
}  // namespace tunescope
