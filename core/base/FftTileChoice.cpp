// Text form of the FFT tiling knob (see FftTileChoice.h).
#include "core/base/FftTileChoice.h"

#include <charconv>

namespace tunescope {

std::string FftTileChoice::to_string() const {
  switch (mode) {
    case Mode::untiled: return "off";
    case Mode::fixed: return std::to_string(fft_size);
    default: return "auto";
  }
}

std::optional<FftTileChoice> parse_fft_tile_choice(std::string_view text) {
  if (text == "auto") return FftTileChoice::automatic();
  if (text == "off") return FftTileChoice::untiled();
  int64_t size = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (error != std::errc{} || end != text.data() + text.size() || size < kMinFftTile || size > kMaxFftTile ||
      (size & (size - 1)) != 0)
    return std::nullopt;
  return FftTileChoice::fixed(size);
}

}  // namespace tunescope
