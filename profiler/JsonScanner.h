// A strict (RFC 8259) pull scanner for JSON read in chunks, so a reader can walk a
// document of any size holding only what it keeps: one chunk of input plus the value
// in hand. Syntax errors say what was found and at which byte of the (uncompressed)
// input; an input that ends early says where it ended.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tunescope::profiler {

// A syntax problem, without the file name (the caller adds it).
class JsonSyntaxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A scalar as read: strings unescaped; numbers as integer when written without fraction
// or exponent and within int64, else as double; `text` keeps a number's token so two
// equal tokens compare equal. Objects, arrays, true and false are `other` (skipped).
struct JsonScalar {
  enum class Type { missing, null, string, integer, number, other };
  Type type = Type::missing;
  std::string text;
  int64_t integer = 0;
  double number = 0;

  bool present() const { return type != Type::missing; }
  bool is_number() const { return type == Type::integer || type == Type::number; }
  double as_double() const { return type == Type::integer ? static_cast<double>(integer) : number; }
  void clear() { type = Type::missing; }
};

class JsonScanner {
 public:
  // `read` fills up to `capacity` bytes and returns how many; 0 means end of input.
  // It may throw (the error passes through unchanged).
  using Read = std::function<size_t(char* buffer, size_t capacity)>;
  explicit JsonScanner(Read read, size_t chunk_bytes = size_t{1} << 20);

  // The next byte that is not whitespace, not consumed; -1 at the end of input.
  int peek() {
    while (pos_ < end_) {
      const auto c = static_cast<unsigned char>(*pos_);
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
      ++pos_;
    }
    return peek_after_refill();
  }
  // Consumes `c` if it comes next (after whitespace).
  bool consume_if(char c) {
    if (peek() != static_cast<unsigned char>(c)) return false;
    ++pos_;
    return true;
  }
  // Consumes `c` or throws; `expected` describes what the grammar wants there.
  void expect(char c, const char* expected) {
    if (!consume_if(c)) fail_unexpected(expected);
  }
  // A string (the next value must be one, else throws).
  void read_string(std::string& out);
  // Any value: scalars into `out`, objects and arrays skipped as `other`.
  void read_scalar(JsonScalar& out);
  // Any value, checked and dropped; nesting is tracked without recursion.
  void skip_value();
  // Any value, checked, its text appended to `raw`; throws past `max_bytes`.
  void capture_value(std::string& raw, size_t max_bytes, const char* what);
  // Only whitespace may follow the document.
  void expect_end();

  // Bytes of input consumed so far.
  uint64_t offset() const { return consumed_before_ + static_cast<uint64_t>(pos_ - buffer_.get()); }
  // True once the first byte has been read and the input was empty.
  bool empty_input() const {
    return eof_ && consumed_before_ + static_cast<uint64_t>(end_ - buffer_.get()) == 0;
  }

  [[noreturn]] void fail_unexpected(const char* expected);

 private:
  bool refill();
  int peek_after_refill();
  bool scan_number_in_chunk(JsonScalar* out);
  void parse_number_token(const char* first, const char* last, bool integral, JsonScalar* out);
  int next_raw();  // the next byte as is (no whitespace skipping), -1 at the end
  [[noreturn]] void fail_truncated() const;
  [[noreturn]] void fail(const std::string& problem, uint64_t at) const;
  void scan_string(std::string* out);
  void scan_escape(std::string* out);
  void scan_utf8(std::string* out, unsigned char lead);
  void scan_number(JsonScalar* out);
  void scan_literal(const char* word);

  Read read_;
  size_t chunk_bytes_;
  std::unique_ptr<char[]> buffer_;
  const char* pos_;
  const char* end_;
  uint64_t consumed_before_ = 0;  // bytes of input before buffer_
  bool eof_ = false;
  std::string* capture_ = nullptr;  // where consumed bytes go while capturing
  const char* capture_from_ = nullptr;
  size_t capture_limit_ = 0;
  std::string capture_what_;
  uint64_t capture_start_ = 0;
  std::string token_;          // a number's text
  std::vector<char> nesting_;  // '{' or '[' per open level while skipping
};

}  // namespace tunescope::profiler
