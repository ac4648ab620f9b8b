// Kernel-name classification for colouring the timeline.
#include "models/KernelKind.h"

#include <string_view>

namespace tunescope::gui {

namespace {
bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

ConvAlgorithmFamily convAlgorithm(std::string_view head) {
  if (head == "direct") return ConvAlgorithmFamily::direct;
  if (startsWith(head, "gemm") || contains(head, "GEMM")) return ConvAlgorithmFamily::gemm;
  if (startsWith(head, "fft") || contains(head, "FFT")) return ConvAlgorithmFamily::fft;
  if (startsWith(head, "cudnn") || startsWith(head, "conv")) return ConvAlgorithmFamily::direct;
  return ConvAlgorithmFamily::none;
}
}  // namespace

KernelClass classifyKernel(profiler::ActivityKind kind, const std::string& name) {
  using profiler::ActivityKind;
  if (kind == ActivityKind::memcpy || kind == ActivityKind::memset) return {KernelFamily::memory};
  if (kind != ActivityKind::kernel) return {KernelFamily::other};
  const std::string_view n = name;
  const size_t dot = n.find('.');
  const std::string_view head = n.substr(0, dot);
  const std::string_view pass = dot == n.npos ? std::string_view{} : n.substr(dot + 1);

  if (ConvAlgorithmFamily algo = convAlgorithm(head); algo != ConvAlgorithmFamily::none) {
    if (startsWith(pass, "bwd_filter") || startsWith(pass, "bwd_weight"))
      return {KernelFamily::convBackwardFilter, algo};
    if (startsWith(pass, "bwd")) return {KernelFamily::convBackwardData, algo};
    return {KernelFamily::convForward, algo};
  }
  if (startsWith(head, "bn") || startsWith(head, "batchnorm")) return {KernelFamily::batchNorm};
  if (startsWith(head, "relu")) return {KernelFamily::relu};
  if (contains(head, "pool") || head == "gap") return {KernelFamily::pooling};
  if (startsWith(head, "fc") || startsWith(head, "linear")) return {KernelFamily::fullyConnected};
  if (startsWith(head, "sgd") || startsWith(head, "update") || head == "accumulate")
    return {KernelFamily::update};
  if (startsWith(head, "transpose") || startsWith(head, "nchw") || startsWith(head, "nhwc"))
    return {KernelFamily::transpose};
  if (head == "copy" || startsWith(head, "memcpy") || startsWith(head, "pad"))
    return {KernelFamily::memory};
  if (head == "add" || startsWith(head, "softmax") || startsWith(head, "broadcast"))
    return {KernelFamily::elementwise};
  return {KernelFamily::other};
}

QString familyLabel(KernelFamily family) {
  switch (family) {
    case KernelFamily::convForward: return QStringLiteral("conv fwd");
    case KernelFamily::convBackwardData: return QStringLiteral("conv bwd data");
    case KernelFamily::convBackwardFilter: return QStringLiteral("conv bwd filter");
    case KernelFamily::batchNorm: return QStringLiteral("batch norm");
    case KernelFamily::relu: return QStringLiteral("relu");
    case KernelFamily::pooling: return QStringLiteral("pooling");
    case KernelFamily::fullyConnected: return QStringLiteral("fc");
    case KernelFamily::update: return QStringLiteral("weight update");
    case KernelFamily::transpose: return QStringLiteral("transpose");
    case KernelFamily::memory: return QStringLiteral("memory");
    case KernelFamily::elementwise: return QStringLiteral("elementwise");
    case KernelFamily::other: break;
  }
  return QStringLiteral("other");
}

}  // namespace tunescope::gui
