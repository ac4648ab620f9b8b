// FFT convolution with ConvCall::saved (fft_workspace=cache): forward keeps the spectra
// of x and w, and the backward passes reuse them instead of transforming again. The
// results must be the very bits of the recomputing passes (the same transforms of the
// same data, only kept), the trace must lose exactly the r2c of w in backward data and
// of x in backward filter, and a backward pass handed another tensor must recompute.
// Problems: stride 1 and 2, one chunk and (FftConvolution with a 1-byte chunk budget)
// one image per chunk, both layouts, fft-own and fft-fftw, untiled and in tiles of 8x8
// transforms (FftTiling.h; strided problems fall back to untiled).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftwTransform.h"
#include "kernels/cpu/OwnFftTransform.h"
#include "profiler/Tracer.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::conv_test {
namespace {

std::unique_ptr<cpu::FftConvolution> make_fft(const std::string& name, int64_t chunk_budget,
                                              FftTileChoice tiling = FftTileChoice::untiled()) {
  if (name == "fft-own")
    return std::make_unique<cpu::FftConvolution>(name, TUNESCOPE_FFT_KERNEL_NAMES("fft-own"),
                                                 std::make_unique<cpu::OwnFftTransformFactory>(),
                                                 chunk_budget, tiling);
  return std::make_unique<cpu::FftConvolution>(name, TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw"),
                                               std::make_unique<cpu::FftwTransformFactory>(),
                                               chunk_budget, tiling);
}

// Runs forward, backward data and backward filter on one call (with or without a saved
// buffer) and counts the kernels traced by name.
struct Passes {
  Tensor y, dx, dw;
  std::map<std::string, int> kernels;
};

Passes run_step(cpu::FftConvolution& fft, const ConvProblem& p, const ConvOperands& ops,
                AlignedBuffer* saved, const Tensor* w_for_backward = nullptr) {
  ThreadPool pool(2);
  profiler::Tracer tracer;
  const ExecContext exec{pool, &tracer, 0, 0};
  AlignedBuffer workspace(fft.workspace_bytes(p));
  const ConvCall call = call_over(p, exec, workspace, saved);
  Passes out{
      Tensor(p.output(), p.layout), Tensor(p.input, p.layout), Tensor(p.filter(), p.layout), {}};
  tracer.start();
  fft.forward(call, ops.x, ops.w, out.y);
  fft.backward_data(call, ops.dy, w_for_backward ? *w_for_backward : ops.w, out.dx);
  fft.backward_filter(call, ops.x, ops.dy, out.dw);
  tracer.stop();
  for (const auto& activity : tracer.collect({}).activities) ++out.kernels[activity.name];
  return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size()) return false;
  for (int64_t i = 0; i < a.size(); ++i)
    if (a.data()[i] != b.data()[i]) return false;
  return true;
}

struct Case {
  std::string algorithm;
  Layout layout;
  int64_t stride;
  int64_t chunk_budget;  // 1: one image per chunk
  FftTileChoice tiling;
};

class FftSavedSpectra : public ::testing::TestWithParam<Case> {};

TEST_P(FftSavedSpectra, BackwardReusesForwardSpectraWithIdenticalResults) {
  const Case c = GetParam();
  const ConvProblem p =
      with_layout(make_problem(3, 4, 11, 9, 5, 3, 3, c.stride, c.stride, 1, 1), c.layout);
  const ConvOperands ops = random_operands(p, 7);
  auto fft = make_fft(c.algorithm, c.chunk_budget, c.tiling);
  const Passes plain = run_step(*fft, p, ops, nullptr);
  AlignedBuffer saved(fft->saved_bytes(p));
  const Passes cached = run_step(*fft, p, ops, &saved);

  EXPECT_TRUE(same_bits(plain.y, cached.y));
  EXPECT_TRUE(same_bits(plain.dx, cached.dx));
  EXPECT_TRUE(same_bits(plain.dw, cached.dw));
  // Independent of the cache, against the double-precision reference.
  EXPECT_LE(relative_error(cached.dx, reference_backward_data(p, ops.dy, ops.w)), 1e-4);
  EXPECT_LE(relative_error(cached.dw, reference_backward_filter(p, ops.x, ops.dy)), 1e-4);

  const std::string a = c.algorithm;
  const int chunks = c.chunk_budget == 1 ? 3 : 1;  // one image per chunk: 3 images
  EXPECT_EQ(plain.kernels.at(a + ".bwd_data.r2c_w"), 1);
  EXPECT_EQ(plain.kernels.at(a + ".bwd_filter.r2c_x"), chunks);
  EXPECT_EQ(cached.kernels.count(a + ".bwd_data.r2c_w"), 0u);
  EXPECT_EQ(cached.kernels.count(a + ".bwd_filter.r2c_x"), 0u);
  // dy is transformed in both backward passes either way.
  EXPECT_EQ(cached.kernels.at(a + ".bwd_data.r2c_dy"), chunks);
  EXPECT_EQ(cached.kernels.at(a + ".bwd_filter.r2c_dy"), chunks);
  EXPECT_EQ(cached.kernels.at(a + ".fwd.r2c_x"), plain.kernels.at(a + ".fwd.r2c_x"));
}

