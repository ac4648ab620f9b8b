// The tuner's numerics check on a deep net with batch norm (resnet18-small) and on
// lenet5: every registered CPU algorithm passes in both layouts (one that runs only some
// layers, winograd or onednn:winograd, on those with direct on the rest), also on a batch whose
// reordered sums flip ReLU ties (seed 4, batch 8: correct candidates differ from the
// reference by up to 2.2e-2 relative L2 there), while the deliberately wrong algorithms,
// the subtle one that is 5% off in one layer's weight gradient included, are rejected.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "TestAlgorithms.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/SearchSpace.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

// The check, then one timed step (a fixed count: the minimum is the maximum).
MeasureOptions check_only() {
  MeasureOptions o;
  o.warmup = 0;
  o.steps = 1;
  o.max_steps = 1;
  return o;
}

SessionOptions small_resnet() {
  SessionOptions o = test_support::tiny_session();
  o.model = "resnet18-small";
  o.batch = 8;
  o.seed = 4;  // a batch with ReLU ties that reordered sums flip (see the file comment)
  o.fake_train_count = 32;
  return o;
}

std::vector<std::string> product_cpu_algorithms() {
  std::vector<std::string> names;
  for (const std::string& name : Registry::instance().conv_algorithms("cpu"))
    if (name.rfind("test-", 0) != 0) names.push_back(name);
  return names;
}

// Each algorithm on every layer it supports (direct on the rest: winograd runs 3x3
// stride-1 layers only, none of lenet5's).
void expect_every_cpu_algorithm_passes(const SessionOptions& base) {
  const NumericsSample reference = reference_numerics(base, check_only());
  const auto algorithms = product_cpu_algorithms();
  ASSERT_GE(algorithms.size(), 5u) << "direct, gemm, fft-fftw, fft-own, winograd at least";
  for (const std::string& algorithm : algorithms)
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const TrialResult r =
          measure(base, test_support::config_where_supported(base, layout, algorithm), reference,
                  check_only());
      EXPECT_EQ(r.status, TrialStatus::ok)
          << base.model << " " << algorithm << " " << to_string(layout) << ": " << r.reason;
    }
}

// `layer` runs `algorithm`, every other conv layer the reference's direct in nchw: the
// candidate's gradients differ from the reference's by that layer's defect alone.
RunConfig one_layer(const SessionOptions& base, const std::string& layer,
                    const std::string& algorithm) {
  RunConfig c = config_with(base, Layout::NCHW, "direct");
  c.conv.per_layer[layer] = algorithm;
  return c;
}

void expect_wrong_algorithms_rejected(const SessionOptions& base, const std::string& layer) {
  const NumericsSample reference = reference_numerics(base, check_only());
  for (const RunConfig& config : {config_with(base, Layout::NCHW, test_support::kWrong),
                                  one_layer(base, layer, test_support::kWrong),
                                  config_with(base, Layout::NCHW, test_support::kFilterOff)}) {
    const TrialResult r = measure(base, config, reference, check_only());
    EXPECT_EQ(r.status, TrialStatus::invalid)
        << base.model << " " << config.label() << ": " << r.reason;
  }
  // 5% off in one layer's weight gradient: the loss and every other gradient are right,
  // on both batches; the message names the quantity, its error and the tolerance.
  const TrialResult subtle =
      measure(base, one_layer(base, layer, test_support::kFilterOff), reference, check_only());
  EXPECT_EQ(subtle.status, TrialStatus::invalid) << subtle.reason;
  const std::regex said("first step: gradient of " + layer +
                        R"(\.weight: relative L2 error ([0-9.e-]+) .*> tolerance 0\.03; )"
                        "next batch at the same weights: gradient of " +
                        layer + R"(\.weight: relative L2 error ([0-9.e-]+) )");
  std::smatch error;
  ASSERT_TRUE(std::regex_search(subtle.reason, error, said)) << subtle.reason;
  EXPECT_NEAR(std::stod(error[1]), test_support::kFilterOffScale - 1, 1e-3);
  EXPECT_NEAR(std::stod(error[2]), test_support::kFilterOffScale - 1, 1e-3);
}

TEST(NumericsCheck, EveryCpuAlgorithmPassesOnResnet18SmallInBothLayouts) {
  expect_every_cpu_algorithm_passes(small_resnet());
}

