// Name -> factory tables for backends and convolution algorithms. Implementations
// register themselves with the static registration objects below from their own .cpp
// (kernels are linked as object libraries so those objects are never dropped).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/Backend.h"
#include "core/base/ConvAlgorithm.h"
#include "core/base/Knob.h"

namespace tunescope {

class Registry {
 public:
  using BackendFactory = std::function<std::unique_ptr<Backend>()>;
  // A conv factory gets the run's knob values and keeps those it declared and reads
  // (fft-fftw and fft-own: fft_tile and fft_workspace); every other algorithm ignores them.
  using ConvFactory = std::function<std::unique_ptr<ConvAlgorithm>(const KnobValues&)>;

  // The process-wide table filled during static initialisation; read-only afterwards.
  static Registry& instance();

  // `default_conv_algorithm`: what conv layers run when the user names no algorithm
  // (cpu: the "direct" reference; cuda, which has no direct: "cudnn:implicit_gemm").
  void add_backend(const std::string& name, BackendFactory factory,
                   std::string default_conv_algorithm = {});
  void add_conv_algorithm(const std::string& backend, const std::string& name, ConvFactory factory);

  std::vector<std::string> backends() const;
  // Registered names for `backend`, sorted.
  std::vector<std::string> conv_algorithms(const std::string& backend) const;

  // Throws Error(usage) for an unknown backend or one registered without a default.
  std::string default_conv_algorithm(const std::string& backend) const;

  // Throw Error(usage) listing the known names when `name` is unknown.
  std::unique_ptr<Backend> make_backend(const std::string& name) const;
  std::unique_ptr<ConvAlgorithm> make_conv_algorithm(const std::string& backend,
                                                     const std::string& name,
                                                     const KnobValues& knobs = {}) const;

 private:
  struct BackendEntry {
    BackendFactory factory;
    std::string default_conv_algorithm;
  };
  std::map<std::string, BackendEntry> backends_;
  std::map<std::string, std::map<std::string, ConvFactory>> conv_;
};

struct BackendRegistration {
  BackendRegistration(const std::string& name, const std::string& default_conv_algorithm,
                      Registry::BackendFactory factory) {
    Registry::instance().add_backend(name, std::move(factory), default_conv_algorithm);
  }
};

struct ConvAlgorithmRegistration {
  ConvAlgorithmRegistration(const std::string& backend, const std::string& name,
                            Registry::ConvFactory factory) {
    Registry::instance().add_conv_algorithm(backend, name, std::move(factory));
  }
};

}  // namespace tunescope
