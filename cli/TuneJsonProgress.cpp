#include "cli/TuneJsonProgress.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "profiler/CoreDistanceProbes.h"

namespace tunescope::cli {

namespace {

using Json = nlohmann::ordered_json;

Json path_or_null(const std::string& path) { return path.empty() ? Json(nullptr) : Json(path); }

// The 95% interval of median_eps, null where there is none (fewer than 6 steps, not ok).
Json interval_end(const tuner::TrialResult& t, double value) {
  if (t.status != tuner::TrialStatus::ok || !t.figures.has_interval()) return nullptr;
  return value;
}

Json best_of(const tuner::TrialResult* best) {
  if (!best) return nullptr;
  return Json{{"candidate", best->config.label()}, {"median_eps", best->figures.median_eps}};
}

// Each phase's wall and CPU seconds (TuneCost.h).
Json phases_of(const tuner::TuneCost& cost) {
  Json phases = Json::object();
  for (const auto& [name, phase] :
       {std::pair{"reference", cost.reference}, std::pair{"choice", cost.choice},
        std::pair{"finds", cost.finds}, std::pair{"sweep", cost.sweep},
        std::pair{"rounds", cost.rounds}})
    phases[name] = {{"seconds", phase.wall_seconds}, {"cpu_seconds", phase.cpu_seconds}};
  return phases;
}

}  // namespace

TuneJsonProgress::TuneJsonProgress(Run run) : run_(std::move(run)) {
  std::fflush(stdout);
  const int json_fd = dup(STDOUT_FILENO);
  if (json_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    fail(ErrorKind::runtime, "--progress jsonl: cannot redirect stdout: ", std::strerror(errno));
  out_ = fdopen(json_fd, "w");
  if (!out_)
    fail(ErrorKind::runtime, "--progress jsonl: cannot open stdout: ", std::strerror(errno));
}

TuneJsonProgress::~TuneJsonProgress() { std::fclose(out_); }

double TuneJsonProgress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void TuneJsonProgress::emit(const std::string& line) {
  std::fputs(line.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void TuneJsonProgress::chosen(const tuner::StrategyChoice& choice) {
  run_.strategy = tuner::to_string(choice.run);
  strategy_reason_ = choice.reason;
}

void TuneJsonProgress::update(const tuner::TuneProgress& p) {
  if (!started_) {
    started_ = true;
    emit(Json{{"event", "start"},
              {"schema", kTuneProgressSchema},
              {"model", run_.model},
              {"batch", run_.batch},
              {"data", run_.data},
              {"strategy", run_.strategy},
              {"strategy_reason", strategy_reason_},
              {"total", p.total},
              {"db", path_or_null(run_.db_path)}}
             .dump());
  }
  if (p.rounds) {
    // The first round of each stage, then one line a half second at most: lenet5's
    // rounds run dozens a second.
    const tuner::RoundsProgress& r = *p.rounds;
    const double seconds = elapsed();
    if (r.round > 1 && seconds - last_round_at_ < kRoundEventSeconds) return;
    last_round_at_ = seconds;
    emit(Json{{"event", "round"},
              {"index", p.index},
              {"total", p.total},
              {"round", r.round},
              {"members", r.members},
              {"racing", r.racing},
              {"to_decide", r.to_decide > 0 ? Json(r.to_decide) : Json(nullptr)},
              {"least", r.least},
              {"most", r.most},
              {"elapsed", seconds}}
             .dump());
    return;
  }
  if (!p.last) {
    emit(Json{{"event", "trial_start"},
              {"index", p.index},
              {"total", p.total},
              {"candidate", p.candidate}}
             .dump());
    return;
  }
  const tuner::TrialResult& t = *p.last;
  const bool ok = t.status == tuner::TrialStatus::ok;
  const double seconds = elapsed();
  // The mean pace so far (reference run included) times the candidates left.
  const double eta =
      p.index > 0 ? seconds * static_cast<double>(p.total - p.index) / static_cast<double>(p.index)
                  : 0;
  emit(Json{{"event", "trial"},
            {"index", p.index},
            {"total", p.total},
            {"candidate", p.candidate},
            {"status", tuner::to_string(t.status)},
            {"reason", t.reason},
            {"reused", t.reused},
            {"median_eps", ok ? t.figures.median_eps : 0.0},
            {"spread", ok ? t.figures.spread : 0.0},
            {"seconds", t.seconds},
            {"elapsed", seconds},
            {"eta", eta},
            {"best", best_of(p.best)},
            {"eps_low", interval_end(t, t.figures.eps_low)},
            {"eps_high", interval_end(t, t.figures.eps_high)},
            {"steps", ok ? t.figures.steps : 0},
            {"stop", ok ? tuner::to_string(t.figures.stop) : "none"}}
           .dump());
}

void TuneJsonProgress::done(const tuner::TuneReport& report, const std::string& out_path,
                            const std::map<std::string, std::string>& traces) {
  Json winner = nullptr;
  if (const tuner::TrialResult* best = report.best_trial())
    winner = {{"candidate", best->config.label()},
              {"median_eps", best->figures.median_eps},
              {"spread", best->figures.spread},
              {"eps_low", interval_end(*best, best->figures.eps_low)},
              {"eps_high", interval_end(*best, best->figures.eps_high)}};
  Json foreign_load = nullptr;
  if (const auto& load = report.foreign_load)
    foreign_load = {{"cores", load->cores},
                    {"other_cores", load->other_cores},
                    {"free_cores", load->free_cores()},
                    {"charged", load->shared()}};
  Json core_distance = nullptr;
  if (const auto& watch = report.core_distance)
    core_distance = profiler::core_distance_to_json(*watch);
  emit(Json{{"event", "done"},
            {"interrupted", report.interrupted},
            {"trials", report.trials.size()},
            {"winner", winner},
            {"decision", report.decision},
            {"out", path_or_null(out_path)},
            {"traces", Json(traces)},
            {"db", path_or_null(run_.db_path)},
            {"seconds", report.seconds},
            {"measurement_seconds", report.cost.measurement().wall_seconds},
            {"measurement_cpu_seconds", report.cost.measurement().cpu_seconds},
            {"phases", phases_of(report.cost)},
            {"foreign_load", foreign_load},
            {"core_distance", core_distance}}
           .dump());
}

}  // namespace tunescope::cli
