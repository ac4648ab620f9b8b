// The fft_tile knob in real training: the engine hands it to the FFT algorithms it makes
// by name (LayerSetup::knobs -> Registry -> the fft_tile knob), so LeNet-5 trained with
// fft_tile off, 8 and 16 must learn the same step, the tiled runs must really tile (their
// kept spectra under fft_workspace=cache cover every tile, so they differ in size), and a
// tile that does not exceed a layer's kernel stops the build naming the layer.
//
// Tolerance, tiled against untiled: loss within 1e-4 relative and each gradient within
// 1e-4 of its parameter's largest |gradient|. Both are float FFT convolutions of the same
// data; they differ only by transform round-off (each is within 1e-7 of direct on these
// layers, FftWorkspaceTest), while a misplaced or missing tile is wrong by O(1).
#include <gtest/gtest.h>

#include <string>

#include "core/base/Error.h"
#include "core/engine/TrainingSession.h"
#include "kernels/cpu/FftTileChoice.h"
#include "kernels/shared/FftWorkspace.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

using test_support::expect_gradients_near;
using test_support::OneStep;
using test_support::train_one_step;

SessionOptions tiled_options(const std::string& conv, FftTileChoice tile,
                             FftWorkspace policy = FftWorkspace::reuse) {
  SessionOptions options = test_support::lenet_fake_options(conv);
  fft_tile_knob.set(options.knobs, tile);
  fft_workspace_knob.set(options.knobs, policy);
  return options;
}

TEST(FftTileTraining, TiledStepsMatchTheUntiledStep) {
  for (const char* algorithm : {"fft-own", "fft-fftw"}) {
    const std::string a = algorithm;
    const OneStep off = train_one_step(tiled_options(a, FftTileChoice::untiled()));
    for (int64_t size : {8, 16}) {
      const OneStep tiled = train_one_step(tiled_options(a, FftTileChoice::fixed(size)));
      expect_gradients_near(tiled, off, a + " fft_tile " + std::to_string(size), 1e-4f);
      // The same kernels run, tiles are only more planes to them.
      EXPECT_EQ(tiled.kernels, off.kernels) << a << " " << size;
    }
  }
}

TEST(FftTileTraining, TheKnobReachesTheAlgorithm) {
  // Under fft_workspace=cache each FFT layer keeps the spectra of every tile of x: 8x8
  // tiles of LeNet's 28x28 and 10x10 outputs (4x4 outputs per tile) overlap by the
  // kernel's 4 rows and columns, so they keep more than the untiled 32x32 and 16x16 planes.
  const ConvMemory off =
      train_one_step(tiled_options("fft-own", FftTileChoice::untiled(), FftWorkspace::cache))
          .memory;
  const ConvMemory eight =
      train_one_step(tiled_options("fft-own", FftTileChoice::fixed(8), FftWorkspace::cache)).memory;
  EXPECT_GT(off.saved_bytes, 0u);
  EXPECT_GT(eight.saved_bytes, off.saved_bytes);
  // Direct ignores the knob.
  const ConvMemory direct =
      train_one_step(tiled_options("direct", FftTileChoice::fixed(8), FftWorkspace::cache)).memory;
  EXPECT_EQ(direct.saved_bytes, 0u);
}

TEST(FftTileTraining, DescriptionAndTraceConfigNameTheTile) {
  TrainingSession session(tiled_options("fft-own", FftTileChoice::fixed(16)));
  EXPECT_NE(session.description().find("fft_tile 16"), std::string::npos) << session.description();
  EXPECT_NE(session.config_json().find("\"fft_tile\":\"16\""), std::string::npos)
      << session.config_json();
}

TEST(FftTileTraining, ATileNotLargerThanAKernelStopsTheBuildNamingTheLayer) {
  try {
    TrainingSession session(tiled_options("fft-own", FftTileChoice::fixed(4)));
    FAIL() << "fft_tile 4 was accepted for LeNet-5's 5x5 kernels";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("layer conv1"), std::string::npos) << what;
    EXPECT_NE(what.find("fft_tile 4 does not exceed the 5x5 kernel"), std::string::npos) << what;
  }
  // Without an FFT layer the knob changes nothing and refuses nothing.
  EXPECT_NO_THROW(TrainingSession(tiled_options("gemm", FftTileChoice::fixed(4))));
}

}  // namespace
}  // namespace tunescope
