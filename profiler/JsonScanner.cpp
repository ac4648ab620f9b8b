// Chunked strict JSON scanning: hot paths (whitespace, plain string bytes) run over the
// chunk in place; escapes, multibyte UTF-8 and numbers go byte by byte across chunks.
#include "profiler/JsonScanner.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

namespace tunescope::profiler {

namespace {

constexpr size_t kMaxNesting = 10'000;

bool is_digit(int c) { return c >= '0' && c <= '9'; }

std::string describe(int c) {
  if (c < 0) return "end of input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  static const char* hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[(c >> 4) & 15] + hex[c & 15];
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

std::optional<double> plain_decimal(const char* first, const char* last) {
  static constexpr double kPowers[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = *first == '-';
  int64_t mantissa = 0;
  int digits = 0, fraction = -1;
  for (const char* p = first + (negative ? 1 : 0); p < last; ++p) {
    if (*p == '.') {
      fraction = 0;
      continue;
    }
    if (!is_digit(*p) || ++digits > 15) return std::nullopt;
    mantissa = mantissa * 10 + (*p - '0');
    if (fraction >= 0) ++fraction;
  }
  const double value = static_cast<double>(mantissa) / kPowers[fraction < 0 ? 0 : fraction];
  return negative ? -value : value;
}

}  // namespace

JsonScanner::JsonScanner(Read read, size_t chunk_bytes)
    : read_(std::move(read)), chunk_bytes_(chunk_bytes), buffer_(new char[chunk_bytes]) {
  pos_ = end_ = buffer_.get();
}

bool JsonScanner::refill() {
  if (eof_) return false;
  if (capture_) {
    capture_->append(capture_from_, end_);
    if (capture_->size() > capture_limit_)
      fail(capture_what_ + " is larger than " + std::to_string(capture_limit_) + " bytes",
           capture_start_);
  }
  consumed_before_ += static_cast<uint64_t>(end_ - buffer_.get());
  const size_t n = read_(buffer_.get(), chunk_bytes_);
  pos_ = buffer_.get();
  end_ = pos_ + n;
  capture_from_ = pos_;
  if (n == 0) eof_ = true;
  return n > 0;
}

int JsonScanner::next_raw() {
  if (pos_ == end_ && !refill()) return -1;
  return static_cast<unsigned char>(*pos_++);
}

int JsonScanner::peek_after_refill() {
  while (refill()) {
    for (; pos_ < end_; ++pos_) {
      const auto c = static_cast<unsigned char>(*pos_);
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
    }
  }
  return -1;
}

void JsonScanner::fail(const std::string& problem, uint64_t at) const {
  throw JsonSyntaxError("not JSON: " + problem + " at byte " + std::to_string(at));
}

void JsonScanner::fail_truncated() const {
  if (empty_input()) throw JsonSyntaxError("not JSON: empty file");
  throw JsonSyntaxError("truncated JSON: input ends at byte " + std::to_string(offset()));
}

void JsonScanner::fail_unexpected(const char* expected) {
  const int c = peek();
  if (c < 0) fail_truncated();
  throw JsonSyntaxError("not JSON: unexpected " + describe(c) + " at byte " +
                        std::to_string(offset()) + ", expected " + expected);
}

void JsonScanner::read_string(std::string& out) {
  if (peek() != '"') fail_unexpected("a string");
  out.clear();
  scan_string(&out);
}

void JsonScanner::scan_string(std::string* out) {
  ++pos_;  // the opening quote
  for (;;) {
    if (pos_ == end_ && !refill()) fail_truncated();
    const char* p = pos_;
    while (p < end_) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++p;
    }
    if (out) out->append(pos_, p);
    pos_ = p;
    if (p == end_) continue;
    const auto c = static_cast<unsigned char>(*pos_);
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c < 0x20) fail("control character " + describe(c) + " in a string", offset());
    ++pos_;
    if (c == '\\')
      scan_escape(out);
    else
      scan_utf8(out, c);
  }
}

void JsonScanner::scan_escape(std::string* out) {
  const uint64_t at = offset() - 1;
  const int c = next_raw();
  if (c < 0) fail_truncated();
  const char* simple = nullptr;
  switch (c) {
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case '/': simple = "/"; break;
    case 'b': simple = "\b"; break;
    case 'f': simple = "\f"; break;
    case 'n': simple = "\n"; break;
    case 'r': simple = "\r"; break;
    case 't': simple = "\t"; break;
    case 'u': break;
    default: fail("invalid escape \\" + describe(c), at);
  }
  if (simple) {
    if (out) *out += *simple;
    return;
  }
  const auto hex4 = [&] {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = next_raw();
      if (h < 0) fail_truncated();
      code <<= 4;
      if (is_digit(h))
        code |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        code |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        code |= static_cast<uint32_t>(h - 'A' + 10);
      else
        fail("invalid \\u escape", at);
    }
    return code;
  };
  uint32_t code = hex4();
  if (code >= 0xdc00 && code <= 0xdfff) fail("lone low surrogate in a \\u escape", at);
  if (code >= 0xd800 && code <= 0xdbff) {
    if (next_raw() != '\\' || next_raw() != 'u') fail("high surrogate without its low half", at);
    const uint32_t low = hex4();
    if (low < 0xdc00 || low > 0xdfff) fail("high surrogate without its low half", at);
    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
  }
  if (out) append_utf8(*out, code);
}

// RFC 3629's well-formed sequences: no overlong forms, no surrogates, nothing past U+10FFFF.
void JsonScanner::scan_utf8(std::string* out, unsigned char lead) {
  const uint64_t at = offset() - 1;
  int count = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    count = 1;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    count = 2;
    if (lead == 0xe0) lo = 0xa0;
    if (lead == 0xed) hi = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    count = 3;
    if (lead == 0xf0) lo = 0x90;
    if (lead == 0xf4) hi = 0x8f;
  } else {
    fail("invalid UTF-8 " + describe(lead) + " in a string", at);
  }
  char bytes[4] = {static_cast<char>(lead)};
  for (int i = 1; i <= count; ++i) {
    const int c = next_raw();
    if (c < 0) fail_truncated();
    if (c < lo || c > hi) fail("invalid UTF-8 sequence in a string", at);
    lo = 0x80;
    hi = 0xbf;
    bytes[i] = static_cast<char>(c);
  }
  if (out) out->append(bytes, static_cast<size_t>(count + 1));
}

// Numbers are parsed in place when they end inside the chunk (nearly always), else
// gathered byte by byte into token_.
void JsonScanner::scan_number(JsonScalar* out) {
  if (scan_number_in_chunk(out)) return;
  const uint64_t at = offset();
  token_.clear();
  const auto current = [&]() -> int {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(*pos_);
  };
  const auto take = [&] { token_ += *pos_++; };
  const auto digits = [&] {
    if (current() < 0) fail_truncated();
    if (!is_digit(current())) fail("invalid number", at);
    while (is_digit(current())) take();
  };
  bool integral = true;
  if (current() == '-') take();
  if (current() == '0')
    take();
  else
    digits();
  if (current() == '.') {
    integral = false;
    take();
    digits();
  }
  if (current() == 'e' || current() == 'E') {
    integral = false;
    take();
    if (current() == '+' || current() == '-') take();
    digits();
  }
  parse_number_token(token_.data(), token_.data() + token_.size(), integral, out);
}

// The same grammar over the chunk; false (nothing consumed) when the number may go on
// past the chunk's end.
bool JsonScanner::scan_number_in_chunk(JsonScalar* out) {
  const char* p = pos_;
  const auto digits = [&] {
    if (p == end_ || !is_digit(*p)) return false;
    while (p < end_ && is_digit(*p)) ++p;
    return true;
  };
  bool integral = true;
  if (p < end_ && *p == '-') ++p;
  if (p < end_ && *p == '0')
    ++p;
  else if (!digits())
    return p == end_ ? false : (fail("invalid number", offset()), false);
  if (p < end_ && *p == '.') {
    integral = false;
    ++p;
    if (!digits()) return p == end_ ? false : (fail("invalid number", offset()), false);
  }
  if (p < end_ && (*p == 'e' || *p == 'E')) {
    integral = false;
    ++p;
    if (p < end_ && (*p == '+' || *p == '-')) ++p;
    if (!digits()) return p == end_ ? false : (fail("invalid number", offset()), false);
  }
  if (p == end_) return false;
  parse_number_token(pos_, p, integral, out);
  pos_ = p;
  return true;
}

void JsonScanner::parse_number_token(const char* first, const char* last, bool integral,
                                     JsonScalar* out) {
  if (!out) return;
  out->text.assign(first, last);
  if (integral) {
    int64_t value = 0;
    if (std::from_chars(first, last, value).ec == std::errc()) {
      out->type = JsonScalar::Type::integer;
      out->integer = value;
      return;
    }
  }
  // A plain decimal with at most 15 digits is mantissa / 10^k with both exact in a
  // double, and IEEE division rounds correctly: the same double from_chars gives.
  if (const auto plain = plain_decimal(first, last)) {
    out->type = JsonScalar::Type::number;
    out->number = *plain;
    return;
  }
  double value = 0;
  const auto result = std::from_chars(first, last, value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars leaves the value alone; overflow is what matters to range checks.
    const std::string_view token(first, static_cast<size_t>(last - first));
    const bool tiny = token.find("e-") != token.npos || token.find("E-") != token.npos;
    value = tiny ? 0.0 : (*first == '-' ? -HUGE_VAL : HUGE_VAL);
  }
  out->type = JsonScalar::Type::number;
  out->number = value;
}

void JsonScanner::scan_literal(const char* word) {
  const uint64_t at = offset();
  for (const char* p = word; *p; ++p) {
    const int c = next_raw();
    if (c < 0) fail_truncated();
    if (c != static_cast<unsigned char>(*p))
      fail(std::string("invalid literal, expected '") + word + "'", at);
  }
}

void JsonScanner::read_scalar(JsonScalar& out) {
  const int c = peek();
  if (c == '"') {
    out.type = JsonScalar::Type::string;
    out.text.clear();
    scan_string(&out.text);
  } else if (c == '-' || is_digit(c)) {
    scan_number(&out);
  } else if (c == 'n') {
    scan_literal("null");
    out.type = JsonScalar::Type::null;
  } else {
    skip_value();
    out.type = JsonScalar::Type::other;
  }
}

void JsonScanner::skip_value() {
  nesting_.clear();
  for (;;) {
    // One value...
    const int c = peek();
    bool opened = false;
    if (c == '{' || c == '[') {
      ++pos_;
      const char close = c == '{' ? '}' : ']';
      if (!consume_if(close)) {
        if (nesting_.size() >= kMaxNesting)
          fail("nesting deeper than " + std::to_string(kMaxNesting) + " levels", offset());
        nesting_.push_back(static_cast<char>(c));
        if (c == '{') {
          if (peek() != '"') fail_unexpected("a key or '}'");
          scan_string(nullptr);
          expect(':', "':'");
        }
        opened = true;
      }
    } else if (c == '"') {
      scan_string(nullptr);
    } else if (c == '-' || is_digit(c)) {
      scan_number(nullptr);
    } else if (c == 't') {
      scan_literal("true");
    } else if (c == 'f') {
      scan_literal("false");
    } else if (c == 'n') {
      scan_literal("null");
    } else {
      fail_unexpected("a value");
    }
    if (opened) continue;
    // ...then what closes levels or separates the next value.
    for (;;) {
      if (nesting_.empty()) return;
      const bool object = nesting_.back() == '{';
      if (consume_if(',')) {
        if (object) {
          if (peek() != '"') fail_unexpected("a key");
          scan_string(nullptr);
          expect(':', "':'");
        }
        break;
      }
      if (!consume_if(object ? '}' : ']')) fail_unexpected(object ? "',' or '}'" : "',' or ']'");
      nesting_.pop_back();
    }
  }
}

void JsonScanner::capture_value(std::string& raw, size_t max_bytes, const char* what) {
  peek();
  capture_ = &raw;
  capture_from_ = pos_;
  capture_limit_ = max_bytes;
  capture_what_ = what;
  capture_start_ = offset();
  struct Stop {
    JsonScanner& s;
    ~Stop() { s.capture_ = nullptr; }
  } stop{*this};
  skip_value();
  raw.append(capture_from_, pos_);
  if (raw.size() > max_bytes)
    fail(capture_what_ + " is larger than " + std::to_string(max_bytes) + " bytes", capture_start_);
}

void JsonScanner::expect_end() {
  const int c = peek();
  if (c >= 0) fail("unexpected " + describe(c) + " after the document", offset());
}

}  // namespace tunescope::profiler
