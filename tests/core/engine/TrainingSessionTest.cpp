// End-to-end training on real data: a short LeNet-5 run on a slice of Fashion-MNIST
// must lower the loss, and bad options fail with a clear error.
#include "core/engine/TrainingSession.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/data/Dataset.h"

namespace tunescope {
namespace {

bool have_fashion_mnist() { return std::filesystem::exists(data::fashion_mnist_dir()); }

TEST(TrainingSession, LeNetOnFashionMnistSliceLowersLoss) {
  if (!have_fashion_mnist())
    GTEST_SKIP() << "Fashion-MNIST not installed (scripts/install-deps.sh installs it)";
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    SessionOptions options;
    options.batch = 32;
    options.train_limit = 2048;
    options.test_limit = 500;
    knobs::threads.set(options.knobs, 2);
    knobs::layout.set(options.knobs, layout);
    options.conv = parse_conv_choice("gemm");
    TrainingSession session(options);
    const StepStats before = session.evaluate();
    const EpochResult first = session.train_steps(8);
    session.train_steps(48);
    const EpochResult last = session.train_steps(8);
    const StepStats after = session.evaluate();
    EXPECT_LT(last.stats.mean_loss(), 0.8 * first.stats.mean_loss()) << to_string(layout);
    EXPECT_LT(after.mean_loss(), 0.8 * before.mean_loss()) << to_string(layout);
    EXPECT_GT(after.accuracy(), 0.5) << to_string(layout);  // 10 classes: chance is 0.1
    EXPECT_EQ(after.examples, 500);  // the partial final test batch counts too
  }
}

TEST(TrainingSession, FakeDataTrainsResnet) {
  SessionOptions options;
  options.model = "resnet18-small";
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 16;
  options.batch = 8;
  knobs::threads.set(options.knobs, 2);
  TrainingSession session(options);
  EXPECT_EQ(session.network().input_shape(), (Shape4{8, 3, 32, 32}));
  const EpochResult epoch = session.train_epoch();
  EXPECT_EQ(epoch.stats.examples, 64);
  EXPECT_TRUE(std::isfinite(epoch.stats.mean_loss()));
}

TEST(TrainingSession, RejectsBadOptions) {
  SessionOptions options;
  options.data = "fake";
  options.fake_train_count = 64;
  options.batch = 0;
  EXPECT_THROW(TrainingSession{options}, Error);
  options.batch = 128;  // more than the 64 examples
  try {
    TrainingSession session(options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()).rfind("batch 128 is larger", 0), 0u) << e.what();
  }
}

TEST(TrainingSession, DivergenceIsReportedNotHidden) {
  SessionOptions options;
  options.data = "fake";
  options.fake_train_count = 256;
  options.fake_test_count = 16;
  options.batch = 16;
  knobs::threads.set(options.knobs, 1);
  options.sgd.learning_rate = 1e6f;
  TrainingSession session(options);
  try {
    session.train_steps(16);
    FAIL() << "a learning rate of 1e6 should diverge";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope
