// Registers the ONNX reader with the engine for `--model PATH.onnx`.
#include "core/engine/ModelFiles.h"
#include "models/onnx/OnnxModel.h"

namespace tunescope::onnx {
namespace {

const ModelFileFormatRegistration onnx_format{ModelFileFormat{
    "ONNX", ".onnx",
    [](const std::string& path) {
      const OnnxModel model = read_onnx_model(path);
      return ModelFileShape{model.input.c, model.input.h, model.input.w, model.classes};
    },
    [](const ModelSpec& spec) { return read_onnx_model(spec.name).build(spec); },
    [](const std::string& path, Network& net, const std::string& out_path) {
      read_onnx_model(path).save_weights(net, out_path);
    }}};

}  // namespace
}  // namespace tunescope::onnx
