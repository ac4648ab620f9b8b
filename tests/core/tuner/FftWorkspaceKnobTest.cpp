// The fft_workspace knob in tunescope.config/1 (optional, strict, round-tripped, shown in
// the label) and in the search space (crossed only with configs that have an FFT layer).
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
#include "kernels/shared/FftWorkspace.h"
#include "tests/core/ExpectError.h"

namespace tunescope {
namespace {

RunConfig fft_config(FftWorkspace policy) {
  RunConfig c;
  c.batch = 8;
  c.conv.default_algorithm = "fft-own";
  knobs::threads.set(c.knobs, 1);
  fft_workspace_knob.set(c.knobs, policy);
  return c;
}

TEST(FftWorkspaceConfig, RoundTripsAndAppliesAndShowsInTheLabel) {
  const RunConfig cache = fft_config(FftWorkspace::cache);
  EXPECT_EQ(run_config_from_json_text(to_json_text(cache), "<text>"), cache);
  EXPECT_EQ(nlohmann::json::parse(to_json_text(cache)).at("fft_workspace"), "cache");
  // `reuse` is left out: an algorithm's knob is written only when set otherwise.
  EXPECT_FALSE(nlohmann::json::parse(to_json_text(fft_config(FftWorkspace::reuse)))
                   .contains("fft_workspace"));
  EXPECT_EQ(cache.label(), "nchw conv=fft-own threads=1 fft_workspace=cache");
  EXPECT_EQ(fft_config(FftWorkspace::reuse).label(), "nchw conv=fft-own threads=1");
  SessionOptions options;
  apply_run_config(cache, options);
  EXPECT_EQ(fft_workspace_knob.get(options.knobs), FftWorkspace::cache);
  EXPECT_EQ(fft_workspace_knob.get(run_config_of(options).knobs), FftWorkspace::cache);
}

TEST(FftWorkspaceConfig, MissingKeyMeansReuse) {
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftWorkspace::cache)));
  ASSERT_EQ(json.erase("fft_workspace"), 1u);
  EXPECT_EQ(fft_workspace_knob.get(run_config_from_json_text(json.dump(), "<text>").knobs),
            FftWorkspace::reuse);
}

TEST(FftWorkspaceConfig, AStoredConfigWithTheDefaultWrittenIsTheSameConfig) {
  // Results DBs written before the knob was an algorithm's wrote "reuse" into every
  // config; a resumed tune finds their rows by this identity, not by the text.
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftWorkspace::reuse)));
  const std::string key = stored_run_config_from_json_text(json.dump(), "<db>").key();
  json["fft_workspace"] = "reuse";
  EXPECT_EQ(stored_run_config_from_json_text(json.dump(), "<db>").key(), key);
  json["fft_workspace"] = "cache";
  EXPECT_NE(stored_run_config_from_json_text(json.dump(), "<db>").key(), key);
}

TEST(FftWorkspaceConfig, UnknownPolicyOrTypeIsRejectedNamingTheKey) {
  nlohmann::json json = nlohmann::json::parse(to_json_text(fft_config(FftWorkspace::reuse)));
  for (const auto& [value, expected] :
       {std::pair<nlohmann::json, std::string>{
            "keep", "key 'fft_workspace': 'keep' is not a value (reuse, cache)"},
        {"Cache", "key 'fft_workspace': 'Cache' is not a value"},
        {1, "key 'fft_workspace': expected a string"}}) {
    json["fft_workspace"] = value;
    test_support::expect_error(ErrorKind::input,
                               [&] { run_config_from_json_text(json.dump(), "tuned.json"); },
                               {"tuned.json", expected});
  }
}

TEST(FftWorkspaceSpace, PoliciesAreCrossedOnlyWithConfigsThatHaveAnFftLayer) {
  ModelSpec spec;
  spec.input = {8, 1, 32, 32};
  tuner::SpaceOptions o;
  o.batch = 8;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", "fft-own", "fft-fftw"};
  o.knobs.set(fft_workspace_knob,
              std::vector<FftWorkspace>{FftWorkspace::reuse, FftWorkspace::cache});
  const tuner::SearchSpace space(o, tuner::conv_layers(*build_model(spec)));
  const auto list = space.enumerate();
  // direct once (the policy would not change its run), each FFT algorithm twice.
  ASSERT_EQ(list.size(), 5u);
  auto count = [&](const std::string& algorithm, FftWorkspace policy) {
    return std::count_if(list.begin(), list.end(), [&](const tuner::Candidate& c) {
      return c.config.conv.default_algorithm == algorithm &&
             fft_workspace_knob.get(c.config.knobs) == policy;
    });
  };
  EXPECT_EQ(count("direct", FftWorkspace::reuse), 1);
  EXPECT_EQ(count("direct", FftWorkspace::cache), 0);
  for (const char* fft : {"fft-own", "fft-fftw"}) {
    EXPECT_EQ(count(fft, FftWorkspace::reuse), 1) << fft;
    EXPECT_EQ(count(fft, FftWorkspace::cache), 1) << fft;
  }
  // A per-layer mix with one FFT layer has an FFT layer too.
  RunConfig mixed;
  mixed.conv.default_algorithm = "direct";
  mixed.conv.per_layer["conv2"] = "fft-own";
  EXPECT_TRUE(space.knob_applies(mixed, "fft_workspace"));
  mixed.conv.per_layer["conv2"] = "gemm";
  EXPECT_FALSE(space.knob_applies(mixed, "fft_workspace"));
}

TEST(FftWorkspaceSpace, EmptyPolicyListIsAUsageError) {
  tuner::SpaceOptions o;
  try {
    o.knobs.set(fft_workspace_knob, std::vector<FftWorkspace>{});
    FAIL() << "an empty list was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

}  // namespace
}  // namespace tunescope
