// The values a tune tries of each knob (`--streams-list 1,2`, ...): key -> canonical
// values, in the order given. A knob without a list is tried at its tune default
// (KnobSpec::tune_default) only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/base/Knob.h"

namespace tunescope::tuner {

// "micro_batches_list": how core messages name a knob's tune list, as they name a knob
// by its key (a front end adds its own flag: cli/FlagNames.h).
std::string list_key(const KnobSpec& spec);

class KnobLists {
 public:
  // Throws Error(usage) naming the knob's list (list_key) for an empty list.
  void set_text(const KnobSpec& spec, std::vector<std::string> canonical_values);
  template <typename T>
  void set(const Knob<T>& knob, const std::vector<T>& values) {
    std::vector<std::string> text;
    for (const T& value : values) text.push_back(knob.encode(value));
    set_text(knob.spec(), std::move(text));
  }
  // The list of `spec`'s knob: as set, else {its tune default}.
  std::vector<std::string> values(const KnobSpec& spec) const;
  template <typename T>
  std::vector<T> get(const Knob<T>& knob) const {
    std::vector<T> out;
    for (const std::string& text : values(knob.spec())) out.push_back(knob.decode(text));
    return out;
  }
  bool contains(const KnobSpec& spec, const std::string& canonical_value) const;
  // Throws Error(usage) naming the list (list_key) for a value outside its knob's values, or
  // a thread count below 1 (a tune measures real thread counts).
  void check() const;

 private:
  std::map<std::string, std::vector<std::string>> lists_;
};

}  // namespace tunescope::tuner
