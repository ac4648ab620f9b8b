// The FFT tiling knob and its text form (see FftTileChoice.h).
#include "kernels/cpu/FftTileChoice.h"

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
  if (error != std::errc{} || end != text.data() + text.size() || size < kMinFftTile ||
      size > kMaxFftTile || (size & (size - 1)) != 0)
    return std::nullopt;
  return FftTileChoice::fixed(size);
}

const Knob<FftTileChoice> fft_tile_knob{
    [] {
      KnobSpec spec;
      spec.key = "fft_tile";
      spec.type = KnobType::choice;
      spec.default_value = "auto";
      spec.parse = [](std::string_view text) -> std::optional<std::string> {
        if (auto choice = parse_fft_tile_choice(text)) return choice->to_string();
        return std::nullopt;
      };
      spec.values_text = kFftTileValues;
      spec.scope = KnobScope::conv_algorithm;
      spec.help =
          "FFT tiling of stride-1 fft-fftw / fft-own layers: auto (a flop model picks per layer) | "
          "off (one "
          "transform per padded plane) | N (overlap-save tiles transformed at NxN, a power of two "
          "from 4 that "
          "exceeds every FFT layer's kernel)";
      return spec;
    }(),
    {[](std::string_view text) {
       return parse_fft_tile_choice(text).value_or(FftTileChoice::automatic());
     },
     [](const FftTileChoice& choice) { return choice.to_string(); }}};

}  // namespace tunescope
