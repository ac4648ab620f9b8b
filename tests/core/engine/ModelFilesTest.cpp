// Model files in a program without their reader (test_engine links no models/onnx):
// the engine still knows the extension and says which libraries the build lacks.
#include "core/engine/ModelFiles.h"

#include <gtest/gtest.h>

#include "core/engine/Models.h"
#include "tests/core/ExpectError.h"

namespace tunescope {
namespace {

TEST(ModelFiles, KnowsTheOnnxExtensionInAnyCase) {
  EXPECT_TRUE(is_model_file("net.onnx"));
  EXPECT_TRUE(is_model_file("dir/NET.ONNX"));
  EXPECT_FALSE(is_model_file(".onnx"));
  EXPECT_FALSE(is_model_file("net.onnx.txt"));
  EXPECT_FALSE(is_model_file("lenet5"));
}

TEST(ModelFiles, WithoutTheReaderSaysWhatTheBuildLacks) {
  ModelSpec spec;
  spec.name = "mynet.onnx";
  test_support::expect_error(
      ErrorKind::unsupported, [&] { build_model(spec); },
      {"model 'mynet.onnx'", "built without ONNX support", "libonnx-dev libprotobuf-dev"});
  test_support::expect_error(ErrorKind::unsupported, [&] { model_input("mynet.onnx"); },
                             {"built without ONNX support"});
  test_support::expect_error(ErrorKind::usage, [&] { model_input("mynet.pt"); },
                             {"unknown model 'mynet.pt'", "PATH.onnx"});
}

TEST(ModelFiles, BuiltInModelsHaveNoFileWeights) {
  ModelSpec spec;
  spec.file_weights = true;
  test_support::expect_error(ErrorKind::usage, [&] { build_model(spec); }, {"init onnx", "lenet5"});
}

}  // namespace
}  // namespace tunescope
