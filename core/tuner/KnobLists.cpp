#include "core/tuner/KnobLists.h"

#include <algorithm>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

std::string list_key(const KnobSpec& spec) { return spec.key + "_list"; }

void KnobLists::set_text(const KnobSpec& spec, std::vector<std::string> canonical_values) {
  if (canonical_values.empty()) fail(ErrorKind::usage, list_key(spec), ": the list is empty");
  lists_[spec.key] = std::move(canonical_values);
}

std::vector<std::string> KnobLists::values(const KnobSpec& spec) const {
  if (auto it = lists_.find(spec.key); it != lists_.end()) return it->second;
  return spec.tune_default();
}

void KnobLists::check() const {
  for (const KnobSpec& spec : KnobCatalog::instance().specs())
    for (const std::string& value : values(spec)) spec.checked(value, list_key(spec));
  for (int t : get(knobs::threads))
    if (t < 1)
      fail(ErrorKind::usage, list_key(knobs::threads.spec()), ": thread counts must be >= 1, got ",
           t);
}

bool KnobLists::contains(const KnobSpec& spec, const std::string& canonical_value) const {
  const std::vector<std::string> list = values(spec);
  return std::find(list.begin(), list.end(), canonical_value) != list.end();
}

}  // namespace tunescope::tuner
