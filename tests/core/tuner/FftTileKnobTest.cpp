// The fft_tile knob in tunescope.config/1 (optional, strict, round-tripped, shown in the
// label) and in the search space (crossed only with configs that have a stride-1
// fft-fftw / fft-own layer; a size some layer's kernel is not smaller than is skipped
// with the reason, never timed).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/engine/Models.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/SearchSpace.h"
#include "kernels/cpu/FftTileChoice.h"
#include "tests/core/ExpectError.h"

namespace tunescope {
namespace {

RunConfig fft_config(FftTileChoice tile) {
  RunConfig c;
  c.batch = 8;
  c.conv.default_algorithm = "fft-own";
  knobs::threads.set(c.knobs, 1);
  fft_tile_knob.set(c.knobs, tile);
  return c;
}

TEST(FftTileConfig, RoundTripsAndAppliesAndShowsInTheLabel) {
  for (const FftTileChoice tile :
       {FftTileChoice::automatic(), FftTileChoice::untiled(), FftTileChoice::fixed(16)}) {
    const RunConfig config = fft_config(tile);
    EXPECT_EQ(run_config_from_json_text(to_json_text(config), "<text>"), config)
        << tile.to_string();
    const nlohmann::json written = nlohmann::json::parse(to_json_text(config));
    // `auto` is left out, so configs and results-DB keys written before the knob still match.
    if (tile == FftTileChoice::automatic())
      EXPECT_FALSE(written.contains("fft_tile"));
    else
      EXPECT_EQ(written.at("fft_tile"), tile.to_string());
  }
  // An algorithm's knob is labelled by its key (a viewer without the algorithm does the same).
  EXPECT_EQ(fft_config(FftTileChoice::fixed(16)).label(),
            "nchw conv=fft-own threads=1 fft_tile=16");
  EXPECT_EQ(fft_config(FftTileChoice::untiled()).label(),
            "nchw conv=fft-own threads=1 fft_tile=off");
  EXPECT_EQ(fft_config(FftTileChoice::automatic()).label(), "nchw conv=fft-own threads=1");
  SessionOptions options;
  apply_run_config(fft_config(FftTileChoice::fixed(32)), options);
  EXPECT_EQ(fft_tile_knob.get(options.knobs), FftTileChoice::fixed(32));
  EXPECT_EQ(fft_tile_knob.get(run_config_of(options).knobs), FftTileChoice::fixed(32));
}

TEST(FftTileConfig, MissingKeyMeansAuto) {
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftTileChoice::fixed(8))));
  ASSERT_EQ(json.erase("fft_tile"), 1u);
  EXPECT_EQ(fft_tile_knob.get(run_config_from_json_text(json.dump(), "<text>").knobs),
            FftTileChoice::automatic());
}

TEST(FftTileConfig, BadValueOrTypeIsRejectedNamingTheFileAndKey) {
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftTileChoice::automatic())));
  for (const auto& [value, expected] : {
           std::pair<nlohmann::json, std::string>{
               "18",
               "key 'fft_tile': '18' is not a value (auto, off, or a "
               "power of two from 4 to 4096 such as 16)"},
           {"2", "key 'fft_tile': '2' is not a value"},
           {"8192", "key 'fft_tile': '8192' is not a value"},
           {"on", "key 'fft_tile': 'on' is not a value"},
           {16, "key 'fft_tile': expected a string, got number"},
       }) {
    json["fft_tile"] = value;
    test_support::expect_error(ErrorKind::input,
                               [&] { run_config_from_json_text(json.dump(), "tuned.json"); },
                               {"tuned.json", expected});
  }
}

TEST(FftTileConfig, AStoredConfigWithoutTheKeyIsTheSameConfigAsAuto) {
  // Results DBs written before the knob keep configs without fft_tile: they must stay
  // the same candidate as today's auto ones (resume, the GUI's merged rows).
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftTileChoice::automatic())));
  const std::string with_key = stored_run_config_from_json_text(json.dump(), "<db>").key();
  json.erase("fft_tile");
  EXPECT_EQ(stored_run_config_from_json_text(json.dump(), "<db>").key(), with_key);
  EXPECT_NE(
      stored_run_config_from_json_text(to_json_text(fft_config(FftTileChoice::fixed(8))), "<db>")
          .key(),
      with_key);
}

tuner::SearchSpace lenet_space(std::vector<std::string> algorithms,
                               std::vector<FftTileChoice> tiles) {
  ModelSpec spec;
  spec.input = {8, 1, 32, 32};
  tuner::SpaceOptions o;
  o.batch = 8;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = std::move(algorithms);
  o.knobs.set(fft_tile_knob, tiles);
  return tuner::SearchSpace(o, tuner::conv_layers(*build_model(spec)));
}

TEST(FftTileSpace, TilingsAreCrossedOnlyWithConfigsThatHaveATileableFftLayer) {
  const auto space = lenet_space({"direct", "fft-own", "fft-fftw"},
                                 {FftTileChoice::untiled(), FftTileChoice::fixed(8)});
  const auto list = space.enumerate();
  // direct once (the tile would not change its run), each FFT algorithm once per tiling.
  ASSERT_EQ(list.size(), 5u);
  auto count = [&](const std::string& algorithm, FftTileChoice tile) {
    return std::count_if(list.begin(), list.end(), [&](const tuner::Candidate& c) {
      return c.config.conv.default_algorithm == algorithm &&
             fft_tile_knob.get(c.config.knobs) == tile && c.runnable();
    });
  };
  EXPECT_EQ(count("direct", FftTileChoice::automatic()), 1);
  for (const char* fft : {"fft-own", "fft-fftw"}) {
    EXPECT_EQ(count(fft, FftTileChoice::untiled()), 1) << fft;
    EXPECT_EQ(count(fft, FftTileChoice::fixed(8)), 1) << fft;
  }
  // A per-layer mix with one FFT layer has a tileable layer too.
  RunConfig mixed;
  mixed.conv.default_algorithm = "direct";
  mixed.conv.per_layer["conv2"] = "fft-own";
  EXPECT_TRUE(space.knob_applies(mixed, "fft_tile"));
  mixed.conv.per_layer["conv2"] = "gemm";
  EXPECT_FALSE(space.knob_applies(mixed, "fft_tile"));
}

TEST(FftTileSpace, OnlyStridedFftLayersAreNotTileable) {
  // resnet18-small: its stride-2 convs cannot tile, but its stride-1 ones can.
  ModelSpec spec;
  spec.name = "resnet18-small";
  spec.input = {4, 3, 32, 32};
  tuner::SpaceOptions o;
  o.model = "resnet18-small";
  o.batch = 4;
  const tuner::SearchSpace space(o, tuner::conv_layers(*build_model(spec)));
  RunConfig strided_only;
  strided_only.conv.default_algorithm = "direct";
  for (const auto& layer : space.layers())
    if (layer.problem.stride_h == 2) strided_only.conv.per_layer[layer.name] = "fft-own";
  ASSERT_FALSE(strided_only.conv.per_layer.empty());
  EXPECT_TRUE(space.knob_applies(strided_only, "fft_workspace"));
  EXPECT_FALSE(space.knob_applies(strided_only, "fft_tile"));
  RunConfig all_fft;
  all_fft.conv.default_algorithm = "fft-own";
  EXPECT_TRUE(space.knob_applies(all_fft, "fft_tile"));
}

TEST(FftTileSpace, ATileNotLargerThanAKernelIsSkippedWithTheReason) {
  const auto list =
      lenet_space({"fft-own"}, {FftTileChoice::fixed(4), FftTileChoice::fixed(16)}).enumerate();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(fft_tile_knob.get(list[0].config.knobs), FftTileChoice::fixed(4));
  EXPECT_NE(list[0].skip_reason.find("layer conv1: fft-own does not support"), std::string::npos)
      << list[0].skip_reason;
  EXPECT_NE(list[0].skip_reason.find("fft_tile 4 does not exceed the 5x5 kernel"),
            std::string::npos)
      << list[0].skip_reason;
  EXPECT_TRUE(list[1].runnable()) << list[1].skip_reason;
}

TEST(FftTileSpace, EmptyTileListIsAUsageError) {
  tuner::SpaceOptions o;
  try {
    o.knobs.set(fft_tile_knob, std::vector<FftTileChoice>{});
    FAIL() << "an empty list was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("fft_tile_list: the list is empty"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tunescope
