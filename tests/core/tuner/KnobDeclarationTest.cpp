// Adding a knob is one declaration plus the code that reads it: this file declares a
// knob (`test_unroll`, as an algorithm would) and an algorithm that reads it, and checks
// that everything else follows from the declaration alone: the catalog and its flags,
// the config file (written only when set, validated, round-tripped), the label, the
// session (the algorithm gets the value), and the search space (crossed only with
// configs whose algorithm reads it, a refused value skipped with the algorithm's reason).
// Also the engine's own knobs' bounds and a per-backend default.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/base/Knob.h"
#include "core/base/Registry.h"
#include "core/engine/Models.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/SearchSpace.h"
#include "tests/core/ExpectError.h"
#include "tests/core/tuner/TestAlgorithms.h"

namespace tunescope {
namespace {

constexpr const char* kReader = "test-unroll-reader";

// The declaration: one object.
const Knob<int> test_unroll{[] {
                              KnobSpec spec;
                              spec.key = "test_unroll";
                              spec.type = KnobType::integer;
                              spec.min = 1;
                              spec.max = 8;
                              spec.default_value = "1";
                              spec.scope = KnobScope::conv_algorithm;
                              spec.help = "Test-only: how far the reader unrolls";
                              return spec;
                            }(),
                            integer_codec()};

// The code that reads it: an algorithm (direct's maths) that keeps the value it was made
// with, refuses 5x5 kernels at unroll 8, and says the knob applies to every problem.
std::atomic<int> last_unroll{0};

class UnrollReader : public ConvAlgorithm {
 public:
  explicit UnrollReader(int unroll)
      : unroll_(unroll), direct_(Registry::instance().make_conv_algorithm("cpu", "direct")) {
    last_unroll = unroll;
  }
  std::string name() const override { return kReader; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    if (unroll_ == 8 && p.kernel_h == 5) return "test_unroll 8 does not fit a 5x5 kernel";
    return direct_->unsupported_reason(p);
  }
  size_t workspace_bytes(const ConvProblem& p) const override {
    return direct_->workspace_bytes(p);
  }
  bool knob_applies(std::string_view key, const ConvProblem&) const override {
    return key == test_unroll.key();
  }
  void forward(const ConvCall& c, const Tensor& x, const Tensor& w, Tensor& y) override {
    direct_->forward(c, x, w, y);
  }
  void backward_data(const ConvCall& c, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    direct_->backward_data(c, dy, w, dx);
  }
  void backward_filter(const ConvCall& c, const Tensor& x, const Tensor& dy, Tensor& dw) override {
    direct_->backward_filter(c, x, dy, dw);
  }

