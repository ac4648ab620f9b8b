// The one exception type of tunescope. Its kind decides the CLI exit code:
// usage and input errors exit 2, unsupported and runtime errors exit 1.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tunescope {

enum class ErrorKind {
  usage,        // a bad option or value given by the user
  input,        // a bad file: data, config, trace, results DB
  unsupported,  // a valid request this build or algorithm cannot serve
  runtime,      // a failure while running (NaN, allocation, internal)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Concatenates anything streamable into one message: cat("file ", path, ": ", n, " items").
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <typename... Parts>
[[noreturn]] void fail(ErrorKind kind, const Parts&... parts) {
  throw Error(kind, cat(parts...));
}

}  // namespace tunescope
