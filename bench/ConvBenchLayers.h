// The conv layers the benchmarks measure: every conv layer of LeNet-5 and resnet18-small
// at batch 128 (the per-GPU batch of docs/ARCHITECTURE.md problem 1), and the FFT crossover layers.
// Shared by bench_conv (CPU algorithms) and bench_fft_cuda (CUDA FFT algorithms).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/ConvProblem.h"

namespace tunescope::bench {

inline constexpr int64_t kBatch = 128;

struct ConvLayer {
  std::string name;
  ConvProblem problem;
};

inline ConvProblem conv(int64_t c, int64_t hw, int64_t k, int64_t kernel, int64_t stride,
                        int64_t pad, int64_t batch = kBatch) {
  ConvProblem p;
  p.input = {batch, c, hw, hw};
  p.out_channels = k;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  return p;
}

// Where FFT convolution starts to win: 16 -> 16 channels, "same" padding, batch 32, kernel
// 3..13 on 32x32 and 64x64 maps (names "xover.k<kernel>_<size>").
inline std::vector<ConvLayer> crossover_layers() {
  std::vector<ConvLayer> out;
  for (int64_t size : {32, 64})
    for (int64_t kernel : {3, 5, 7, 11, 13})
      out.push_back({"xover.k" + std::to_string(kernel) + "_" + std::to_string(size),
                     conv(16, size, 16, kernel, 1, kernel / 2, 32)});
  return out;
}

// Large planes with small kernels and few channels, where transforms outweigh the
// per-bin product: the case FFT tiling (kernels/cpu/FftTiling.h) is for.
inline std::vector<ConvLayer> tiling_layers() {
  return {{"tiling.k3_128c4", conv(4, 128, 4, 3, 1, 1, 16)},
          {"tiling.k3_256c4", conv(4, 256, 4, 3, 1, 1, 8)},
          {"tiling.k5_128c8", conv(8, 128, 8, 5, 1, 2, 16)}};
}

// resnet18-small's 3x3 stride-1 layers (the winograd candidates) at batch 32 and 128,
// named "wino.b<batch>.<layer>".
inline std::vector<ConvLayer> winograd_layers() {
  std::vector<ConvLayer> out;
  for (int64_t batch : {32, 128})
    for (const auto& [name, c, hw] :
         {std::tuple<const char*, int64_t, int64_t>{"stem_3to16x32", 3, 32},
          {"s1_16x32", 16, 32},
          {"s2_32x16", 32, 16},
          {"s3_64x8", 64, 8},
          {"s4_128x4", 128, 4}})
      out.push_back({"wino.b" + std::to_string(batch) + "." + name,
                     conv(c, hw, c == 3 ? 16 : c, 3, 1, 1, batch)});
  return out;
}

// LeNet-5's and resnet18-small's layers, NCHW (benchmarks set the layout).
inline const std::vector<ConvLayer>& model_conv_layers() {
  static const std::vector<ConvLayer> all = {
      {"lenet.conv1", conv(1, 32, 6, 5, 1, 0)},
      {"lenet.conv2", conv(6, 14, 16, 5, 1, 0)},
      {"resnet.stem", conv(3, 32, 16, 3, 1, 1)},
      {"resnet.s1_16x16", conv(16, 32, 16, 3, 1, 1)},
      {"resnet.s2_16to32_s2", conv(16, 32, 32, 3, 2, 1)},
      {"resnet.s2_32x32", conv(32, 16, 32, 3, 1, 1)},
      {"resnet.s3_32to64_s2", conv(32, 16, 64, 3, 2, 1)},
      {"resnet.s3_64x64", conv(64, 8, 64, 3, 1, 1)},
      {"resnet.s4_64to128_s2", conv(64, 8, 128, 3, 2, 1)},
      {"resnet.s4_128x128", conv(128, 4, 128, 3, 1, 1)},
      {"resnet.proj_16to32", conv(16, 32, 32, 1, 2, 0)},
      {"resnet.proj_32to64", conv(32, 16, 64, 1, 2, 0)},
      {"resnet.proj_64to128", conv(64, 8, 128, 1, 2, 0)},
  };
  return all;
}

}  // namespace tunescope::bench
