#include "core/base/Registry.h"

#include "core/base/Error.h"

namespace tunescope {

namespace {
template <typename Map>
std::string known_names(const Map& map) {
  std::string out;
  for (const auto& [name, value] : map) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}
}  // namespace

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add_backend(const std::string& name, BackendFactory factory,
                           std::string default_conv_algorithm) {
  backends_[name] = {std::move(factory), std::move(default_conv_algorithm)};
}

void Registry::add_conv_algorithm(const std::string& backend, const std::string& name,
                                  ConvFactory factory) {
  conv_[backend][name] = std::move(factory);
}

std::vector<std::string> Registry::backends() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : backends_) names.push_back(name);
  return names;
}

std::vector<std::string> Registry::conv_algorithms(const std::string& backend) const {
  std::vector<std::string> names;
  if (auto it = conv_.find(backend); it != conv_.end())
    for (const auto& [name, factory] : it->second) names.push_back(name);
  return names;
}

std::unique_ptr<Backend> Registry::make_backend(const std::string& name) const {
  auto it = backends_.find(name);
  if (it == backends_.end())
    fail(ErrorKind::usage, "unknown backend '", name, "' (known: ", known_names(backends_), ")");
  return it->second.factory();
}

std::string Registry::default_conv_algorithm(const std::string& backend) const {
  auto it = backends_.find(backend);
  if (it == backends_.end())
    fail(ErrorKind::usage, "unknown backend '", backend, "' (known: ", known_names(backends_), ")");
  if (it->second.default_conv_algorithm.empty())
    fail(ErrorKind::usage, "backend '", backend,
         "' has no default convolution algorithm: name one in conv");
  return it->second.default_conv_algorithm;
}

std::unique_ptr<ConvAlgorithm> Registry::make_conv_algorithm(const std::string& backend,
                                                             const std::string& name,
                                                             const KnobValues& knobs) const {
  auto it = conv_.find(backend);
  if (it == conv_.end() || !it->second.count(name))
    fail(ErrorKind::usage, "unknown convolution algorithm '", name, "' for backend '", backend,
         "' (known: ", it == conv_.end() ? std::string("none") : known_names(it->second), ")");
  return it->second.at(name)(knobs);
}

}  // namespace tunescope
