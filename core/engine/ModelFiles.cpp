#include "core/engine/ModelFiles.h"

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <filesystem>
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

void check_model_save_path(const std::string& model, const std::string& out_path,
                           const std::string& option) {
  if (!is_model_file(model))
    fail(ErrorKind::usage, option, " ", out_path, ": the model '", model,
         "' is built in, not read from a model file, so there is no file to copy");
  const ModelFileFormat& format = model_file_format(model);
  if (known_extension(out_path) != known_extension(model))
    fail(ErrorKind::usage, option, " ", out_path, ": the copy of an ", format.name,
         " model must end in ", format.extension);
  namespace fs = std::filesystem;
  const fs::path target(out_path);
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (fs::is_directory(target, ec)) fail(ErrorKind::input, option, " ", out_path, ": is a folder");
  if (!fs::is_directory(folder, ec))
    fail(ErrorKind::input, option, " ", out_path, ": folder ", folder.string(), " does not exist");
  if (access(folder.c_str(), W_OK) != 0)
    fail(ErrorKind::input, option, " ", out_path, ": folder ", folder.string(), " is not writable");
}

ModelFileFormatRegistration::ModelFileFormatRegistration(ModelFileFormat format) {
  formats()[format.extension] = std::move(format);
}

}  // namespace tunescope
