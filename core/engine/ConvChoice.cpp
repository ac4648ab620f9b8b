#include "core/engine/ConvChoice.h"

#include "core/base/Error.h"
#include "core/base/Registry.h"

namespace tunescope {

const std::string& ConvChoice::for_layer(const std::string& layer) const {
  auto it = per_layer.find(layer);
  return it == per_layer.end() ? default_algorithm : it->second;
}

std::string ConvChoice::str() const {
  std::string out = default_algorithm;
  for (const auto& [layer, algorithm] : per_layer)
    out.append(",").append(layer).append("=").append(algorithm);
  return out;
}

ConvChoice parse_conv_choice(std::string_view text) {
  ConvChoice choice;
  bool first = true;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    const size_t eq = part.find('=');
    if (part.empty()) fail(ErrorKind::usage, "conv '", text, "': empty entry");
    if (first && eq == std::string_view::npos) {
      choice.default_algorithm = std::string(part);
    } else if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
      fail(ErrorKind::usage, "conv '", text, "': expected LAYER=ALGORITHM, got '", part, "'");
    } else {
      const std::string layer(part.substr(0, eq));
      if (!choice.per_layer.emplace(layer, std::string(part.substr(eq + 1))).second)
        fail(ErrorKind::usage, "conv '", text, "': layer '", layer, "' given twice");
    }
    first = false;
    start = comma + 1;
  }
  return choice;
}

ConvChoice with_backend_default(ConvChoice choice, const std::string& backend) {
  if (choice.default_algorithm.empty())
    choice.default_algorithm = Registry::instance().default_conv_algorithm(backend);
  return choice;
}

}  // namespace tunescope
