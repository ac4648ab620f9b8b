// Tiled FFT convolution (FftTiling.h): the tiling choice as the fft_tile knob carries it, the tile
// geometry, the automatic rule against its own cost model, and tiled fft-own / fft-fftw
// against `direct` on forward, backward data and backward filter — square and
// non-square planes, batch and channels > 1, both layouts, pad 0 to 2, and outputs that
// are not a multiple of the tile (the last tile is partial).
//
// Tolerance: max |tiled - direct| / max |direct| <= 1e-3, the bound of every FFT
// algorithm in ConvAlgorithmsMatchDirectTest (float transforms add error relative to the
// largest value; tiles only make the transforms smaller).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftTiling.h"
#include "kernels/cpu/FftwTransform.h"
#include "kernels/cpu/OwnFftTransform.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::conv_test {
namespace {

using cpu::FftTileGeometry;

constexpr double kTolerance = 1e-3;

std::unique_ptr<cpu::FftTransformFactory> make_factory(const std::string& algorithm) {
  if (algorithm == "fft-own") return std::make_unique<cpu::OwnFftTransformFactory>();
  return std::make_unique<cpu::FftwTransformFactory>();
}

std::unique_ptr<cpu::FftConvolution> make_fft(
    const std::string& algorithm, FftTileChoice tiling,
    int64_t chunk_budget = cpu::FftConvolution::kDefaultChunkBudgetBytes) {
  const cpu::FftKernelNames names = algorithm == "fft-own" ? TUNESCOPE_FFT_KERNEL_NAMES("fft-own")
                                                           : TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw");
  return std::make_unique<cpu::FftConvolution>(algorithm, names, make_factory(algorithm),
                                               chunk_budget, tiling);
}

// The registered algorithms take the run's fft_tile through their knob: a fixed size
// that does not exceed a stride-1 kernel is refused with a reason naming the knob, a
// strided problem runs untiled whatever the size, and only stride-1 problems report
// that the knob applies (what the tuner crosses it on).
TEST(FftTileOption, RegisteredAlgorithmsTakeItFromTheirKnob) {
  const ConvProblem k5 = make_problem(2, 3, 32, 32, 4, 5, 5, 1, 1, 2, 2);
  const ConvProblem strided = make_problem(2, 3, 32, 32, 4, 5, 5, 2, 2, 2, 2);
  for (const char* algorithm : {"fft-fftw", "fft-own"}) {
    SCOPED_TRACE(algorithm);
    KnobValues knobs;
    fft_tile_knob.set(knobs, FftTileChoice::fixed(4));
    auto four = Registry::instance().make_conv_algorithm("cpu", algorithm, knobs);
    const std::string why = four->unsupported_reason(k5);
    EXPECT_NE(why.find("fft_tile 4"), std::string::npos) << why;
    EXPECT_NE(why.find("5x5 kernel"), std::string::npos) << why;
    EXPECT_TRUE(four->supports(strided)) << four->unsupported_reason(strided);
    fft_tile_knob.set(knobs, FftTileChoice::fixed(8));
    auto eight = Registry::instance().make_conv_algorithm("cpu", algorithm, knobs);
    EXPECT_TRUE(eight->supports(k5)) << eight->unsupported_reason(k5);
    EXPECT_TRUE(eight->knob_applies("fft_tile", k5));
    EXPECT_FALSE(eight->knob_applies("fft_tile", strided));
    EXPECT_TRUE(eight->knob_applies("fft_workspace", strided));
  }
  EXPECT_FALSE(
      Registry::instance().make_conv_algorithm("cpu", "gemm")->knob_applies("fft_tile", k5));
  EXPECT_FALSE(
      Registry::instance().make_conv_algorithm("cpu", "gemm")->knob_applies("fft_workspace", k5));
}

TEST(FftTileGeometry, TilesCoverOutputAndInput) {
  // 40x28, 3x3, pad 0: output 38x26; transforms of 16 give tiles of 14.
  const auto g = cpu::tiled_geometry(make_problem(1, 1, 40, 28, 1, 3, 3, 1, 1, 0, 0), 16, 16);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->tile_h, 14);
  EXPECT_EQ(g->tile_w, 14);
  EXPECT_EQ(g->out_tiles_h, 3);  // 38 = 14 + 14 + 10
  EXPECT_EQ(g->out_tiles_w, 2);  // 26 = 14 + 12
  EXPECT_EQ(g->in_tiles_h, 3);   // 40 = 14 + 14 + 12
  EXPECT_EQ(g->in_tiles_w, 2);   // 28 = 14 + 14
  // Strided problems and transforms no larger than the kernel cannot be tiled.
  EXPECT_FALSE(cpu::tiled_geometry(make_problem(1, 1, 40, 28, 1, 3, 3, 2, 2, 1, 1), 16, 16));
  EXPECT_FALSE(cpu::tiled_geometry(make_problem(1, 1, 40, 28, 1, 5, 5, 1, 1, 0, 0), 5, 16));
}

