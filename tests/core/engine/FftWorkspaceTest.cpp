// The fft_workspace policy in real training: `cache` keeps each FFT layer's forward
// spectra for its backward passes. Both policies must learn what `direct` learns (loss
// and gradients of one step), `cache` must skip the backward r2c of w and x (counted in
// the trace), and its reported memory must exceed `reuse`'s by exactly the spectra.
//
// Tolerance against direct: 1e-3 of the largest |gradient| per parameter and 1e-4
// relative on the loss; FFT convolution differs from direct by float round-off (measured
// at most 9e-8 of the largest gradient here), a wrong or stale spectrum by O(1).
// `cache` against `reuse`: identical bits (the same transforms of the same data, kept).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/engine/TrainingSession.h"
#include "kernels/shared/FftWorkspace.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

using test_support::expect_gradients_near;
using test_support::OneStep;
using test_support::train_one_step;

SessionOptions lenet_options(const std::string& conv, FftWorkspace policy) {
  SessionOptions options = test_support::lenet_fake_options(conv);
  fft_workspace_knob.set(options.knobs, policy);
  return options;
}

int count(const OneStep& step, const std::string& name) {
  return test_support::kernel_count(step, name);
}

TEST(FftWorkspace, BothPoliciesMatchDirectAndCacheSkipsBackwardTransforms) {
  const OneStep direct = train_one_step(lenet_options("direct", FftWorkspace::reuse));
  for (const char* algorithm : {"fft-own", "fft-fftw"}) {
    const std::string a = algorithm;
    const OneStep reuse = train_one_step(lenet_options(a, FftWorkspace::reuse));
    const OneStep cache = train_one_step(lenet_options(a, FftWorkspace::cache));
    expect_gradients_near(reuse, direct, a + " reuse");
    expect_gradients_near(cache, direct, a + " cache");
    EXPECT_EQ(cache.loss, reuse.loss) << a;
    for (size_t p = 0; p < cache.gradients.size(); ++p)
      EXPECT_TRUE(std::equal(cache.gradients[p].data(),
                             cache.gradients[p].data() + cache.gradients[p].size(),
                             reuse.gradients[p].data()))
          << a << " parameter " << p;

    // LeNet-5 has two conv layers; conv1's input gradient is never needed, so backward
    // data runs on conv2 only. One chunk per pass at batch 16.
    EXPECT_EQ(count(reuse, a + ".bwd_data.r2c_w"), 1) << a;
    EXPECT_EQ(count(reuse, a + ".bwd_filter.r2c_x"), 2) << a;
    EXPECT_EQ(count(cache, a + ".bwd_data.r2c_w"), 0) << a;
    EXPECT_EQ(count(cache, a + ".bwd_filter.r2c_x"), 0) << a;
    const auto backward_r2c = [&](const OneStep& step) {
      return count(step, a + ".bwd_data.r2c_w") + count(step, a + ".bwd_data.r2c_dy") +
             count(step, a + ".bwd_filter.r2c_x") + count(step, a + ".bwd_filter.r2c_dy");
    };
    EXPECT_EQ(backward_r2c(reuse), 6) << a;
    EXPECT_EQ(backward_r2c(cache), 3) << a;
  }
}

TEST(FftWorkspace, CacheReportsTheSpectraOnTopOfTheWorkspace) {
  const OneStep reuse = train_one_step(lenet_options("fft-own", FftWorkspace::reuse));
  const OneStep cache = train_one_step(lenet_options("fft-own", FftWorkspace::cache));
  // The spectra fft-own keeps, from the layer shapes alone: half spectra of
  // rows x (cols / 2 + 1) complex floats (8 bytes), plane stride rounded up to 8 bins.
  //  conv1: 1 -> 6 channels, 5x5 on 32x32, no pad: 32x32 planes, 32 x 17 = 544 bins;
  //         x: 16 images x 1 channel, w: 6 x 1 planes.
  //  conv2: 6 -> 16 channels, 5x5 on 14x14, no pad: 16x16 planes (the next size fft-own
  //         transforms), 16 x 9 = 144 bins; x: 16 x 6 planes, w: 16 x 6 planes.
  const size_t spectra = (16 * 1 + 6 * 1) * 544 * 8 + (16 * 6 + 16 * 6) * 144 * 8;
  EXPECT_EQ(reuse.memory.saved_bytes, 0u);
  EXPECT_EQ(cache.memory.saved_bytes, spectra);
  EXPECT_EQ(cache.memory.workspace_bytes, reuse.memory.workspace_bytes);
  EXPECT_GT(reuse.memory.workspace_bytes, 0u);
  EXPECT_EQ(cache.memory.peak_bytes() - reuse.memory.peak_bytes(), spectra);
}

TEST(FftWorkspace, CacheCostsNothingWithoutFftLayers) {
  const OneStep reuse = train_one_step(lenet_options("gemm", FftWorkspace::reuse));
  const OneStep cache = train_one_step(lenet_options("gemm", FftWorkspace::cache));
  EXPECT_EQ(cache.memory.saved_bytes, 0u);
  EXPECT_EQ(cache.memory.peak_bytes(), reuse.memory.peak_bytes());
  EXPECT_EQ(cache.loss, reuse.loss);
}

TEST(FftWorkspace, MetadataAndDescriptionNameThePolicyAndItsMemory) {
  SessionOptions options = lenet_options("fft-own", FftWorkspace::cache);
  TrainingSession session(options);
  const auto metadata = session.conv_memory_metadata();
  const ConvMemory memory = session.conv_memory();
  EXPECT_EQ(metadata.at("fft_workspace"), "cache");
  EXPECT_EQ(metadata.at("fft_cached_spectra_bytes"), std::to_string(memory.saved_bytes));
  EXPECT_EQ(metadata.at("conv_memory_peak_bytes"), std::to_string(memory.peak_bytes()));
  EXPECT_NE(session.description().find("fft_workspace cache"), std::string::npos)
      << session.description();
  EXPECT_NE(session.config_json().find("\"fft_workspace\":\"cache\""), std::string::npos)
      << session.config_json();
}

}  // namespace
}  // namespace tunescope
