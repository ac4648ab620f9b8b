// Sets an environment variable for one scope and restores what was there after (the old
// value, or unset). Tests force kernel paths (TUNESCOPE_*_ISA) and data folders this way.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tunescope::test_support {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tunescope::test_support
