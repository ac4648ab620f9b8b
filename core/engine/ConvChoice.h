// Which convolution algorithm each conv layer runs: one default plus per-layer overrides.
// Text form (CLI --conv): "ALGO", "ALGO,LAYER=ALGO,..." e.g. "gemm,conv1=direct", or
// only overrides ("conv1=gemm"). An empty default means the backend's default algorithm
// (Registry::default_conv_algorithm: cpu "direct", cuda "cudnn:implicit_gemm"), filled
// in by with_backend_default() before anything looks algorithms up.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tunescope {

struct ConvChoice {
  std::string default_algorithm;  // empty: the backend's default
  std::map<std::string, std::string> per_layer;

  const std::string& for_layer(const std::string& layer) const;
  std::string str() const;
  bool operator==(const ConvChoice&) const = default;
};

// Throws Error(usage) naming the malformed part.
ConvChoice parse_conv_choice(std::string_view text);

// `choice` with an empty default replaced by the backend's registered default; throws
// Error(usage) for an unknown backend or one without a default.
ConvChoice with_backend_default(ConvChoice choice, const std::string& backend);

}  // namespace tunescope
