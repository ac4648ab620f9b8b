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

  void only_keys(const json& object, const std::string& where, std::initializer_list<const char*> known) const {
    const std::set<std::string> allowed(known.begin(), known.end());
    for (const auto& [key, value] : object.items())
      if (!allowed.count(key)) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
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
    if (!value.is_number_integer()) reject(key, cat("expected an integer, got ", value.type_name()));
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
  std::string algorithm(const json& value, const std::string& key, const std::string& backend) const {
    std::string name = string(value, key);
    if (backend.empty()) return name;
    const auto known = Registry::instance().conv_algorithms(backend);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      reject(key, cat("unknown convolution algorithm '", name, "' for backend ", backend, " (known: ", list, ")"));
    }
    return name;
  }

 private:
  std::string source_;
};

}  // namespace

std::string RunConfig::label() const {
  return cat(to_string(layout), " conv=", conv.str(), " threads=", threads, concurrency.label(),
             fft_workspace == FftWorkspace::reuse ? "" : cat(" fft=", to_string(fft_workspace)),
             fft_tile == FftTileChoice::automatic() ? "" : cat(" tile=", fft_tile.to_string()));
}

std::string to_json_text(const RunConfig& config) {
  json out = {
      {"schema", kRunConfigSchema},
      {"model", config.model},
      {"batch", config.batch},
      {"layout", to_string(config.layout)},
      {"conv", {{"default", config.conv.default_algorithm}, {"per_layer", config.conv.per_layer}}},
      {"threads", config.threads},
      {"streams", config.concurrency.streams},
      {"replicas", config.concurrency.replicas},
      {"micro_batches", config.concurrency.micro_batches},
      {"async_update", config.concurrency.async_update},
      {"threads_per_lane", config.concurrency.threads_per_lane},
      {"fft_workspace", to_string(config.fft_workspace)},
  };
  // Only when not the default: a results DB finds a candidate's earlier trials by this
  // text, and those stored before these knobs existed updated on the device, tiled `auto`.
  if (config.concurrency.update_on != UpdateOn::device) out["update_on"] = to_string(config.concurrency.update_on);
  if (config.fft_tile != FftTileChoice::automatic()) out["fft_tile"] = config.fft_tile.to_string();
  if (config.measured) {
    const MeasuredFigures& m = *config.measured;
    out["measured"] = {{"examples_per_second", m.examples_per_second},
                       {"spread", m.spread},
                       {"speedup_vs_baseline", m.speedup_vs_baseline},
                       {"strategy", m.strategy},
                       {"strategy_reason", m.strategy_reason},
                       {"machine", m.machine}};
  }
  return out.dump(2) + "\n";
}

namespace {

constexpr std::initializer_list<const char*> kConfigKeys = {
    "schema", "model", "batch", "layout", "conv", "threads", "streams", "replicas", "micro_batches", "async_update",
    "threads_per_lane", "update_on", "fft_workspace", "fft_tile", "measured"};

json parse_object(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    // Not only parse_error: a number too large for a double is out_of_range (found by
    // fuzz/fuzz_run_config).
    fail(ErrorKind::input, "config ", source, ": not JSON: ", e.what());
  }
  if (!root.is_object()) fail(ErrorKind::input, "config ", source, ": expected a JSON object, got ", root.type_name());
  return root;
}

RunConfig run_config_from_json(const json& root, const std::string& source, const std::string& backend);

}  // namespace

RunConfig run_config_from_json_text(const std::string& text, const std::string& source, const std::string& backend) {
  return run_config_from_json(parse_object(text, source), source, backend);
}