TEST_P(FftSavedSpectra, BackwardWithAnotherFilterRecomputes) {
  const Case c = GetParam();
  const ConvProblem p =
      with_layout(make_problem(2, 3, 8, 8, 4, 3, 3, c.stride, c.stride, 1, 1), c.layout);
  const ConvOperands ops = random_operands(p, 11);
  Tensor other_w(p.filter(), p.layout);
  fill_uniform(other_w, 12);
  auto fft = make_fft(c.algorithm, c.chunk_budget, c.tiling);
  AlignedBuffer saved(fft->saved_bytes(p));
  const Passes passes = run_step(*fft, p, ops, &saved, &other_w);
  EXPECT_EQ(passes.kernels.at(c.algorithm + ".bwd_data.r2c_w"), 1);
  EXPECT_LE(relative_error(passes.dx, reference_backward_data(p, ops.dy, other_w)), 1e-4);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* algorithm : {"fft-own", "fft-fftw"})
    for (Layout layout : {Layout::NCHW, Layout::NHWC})
      for (int64_t stride : {1, 2})
        for (int64_t budget : {int64_t{1}, cpu::FftConvolution::kDefaultChunkBudgetBytes})
          for (FftTileChoice tiling : {FftTileChoice::untiled(), FftTileChoice::fixed(8)})
            out.push_back({algorithm, layout, stride, budget, tiling});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string name = c.algorithm == "fft-own" ? "own" : "fftw";
  return name + "_" + to_string(c.layout) + "_stride" + std::to_string(c.stride) +
         (c.chunk_budget == 1 ? "_chunked" : "_whole") + "_tile_" + c.tiling.to_string();
}

INSTANTIATE_TEST_SUITE_P(Cases, FftSavedSpectra, ::testing::ValuesIn(cases()), case_name);

TEST(FftSavedSpectraSize, IsTheSpectraOfXAndW) {
  // 2 images x 3 channels of x and 4 x 3 planes of w; 8x8 + pad 1 -> 10x10 for fft-own
  // (2 x 5), whose half spectrum has 10 x 6 = 60 bins, 64 with the 64-byte plane stride.
  const ConvProblem p = make_problem(2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1);
  auto fft = make_fft("fft-own", cpu::FftConvolution::kDefaultChunkBudgetBytes);
  EXPECT_EQ(fft->saved_bytes(p), static_cast<size_t>((2 * 3 + 4 * 3) * 64 * 8));
}

TEST(FftSavedSpectraSize, TooSmallABufferIsRefused) {
  const ConvProblem p = make_problem(2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1);
  const ConvOperands ops = random_operands(p, 3);
  auto fft = make_fft("fft-own", cpu::FftConvolution::kDefaultChunkBudgetBytes);
  ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0};
  AlignedBuffer workspace(fft->workspace_bytes(p)), saved(fft->saved_bytes(p) - 64);
  const ConvCall call{p, exec, workspace.data(), workspace.bytes(), saved.data(), saved.bytes()};
  Tensor y(p.output(), p.layout);
  try {
    fft->forward(call, ops.x, ops.w, y);
    FAIL() << "a short saved buffer was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("saved-spectra buffer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::conv_test
