// RunConfig <-> `tunescope.config/1` JSON with strict validation: a tuned config that
// silently dropped a misspelt key would run a different setup than the one measured.
#include "core/engine/RunConfig.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"

namespace tunescope {

namespace {

using nlohmann::json;

// Validation helpers bound to one source so every message names the file and the key.
class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void reject(const std::string& key, const std::string& why) const {
    fail(ErrorKind::input, "config ", source_, ": key '", key, "': ", why);
  }

  void only_keys(const json& object, const std::string& where,
                 const std::vector<std::string>& known) const {
    const std::set<std::string> allowed(known.begin(), known.end());
    for (const auto& [key, value] : object.items())
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        reject(where + key, "unknown key (known: " + list + ")");
      }
  }

  const json& required(const json& object, const std::string& where, const char* key) const {
    auto it = object.find(key);
    if (it == object.end()) reject(where + key, "missing");
    return *it;
  }

  std::string string(const json& value, const std::string& key) const {
    if (!value.is_string()) reject(key, cat("expected a string, got ", value.type_name()));
    return value.get<std::string>();
  }

  int64_t positive_integer(const json& value, const std::string& key) const {
    if (!value.is_number_integer())
      reject(key, cat("expected an integer, got ", value.type_name()));
    const auto number = value.get<int64_t>();
    if (number < 1) reject(key, cat("must be >= 1, got ", number));
    return number;
  }

  bool boolean(const json& value, const std::string& key) const {
    if (!value.is_boolean()) reject(key, cat("expected true or false, got ", value.type_name()));
    return value.get<bool>();
  }

  double number(const json& value, const std::string& key) const {
    if (!value.is_number()) reject(key, cat("expected a number, got ", value.type_name()));
    return value.get<double>();
  }

  const json& object(const json& value, const std::string& key) const {
    if (!value.is_object()) reject(key, cat("expected an object, got ", value.type_name()));
    return value;
  }

  // An empty backend: any name (stored_run_config_from_json_text).
  std::string algorithm(const json& value, const std::string& key,
                        const std::string& backend) const {
    std::string name = string(value, key);
    if (backend.empty()) return name;
    const auto known = Registry::instance().conv_algorithms(backend);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      reject(key, cat("unknown convolution algorithm '", name, "' for backend ", backend,
                      " (known: ", list, ")"));
    }
    return name;
  }

 private:
  std::string source_;
};

}  // namespace

Layout RunConfig::layout() const { return knobs::layout.get(knobs); }

int RunConfig::threads() const { return knobs::threads.get(knobs); }

Concurrency RunConfig::concurrency() const { return knobs::concurrency_of(knobs); }

std::string RunConfig::label() const {
  std::string out = cat(to_string(layout()), " conv=", conv.str(), " threads=", threads());
  const KnobCatalog& catalog = KnobCatalog::instance();
  for (const KnobSpec& spec : catalog.specs()) {
    if (spec.key == knobs::layout.key() || spec.key == knobs::threads.key() ||
        !knobs.differs_from_default(spec.key))
      continue;
    const std::string name = spec.label.empty() ? spec.key : spec.label;
    out += spec.type == KnobType::boolean
               ? (knobs.text(spec.key) == "on" ? " " + name : " " + name + "=off")
               : cat(" ", name, "=", knobs.text(spec.key));
  }
  for (const auto& [key, value] : knobs.explicit_values())
    if (!catalog.find(key)) out += cat(" ", key, "=", value);
  return out;
}

namespace {

// Top-level keys that are not knobs.
constexpr std::initializer_list<const char*> kFixedKeys = {"schema", "model", "batch", "conv",
                                                           "measured"};
// Knobs schema 1 requires in every file.
constexpr std::initializer_list<const char*> kRequiredKnobs = {"layout", "threads"};

json knob_json(const KnobSpec& spec, const std::string& text) {
  switch (spec.type) {
    case KnobType::integer: return std::stoll(text);
    case KnobType::boolean: return text == "on";
    case KnobType::choice: return text;
  }
  return text;
}

}  // namespace

