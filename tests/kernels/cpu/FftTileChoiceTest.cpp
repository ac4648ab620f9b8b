// The text form of the fft_tile knob: what a config, --fft-tile and --fft-tile-list accept.
#include <gtest/gtest.h>

#include "kernels/cpu/FftTileChoice.h"

namespace tunescope {
namespace {

TEST(FftTileChoice, ParsesAutoOffAndPowersOfTwo) {
  EXPECT_EQ(parse_fft_tile_choice("auto")->mode, FftTileChoice::Mode::automatic);
  EXPECT_EQ(parse_fft_tile_choice("off")->mode, FftTileChoice::Mode::untiled);
  const auto sixteen = parse_fft_tile_choice("16");
  ASSERT_TRUE(sixteen);
  EXPECT_EQ(*sixteen, FftTileChoice::fixed(16));
  EXPECT_EQ(sixteen->to_string(), "16");
  EXPECT_EQ(parse_fft_tile_choice("4"), FftTileChoice::fixed(4));
  EXPECT_EQ(parse_fft_tile_choice("4096"), FftTileChoice::fixed(4096));
}

TEST(FftTileChoice, RefusesWhatNoTileTransformRuns) {
  // Not powers of two (18, 24), below 4 or above 4096, and anything but a plain number.
  for (const char* bad :
       {"", "1", "2", "0", "-8", "18", "24", "8192", "16x", "tiled", "99999", " 16"})
    EXPECT_FALSE(parse_fft_tile_choice(bad)) << bad;
}

TEST(FftTileChoice, TextRoundTrips) {
  for (const FftTileChoice choice :
       {FftTileChoice::automatic(), FftTileChoice::untiled(), FftTileChoice::fixed(32)})
    EXPECT_EQ(parse_fft_tile_choice(choice.to_string()), choice);
}

}  // namespace
}  // namespace tunescope
