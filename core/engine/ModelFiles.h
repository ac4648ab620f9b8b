// Models read from files (`--model PATH.onnx`): a reader module registers itself for a
// file extension, so the engine builds such a model without depending on the reader
// (which depends on the engine's layers). Built without the reader, the engine still
// recognises the extension and says which library the build lacks.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/engine/Network.h"

namespace tunescope {

struct ModelSpec;

// What a model file fixes before anything is built: the input's (c, h, w) and the
// number of classes its output scores.
struct ModelFileShape {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
  int64_t classes = 0;
};

struct ModelFileFormat {
  std::string name;       // "ONNX"
  std::string extension;  // ".onnx"
  // Both throw Error(input) naming the file (and the node) for a file they cannot take.
  std::function<ModelFileShape(const std::string& path)> shape;
  // spec.name is the path; spec.input.n is the batch; the file's weights are the
  // starting weights when spec.file_weights is set.
  std::function<std::unique_ptr<Network>(const ModelSpec& spec)> build;
  // Writes a copy of the file at `path` with `net`'s weights (net built from that file),
  // complete or not at all; throws Error(input) naming `out_path` when it cannot.
  std::function<void(const std::string& path, Network& net, const std::string& out_path)> save;
};

// True when `model` names a file of a known model-file extension (registered or not).
bool is_model_file(const std::string& model);
// The registered format for `model`'s extension. Throws Error(unsupported) naming the
// file and the missing library when this build has no reader for it, and Error(usage)
// when `model` has no known model-file extension.
const ModelFileFormat& model_file_format(const std::string& model);

// Throws Error(usage/input) naming the option when `out_path` cannot take a copy of
// `model` with trained weights: `model` is not a model file of this build, `out_path`
// has another extension, is a folder, or its folder does not exist or is not writable.
// Checked before training so that a bad path costs nothing.
void check_model_save_path(const std::string& model, const std::string& out_path,
                           const std::string& option);

// A namespace-scope object in the reader's module registers it (as algorithms do).
struct ModelFileFormatRegistration {
  explicit ModelFileFormatRegistration(ModelFileFormat format);
};

}  // namespace tunescope
