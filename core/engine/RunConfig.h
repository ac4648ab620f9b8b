// The configuration the tuner chooses and `train --config` runs: a `tunescope.config/1`
// JSON file: the model and batch, the conv algorithm per layer, and the value of every
// knob of the catalog (core/base/Knob.h: the engine's layout, threads and concurrency
// knobs, and the knobs the linked algorithms declare, such as fft_tile). Only knobs a
// run really has are in the catalog, so a config never promises what a run cannot do.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/base/Knob.h"
#include "core/base/Layout.h"
#include "core/engine/Concurrency.h"
#include "core/engine/ConvChoice.h"

namespace tunescope {

struct SessionOptions;

inline constexpr const char* kRunConfigSchema = "tunescope.config/1";

// What the tuner measured for the config it wrote (informational; never applied).
struct MeasuredFigures {
  double examples_per_second = 0;  // median over the timed steps
  double spread = 0;               // (p90 - p10) / median of the step times
  double speedup_vs_baseline = 0;  // vs nchw + direct with the same threads
  std::string strategy;            // the strategy the tune ran (never "auto")
  std::string strategy_reason;  // why: requested, or auto's estimates (core/tuner/StrategyChoice.h)
  std::string machine;
  bool operator==(const MeasuredFigures&) const = default;
};

struct RunConfig {
  std::string model = "lenet5";
  int64_t batch = 128;
  ConvChoice conv;
  KnobValues knobs;  // layout, threads, streams, ..., fft_tile: see `tunescope knobs`
  std::optional<MeasuredFigures> measured;

  // The engine's knobs, typed (core/engine/RunKnobs.h).
  Layout layout() const;
  int threads() const;
  Concurrency concurrency() const;

  // "nchw conv=gemm,conv2=direct threads=2 streams=2 async fft_tile=16": the short form
  // used in tables and logs: layout, conv and threads, then every other knob whose
  // value is not its default (KnobSpec::label), then keys of a newer tunescope.
  std::string label() const;
  // Per-layer overrides: the tie-break measure of simplicity.
  size_t override_count() const { return conv.per_layer.size(); }
  bool operator==(const RunConfig&) const = default;
};

// Which knobs a config's JSON holds: those written at their default or set otherwise
// (a config file), or every knob of the catalog (a trace's record of what ran).
enum class KnobsWritten { config_file, every_knob };
std::string to_json_text(const RunConfig& config, KnobsWritten written = KnobsWritten::config_file);
// Throws Error(input) naming `source` (a file name or "<text>") and the offending key
// for malformed JSON, a wrong schema, unknown keys, wrong types, non-positive sizes, an
// algorithm not registered for `backend`, a knob value outside the knob's values
// (KnobSpec: bounds, choices), or a split (replicas x micro_batches) that does not
// divide the batch. layout and threads are required (schema 1); every other knob is
// optional and takes its default (configs written before it existed ran that way).
// Whether a knob value suits each layer (an fft_tile size larger than the kernel) and
// the layer names in conv.per_layer are checked when the model is built (they depend on
// the model).
RunConfig run_config_from_json_text(const std::string& text, const std::string& source,
                                    const std::string& backend = "cpu");
// A config as stored in a results DB or a trace, read by a viewer that has no kernels
// registered (the GUI): parsed and checked as run_config_from_json_text does, except
// that algorithm names are taken as they are, and top-level keys of a newer tunescope
// are kept aside, not rejected, so configs that differ only in them stay apart.
struct StoredRunConfig {
  RunConfig config;
  std::map<std::string, std::string> newer_keys;  // key -> value (a string's text, else its JSON)
  // RunConfig::label() plus " key=value" for each newer key.
  std::string label() const;
  // The config's identity: its canonical JSON (every knob with RunConfig's defaults,
  // the measured figures left out) plus the newer keys. Equal for the same config
  // written by different tunescope versions.
  std::string key() const;
};
// Throws Error(input) naming `source`, as run_config_from_json_text.
StoredRunConfig stored_run_config_from_json_text(const std::string& text,
                                                 const std::string& source);

RunConfig load_run_config(const std::filesystem::path& path, const std::string& backend = "cpu");
// Throws Error(input) naming the file when it cannot be written.
void save_run_config(const RunConfig& config, const std::filesystem::path& path);

// Sets the config's model, batch, conv and knobs on `options`; the rest (data, seed, SGD
// parameters) stays as it was.
void apply_run_config(const RunConfig& config, SessionOptions& options);
// The config a session with these options runs.
RunConfig run_config_of(const SessionOptions& options);
// A threads knob value as one process runs it: 0 is one per hardware thread (at least 1).
int threads_or_hardware(int threads);

}  // namespace tunescope
