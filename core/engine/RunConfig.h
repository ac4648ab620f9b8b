// The configuration the tuner chooses and `train --config` runs: a `tunescope.config/1`
// JSON file. Only knobs the engine really has are here: layout, conv algorithm per
// layer, threads, the concurrency knobs (streams, replicas, micro-batches, async
// update, where the update runs, threads per lane), the FFT workspace policy and the FFT
// tiling, so a config never promises
// what a run cannot do.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/base/FftTileChoice.h"
#include "core/base/Layout.h"
#include "core/engine/Concurrency.h"
#include "core/engine/ConvChoice.h"
#include "core/engine/FftWorkspace.h"

namespace tunescope {

struct SessionOptions;

inline constexpr const char* kRunConfigSchema = "tunescope.config/1";

// What the tuner measured for the config it wrote (informational; never applied).
struct MeasuredFigures {
  double examples_per_second = 0;  // median over the timed steps
  double spread = 0;               // (p90 - p10) / median of the step times
  double speedup_vs_baseline = 0;  // vs nchw + direct with the same threads
  std::string strategy;         // the strategy the tune ran (never "auto")
  std::string strategy_reason;  // why: requested, or auto's estimates (core/tuner/StrategyChoice.h)
  std::string machine;
  bool operator==(const MeasuredFigures&) const = default;
};

struct RunConfig {
  std::string model = "lenet5";
  int64_t batch = 128;
  Layout layout = Layout::NCHW;
  ConvChoice conv;
  int threads = 1;
  Concurrency concurrency;
  FftWorkspace fft_workspace = FftWorkspace::reuse;
  FftTileChoice fft_tile;  // auto: each FFT algorithm's flop model tiles where it pays
  std::optional<MeasuredFigures> measured;

  // "nchw conv=gemm,conv2=direct threads=2 streams=2 async fft=cache tile=16": the short form
  // used in tables and logs (concurrency and FFT knobs only when not the default).
  std::string label() const;
  // Per-layer overrides: the tie-break measure of simplicity.
  size_t override_count() const { return conv.per_layer.size(); }
  bool operator==(const RunConfig&) const = default;
};

std::string to_json_text(const RunConfig& config);
// Throws Error(input) naming `source` (a file name or "<text>") and the offending key
// for malformed JSON, a wrong schema, unknown keys, wrong types, non-positive sizes, an
// unknown layout, an algorithm not registered for `backend`, an fft_workspace other than
// reuse or cache, an fft_tile other than auto, off or a power of two from 4 to 4096 (a
// string), an update_on other than device or host, or a split (replicas x micro_batches)
// that does not divide the batch. The concurrency keys, update_on, fft_workspace and
// fft_tile are optional (configs written before they existed run single-lane, update on
// the device, with `reuse` and `auto`). Whether an fft_tile size exceeds each FFT layer's
// kernel is checked when the model is built (it depends on the model). Layer names in
// conv.per_layer are checked when the model is built (they depend on the model).
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
StoredRunConfig stored_run_config_from_json_text(const std::string& text, const std::string& source);

RunConfig load_run_config(const std::filesystem::path& path, const std::string& backend = "cpu");
// Throws Error(input) naming the file when it cannot be written.
void save_run_config(const RunConfig& config, const std::filesystem::path& path);

// Sets the config's knobs (model, batch, layout, conv, threads, concurrency, fft_workspace, fft_tile) on `options`; the rest
// (data, seed, SGD parameters) stays as it was.
void apply_run_config(const RunConfig& config, SessionOptions& options);
// The config a session with these options runs.
RunConfig run_config_of(const SessionOptions& options);

}  // namespace tunescope
