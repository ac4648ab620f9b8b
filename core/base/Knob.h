// Knobs as data: every setting of a run that the tuner may choose (layout, threads,
// streams, ..., and the knobs an algorithm declares, such as fft_tile) is described once
// by a KnobSpec. The config JSON, the session options, the search space, the CLI flags
// (single and `-list`), labels and `tunescope knobs` are all generated from the catalog
// of specs, so adding a knob is one declaration (a Knob<T> object) plus the code that
// reads it (tests/core/base/KnobTest.cpp shows it).
//
// Values travel as canonical text ("nhwc", "2", "on", "16") in KnobValues; a typed
// handle (Knob<T>) turns them into what the reading code wants.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunescope {

// How the value is written in a config file: a JSON integer, true/false, or a string.
enum class KnobType { integer, boolean, choice };

// Where a knob takes effect: on every run, or only where some conv layer runs an
// algorithm that reads it (ConvAlgorithm::knob_applies); elsewhere every value of it is
// the same run, so the tuner does not cross it there.
enum class KnobScope { run, conv_algorithm };

// The command-line flag of a config key or session option: "--" and the key with '_' as
// '-' ("micro_batches" -> "--micro-batches"). Core messages name keys; front ends add this.
std::string option_flag(std::string_view key);

class KnobValues;

struct KnobSpec {
  std::string key;   // config JSON key and the name in core messages: "micro_batches"
  std::string help;  // one line, for --help, `tunescope knobs` and the GUI
  KnobType type = KnobType::integer;
  std::string default_value;  // canonical text
  // Backends whose default differs (backend -> canonical text).
  std::map<std::string, std::string> backend_defaults;
  // What a tune tries when no list is given (comma-separated); empty: default_value.
  std::string list_default;
  // An older name of the tune's list flag, still accepted ("--layouts").
  std::string list_alias;
  // integer: the inclusive bounds. Every knob that sizes a resource is bounded, so an
  // absurd value is refused before anything is allocated.
  int64_t min = 0, max = 0;
  // choice: the allowed values (boolean: "off", "on"). Empty with `parse` set: an open
  // set that `parse` decides.
  std::vector<std::string> choices;
  // choice with an open set: the canonical text of `text`, nullopt when it is not a value.
  std::function<std::optional<std::string>(std::string_view text)> parse;
  // The values in words for messages, when `choices` or the bounds do not say it.
  std::string values_text;
  // The short form in config labels ("streams" gives " streams=2"; for a boolean, the
  // word shown when on: " async"); empty: the key. Knobs declared by algorithms keep
  // the key, so a front end that links no kernels labels them alike.
  std::string label;
  KnobScope scope = KnobScope::run;
  // Run scope: whether a run with these knob values reads this one (empty: every run).
  // The tuner crosses a knob's list only with the configs it applies to.
  std::function<bool(const KnobValues&)> applies_to;
  std::string applies_to_text;  // which runs applies_to keeps, in words, for `tunescope knobs`
  // Written into config JSON even at its default. Knobs added after the first config
  // schema are written only when set otherwise, so a stored config keeps its text
  // (the results DB finds earlier trials by it).
  bool written_when_default = false;

  std::string flag() const;       // "--micro-batches"
  std::string list_flag() const;  // "--micro-batches-list": the tune's list of values to try
  std::string default_for(const std::string& backend) const;
  // What a tune tries when no list is given.
  std::vector<std::string> tune_default() const;
  // "1..64", "nchw, nhwc", "off, on", or values_text.
  std::string describe_values() const;
  // The canonical text of `text`, or nullopt when it is not a value of this knob.
  std::optional<std::string> canonical(std::string_view text) const;
  // canonical(), throwing Error(usage) "<where>: <why>" naming the value and the range.
  std::string checked(std::string_view text, const std::string& where) const;
};

// The specs of every knob this program knows: the engine's, then those the linked
// algorithms declare (sorted by key). Filled during static initialisation.
class KnobCatalog {
 public:
  static KnobCatalog& instance();
  // Throws Error(runtime) for a key declared twice.
  void add(KnobSpec spec, bool engine);
  const std::vector<KnobSpec>& specs() const { return specs_; }
  const KnobSpec* find(std::string_view key) const;
  // Throws Error(usage) listing the known keys.
  const KnobSpec& at(std::string_view key) const;
  std::string keys_text() const;  // "layout, threads, ..."

 private:
  std::vector<KnobSpec> specs_;
  size_t engine_count_ = 0;
};

// A run's knob settings: key -> canonical text. A key that is not set takes its
// default: the spec's, or the backend's where a session fills them in
// (with_backend_defaults). Keys this program does not know (a config written by a
// newer tunescope, read by a viewer) are kept as they came, so configs that differ
// only in them stay apart.
class KnobValues {
 public:
  // The text set for `key`, or the spec's default; "" for an unknown key not set.
  std::string text(std::string_view key) const;
  bool is_set(std::string_view key) const { return values_.count(std::string(key)) > 0; }
  // Stores `value` as given: callers pass canonical text (KnobSpec::checked).
  void set_text(const std::string& key, std::string value);
  void erase(const std::string& key) { values_.erase(key); }
  const std::map<std::string, std::string>& explicit_values() const { return values_; }
  // Whether the value differs from the spec's default (true for unknown keys).
  bool differs_from_default(std::string_view key) const;
  // Equal when every knob has the same effective value (set or default) and the
  // unknown keys agree.
  bool operator==(const KnobValues& other) const;

 private:
  std::map<std::string, std::string> values_;
};

// `values` with every knob that is not set given `backend`'s default, so the run on
// that backend reads what it runs.
KnobValues with_backend_defaults(KnobValues values, const std::string& backend);

// How a typed handle reads and writes its values.
template <typename T>
struct KnobCodec {
  std::function<T(std::string_view canonical)> decode;
  std::function<std::string(const T& value)> encode;
};

KnobCodec<int> integer_codec();
KnobCodec<bool> boolean_codec();
KnobCodec<std::string> text_codec();

// A declared knob with its type: the object's construction adds its spec to the
// catalog. Declared once, as a namespace-scope object of the code that reads it; so, as
// for any such object, no initialiser of another file's namespace-scope object may use
// it (their order is unspecified): read knobs in functions.
template <typename T>
class Knob {
 public:
  Knob(KnobSpec spec, KnobCodec<T> codec, bool engine = false)
      : key_(spec.key), codec_(std::move(codec)) {
    KnobCatalog::instance().add(std::move(spec), engine);
  }
  const std::string& key() const { return key_; }
  const KnobSpec& spec() const { return KnobCatalog::instance().at(key_); }
  T get(const KnobValues& values) const { return codec_.decode(values.text(key_)); }
  void set(KnobValues& values, const T& value) const {
    values.set_text(key_, codec_.encode(value));
  }
  T decode(std::string_view canonical) const { return codec_.decode(canonical); }
  std::string encode(const T& value) const { return codec_.encode(value); }

 private:
  std::string key_;
  KnobCodec<T> codec_;
};

}  // namespace tunescope