TEST(NumericsCheck, EveryCpuAlgorithmPassesOnLenet5InBothLayouts) {
  expect_every_cpu_algorithm_passes(test_support::tiny_session());
}

// A candidate whose first step is off in one weight gradient (as a ReLU tie flip makes
// it: gemm on this batch differed by 2.2e-2 on the machine the tolerance was set on, but
// whether a tie flips depends on the CPU's BLAS kernels) while the next batch at the
// same weights matches is valid; with no next batch to confirm, it is invalid. Only the
// second batch tells a one-off deviation from a defect.
TEST(NumericsCheck, AFirstBatchDeviationIsForgivenWhenTheNextBatchMatches) {
  const SessionOptions base = small_resnet();
  const NumericsSample reference = reference_numerics(base, check_only());
  ASSERT_TRUE(reference.next_batch);
  const RunConfig first_off = one_layer(base, "s2b1.conv1", test_support::kFirstFilterOff);
  const TrialResult confirmed = measure(base, first_off, reference, check_only());
  EXPECT_EQ(confirmed.status, TrialStatus::ok) << confirmed.reason;
  EXPECT_EQ(confirmed.figures.steps, 1)
      << "timed after the confirmation, on the candidate's own session";
  ASSERT_TRUE(confirmed.trace);
  NumericsSample one_batch = reference;
  one_batch.next_batch = nullptr;
  const TrialResult first_only = measure(base, first_off, one_batch, check_only());
  EXPECT_EQ(first_only.status, TrialStatus::invalid);
  const std::regex said(
      R"(^first step: gradient of s2b1\.conv1\.weight: relative L2 error ([0-9.e-]+) )");
  std::smatch error;
  ASSERT_TRUE(std::regex_search(first_only.reason, error, said)) << first_only.reason;
  EXPECT_NEAR(std::stod(error[1]), test_support::kFilterOffScale - 1, 1e-3);
}

// winograd runs resnet18-small's 14 3x3 stride-1 conv layers (direct the rest); with either
// tile it passes, and with the filter left unflipped in backward data it is rejected.
TEST(NumericsCheck, WinogradPassesWithEitherTileAndABrokenOneIsRejected) {
  const SessionOptions base = small_resnet();
  const NumericsSample reference = reference_numerics(base, check_only());
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const RunConfig f2 =
        test_support::config_where_supported(base, layout, test_support::kWinogradF2);
    EXPECT_EQ(f2.conv.per_layer.size(), 14u) << f2.label();
    const TrialResult good = measure(base, f2, reference, check_only());
    EXPECT_EQ(good.status, TrialStatus::ok) << to_string(layout) << ": " << good.reason;
    const TrialResult broken = measure(
        base, test_support::config_where_supported(base, layout, test_support::kWinogradNoFlip),
        reference, check_only());
    EXPECT_EQ(broken.status, TrialStatus::invalid) << to_string(layout) << ": " << broken.reason;
    EXPECT_NE(broken.reason.find("gradient of"), std::string::npos) << broken.reason;
  }
}

TEST(NumericsCheck, WrongAndSubtlyWrongAlgorithmsAreRejectedOnResnet18Small) {
  expect_wrong_algorithms_rejected(small_resnet(), "s2b1.conv1");
}

TEST(NumericsCheck, WrongAndSubtlyWrongAlgorithmsAreRejectedOnLenet5) {
  expect_wrong_algorithms_rejected(test_support::tiny_session(), "conv2");
}

}  // namespace
}  // namespace tunescope::tuner

namespace tunescope::tuner {
namespace {

// The fuse knob: a fused candidate (bn + relu, bn + add + relu) passes the check against
// an unfused reference in both layouts, and the parameters it orders differently (the
// projection's before bn2's) are matched by name.
TEST(NumericsCheck, FusedCandidatePassesAgainstAnUnfusedReference) {
  SessionOptions base = small_resnet();
  knobs::fuse.set(base.knobs, false);
  const NumericsSample reference = reference_numerics(base, check_only());
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    RunConfig config = config_with(base, layout, "gemm");
    knobs::fuse.set(config.knobs, true);
    const TrialResult r = measure(base, config, reference, check_only());
    EXPECT_EQ(r.status, TrialStatus::ok) << config.label() << ": " << r.reason;
  }
}

}  // namespace
}  // namespace tunescope::tuner