std::string to_json_text(const RunConfig& config, KnobsWritten written) {
  json out = {
      {"schema", kRunConfigSchema},
      {"model", config.model},
      {"batch", config.batch},
      {"conv", {{"default", config.conv.default_algorithm}, {"per_layer", config.conv.per_layer}}},
  };
  // Knobs added after schema 1 only when not the default: a results DB finds a
  // candidate's earlier trials by this text, and those stored before the knob existed ran it at its
  // default.
  const KnobCatalog& catalog = KnobCatalog::instance();
  for (const KnobSpec& spec : catalog.specs())
    if (written == KnobsWritten::every_knob || spec.written_when_default ||
        config.knobs.differs_from_default(spec.key))
      out[spec.key] = knob_json(spec, config.knobs.text(spec.key));
  for (const auto& [key, value] : config.knobs.explicit_values())
    if (!catalog.find(key)) out[key] = value;
  if (config.measured) {
    const MeasuredFigures& m = *config.measured;
    out["measured"] = {{"examples_per_second", m.examples_per_second}, {"spread", m.spread},
                       {"speedup_vs_baseline", m.speedup_vs_baseline}, {"strategy", m.strategy},
                       {"strategy_reason", m.strategy_reason},         {"machine", m.machine}};
  }
  return out.dump(2) + "\n";
}

namespace {

json parse_object(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    // Not only parse_error: a number too large for a double is out_of_range (found by
    // fuzz/fuzz_run_config).
    fail(ErrorKind::input, "config ", source, ": not JSON: ", e.what());
  }
  if (!root.is_object())
    fail(ErrorKind::input, "config ", source, ": expected a JSON object, got ", root.type_name());
  return root;
}

// An empty backend: any algorithm name, and keys that are not knobs of this build are
// kept (stored_run_config_from_json_text).
RunConfig run_config_from_json(const json& root, const std::string& source,
                               const std::string& backend);

}  // namespace

RunConfig run_config_from_json_text(const std::string& text, const std::string& source,
                                    const std::string& backend) {
  return run_config_from_json(parse_object(text, source), source, backend);
}

StoredRunConfig stored_run_config_from_json_text(const std::string& text,
                                                 const std::string& source) {
  StoredRunConfig stored;
  stored.config = run_config_from_json(parse_object(text, source), source, "");
  for (const auto& [key, value] : stored.config.knobs.explicit_values())
    if (!KnobCatalog::instance().find(key)) stored.newer_keys[key] = value;
  return stored;
}

std::string StoredRunConfig::label() const { return config.label(); }

std::string StoredRunConfig::key() const {
  RunConfig knobs = config;
  knobs.measured.reset();
  return json::parse(to_json_text(knobs)).dump();
}

