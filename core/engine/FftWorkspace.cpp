#include "core/engine/FftWorkspace.h"

namespace tunescope {

const char* to_string(FftWorkspace policy) {
  return policy == FftWorkspace::cache ? "cache" : "reuse";
}

std::optional<FftWorkspace> parse_fft_workspace(std::string_view text) {
  if (text == "reuse") return FftWorkspace::reuse;
  if (text == "cache") return FftWorkspace::cache;
  return std::nullopt;
}

}  // namespace tunescope
