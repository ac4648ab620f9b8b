// The request of a trial run as several worker processes, and its run on one rank.
#include "core/tuner/WorkerTrial.h"

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {

namespace {

using nlohmann::json;

json sample_to_json(const NumericsSample& sample) {
  json gradients = json::array();
  for (const auto& g : sample.gradients)
    gradients.push_back({{"parameter", g.parameter}, {"values", g.values}});
  return {{"loss", sample.loss},
          {"gradients", std::move(gradients)},
          {"tensor_prefix", sample.tensor_prefix},
          {"next_batch", sample.next_batch ? sample_to_json(*sample.next_batch) : json(nullptr)}};
}

NumericsSample sample_from_json(const json& j) {
  NumericsSample sample;
  sample.loss = j.at("loss").get<double>();
  for (const auto& g : j.at("gradients"))
    sample.gradients.push_back(
        {g.at("parameter").get<std::string>(), g.at("values").get<std::vector<float>>()});
  sample.tensor_prefix = j.at("tensor_prefix").get<std::string>();
  if (!j.at("next_batch").is_null())
    sample.next_batch =
        std::make_shared<const NumericsSample>(sample_from_json(j.at("next_batch")));
  return sample;
}

json options_to_json(const MeasureOptions& o) {
  json race = nullptr;
  if (o.race_against)
    race = {{"n", o.race_against->n},
            {"estimate", o.race_against->estimate},
            {"low", o.race_against->low},
            {"high", o.race_against->high},
            {"has_interval", o.race_against->has_interval}};
  return {{"warmup", o.warmup},
          {"steps", o.steps},
          {"delta", o.delta},
          {"max_steps", o.max_steps},
          {"max_timing_seconds", o.max_timing_seconds},
          {"race_against", std::move(race)},
          {"loss_tolerance", o.loss_tolerance},
          {"gradient_tolerance", o.gradient_tolerance},
          {"samples_per_parameter", o.samples_per_parameter},
          {"top_kernels", o.top_kernels},
          {"memory_limit_bytes", o.memory_limit_bytes},
          {"time_limit_seconds", o.time_limit_seconds},
          {"check_numerics", o.check_numerics}};
}

MeasureOptions options_from_json(const json& j) {
  MeasureOptions o;
  j.at("warmup").get_to(o.warmup);
  j.at("steps").get_to(o.steps);
  j.at("delta").get_to(o.delta);
  j.at("max_steps").get_to(o.max_steps);
  j.at("max_timing_seconds").get_to(o.max_timing_seconds);
  if (const json& race = j.at("race_against"); !race.is_null()) {
    QuantileEstimate q;
    race.at("n").get_to(q.n);
    race.at("estimate").get_to(q.estimate);
    race.at("low").get_to(q.low);
    race.at("high").get_to(q.high);
    race.at("has_interval").get_to(q.has_interval);
    o.race_against = q;
  }
  j.at("loss_tolerance").get_to(o.loss_tolerance);
  j.at("gradient_tolerance").get_to(o.gradient_tolerance);
  j.at("samples_per_parameter").get_to(o.samples_per_parameter);
  j.at("top_kernels").get_to(o.top_kernels);
  j.at("memory_limit_bytes").get_to(o.memory_limit_bytes);
  j.at("time_limit_seconds").get_to(o.time_limit_seconds);
  j.at("check_numerics").get_to(o.check_numerics);
  return o;
}

// What apply_run_config leaves to the base: data, seed, SGD settings.
json base_to_json(const SessionOptions& b) {
  return {{"backend", b.backend},
          {"init", b.init},
          {"data", b.data},
          {"data_dir", b.data_dir.string()},
          {"conv_source", b.conv_source},
          {"learning_rate", b.sgd.learning_rate},
          {"momentum", b.sgd.momentum},
          {"weight_decay", b.sgd.weight_decay},
          {"seed", b.seed},
          {"prefetch", b.prefetch},
          {"train_limit", b.train_limit},
          {"test_limit", b.test_limit},
          {"fake_channels", b.fake_channels},
          {"fake_train_count", b.fake_train_count},
          {"fake_test_count", b.fake_test_count}};
}

SessionOptions base_from_json(const json& j) {
  SessionOptions b;
  j.at("backend").get_to(b.backend);
  j.at("init").get_to(b.init);
  j.at("data").get_to(b.data);
  b.data_dir = j.at("data_dir").get<std::string>();
  j.at("conv_source").get_to(b.conv_source);
  j.at("learning_rate").get_to(b.sgd.learning_rate);
  j.at("momentum").get_to(b.sgd.momentum);
  j.at("weight_decay").get_to(b.sgd.weight_decay);
  j.at("seed").get_to(b.seed);
  j.at("prefetch").get_to(b.prefetch);
  j.at("train_limit").get_to(b.train_limit);
  j.at("test_limit").get_to(b.test_limit);
  j.at("fake_channels").get_to(b.fake_channels);
  j.at("fake_train_count").get_to(b.fake_train_count);
  j.at("fake_test_count").get_to(b.fake_test_count);
  return b;
}

}  // namespace

std::string worker_trial_request_text(const WorkerTrialRequest& request) {
  return json{{"schema", "tunescope.worker-trial/1"},
              {"base", base_to_json(request.base)},
              {"config", to_json_text(request.config, KnobsWritten::every_knob)},
              {"reference", sample_to_json(request.reference)},
              {"options", options_to_json(request.options)}}
      .dump();
}

WorkerTrialRequest parse_worker_trial_request(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    if (j.at("schema") != "tunescope.worker-trial/1")
      fail(ErrorKind::input, "schema is not tunescope.worker-trial/1");
    WorkerTrialRequest request;
    request.base = base_from_json(j.at("base"));
    request.config = run_config_from_json_text(j.at("config").get<std::string>(),
                                               cat(source, " config"), request.base.backend);
    request.reference = sample_from_json(j.at("reference"));
    request.options = options_from_json(j.at("options"));
    return request;
  } catch (const json::exception& e) {
    fail(ErrorKind::input, source, ": not a worker trial request: ", e.what());
  } catch (const Error& e) {
    fail(ErrorKind::input, source, ": ", e.what());
  }
}

int workers_of(const RunConfig& config) { return knobs::workers.get(config.knobs); }

TrialResult run_worker_trial(const WorkerTrialRequest& request, Communicator& ranks) {
  if (ranks.size() != workers_of(request.config)) {
    TrialResult result;
    result.config = request.config;
    result.status = TrialStatus::failed;
    result.reason = cat("workers=", workers_of(request.config), " but the launcher started ",
                        ranks.size(), " ranks");
    return result;
  }
  SessionOptions base = request.base;
  base.ranks = &ranks;
  MeasureOptions options = request.options;
  options.isolate = false;  // the ranks are separate processes already
  // The launcher stops the ranks at the time limit: a limit of each rank's own, checked
  // between steps, could stop one rank and leave the others waiting in a collective.
  options.time_limit_seconds = 0;
  return measure(base, request.config, request.reference, options);
}

}  // namespace tunescope::tuner
