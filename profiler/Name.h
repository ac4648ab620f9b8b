// The name of a trace record (kernel, range, operator): interned once per distinct
// text for the life of the process, so a record holds one pointer however long its
// name is, and millions of records of a few hundred distinct names cost their pointers
// only. Reads like a const std::string; equal names are the same pointer.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace tunescope::profiler {

class Name {
 public:
  Name() : text_(&empty_text()) {}
  Name(std::string_view text);  // NOLINT(google-explicit-constructor): names are text
  Name(const char* text) : Name(std::string_view(text)) {}         // NOLINT
  Name(const std::string& text) : Name(std::string_view(text)) {}  // NOLINT

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT
  operator std::string_view() const { return *text_; }    // NOLINT
  const char* c_str() const { return text_->c_str(); }
  bool empty() const { return text_->empty(); }
  size_t size() const { return text_->size(); }

  friend bool operator==(Name a, Name b) { return a.text_ == b.text_; }
  friend bool operator==(Name a, std::string_view b) { return *a.text_ == b; }
  friend bool operator==(Name a, const char* b) { return *a.text_ == b; }
  friend bool operator==(Name a, const std::string& b) { return *a.text_ == b; }
  friend std::strong_ordering operator<=>(Name a, Name b) {
    return a.text_ == b.text_ ? std::strong_ordering::equal : *a.text_ <=> *b.text_;
  }

  // Bytes held by every name interned so far in this process (texts and their entries):
  // what a reader counts against its memory limit.
  static uint64_t interned_bytes();

 private:
  static const std::string& empty_text();
  friend struct std::hash<Name>;
  const std::string* text_;
};

std::ostream& operator<<(std::ostream& out, Name name);

}  // namespace tunescope::profiler

template <>
struct std::hash<tunescope::profiler::Name> {
  size_t operator()(tunescope::profiler::Name name) const noexcept {
    return std::hash<const void*>()(name.text_);
  }
};
