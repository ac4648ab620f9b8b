// Shared pieces of the convolution tests: a naive reference convolution on logical
// indices (double accumulation), random tensors, a runner that gives an algorithm its
// workspace, and the normalised error every comparison uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/Backend.h"
#include "core/base/ConvAlgorithm.h"
#include "core/base/ConvProblem.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"

namespace tunescope::conv_test {

// The three tensors of one problem's passes, filled with uniform values in [-1, 1).
struct ConvOperands {
  Tensor x, w, dy;
};
ConvOperands random_operands(const ConvProblem& problem, uint32_t seed);

void fill_uniform(Tensor& t, uint32_t seed);

// Naive 7-deep loops straight from the definition, in double (groups too).
Tensor reference_forward(const ConvProblem& p, const Tensor& x, const Tensor& w);
Tensor reference_backward_data(const ConvProblem& p, const Tensor& dy, const Tensor& w);
Tensor reference_backward_filter(const ConvProblem& p, const Tensor& x, const Tensor& dy);

// Every registered cpu algorithm, plus fft-fftw and fft-own as "<name>@8": made with
// fft_tile 8 (their knob) as a config would make them, so strided problems fall back to
// untiled and every other one runs in tiles of 8x8 transforms.
std::vector<std::string> cpu_algorithms();
// A registered algorithm of `backend`, or (cpu) a "<name>@<fft_tile>" of cpu_algorithms().
std::unique_ptr<ConvAlgorithm> make_algorithm(const std::string& name,
                                              const std::string& backend = "cpu");

// The registered backend `name`, made once and kept for the test program; null when it
// cannot run here (cuda without a device), with the backend's own reason in *reason.
Backend* test_backend(const std::string& name, std::string* reason);

// Runs one pass of `algo` with a fresh workspace of workspace_bytes() on `pool`;
// outputs are pre-filled with NaN so a pass that skips an element fails. With a
// `backend`, operands, output and workspace live in its memory and the pass runs on its
// lane 0 stream of device 0 (as the engine runs it); the result comes back to the host.
// A call over `workspace`, with forward's saved state in `saved` when one is given (p and
// exec must outlive it: the call holds references).
ConvCall call_over(const ConvProblem& p, const ExecContext& exec, AlignedBuffer& workspace,
                   AlignedBuffer* saved);

Tensor run_forward(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool, const Tensor& x,
                   const Tensor& w, Backend* backend = nullptr);
Tensor run_backward_data(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool,
                         const Tensor& dy, const Tensor& w, Backend* backend = nullptr);
Tensor run_backward_filter(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool,
                           const Tensor& x, const Tensor& dy, Backend* backend = nullptr);

// max |a - b| / max |reference| over logical indices (layouts may differ); infinite when
// shapes differ or a value is not finite.
double relative_error(const Tensor& a, const Tensor& reference);

// The stated bound on relative_error(algorithm's result, direct's) for an algorithm of
// `backend` (cpu: a registered name or "<fft algorithm>@<tile>").
// cpu:
//   gemm, onednn:direct, direct-small, direct-lanes (and direct against itself): 1e-4 —
//   float sums in another order;
//   fft-*: 1e-3 — float transforms add error relative to the largest value;
//   onednn:winograd, and onednn:auto which may resolve to Winograd: 1e-3 — the same for
//   Winograd's transforms;
//   winograd: 1e-4 — its F(4x4) bound (ConvWinogradTest.cpp says where it comes from).
// cuda: 1e-3 for the matrix-product cuDNN algorithms (cuDNN's summation order);
//   2e-3 for cudnn:fft*, fft-cufft and fft-own (float FFTs, plus cuFFT's/cuBLAS's order);
//   5e-3 for cudnn:winograd*, and for cudnn:find, which may pick a Winograd kernel.
double tolerance_for(const std::string& algorithm, const std::string& backend = "cpu");

// The same logical tensor in `layout`.
Tensor to_layout(const Tensor& t, Layout layout);

// problem with `layout` set.
ConvProblem with_layout(ConvProblem problem, Layout layout);

// Compact problem list used by parameterised tests, with a readable name per entry.
struct NamedProblem {
  std::string name;
  ConvProblem problem;  // layout NCHW; tests run both layouts
};

ConvProblem make_problem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                         int64_t s, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                         int64_t pad_w, int64_t groups = 1);

}  // namespace tunescope::conv_test
