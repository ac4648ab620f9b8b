#include "core/engine/ConvChoice.h"

#include <gtest/gtest.h>

#include "core/base/Error.h"

namespace tunescope {
namespace {

TEST(ConvChoice, ParsesDefaultAndOverrides) {
  const ConvChoice c = parse_conv_choice("gemm,conv1=direct,s1b1.conv2=fft-fftw");
  EXPECT_EQ(c.default_algorithm, "gemm");
  EXPECT_EQ(c.for_layer("conv1"), "direct");
  EXPECT_EQ(c.for_layer("s1b1.conv2"), "fft-fftw");
  EXPECT_EQ(c.for_layer("conv2"), "gemm");
  EXPECT_EQ(parse_conv_choice(c.str()), c);
}

TEST(ConvChoice, RejectsMalformed) {
  for (const char* bad :
       {"", "gemm,", "gemm,conv1", "gemm,=direct", "gemm,conv1=", "gemm,a=x,a=y"}) {
    try {
      parse_conv_choice(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      // Starts with the key, so that a front end can add its own name for it.
      EXPECT_EQ(std::string(e.what()).rfind("conv '", 0), 0u) << e.what();
    }
  }
}

// An unnamed default is the backend's registered default; a named one is kept.
TEST(ConvChoice, EmptyDefaultResolvesToTheBackendsDefault) {
  EXPECT_TRUE(ConvChoice{}.default_algorithm.empty());
  const ConvChoice overrides_only = parse_conv_choice("conv1=gemm");
  EXPECT_TRUE(overrides_only.default_algorithm.empty());
  const ConvChoice on_cpu = with_backend_default(overrides_only, "cpu");
  EXPECT_EQ(on_cpu.default_algorithm, "direct");
  EXPECT_EQ(on_cpu.per_layer.at("conv1"), "gemm");
  EXPECT_EQ(on_cpu.str(), "direct,conv1=gemm");
  EXPECT_EQ(with_backend_default(parse_conv_choice("gemm"), "cpu").default_algorithm, "gemm");
  try {
    with_backend_default(ConvChoice{}, "tpu");
    FAIL() << "an unknown backend resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("unknown backend 'tpu'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope
