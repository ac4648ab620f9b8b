// Trials measured in a forked child process, so that a kernel that crashes (SIGSEGV,
// abort) or hangs past the time limit fails its candidate instead of ending the tune.
//
// fork() keeps only the calling thread, so the child must not need a lock another
// thread of the parent might have held: the tuner forks between candidates, when it
// runs no training session, and the work builds everything it uses (backend, thread
// pool, data loaders) in the child. The child leaves with _exit, so the parent's static
// destructors, stdio buffers and open results DB are never run, flushed or touched
// there. The results come back over a pipe as the JSON of their results-DB records
// (record_of/result_of), traces as Chrome trace files in a private temporary folder.
// The child dies with the parent (PR_SET_PDEATHSIG) and ignores SIGINT/SIGTERM: a
// Ctrl-C reaches the whole process group, and it is the parent that decides to stop
// after the trial in flight.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/TrialTimeLimit.h"

namespace tunescope::tuner {

struct ChildTimeLimit {
  double seconds = 0;  // per trial; 0: none
  int trials = 1;      // trials the work measures: the child may take `trials` limits
};

struct ChildOutcome {
  std::vector<TrialResult> results;  // what the work returned; empty when the child failed
  std::string failure;               // why there are none: a signal, an exit status, the time limit
};

// The work runs in the child and counts its finished steps in `steps`, which the
// parent reads to say how far a killed child got.
using ChildWork = std::function<std::vector<TrialResult>(StepCounter& steps)>;

// Runs `work` in a forked child and returns its results (configs parsed for `backend`),
// or, when the child crashes, exits without a result or passes the time limit (it is
// then killed), why not. Never throws for what the child does; a child that cannot be
// started (no fork, pipe or temporary folder) is a failure too.
ChildOutcome run_in_child(const std::string& backend, ChildTimeLimit limit, const ChildWork& work);

// The way back of a trial measured in other processes (a forked child, the ranks of a
// worker trial): the results as JSON, each trial's results-DB record (TrialRecordFields.h)
// with its step times, and its trace written as a Chrome trace file into a temporary
// folder that decode_trial_results reads and removes. A message {"error": why} decodes
// as a thrown Error(runtime) with that text; so does a malformed one (json's exception).
std::string encode_trial_results(const std::vector<TrialResult>& results);
std::vector<TrialResult> decode_trial_results(const std::string& message,
                                              const std::string& backend);

// "SIGSEGV (Segmentation fault)".
std::string signal_description(int signal);

}  // namespace tunescope::tuner
