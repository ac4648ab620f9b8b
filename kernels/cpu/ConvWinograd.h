// The "winograd" convolution algorithm: F(2x2, 3x3) and F(4x4, 3x3) (Lavin & Gray 2016,
// "Fast Algorithms for Convolutional Neural Networks") for 3x3 stride-1 problems with
// any padding, NCHW and NHWC.
//
// Every pass is a forward-like convolution cut into m x m output tiles, run in waves of
// tiles whose transforms fit a cache-sized budget:
//  - forward: U = G g G^T per (k, c) once; per wave V = B^T d B of the input patches,
//    alpha^2 sgemms M[a] = U[a] V[a] (the channel sums), Y = A^T M A per tile;
//  - backward data: the forward of dy with the flipped, transposed filter
//    (g'[c][k] = rot180(g[k][c])) and padding 2 - pad;
//  - backward filter: the adjoint of forward in g: per wave V of x as in forward and
//    dM = A dy A^T of dy's tiles, alpha^2 sgemms dU[a] += dM[a] V[a]^T, then
//    dw = G^T dU G once.
// Transforms and the NHWC products run on the vector kernels of one instruction set
// (WinogradKernels.h), NCHW's products on a single-threaded OpenBLAS sgemm; all are
// parallel over the lane's pool.
//
// Two schedules of the same steps (WinogradSchedule):
//  - waves: each step over a wave of tiles at a time, the alpha^2 products per wave
//    one GEMM per point (and slice of tiles or rows): one traced kernel per step;
//  - fused (NHWC only): each task takes blocks of a few dozen tiles and runs input
//    transform, the alpha^2 products (the vector kernels' own small GEMM) and output
//    transform on one block before the next, so the transformed tiles never leave L1/L2
//    and no product is too thin for a library call (16-channel layers: alpha^2 sgemms
//    of depth 16). Backward filter sums dU per task, then across tasks. One traced
//    kernel per pass ("winograd.<pass>.fused") besides the filter transform.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Knob.h"
#include "kernels/cpu/CpuIsa.h"

namespace tunescope::cpu {

// automatic: F(4x4) unless its transformed-domain products (tiles x alpha^2, tiles
// rounded up to cover the output) are not at least 25% fewer than F(2x2)'s; the
// margin pays for F(4x4)'s larger transforms and error (ConvWinogradTest states both
// bounds). Planes of 4x4 outputs and up choose F(4x4); 5x5 and 6x6 choose F(2x2).
enum class WinogradTile { automatic, f2, f4 };

// automatic: fused on NHWC problems of up to 64 -> 64 channels (in x out <= 4096), waves
// on the others and on NCHW (fused needs channels contiguous).
enum class WinogradSchedule { automatic, waves, fused };
const char* to_string(WinogradSchedule schedule);

const char* to_string(WinogradTile tile);
// "auto", "f2", "f4"; nullopt otherwise.
std::optional<WinogradTile> parse_winograd_tile(std::string_view text);
// The output tile side m (2 or 4) `tile` runs `problem` with.
int winograd_tile_size(WinogradTile tile, const ConvProblem& problem);

// The knob the registered `winograd` reads (config key `winograd_tile`: auto, f2, f4), so
// the tuner can try the tile sizes (`--winograd-tile-list auto,f2,f4`).
extern const Knob<WinogradTile> winograd_tile_knob;

class ConvWinograd final : public ConvAlgorithm {
 public:
  // isa: the transform kernels' instruction set; by default TUNESCOPE_WINOGRAD_ISA when
  // set (scalar|avx2|avx512), else the widest this CPU runs. Throws Error(usage) naming
  // the variable when it names an unknown path or one this CPU lacks.
  // schedule: fused is refused (unsupported_reason) on NCHW problems.
  explicit ConvWinograd(WinogradTile tile = WinogradTile::automatic,
                        std::optional<CpuIsa> isa = std::nullopt,
                        WinogradSchedule schedule = WinogradSchedule::automatic);

  std::string name() const override { return "winograd"; }
  std::string unsupported_reason(const ConvProblem& problem) const override;
  size_t workspace_bytes(const ConvProblem& problem) const override;
  // winograd_tile, on every problem it supports.
  bool knob_applies(std::string_view key, const ConvProblem& problem) const override;

  WinogradTile tile() const { return tile_; }
  CpuIsa isa() const { return isa_; }
  // The schedule `problem` runs with (never automatic).
  WinogradSchedule schedule_for(const ConvProblem& problem) const;

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override;
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override;

 private:
  size_t plan_bytes(const ConvProblem& problem) const;  // of a supported shape
  WinogradTile tile_;
  CpuIsa isa_;
  WinogradSchedule schedule_;
};

}  // namespace tunescope::cpu