 private:
  int unroll_;
  std::unique_ptr<ConvAlgorithm> direct_;
};

const ConvAlgorithmRegistration reader("cpu", kReader, [](const KnobValues& knobs) {
  return std::make_unique<UnrollReader>(test_unroll.get(knobs));
});

RunConfig reader_config(int unroll) {
  RunConfig c;
  c.batch = 8;
  knobs::threads.set(c.knobs, 1);
  c.conv.default_algorithm = kReader;
  test_unroll.set(c.knobs, unroll);
  return c;
}

TEST(KnobDeclaration, TheCatalogDescribesItWithItsFlags) {
  const KnobSpec& spec = KnobCatalog::instance().at("test_unroll");
  EXPECT_EQ(spec.flag(), "--test-unroll");
  EXPECT_EQ(spec.list_flag(), "--test-unroll-list");
  EXPECT_EQ(spec.describe_values(), "1..8");
  EXPECT_EQ(spec.checked("4", spec.flag()), "4");
  test_support::expect_error(ErrorKind::usage, [&] { spec.checked("9", spec.flag()); },
                             {"--test-unroll: must be in 1..8, got 9"});
  test_support::expect_error(ErrorKind::usage, [&] { spec.checked("four", spec.flag()); },
                             {"--test-unroll: expected an integer, got 'four'"});
}

TEST(KnobDeclaration, ConfigFilesWriteItOnlyWhenSetAndCheckIt) {
  EXPECT_FALSE(nlohmann::json::parse(to_json_text(reader_config(1))).contains("test_unroll"));
  const RunConfig four = reader_config(4);
  EXPECT_EQ(nlohmann::json::parse(to_json_text(four)).at("test_unroll"), 4);
  EXPECT_EQ(run_config_from_json_text(to_json_text(four), "<text>"), four);
  EXPECT_EQ(four.label(), "nchw conv=test-unroll-reader threads=1 test_unroll=4");
  nlohmann::json json = nlohmann::json::parse(to_json_text(four));
  json["test_unroll"] = 12;
  test_support::expect_error(ErrorKind::input,
                             [&] { run_config_from_json_text(json.dump(), "tuned.json"); },
                             {"tuned.json", "key 'test_unroll': must be in 1..8, got 12"});
  json["test_unroll"] = "4";
  test_support::expect_error(ErrorKind::input,
                             [&] { run_config_from_json_text(json.dump(), "tuned.json"); },
                             {"key 'test_unroll': expected an integer, got string"});
}

TEST(KnobDeclaration, TheSessionHandsTheValueToTheAlgorithm) {
  SessionOptions options = tuner::test_support::tiny_session();
  apply_run_config(reader_config(3), options);
  last_unroll = 0;
  TrainingSession session(options);
  EXPECT_EQ(last_unroll.load(), 3);
  EXPECT_EQ(session.conv_memory_metadata().at("test_unroll"), "3");
}

TEST(KnobDeclaration, TheSpaceCrossesItOnlyWhereItsAlgorithmRunsAndSkipsRefusedValues) {
  ModelSpec spec;
  spec.input = {8, 1, 32, 32};
  tuner::SpaceOptions o;
  o.batch = 8;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", kReader};
  o.knobs.set(test_unroll, std::vector<int>{1, 4, 8});
  const tuner::SearchSpace space(o, tuner::conv_layers(*build_model(spec)));
  const auto list = space.enumerate();
  // direct once (the knob does not change its run), the reader once per value.
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(test_unroll.get(list[0].config.knobs), 1);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(list[i].config.conv.default_algorithm, kReader);
  EXPECT_TRUE(list[1].runnable() && list[2].runnable());
  // LeNet-5's 5x5 kernels refuse unroll 8: skipped with the algorithm's own reason.
  EXPECT_EQ(test_unroll.get(list[3].config.knobs), 8);
  EXPECT_NE(list[3].skip_reason.find("test_unroll 8 does not fit a 5x5 kernel"), std::string::npos)
      << list[3].skip_reason;
}

TEST(KnobDeclaration, ABackendDefaultIsWhatAnUnsetKnobRunsWith) {
  static const Knob<int> per_backend{[] {
                                       KnobSpec spec;
                                       spec.key = "test_backend_default";
                                       spec.type = KnobType::integer;
                                       spec.min = 1;
                                       spec.max = 16;
                                       spec.default_value = "2";
                                       spec.backend_defaults = {{"cpu", "4"}};
                                       spec.scope = KnobScope::conv_algorithm;
                                       return spec;
                                     }(),
                                     integer_codec()};
  KnobValues unset;
  EXPECT_EQ(per_backend.get(unset), 2);
  EXPECT_EQ(per_backend.get(with_backend_defaults(unset, "cpu")), 4);
  EXPECT_EQ(per_backend.get(with_backend_defaults(unset, "cuda")), 2);
  KnobValues given;
  per_backend.set(given, 8);
  EXPECT_EQ(per_backend.get(with_backend_defaults(given, "cpu")), 8);
}

TEST(EngineKnobs, EverySizingKnobIsBounded) {
  for (const char* key : {"threads", "streams", "replicas", "micro_batches", "threads_per_lane"}) {
    const KnobSpec& spec = KnobCatalog::instance().at(key);
    EXPECT_EQ(spec.type, KnobType::integer) << key;
    EXPECT_LE(spec.max, 4096) << key;
    EXPECT_FALSE(spec.canonical(std::to_string(spec.max + 1))) << key;
    EXPECT_FALSE(spec.canonical("100000000")) << key;
  }
  SessionOptions options = tuner::test_support::tiny_session();
  knobs::streams.set(options.knobs, 64);
  knobs::threads_per_lane.set(options.knobs, 1024);
  test_support::expect_error(ErrorKind::usage, [&] { options.validate(); },
                             {"64 lanes x 1024 threads", "1024 threads"});
}

}  // namespace
}  // namespace tunescope
