#include "tests/core/engine/OneStepTraining.h"
#include "core/engine/RunKnobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tunescope::test_support {

SessionOptions lenet_fake_options(const std::string& conv) {
  SessionOptions options;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 32;
  options.fake_test_count = 8;
  options.batch = 16;
  knobs::threads.set(options.knobs, 2);
  options.prefetch = 0;
  options.conv = parse_conv_choice(conv);
  return options;
}

OneStep train_one_step(const SessionOptions& options) {
  TrainingSession session(options);
  OneStep out;
  session.tracer().start();
  out.loss = session.train_steps(1).stats.mean_loss();
  session.tracer().stop();
  for (const auto& activity : session.tracer().collect({}).activities) ++out.kernels[activity.name];
  for (const Parameter* p : session.network().parameters()) {
    out.gradients.push_back(p->grad);
    out.parameter_names.push_back(p->name);
  }
  out.memory = session.conv_memory();
  return out;
}

int kernel_count(const OneStep& step, const std::string& name) {
  auto it = step.kernels.find(name);
  return it == step.kernels.end() ? 0 : it->second;
}

void expect_gradients_near(const OneStep& got, const OneStep& reference, const std::string& what,
                           float tolerance) {
  EXPECT_NEAR(got.loss, reference.loss, 1e-4 * std::abs(reference.loss)) << what;
  ASSERT_EQ(got.gradients.size(), reference.gradients.size());
  for (size_t p = 0; p < got.gradients.size(); ++p) {
    const std::string& name = got.parameter_names[p];
    const auto match =
        std::find(reference.parameter_names.begin(), reference.parameter_names.end(), name);
    ASSERT_NE(match, reference.parameter_names.end())
        << what << ": no parameter " << name << " in the reference";
    const Tensor& a = got.gradients[p];
    const Tensor& b =
        reference.gradients[static_cast<size_t>(match - reference.parameter_names.begin())];
    ASSERT_EQ(a.size(), b.size());
    float scale = 0, error = 0;
    for (int64_t i = 0; i < a.size(); ++i) {
      scale = std::max(scale, std::abs(b.data()[i]));
      error = std::max(error, std::abs(a.data()[i] - b.data()[i]));
    }
    EXPECT_LE(error, tolerance * scale) << what << " parameter " << name;
  }
}

}  // namespace tunescope::test_support