TEST(FftTileRule, AutomaticIsTheCheapestCandidateAndFallsBackWhenItCannotTile) {
  cpu::OwnFftTransformFactory own;
  cpu::FftwTransformFactory fftw;
  for (const cpu::FftTransformFactory* f : {static_cast<const cpu::FftTransformFactory*>(&own),
                                            static_cast<const cpu::FftTransformFactory*>(&fftw)}) {
    for (const ConvProblem& p : {make_problem(32, 16, 64, 64, 16, 3, 3, 1, 1, 1, 1),
                                 make_problem(32, 1, 64, 64, 1, 3, 3, 1, 1, 1, 1),
                                 make_problem(32, 16, 32, 32, 16, 13, 13, 1, 1, 6, 6)}) {
      const FftTileGeometry chosen = cpu::choose_fft_tiles(p, FftTileChoice::automatic(), *f);
      const double cost = cpu::fft_conv_cost(p, chosen);
      EXPECT_LE(cost, cpu::fft_conv_cost(p, cpu::untiled_geometry(p, *f))) << p.key();
      for (int64_t size : {8, 16, 32}) {
        if (const auto tiled = cpu::tiled_geometry(p, size, size)) {
          EXPECT_LE(cost, cpu::fft_conv_cost(p, *tiled)) << p.key() << " vs " << size;
        }
      }
    }
    // One channel in and out: transforms are all the work, small ones pay.
    EXPECT_TRUE(cpu::choose_fft_tiles(make_problem(32, 1, 64, 64, 1, 3, 3, 1, 1, 1, 1),
                                      FftTileChoice::automatic(), *f)
                    .tiled);
    // A 13x13 kernel on 32x32 leaves tiles too little output to pay for their halo.
    EXPECT_FALSE(cpu::choose_fft_tiles(make_problem(32, 16, 32, 32, 16, 13, 13, 1, 1, 6, 6),
                                       FftTileChoice::automatic(), *f)
                     .tiled);
    // Large planes, few channels: tiled by the plain model, untiled once a tiled flop is
    // weighted as fft-own weighs it (1.7).
    const ConvProblem large = make_problem(8, 4, 256, 256, 4, 3, 3, 1, 1, 1, 1);
    EXPECT_TRUE(cpu::choose_fft_tiles(large, FftTileChoice::automatic(), *f).tiled);
    EXPECT_FALSE(cpu::choose_fft_tiles(large, FftTileChoice::automatic(), *f, 1.7).tiled);
    // Strided: untiled whatever is asked.
    const ConvProblem strided = make_problem(2, 3, 64, 64, 4, 3, 3, 2, 2, 1, 1);
    EXPECT_FALSE(cpu::choose_fft_tiles(strided, FftTileChoice::fixed(16), *f).tiled);
    EXPECT_FALSE(cpu::choose_fft_tiles(strided, FftTileChoice::automatic(), *f).tiled);
    const ConvProblem plain = make_problem(2, 3, 64, 64, 4, 3, 3, 1, 1, 1, 1);
    EXPECT_FALSE(cpu::choose_fft_tiles(plain, FftTileChoice::untiled(), *f).tiled);
    const FftTileGeometry fixed = cpu::choose_fft_tiles(plain, FftTileChoice::fixed(16), *f);
    EXPECT_TRUE(fixed.tiled);
    EXPECT_EQ(fixed.fft_h, 16);
    // A tile at least as large as the whole untiled transform: untiled (66 -> 70 or 72).
    EXPECT_FALSE(cpu::choose_fft_tiles(plain, FftTileChoice::fixed(128), *f).tiled);
    EXPECT_TRUE(cpu::choose_fft_tiles(plain, FftTileChoice::fixed(64), *f).tiled);
  }
}

struct TiledCase {
  std::string algorithm;
  int64_t fft_size;
  NamedProblem problem;
  Layout layout;
};

class TiledMatchesDirect : public ::testing::TestWithParam<TiledCase> {
 protected:
  void SetUp() override {
    const TiledCase& c = GetParam();
    problem = with_layout(c.problem.problem, c.layout);
    fft = make_fft(c.algorithm, FftTileChoice::fixed(c.fft_size));
    // The case must really run tiled, with more than one tile.
    const auto g = cpu::tiled_geometry(problem, c.fft_size, c.fft_size);
    ASSERT_TRUE(g) << problem.key();
    ASSERT_GT(g->out_tiles(), 1) << problem.key();
    ops = random_operands(problem, 23);
  }

