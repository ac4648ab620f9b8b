// A small results DB for the Candidates tests, written through core/tuner's ResultsDb
// (the same code `tunescope tune --db` uses), with known trials.
#pragma once

#include <QString>
#include <QTemporaryDir>
#include <string>
#include <vector>

#include "core/engine/RunKnobs.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::gui::test_support {

inline RunConfig config(Layout layout, const std::string& algorithm, int threads, int streams = 1) {
  RunConfig c;
  c.model = "lenet5";
  c.batch = 32;
  knobs::layout.set(c.knobs, layout);
  c.conv.default_algorithm = algorithm;
  knobs::threads.set(c.knobs, threads);
  knobs::streams.set(c.knobs, streams);
  return c;
}

inline tuner::TrialResult trial(RunConfig c, tuner::TrialStatus status, double eps,
                                double spread = 0, std::string reason = {}) {
  tuner::TrialResult t;
  t.config = std::move(c);
  t.status = status;
  t.reason = std::move(reason);
  if (status == tuner::TrialStatus::ok) {
    t.figures.steps = 5;
    t.figures.median_eps = eps;
    t.figures.spread = spread;
    t.figures.median_step_ms = 32.0 / eps * 1000;
    t.figures.min_step_ms = t.figures.median_step_ms * 0.95;
  }
  return t;
}

// A results DB `name` in `dir` holding `trials` in this order, all of one tune (lenet5
// batch 32 on a 4-core test CPU); returns its path.
inline QString writeTrials(const QTemporaryDir& dir, const QString& name,
                           const std::vector<tuner::TrialResult>& trials) {
  const QString path = dir.filePath(name);
  tuner::ResultsDb db(path.toStdString());
  const int64_t machine = db.machine_id({"test CPU", 4, "cpu", "test backend"});
  const int64_t problem = db.problem_id({"lenet5", "1x28x28", 32});
  for (const tuner::TrialResult& t : trials) db.add_trial(problem, machine, t);
  return path;
}

// Trials in measurement order, as a tune records them: the baseline first, the top two
// re-measured at the end. Ranked: nhwc gemm 2t (1450, best; re-measured), nchw direct
// 1t (1000, baseline; re-measured), nhwc direct 2t streams=2 (800), then invalid,
// failed, skipped.
inline QString writeResultsDb(const QTemporaryDir& dir,
                              const QString& name = QStringLiteral("results.sqlite")) {
  using tuner::TrialStatus;
  const QString path = dir.filePath(name);
  tuner::ResultsDb db(path.toStdString());
  const int64_t machine = db.machine_id({"test CPU", 4, "cpu", "test backend"});
  const int64_t problem = db.problem_id({"lenet5", "1x28x28", 32});
  db.add_trial(problem, machine,
               trial(config(Layout::NCHW, "direct", 1), TrialStatus::ok, 1000, 0.04));
  db.add_trial(problem, machine,
               trial(config(Layout::NHWC, "gemm", 2), TrialStatus::ok, 1500, 0.10));
  db.add_trial(problem, machine,
               trial(config(Layout::NCHW, "fft", 2), TrialStatus::invalid, 0, 0,
                     "loss differs from the reference"));
  db.add_trial(problem, machine,
               trial(config(Layout::NHWC, "direct", 2, 2), TrialStatus::ok, 800, 0.20));
  db.add_trial(
      problem, machine,
      trial(config(Layout::NCHW, "winograd", 1), TrialStatus::failed, 0, 0, "out of memory"));
  db.add_trial(
      problem, machine,
      trial(config(Layout::NHWC, "fft", 1), TrialStatus::skipped, 0, 0, "budget exhausted"));
  db.add_trial(problem, machine,
               trial(config(Layout::NHWC, "gemm", 2), TrialStatus::ok, 1450, 0.06));
  db.add_trial(problem, machine,
               trial(config(Layout::NCHW, "direct", 1), TrialStatus::ok, 990, 0.05));
  return path;
}

}  // namespace tunescope::gui::test_support
