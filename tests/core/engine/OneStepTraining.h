// One training step of LeNet-5 on fake data, for tests that compare the loss, the
// gradients, the kernels traced and the conv memory of configurations that must learn
// the same thing (FFT workspace policies, FFT tilings, conv algorithms).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/engine/TrainingSession.h"

namespace tunescope::test_support {

struct OneStep {
  double loss = 0;
  std::vector<Tensor> gradients;
  std::vector<std::string> parameter_names;  // of `gradients`, in the network's order
  std::map<std::string, int> kernels;        // name -> calls
  ConvMemory memory;
};

// LeNet-5, fake data (32 examples), batch 16, 2 threads, no prefetch, `conv` as --conv.
SessionOptions lenet_fake_options(const std::string& conv);
OneStep train_one_step(const SessionOptions& options);
// How many kernels named `name` the step traced.
int kernel_count(const OneStep& step, const std::string& name);
// The loss within 1e-4 relative and every parameter's gradient within `tolerance` of its
// largest |reference| value (gtest expectations labelled `what`). Parameters are matched
// by name, so two builds of a model may order them differently.
void expect_gradients_near(const OneStep& got, const OneStep& reference, const std::string& what,
                           float tolerance = 1e-3f);

}  // namespace tunescope::test_support
