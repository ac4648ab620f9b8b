#include "core/engine/ModelFiles.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/base/Error.h"

namespace tunescope {

namespace {

struct KnownExtension {
  const char* extension;
  const char* format;
  const char* missing;  // what a build without the reader lacks
};
// Known even when the reader is not built, so the message can say what is missing.
constexpr KnownExtension kKnownExtensions[] = {
    {".onnx", "ONNX",
     "ONNX's C++ library and protobuf (Debian: libonnx-dev libprotobuf-dev, see "
     "scripts/install-deps.sh); rebuild after installing them"},
};

std::map<std::string, ModelFileFormat>& formats() {
  static std::map<std::string, ModelFileFormat> table;
  return table;
}

const KnownExtension* known_extension(const std::string& model) {
  for (const auto& known : kKnownExtensions) {
    const std::string ext = known.extension;
    const auto same = [](char a, char b) {
      return a == static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
    };
    if (model.size() > ext.size() && std::equal(ext.rbegin(), ext.rend(), model.rbegin(), same))
      return &known;
  }
  return nullptr;
}

}  // namespace

bool is_model_file(const std::string& model) { return known_extension(model) != nullptr; }

const ModelFileFormat& model_file_format(const std::string& model) {
  const KnownExtension* known = known_extension(model);
  if (!known)
    fail(ErrorKind::usage, "model '", model, "' is neither a built-in model nor a model file");
  const auto it = formats().find(known->extension);
  if (it == formats().end())
    fail(ErrorKind::unsupported, "model '", model, "': this tunescope was built without ",
         known->format, " support: it needs ", known->missing);
  return it->second;
}

ModelFileFormatRegistration::ModelFileFormatRegistration(ModelFileFormat format) {
  formats()[format.extension] = std::move(format);
}

}  // namespace tunescope