StoredRunConfig stored_run_config_from_json_text(const std::string& text, const std::string& source) {
  json root = parse_object(text, source);
  StoredRunConfig stored;
  const std::set<std::string> known(kConfigKeys.begin(), kConfigKeys.end());
  for (auto it = root.begin(); it != root.end();) {
    if (known.count(it.key())) {
      ++it;
      continue;
    }
    stored.newer_keys[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    it = root.erase(it);
  }
  stored.config = run_config_from_json(root, source, "");
  return stored;
}

std::string StoredRunConfig::label() const {
  std::string out = config.label();
  for (const auto& [key, value] : newer_keys) out += cat(" ", key, "=", value);
  return out;
}

std::string StoredRunConfig::key() const {
  RunConfig knobs = config;
  knobs.measured.reset();
  json out = json::parse(to_json_text(knobs));
  for (const auto& [key, value] : newer_keys) out[key] = value;
  return out.dump();
}

namespace {

RunConfig run_config_from_json(const json& root, const std::string& source, const std::string& backend) {
  const Checker check(source);
  check.only_keys(root, "", kConfigKeys);
  const std::string schema = check.string(check.required(root, "", "schema"), "schema");
  if (schema != kRunConfigSchema) check.reject("schema", cat("expected '", kRunConfigSchema, "', got '", schema, "'"));

  RunConfig config;
  config.model = check.string(check.required(root, "", "model"), "model");
  config.batch = check.positive_integer(check.required(root, "", "batch"), "batch");
  const std::string layout = check.string(check.required(root, "", "layout"), "layout");
  if (layout == "nchw") config.layout = Layout::NCHW;
  else if (layout == "nhwc") config.layout = Layout::NHWC;
  else check.reject("layout", "unknown layout '" + layout + "' (known: nchw, nhwc)");
  const int64_t threads = check.positive_integer(check.required(root, "", "threads"), "threads");
  if (threads > 4096) check.reject("threads", cat("must be <= 4096, got ", threads));
  config.threads = static_cast<int>(threads);
  // Optional: a config from before the concurrency knobs runs single-lane.
  auto optional_count = [&](const char* key, int& into, int64_t minimum) {
    auto it = root.find(key);
    if (it == root.end()) return;
    if (!it->is_number_integer()) check.reject(key, cat("expected an integer, got ", it->type_name()));
    const auto value = it->get<int64_t>();
    if (value < minimum || value > 4096) check.reject(key, cat("must be in ", minimum, "..4096, got ", value));
    into = static_cast<int>(value);
  };
  optional_count("streams", config.concurrency.streams, 1);
  optional_count("replicas", config.concurrency.replicas, 1);
  optional_count("micro_batches", config.concurrency.micro_batches, 1);
  optional_count("threads_per_lane", config.concurrency.threads_per_lane, 0);
  if (auto it = root.find("async_update"); it != root.end()) config.concurrency.async_update = check.boolean(*it, "async_update");
  if (auto it = root.find("update_on"); it != root.end()) {
    const std::string where = check.string(*it, "update_on");
    if (auto parsed = parse_update_on(where)) config.concurrency.update_on = *parsed;
    else check.reject("update_on", cat("unknown place '", where, "' (known: ", kUpdateOnValues, ")"));
  }
  if (auto it = root.find("fft_workspace"); it != root.end()) {
    const std::string policy = check.string(*it, "fft_workspace");
    if (auto parsed = parse_fft_workspace(policy)) config.fft_workspace = *parsed;
    else check.reject("fft_workspace", cat("unknown policy '", policy, "' (known: ", kFftWorkspaceValues, ")"));
  }
  if (auto it = root.find("fft_tile"); it != root.end()) {
    // Always a string, so "auto", "off" and "16" are one type in the file.
    if (!it->is_string())
      check.reject("fft_tile", cat("expected a string (", kFftTileValues, ", written \"16\"), got ", it->type_name()));
    const std::string tile = it->get<std::string>();
    if (auto parsed = parse_fft_tile_choice(tile)) config.fft_tile = *parsed;
    else check.reject("fft_tile", cat("'", tile, "' is not a tiling choice (", kFftTileValues, ")"));
  }
  const int64_t parts = static_cast<int64_t>(config.concurrency.replicas) * config.concurrency.micro_batches;
  if (config.batch % parts != 0)
    check.reject("replicas", cat("replicas x micro_batches = ", parts, " does not divide the batch ", config.batch));

  const json& conv = check.object(check.required(root, "", "conv"), "conv");
  check.only_keys(conv, "conv.", {"default", "per_layer"});
  config.conv.default_algorithm = check.algorithm(check.required(conv, "conv.", "default"), "conv.default", backend);
  config.conv.per_layer.clear();
  if (auto it = conv.find("per_layer"); it != conv.end()) {
    const json& per_layer = check.object(*it, "conv.per_layer");
    for (const auto& [layer, algorithm] : per_layer.items())
      config.conv.per_layer[layer] = check.algorithm(algorithm, "conv.per_layer." + layer, backend);
  }

  if (auto it = root.find("measured"); it != root.end()) {
    const json& measured = check.object(*it, "measured");
    check.only_keys(measured, "measured.", {"examples_per_second", "spread", "speedup_vs_baseline", "strategy", "strategy_reason",
                                                      "machine"});
    MeasuredFigures m;
    auto optional_number = [&](const char* key, double& into) {
      if (auto f = measured.find(key); f != measured.end()) into = check.number(*f, cat("measured.", key));
    };
    auto optional_string = [&](const char* key, std::string& into) {
      if (auto f = measured.find(key); f != measured.end()) into = check.string(*f, cat("measured.", key));
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
  options.layout = config.layout;
  options.conv = config.conv;
  options.threads = config.threads;
  options.concurrency = config.concurrency;
  options.fft_workspace = config.fft_workspace;
  options.fft_tile = config.fft_tile;
}

RunConfig run_config_of(const SessionOptions& options) {
  RunConfig config;
  config.model = options.model;
  config.batch = options.batch;
  config.layout = options.layout;
  config.conv = options.conv;
  config.threads = options.threads > 0 ? options.threads
                                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  config.concurrency = options.concurrency;
  config.fft_workspace = options.fft_workspace;
  config.fft_tile = options.fft_tile;
  return config;
}

}  // namespace tunescope
