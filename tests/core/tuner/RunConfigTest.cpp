// tunescope.config/1: round trips (text and file) and every rejection, each naming the
// source and the offending key.
#include "core/engine/RunConfig.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"

namespace tunescope {
namespace {

RunConfig sample_config() {
  RunConfig c;
  c.model = "lenet5";
  c.batch = 8;
  knobs::layout.set(c.knobs, Layout::NHWC);
  c.conv.default_algorithm = "gemm";
  c.conv.per_layer = {{"conv2", "direct"}};
  knobs::threads.set(c.knobs, 2);
  return c;
}

TEST(RunConfig, JsonRoundTripKeepsEveryField) {
  RunConfig c = sample_config();
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
  knobs::set_concurrency(c.knobs, Concurrency{4, 2, 2, true, 1});
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
  EXPECT_EQ(to_json_text(c).find("update_on"), std::string::npos)
      << "the default is left out (results DB keys)";
  knobs::update_on.set(c.knobs, UpdateOn::host);
  EXPECT_NE(to_json_text(c).find("\"update_on\": \"host\""), std::string::npos);
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
  c.measured = MeasuredFigures{
      1234.5, 0.05, 1.7, "per-layer", "auto: per-layer has the cheapest estimate", "some cpu"};
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
}

TEST(RunConfig, ConfigWithoutConcurrencyKeysRunsSingleLane) {
  nlohmann::json json = nlohmann::json::parse(to_json_text(sample_config()));
  for (const char* key :
       {"streams", "replicas", "micro_batches", "async_update", "threads_per_lane"})
    ASSERT_EQ(json.erase(key), 1u) << key;
  EXPECT_EQ(run_config_from_json_text(json.dump(), "<text>"), sample_config());
}

TEST(RunConfig, LabelNamesOnlyNonDefaultConcurrency) {
  RunConfig c = sample_config();
  EXPECT_EQ(c.label(), "nhwc conv=gemm,conv2=direct threads=2");
  knobs::streams.set(c.knobs, 2);
  knobs::async_update.set(c.knobs, true);
  knobs::micro_batches.set(c.knobs, 2);
  EXPECT_EQ(c.label(), "nhwc conv=gemm,conv2=direct threads=2 streams=2 async micro=2");
  knobs::update_on.set(c.knobs, UpdateOn::host);
  EXPECT_EQ(c.label(), "nhwc conv=gemm,conv2=direct threads=2 streams=2 async micro=2 update=host");
  knobs::fuse.set(c.knobs, false);
  EXPECT_EQ(c.label(),
            "nhwc conv=gemm,conv2=direct threads=2 streams=2 async micro=2 update=host fuse=off");
}

TEST(RunConfig, FuseIsWrittenOnlyWhenOffAndRoundTrips) {
  RunConfig c = sample_config();
  EXPECT_EQ(to_json_text(c).find("fuse"), std::string::npos)
      << "the default (on) is left out (results DB keys)";
  knobs::fuse.set(c.knobs, false);
  EXPECT_NE(to_json_text(c).find("\"fuse\": false"), std::string::npos) << to_json_text(c);
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
  EXPECT_FALSE(knobs::fuse.get(run_config_from_json_text(to_json_text(c), "<text>").knobs));
}

TEST(RunConfig, FileRoundTripAndApply) {
  const auto path = std::filesystem::temp_directory_path() / "tunescope-runconfig-test.json";
  save_run_config(sample_config(), path);
  const RunConfig loaded = load_run_config(path);
  EXPECT_EQ(loaded, sample_config());
  SessionOptions options;
  options.data = "fake";
  apply_run_config(loaded, options);
  EXPECT_EQ(options.layout(), Layout::NHWC);
  EXPECT_EQ(options.conv.for_layer("conv2"), "direct");
  EXPECT_EQ(options.conv.for_layer("conv1"), "gemm");
  EXPECT_EQ(options.threads(), 2);
  EXPECT_EQ(options.batch, 8);
  EXPECT_EQ(options.data, "fake");  // not a tuned knob: untouched
  EXPECT_EQ(run_config_of(options), loaded);
  std::filesystem::remove(path);
}

TEST(RunConfig, MissingFileIsAnInputErrorNamingIt) {
  try {
    load_run_config("/no/such/tuned.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("/no/such/tuned.json"), std::string::npos) << e.what();
  }
}

TEST(RunConfig, EveryRejectionNamesTheSourceAndTheKey) {
  const std::string valid = to_json_text(sample_config());
  // Replaces the first occurrence of `from` in the valid text.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = valid;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  struct Case {
    std::string text;
    std::string expected;  // besides the source name
  };
  const Case cases[] = {
      {"{not json", "not JSON"},
      {"[1, 2]", "expected a JSON object"},
      {with("tunescope.config/1", "tunescope.config/2"), "'schema'"},
      {with("\"schema\": \"tunescope.config/1\",", ""), "'schema': missing"},
      {with("\"threads\": 2", "\"threads\": 2, \"stream\": 4"), "'stream': unknown key"},
      {with("\"streams\": 1", "\"streams\": 0"), "'streams': must be in 1..64, got 0"},
      {with("\"replicas\": 1", "\"replicas\": \"2\""), "'replicas': expected an integer"},
      {with("\"replicas\": 1", "\"replicas\": 3"),
       "'replicas': replicas x micro_batches = 3 does not divide the batch 8"},
      {with("\"micro_batches\": 1", "\"micro_batches\": -1"),
       "'micro_batches': must be in 1..4096"},
      {with("\"async_update\": false", "\"async_update\": 1"),
       "'async_update': expected true or false"},
      {with("\"threads_per_lane\": 0", "\"threads_per_lane\": -2"),
       "'threads_per_lane': must be in 0..1024"},
      {with("\"threads\": 2", "\"threads\": 2, \"update_on\": \"gpu\""),
       "'update_on': 'gpu' is not a value (device, host)"},
      {with("\"threads\": 2", "\"threads\": 2, \"update_on\": true"),
       "'update_on': expected a string"},
      {with("\"per_layer\"", "\"per_layr\""), "'conv.per_layr': unknown key"},
      {with("\"threads\": 2", "\"threads\": \"2\""), "'threads': expected an integer"},
      {with("\"threads\": 2", "\"threads\": 5000"), "'threads': must be in 0..1024, got 5000"},
      {with("\"batch\": 8", "\"batch\": -8"), "'batch': must be >= 1"},
      {with("\"batch\": 8", "\"batch\": 8.5"), "'batch': expected an integer"},
      {with("\"model\": \"lenet5\"", "\"model\": 5"), "'model': expected a string"},
      {with("\"nhwc\"", "\"nwhc\""), "'layout': 'nwhc' is not a value (nchw, nhwc)"},
      {with("\"default\": \"gemm\"", "\"default\": \"strassen\""),
       "'conv.default': unknown convolution algorithm 'strassen'"},
      {with("\"conv2\": \"direct\"", "\"conv2\": \"fast\""),
       "'conv.per_layer.conv2': unknown convolution algorithm"},
      {with("\"conv2\": \"direct\"", "\"conv2\": 3"), "'conv.per_layer.conv2': expected a string"},
      {with("\"conv\": {", "\"conv\": 1, \"measured\": {"), "'conv': expected an object"},
  };
  for (const Case& c : cases) {
    try {
      run_config_from_json_text(c.text, "tuned.json");
      ADD_FAILURE() << "accepted:\n" << c.text;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::input) << message;
      EXPECT_NE(message.find("tuned.json"), std::string::npos) << message;
      EXPECT_NE(message.find(c.expected), std::string::npos)
          << "expected '" << c.expected << "' in: " << message;
    }
  }
}

}  // namespace
}  // namespace tunescope

