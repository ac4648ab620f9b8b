// `--backend auto`: the first backend of the preference order that constructs wins;
// the reasons of the ones passed over are kept; explicit names pass through.
#include "core/base/BackendChoice.h"

#include <gtest/gtest.h>

#include "core/base/Error.h"

namespace tunescope {
namespace {

class NamedBackend final : public Backend {
 public:
  explicit NamedBackend(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string device_description() const override { return "test device"; }
  OpKernels& ops() override { throw Error(ErrorKind::unsupported, "no ops in this test backend"); }

 private:
  std::string name_;
};

Registry::BackendFactory starts(const std::string& name) {
  return [name] { return std::make_unique<NamedBackend>(name); };
}
Registry::BackendFactory refuses(ErrorKind kind, const std::string& why) {
  return [kind, why]() -> std::unique_ptr<Backend> { throw Error(kind, why); };
}

TEST(BackendChoice, ExplicitNamesPassThroughUntouched) {
  Registry registry;
  registry.add_backend("cpu", starts("cpu"));
  EXPECT_EQ(choose_backend("cpu", registry).name, "cpu");
  // Unknown names are make_backend's to reject, with the list of known ones.
  EXPECT_EQ(choose_backend("tpu", registry).name, "tpu");
}

TEST(BackendChoice, AutoPrefersCudaWhenItStarts) {
  Registry registry;
  registry.add_backend("cpu", starts("cpu"));
  registry.add_backend("cuda", starts("cuda"));
  const BackendChoice choice = choose_backend("auto", registry);
  EXPECT_EQ(choice.name, "cuda");
  EXPECT_TRUE(choice.passed_over.empty());
}

TEST(BackendChoice, AutoFallsBackToCpuAndSaysWhy) {
  Registry registry;
  registry.add_backend("cpu", starts("cpu"));
  registry.add_backend("cuda", refuses(ErrorKind::usage, "no CUDA device: driver missing"));
  const BackendChoice choice = choose_backend("auto", registry);
  EXPECT_EQ(choice.name, "cpu");
  ASSERT_EQ(choice.passed_over.size(), 1u);
  EXPECT_EQ(choice.passed_over[0], "cuda: no CUDA device: driver missing");
}

TEST(BackendChoice, AutoTriesOtherRegisteredBackendsLast) {
  Registry registry;
  registry.add_backend("cpu", refuses(ErrorKind::unsupported, "broken"));
  registry.add_backend("zeta", starts("zeta"));
  EXPECT_EQ(choose_backend("auto", registry).name, "zeta");
}

TEST(BackendChoice, AutoWithNothingStartableIsUnsupportedListingReasons) {
  Registry registry;
  registry.add_backend("cuda", refuses(ErrorKind::usage, "no CUDA device: x"));
  registry.add_backend("cpu", refuses(ErrorKind::runtime, "out of threads"));
  try {
    choose_backend("auto", registry);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    const std::string text = e.what();
    EXPECT_NE(text.find("cuda: no CUDA device: x"), std::string::npos) << text;
    EXPECT_NE(text.find("cpu: out of threads"), std::string::npos) << text;
  }
  EXPECT_THROW(choose_backend("auto", Registry{}), Error);
}

// Each backend names the conv algorithm layers run when the user names none; asking
// for the default of an unknown backend, or of one registered without a default, is a
// usage error that says what to do.
TEST(BackendDefaults, DefaultConvAlgorithmIsPerBackend) {
  Registry registry;
  registry.add_backend("cpu", starts("cpu"), "direct");
  registry.add_backend("gpu", starts("gpu"), "vendor:fast");
  registry.add_backend("bare", starts("bare"));
  EXPECT_EQ(registry.default_conv_algorithm("cpu"), "direct");
  EXPECT_EQ(registry.default_conv_algorithm("gpu"), "vendor:fast");
  for (const char* backend : {"bare", "tpu"}) {
    try {
      registry.default_conv_algorithm(backend);
      ADD_FAILURE() << backend << " has a default";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      const std::string text = e.what();
      EXPECT_NE(text.find(std::string("'") + backend + "'"), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace tunescope
