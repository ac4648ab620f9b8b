// Classifies an activity by its kernel name into the families the timeline colours:
// convolution forward/backward (and by algorithm), batch norm, relu, pooling, fc,
// weight update, transpose, memory, other.
#pragma once

#include <QString>
#include <string>

#include "profiler/Trace.h"

namespace tunescope::gui {

enum class KernelFamily {
  convForward,
  convBackwardData,
  convBackwardFilter,
  batchNorm,
  relu,
  pooling,
  fullyConnected,
  update,
  transpose,
  memory,
  elementwise,
  other,
};
constexpr int kKernelFamilyCount = 12;

enum class ConvAlgorithmFamily { none, direct, gemm, fft };

struct KernelClass {
  KernelFamily family = KernelFamily::other;
  ConvAlgorithmFamily algorithm = ConvAlgorithmFamily::none;
  bool operator==(const KernelClass&) const = default;
};

// Names look like "<algorithm>.<pass>" for convolutions ("direct.fwd",
// "gemm.bwd_filter", "fft-own.bwd_data", "cudnn:..."), "<op>.<pass>" for the rest.
KernelClass classifyKernel(profiler::ActivityKind kind, const std::string& name);
QString familyLabel(KernelFamily family);

}  // namespace tunescope::gui