namespace tunescope {
namespace {

TEST(StoredRunConfig, TakesAnyAlgorithmNameAndKeepsANewerVersionsKeysAside) {
  // cuda's algorithms are not registered in a CPU-only reader, and a newer tunescope may
  // have added a knob: both stay readable, and the label and key show the knob.
  const std::string text =
      R"({"schema": "tunescope.config/1", "model": "lenet5", "batch": 32, "layout": "nchw",
      "threads": 1, "conv": {"default": "cudnn:implicit_gemm", "per_layer": {"conv2": "fft-cufft"}},
      "future_knob": "on", "measured": {"examples_per_second": 10}})";
  const StoredRunConfig stored = stored_run_config_from_json_text(text, "results DB trial 7");
  EXPECT_EQ(stored.config.conv.default_algorithm, "cudnn:implicit_gemm");
  EXPECT_EQ(stored.config.conv.per_layer.at("conv2"), "fft-cufft");
  EXPECT_EQ(stored.newer_keys, (std::map<std::string, std::string>{{"future_knob", "on"}}));
  EXPECT_EQ(stored.label(), stored.config.label());
  EXPECT_EQ(stored.label(),
            "nchw conv=cudnn:implicit_gemm,conv2=fft-cufft threads=1 future_knob=on");
  // The strict reader still refuses both.
  EXPECT_THROW(run_config_from_json_text(text, "<text>"), Error);
}

TEST(StoredRunConfig, KeyIsEqualAcrossVersionsAndApartForDifferentKnobs) {
  RunConfig c;
  c.model = "lenet5";
  c.batch = 32;
  knobs::layout.set(c.knobs, Layout::NHWC);
  c.conv.default_algorithm = "direct";
  knobs::threads.set(c.knobs, 2);
  // Written before the concurrency keys existed, in another key order, with figures.
  const std::string old =
      R"({"schema": "tunescope.config/1", "threads": 2, "model": "lenet5", "batch": 32,
      "layout": "nhwc", "conv": {"default": "direct"}, "measured": {"spread": 0.1}})";
  const std::string key = stored_run_config_from_json_text(to_json_text(c), "a").key();
  EXPECT_EQ(stored_run_config_from_json_text(old, "b").key(), key);
  knobs::streams.set(c.knobs, 2);
  EXPECT_NE(stored_run_config_from_json_text(to_json_text(c), "c").key(), key);
  std::string newer = to_json_text(c);
  newer.insert(newer.rfind('}'), ", \"future_knob\": 3");
  EXPECT_NE(stored_run_config_from_json_text(newer, "d").key(),
            stored_run_config_from_json_text(to_json_text(c), "c").key());
  // Malformed text is an input error naming the source.
  try {
    stored_run_config_from_json_text(R"({"schema": "tunescope.config/1", "model": 3})",
                                     "results DB trial 9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("results DB trial 9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope
