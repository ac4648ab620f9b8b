#include "core/base/Knob.h"

#include <algorithm>
#include <charconv>

#include "core/base/Error.h"

namespace tunescope {

namespace {

std::string dashed(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

std::optional<int64_t> parse_integer(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || at != end || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::string option_flag(std::string_view key) { return "--" + dashed(std::string(key)); }

std::string KnobSpec::flag() const { return option_flag(key); }

std::string KnobSpec::list_flag() const { return flag() + "-list"; }

std::string KnobSpec::default_for(const std::string& backend) const {
  const auto it = backend_defaults.find(backend);
  return it == backend_defaults.end() ? default_value : it->second;
}

std::vector<std::string> KnobSpec::tune_default() const {
  if (list_default.empty()) return {default_value};
  std::vector<std::string> out;
  for (size_t start = 0; start <= list_default.size();) {
    const size_t comma = std::min(list_default.find(',', start), list_default.size());
    out.push_back(list_default.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string KnobSpec::describe_values() const {
  if (!values_text.empty()) return values_text;
  if (type == KnobType::integer) return cat(min, "..", max);
  std::string out;
  for (const auto& c : choices) out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::optional<std::string> KnobSpec::canonical(std::string_view text) const {
  switch (type) {
    case KnobType::integer: {
      const auto value = parse_integer(text);
      if (!value || *value < min || *value > max) return std::nullopt;
      return std::to_string(*value);
    }
    case KnobType::boolean:
      if (text == "on" || text == "true") return std::string("on");
      if (text == "off" || text == "false") return std::string("off");
      return std::nullopt;
    case KnobType::choice:
      if (parse) return parse(text);
      if (std::find(choices.begin(), choices.end(), text) != choices.end())
        return std::string(text);
      return std::nullopt;
  }
  return std::nullopt;
}

std::string KnobSpec::checked(std::string_view text, const std::string& where) const {
  if (auto value = canonical(text)) return *value;
  if (type == KnobType::integer) {
    if (!parse_integer(text))
      fail(ErrorKind::usage, where, ": expected an integer, got '", text, "'");
    fail(ErrorKind::usage, where, ": must be in ", min, "..", max, ", got ", text);
  }
  fail(ErrorKind::usage, where, ": '", text, "' is not a value (", describe_values(), ")");
}

KnobCatalog& KnobCatalog::instance() {
  static KnobCatalog catalog;
  return catalog;
}

void KnobCatalog::add(KnobSpec spec, bool engine) {
  if (find(spec.key)) fail(ErrorKind::runtime, "knob '", spec.key, "' is declared twice");
  if (!spec.canonical(spec.default_value))
    fail(ErrorKind::runtime, "knob '", spec.key, "': its default '", spec.default_value,
         "' is not one of its values");
  for (const std::string& value : spec.tune_default())
    if (!spec.canonical(value))
      fail(ErrorKind::runtime, "knob '", spec.key, "': its tune default '", value,
           "' is not one of its values");
  if (!engine && spec.written_when_default)
    fail(ErrorKind::runtime, "knob '", spec.key,
         "': an algorithm's knob is written only when set (a viewer "
         "without the algorithm must tell its values from the defaults)");
  if (engine) {
    specs_.insert(specs_.begin() + static_cast<std::ptrdiff_t>(engine_count_++), std::move(spec));
    return;
  }
  auto at =
      std::upper_bound(specs_.begin() + static_cast<std::ptrdiff_t>(engine_count_), specs_.end(),
                       spec, [](const KnobSpec& a, const KnobSpec& b) { return a.key < b.key; });
  specs_.insert(at, std::move(spec));
}

const KnobSpec* KnobCatalog::find(std::string_view key) const {
  for (const auto& spec : specs_)
    if (spec.key == key) return &spec;
  return nullptr;
}

const KnobSpec& KnobCatalog::at(std::string_view key) const {
  if (const KnobSpec* spec = find(key)) return *spec;
  fail(ErrorKind::usage, "unknown knob '", key, "' (known: ", keys_text(), ")");
}

std::string KnobCatalog::keys_text() const {
  std::string out;
  for (const auto& spec : specs_) out += (out.empty() ? "" : ", ") + spec.key;
  return out;
}

std::string KnobValues::text(std::string_view key) const {
  if (auto it = values_.find(std::string(key)); it != values_.end()) return it->second;
  if (const KnobSpec* spec = KnobCatalog::instance().find(key)) return spec->default_value;
  return {};
}

void KnobValues::set_text(const std::string& key, std::string value) {
  values_[key] = std::move(value);
}

bool KnobValues::differs_from_default(std::string_view key) const {
  const KnobSpec* spec = KnobCatalog::instance().find(key);
  return !spec || text(key) != spec->default_value;
}

bool KnobValues::operator==(const KnobValues& other) const {
  for (const auto* side : {this, &other})
    for (const auto& [key, value] : side->values_)
      if (text(key) != other.text(key)) return false;
  return true;
}

KnobValues with_backend_defaults(KnobValues values, const std::string& backend) {
  for (const auto& spec : KnobCatalog::instance().specs())
    if (!values.is_set(spec.key)) values.set_text(spec.key, spec.default_for(backend));
  return values;
}

KnobCodec<int> integer_codec() {
  return {[](std::string_view text) { return static_cast<int>(parse_integer(text).value_or(0)); },
          [](const int& value) { return std::to_string(value); }};
}

KnobCodec<bool> boolean_codec() {
  return {[](std::string_view text) { return text == "on"; },
          [](const bool& value) { return std::string(value ? "on" : "off"); }};
}

KnobCodec<std::string> text_codec() {
  return {[](std::string_view text) { return std::string(text); },
          [](const std::string& value) { return value; }};
}

}  // namespace tunescope
