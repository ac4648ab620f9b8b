// libFuzzer target: read_onnx_model on arbitrary bytes. Every defect must be a
// tunescope::Error(input); anything else escaping, a crash, a sanitizer report or an
// allocation beyond the cap is a finding. What is accepted must build (batch 2, no
// algorithm choice beyond the default) or be refused with a documented error, and a
// small accepted graph then runs one training step (forward and backward on zeros), so
// every operator's layer and kernels (grouped conv, activations, scale, concat) run
// under the sanitizers.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "FuzzInput.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "core/engine/Models.h"
#include "models/onnx/OnnxModel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunescope;
  const auto path = fuzz::input_file(data, size, ".onnx");
  try {
    const onnx::OnnxModel model = onnx::read_onnx_model(path);
    // What was accepted is self-consistent: every layer reads earlier nodes only.
    for (size_t i = 0; i < model.layers.size(); ++i)
      for (const int input : model.layers[i].inputs)
        if (input < 0 || input > static_cast<int>(i)) std::abort();
    if (model.classes <= 0 || model.input.item_count() <= 0) std::abort();
    // Small accepted graphs are built too (allocation of large ones is not what is fuzzed here).
    if (model.input.item_count() <= 4096) {
      ModelSpec spec;
      spec.name = path.string();
      spec.input = {2, model.input.c, model.input.h, model.input.w};
      spec.file_weights = true;
      try {
        const auto net = build_model(spec);
        static const auto backend = Registry::instance().make_backend("cpu");
        static ThreadPool pool(1);
        AlignedBuffer workspace(std::max<size_t>(net->workspace_bytes(), 64));
        const LayerContext ctx{backend->ops(), ExecContext{pool}, workspace.data(),
                               workspace.bytes()};
        const Tensor x(spec.input, spec.setup.layout);
        const Tensor& logits = net->forward(ctx, x, true);
        Tensor dlogits(logits.shape(), logits.layout());
        dlogits.fill(0.25f);
        net->backward(ctx, x, dlogits);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::runtime) fuzz::undocumented("fuzz_onnx_model (build)", e.what());
      }
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) fuzz::undocumented("fuzz_onnx_model", e.what());
  } catch (const std::exception& e) {
    fuzz::undocumented("fuzz_onnx_model", e.what());
  }
  return 0;
}
