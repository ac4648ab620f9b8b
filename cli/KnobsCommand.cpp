// `tunescope knobs [--json]`: every knob of the catalog (core/base/Knob.h) with its
// config key, flags, values, defaults and, for a knob that algorithms declare, which
// registered algorithms read it. The JSON form (schema tunescope.knobs/1) is what the
// GUI's Run tab builds its form from, since the GUI links no kernels.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/Commands.h"
#include "core/base/ConvProblem.h"
#include "core/base/Error.h"
#include "core/base/Knob.h"
#include "core/base/Registry.h"

namespace tunescope::cli {

namespace {

const char* type_name(KnobType type) {
  switch (type) {
    case KnobType::integer: return "integer";
    case KnobType::boolean: return "boolean";
    case KnobType::choice: return "choice";
  }
  return "?";
}

// "backend:algorithm" of every registered algorithm that says `key` applies to a 3x3
// stride-1 problem, the case every algorithm knob so far applies to.
std::vector<std::string> read_by(const std::string& key) {
  const Registry& registry = Registry::instance();
  const ConvProblem sample{{8, 16, 16, 16}, 16, 3, 3, 1, 1, 1, 1, Layout::NCHW};
  std::vector<std::string> out;
  for (const std::string& backend : registry.backends())
    for (const std::string& algorithm : registry.conv_algorithms(backend)) {
      try {
        if (registry.make_conv_algorithm(backend, algorithm)->knob_applies(key, sample))
          out.push_back(std::string(backend).append(":").append(algorithm));
      } catch (const std::exception&) {
        // An algorithm that cannot even be made here (a missing device) reads nothing here.
      }
    }
  return out;
}

nlohmann::json knob_json(const KnobSpec& spec) {
  nlohmann::json out = {{"key", spec.key},
                        {"flag", spec.flag()},
                        {"list_flag", spec.list_flag()},
                        {"type", type_name(spec.type)},
                        {"default", spec.default_value},
                        {"backend_defaults", spec.backend_defaults},
                        {"tune_default", spec.tune_default()},
                        {"values", spec.describe_values()},
                        {"scope", spec.scope == KnobScope::run ? "run" : "conv_algorithm"},
                        {"help", spec.help}};
  if (spec.applies_to) out["applies_to"] = spec.applies_to_text;
  if (spec.type == KnobType::integer) out.update({{"min", spec.min}, {"max", spec.max}});
  if (!spec.choices.empty()) out["choices"] = spec.choices;
  if (spec.scope == KnobScope::conv_algorithm) out["read_by"] = read_by(spec.key);
  return out;
}

}  // namespace

Action add_knobs_command(CLI::App& command) {
  auto json = std::make_shared<bool>(false);
  command.add_flag("--json", *json, "Print the catalog as JSON (schema tunescope.knobs/1)");
  return [json] {
    const auto& specs = KnobCatalog::instance().specs();
    if (*json) {
      nlohmann::json out = {{"schema", "tunescope.knobs/1"}, {"knobs", nlohmann::json::array()}};
      for (const KnobSpec& spec : specs) out["knobs"].push_back(knob_json(spec));
      std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    std::printf("%-18s %-22s %-10s %-24s %s\n", "config key", "flag (tune: FLAG-list)", "default",
                "values", "read by");
    for (const KnobSpec& spec : specs) {
      std::string readers = spec.applies_to ? spec.applies_to_text : "every run";
      if (spec.scope == KnobScope::conv_algorithm) {
        readers.clear();
        for (const std::string& r : read_by(spec.key)) readers += (readers.empty() ? "" : ", ") + r;
      }
      std::printf("%-18s %-22s %-10s %-24s %s\n", spec.key.c_str(), spec.flag().c_str(),
                  spec.default_value.c_str(), spec.describe_values().c_str(), readers.c_str());
    }
  };
}

}  // namespace tunescope::cli