  ConvProblem problem;
  std::unique_ptr<cpu::FftConvolution> fft;
  std::unique_ptr<ConvAlgorithm> direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool{3};
  ConvOperands ops;
};

TEST_P(TiledMatchesDirect, Forward) {
  EXPECT_LE(relative_error(run_forward(*fft, problem, pool, ops.x, ops.w),
                           run_forward(*direct, problem, pool, ops.x, ops.w)),
            kTolerance);
}

TEST_P(TiledMatchesDirect, BackwardData) {
  EXPECT_LE(relative_error(run_backward_data(*fft, problem, pool, ops.dy, ops.w),
                           run_backward_data(*direct, problem, pool, ops.dy, ops.w)),
            kTolerance);
}

TEST_P(TiledMatchesDirect, BackwardFilter) {
  EXPECT_LE(relative_error(run_backward_filter(*fft, problem, pool, ops.x, ops.dy),
                           run_backward_filter(*direct, problem, pool, ops.x, ops.dy)),
            kTolerance);
}

std::vector<TiledCase> tiled_cases() {
  const std::vector<std::pair<int64_t, NamedProblem>> problems = {
      {16, {"64x64_k3_pad1", make_problem(2, 3, 64, 64, 4, 3, 3, 1, 1, 1, 1)}},
      {8, {"64x64_k3_pad0_fft8", make_problem(1, 2, 64, 64, 3, 3, 3, 1, 1, 0, 0)}},
      {16, {"32x32_k5_pad0", make_problem(3, 2, 32, 32, 3, 5, 5, 1, 1, 0, 0)}},
      {16, {"32x32_k5_pad2", make_problem(2, 3, 32, 32, 2, 5, 5, 1, 1, 2, 2)}},
      {16, {"40x28_k3_pad1", make_problem(2, 3, 40, 28, 5, 3, 3, 1, 1, 1, 1)}},
      {8, {"13x11_k3_pad0_partial_tiles", make_problem(3, 2, 13, 11, 2, 3, 3, 1, 1, 0, 0)}},
      {8, {"9x17_k3x5_pad1x2", make_problem(2, 2, 9, 17, 3, 3, 5, 1, 1, 1, 2)}},
  };
  std::vector<TiledCase> out;
  for (const char* algorithm : {"fft-own", "fft-fftw"})
    for (const auto& [size, problem] : problems)
      for (Layout layout : {Layout::NCHW, Layout::NHWC})
        out.push_back({algorithm, size, problem, layout});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, TiledMatchesDirect, ::testing::ValuesIn(tiled_cases()),
                         [](const ::testing::TestParamInfo<TiledCase>& info) {
                           const TiledCase& c = info.param;
                           return std::string(c.algorithm == "fft-own" ? "own" : "fftw") + "_fft" +
                                  std::to_string(c.fft_size) + "_" + c.problem.name + "_" +
                                  to_string(c.layout);
                         });

// One image per chunk: backward filter accumulates tile spectra across chunks too.
TEST(TiledFftConvolution, OneImagePerChunkMatchesDirect) {
  auto fft = make_fft("fft-own", FftTileChoice::fixed(8), 1);
  auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool(2);
  const ConvProblem p = make_problem(3, 2, 15, 14, 3, 3, 3, 1, 1, 1, 1);
  const ConvOperands ops = random_operands(p, 29);
  EXPECT_LE(relative_error(run_forward(*fft, p, pool, ops.x, ops.w),
                           run_forward(*direct, p, pool, ops.x, ops.w)),
            kTolerance);
  EXPECT_LE(relative_error(run_backward_data(*fft, p, pool, ops.dy, ops.w),
                           run_backward_data(*direct, p, pool, ops.dy, ops.w)),
            kTolerance);
  EXPECT_LE(relative_error(run_backward_filter(*fft, p, pool, ops.x, ops.dy),
                           run_backward_filter(*direct, p, pool, ops.x, ops.dy)),
            kTolerance);
}

// The cache keeps the spectra of every (overlapping) tile of x and the filter spectra at
// the tile size; the buffer the engine sizes from saved_bytes must hold exactly that.
TEST(TiledFftConvolution, SavedBytesCountEveryTile) {
  const ConvProblem p = make_problem(2, 3, 64, 64, 4, 3, 3, 1, 1, 1, 1);
  auto tiled = make_fft("fft-own", FftTileChoice::fixed(8));
  // 64 rows in tiles of 6: 11 x 11 tiles of 8x8 transforms (8 x 5 = 40 bins, 40 with the
  // 64-byte plane stride) for x, 4 x 3 filter planes.
  EXPECT_EQ(tiled->saved_bytes(p), (2 * 121 * 3 + 4 * 3) * 40 * sizeof(std::complex<float>));
}

}  // namespace
}  // namespace tunescope::conv_test
