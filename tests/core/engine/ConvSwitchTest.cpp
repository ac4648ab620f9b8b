// TrainingSession::use_conv: a session switched to other conv algorithms learns as a
// session built with them does, grows its workspace for them, and refuses a layer it
// lacks or an algorithm that cannot run a layer, running on as it did.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/base/Error.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

using test_support::lenet_fake_options;

test_support::OneStep step_of(TrainingSession& session) {
  test_support::OneStep out;
  out.loss = session.train_steps(1).stats.mean_loss();
  for (const Parameter* p : session.network().parameters()) {
    out.gradients.push_back(p->grad);
    out.parameter_names.push_back(p->name);
  }
  out.memory = session.conv_memory();
  return out;
}

std::string algorithms_of(const TrainingSession& session) {
  std::string text;
  for (const auto& layer : session.conv_layers()) text += layer.layer + "=" + layer.algorithm + " ";
  return text;
}

// Switched before its first step, a session's step is the step of a session built with
// the new algorithms (same seed, same batch): the same loss and gradients to rounding.
TEST(ConvSwitch, ASwitchedSessionStepsAsOneBuiltWithTheNewAlgorithms) {
  for (const std::string to : {"direct", "gemm,conv2=fft-fftw", "conv1=gemm"}) {
    TrainingSession switched(lenet_fake_options("fft-fftw"));
    switched.use_conv(parse_conv_choice(to));
    TrainingSession built(lenet_fake_options(to));
    EXPECT_EQ(algorithms_of(switched), algorithms_of(built)) << to;
    test_support::OneStep a = step_of(switched);
    test_support::OneStep b = step_of(built);
    test_support::expect_gradients_near(a, b, "fft-fftw switched to " + to);
  }
}

// Back and forth over several steps: each step runs the algorithms chosen for it (its
// kernels say so), and the weights carry on from step to step.
TEST(ConvSwitch, EachStepRunsTheAlgorithmsChosenForIt) {
  TrainingSession session(lenet_fake_options("direct"));
  for (const char* conv : {"gemm", "direct", "gemm", "fft-fftw"}) {
    session.use_conv(parse_conv_choice(conv));
    session.tracer().start();
    session.train_steps(1);
    session.tracer().stop();
    int own = 0, other = 0;
    for (const auto& activity : session.tracer().collect({}).activities) {
      const std::string& name = activity.name;
      for (const std::string algorithm : {"direct.", "gemm.", "fft-fftw."})
        if (name.rfind(algorithm, 0) == 0) ++(algorithm == std::string(conv) + "." ? own : other);
    }
    EXPECT_GT(own, 0) << conv << ": no kernel of the algorithm switched to";
    EXPECT_EQ(other, 0) << conv << ": kernels of an algorithm switched away from";
  }
  EXPECT_EQ(session.options().conv.str(), "fft-fftw");
}

// direct needs no workspace, gemm's im2col does: the switch grows the lanes' workspaces
// before the step that needs them (an overflow would fail under ASan).
TEST(ConvSwitch, TheWorkspaceGrowsForTheNewAlgorithms) {
  TrainingSession session(lenet_fake_options("direct"));
  const size_t before = session.conv_memory().workspace_bytes;
  session.use_conv(parse_conv_choice("gemm"));
  const size_t after = session.conv_memory().workspace_bytes;
  EXPECT_GT(after, before);
  EXPECT_TRUE(std::isfinite(session.train_steps(2).stats.mean_loss()));
  session.use_conv(parse_conv_choice("direct"));  // never shrinks: gemm may come back
  EXPECT_EQ(session.conv_memory().workspace_bytes, after);
}

// use_conv(conv) throws Error(kind) naming `layer`.
void expect_refused(TrainingSession& session, const std::string& conv, ErrorKind kind,
                    const std::string& layer) {
  try {
    session.use_conv(parse_conv_choice(conv));
    ADD_FAILURE() << conv << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << conv;
    EXPECT_NE(std::string(e.what()).find(layer), std::string::npos) << e.what();
  }
}

// A layer the model lacks, or an algorithm that cannot run a layer (winograd runs 3x3
// layers only; LeNet-5's are 5x5): refused with the layer named, and the session runs on
// with the algorithms it had.
TEST(ConvSwitch, ARefusedSwitchLeavesTheSessionAsItWas) {
  TrainingSession session(lenet_fake_options("gemm"));
  const std::string before = algorithms_of(session);
  expect_refused(session, "direct,conv9=gemm", ErrorKind::usage, "conv9");  // no such layer
  expect_refused(session, "direct,conv2=winograd", ErrorKind::unsupported, "conv2");
  EXPECT_EQ(algorithms_of(session), before);
  EXPECT_EQ(session.options().conv.str(), "gemm");
  EXPECT_TRUE(std::isfinite(session.train_steps(1).stats.mean_loss()));
}

}  // namespace
}  // namespace tunescope