namespace {

RunConfig run_config_from_json(const json& root, const std::string& source,
                               const std::string& backend) {
  const Checker check(source);
  const KnobCatalog& catalog = KnobCatalog::instance();
  const bool lenient = backend.empty();
  if (!lenient) {
    std::vector<std::string> known(kFixedKeys.begin(), kFixedKeys.end());
    for (const KnobSpec& spec : catalog.specs()) known.push_back(spec.key);
    check.only_keys(root, "", known);
  }
  const std::string schema = check.string(check.required(root, "", "schema"), "schema");
  if (schema != kRunConfigSchema)
    check.reject("schema", cat("expected '", kRunConfigSchema, "', got '", schema, "'"));

  RunConfig config;
  config.model = check.string(check.required(root, "", "model"), "model");
  config.batch = check.positive_integer(check.required(root, "", "batch"), "batch");
  for (const char* key : kRequiredKnobs) check.required(root, "", key);
  for (const auto& [key, value] : root.items()) {
    if (std::find(kFixedKeys.begin(), kFixedKeys.end(), key) != kFixedKeys.end()) continue;
    const KnobSpec* spec = catalog.find(key);
    if (!spec) {  // lenient: a newer tunescope's key, kept as it came
      config.knobs.set_text(key, value.is_string() ? value.get<std::string>() : value.dump());
      continue;
    }
    std::string text;
    switch (spec->type) {
      case KnobType::integer:
        if (!value.is_number_integer())
          check.reject(key, cat("expected an integer, got ", value.type_name()));
        text = value.dump();
        break;
      case KnobType::boolean: text = check.boolean(value, key) ? "on" : "off"; break;
      case KnobType::choice: text = check.string(value, key); break;
    }
    const auto canonical = spec->canonical(text);
    if (!canonical)
      check.reject(key, spec->type == KnobType::integer
                            ? cat("must be in ", spec->min, "..", spec->max, ", got ", text)
                            : cat("'", text, "' is not a value (", spec->describe_values(), ")"));
    config.knobs.set_text(key, *canonical);
  }
  const Concurrency concurrency = config.concurrency();
  const int64_t parts = static_cast<int64_t>(concurrency.replicas) * concurrency.micro_batches;
  if (config.batch % parts != 0)
    check.reject("replicas", cat("replicas x micro_batches = ", parts,
                                 " does not divide the batch ", config.batch));

  const json& conv = check.object(check.required(root, "", "conv"), "conv");
  check.only_keys(conv, "conv.", {"default", "per_layer"});
  config.conv.default_algorithm =
      check.algorithm(check.required(conv, "conv.", "default"), "conv.default", backend);
  config.conv.per_layer.clear();
  if (auto it = conv.find("per_layer"); it != conv.end()) {
    const json& per_layer = check.object(*it, "conv.per_layer");
    for (const auto& [layer, algorithm] : per_layer.items())
      config.conv.per_layer[layer] = check.algorithm(algorithm, "conv.per_layer." + layer, backend);
  }

  if (auto it = root.find("measured"); it != root.end()) {
    const json& measured = check.object(*it, "measured");
    check.only_keys(measured, "measured.",
                    {"examples_per_second", "spread", "speedup_vs_baseline", "strategy",
                     "strategy_reason", "machine"});
    MeasuredFigures m;
    auto optional_number = [&](const char* key, double& into) {
      if (auto f = measured.find(key); f != measured.end())
        into = check.number(*f, cat("measured.", key));
    };
    auto optional_string = [&](const char* key, std::string& into) {
      if (auto f = measured.find(key); f != measured.end())
        into = check.string(*f, cat("measured.", key));
    };
    optional_number("examples_per_second", m.examples_per_second);
    optional_number("spread", m.spread);
    optional_number("speedup_vs_baseline", m.speedup_vs_baseline);
    optional_string("strategy", m.strategy);
    optional_string("strategy_reason", m.strategy_reason);
    optional_string("machine", m.machine);
    config.measured = m;
  }
  return config;
}

}  // namespace

RunConfig load_run_config(const std::filesystem::path& path, const std::string& backend) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::input, "config ", path.string(), ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return run_config_from_json_text(text.str(), path.string(), backend);
}

void save_run_config(const RunConfig& config, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << to_json_text(config);
  out.close();
  if (!out) fail(ErrorKind::input, "config ", path.string(), ": cannot write");
}

void apply_run_config(const RunConfig& config, SessionOptions& options) {
  options.model = config.model;
  options.batch = config.batch;
  options.conv = config.conv;
  options.knobs = config.knobs;
}

RunConfig run_config_of(const SessionOptions& options) {
  RunConfig config;
  config.model = options.model;
  config.batch = options.batch;
  config.conv = options.conv;
  config.knobs = options.knobs;
  knobs::threads.set(config.knobs, threads_or_hardware(config.threads()));
  return config;
}

int threads_or_hardware(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace tunescope
