// Which convolution algorithm each conv layer runs: one default plus per-layer overrides.
// Text form (CLI --conv): "ALGO" or "ALGO,LAYER=ALGO,..." e.g. "gemm,conv1=direct".
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tunescope {

struct ConvChoice {
  std::string default_algorithm = "direct";
  std::map<std::string, std::string> per_layer;

  const std::string& for_layer(const std::string& layer) const;
  std::string str() const;
  bool operator==(const ConvChoice&) const = default;
};

// Throws Error(usage) naming the malformed part.
ConvChoice parse_conv_choice(std::string_view text);

}  // namespace tunescope
