// Trials of a config with workers > 1 (knobs::workers): the candidate runs as that many
// processes, MPI ranks started by a launcher (`mpirun -np N`), each with its share of the
// batch, and rank 0's step times are the trial's (every step ends in the ranks' all-reduce,
// so rank 0 waits for the slowest). Only a front end can start the processes (it knows the
// program and how to call it), so MeasureOptions::launch_workers comes from it; here is
// what travels between the tuner and the ranks: the request (the session's data, seed
// and SGD settings, the config, the reference it must reproduce, the measure options) and
// what a rank does with it.
#pragma once

#include <string>

#include "core/base/Ranks.h"
#include "core/tuner/Measurement.h"

namespace tunescope::tuner {

struct WorkerTrialRequest {
  SessionOptions base;  // without ranks; model, batch, conv and knobs come from `config`
  RunConfig config;
  NumericsSample reference;
  MeasureOptions options;  // isolate and launch_workers are not sent: the ranks are separate
};

// The request as JSON text, and back (configs checked for `backend`). Throws Error(input)
// naming `source` for a malformed request.
std::string worker_trial_request_text(const WorkerTrialRequest& request);
WorkerTrialRequest parse_worker_trial_request(const std::string& text, const std::string& source);

// The worker count of `config` (1 unless its workers knob says more).
int workers_of(const RunConfig& config);

// Runs the request's trial on this rank of `ranks` (whose size must be the config's
// workers): built, checked against the reference, warmed up and timed like any trial
// (TrialRunner.h), its share of each batch on this rank. Never throws for what the
// candidate does; a world of the wrong size fails the trial with the reason.
TrialResult run_worker_trial(const WorkerTrialRequest& request, Communicator& ranks);

}  // namespace tunescope::tuner
