// Candidates with workers > 1 (core/tuner/WorkerTrial.h), from the CLI's side: the
// launcher a tune hands the tuner, which runs `mpirun -np N tunescope worker-trial` on a
// request file and reads the result back, and that hidden subcommand, which each rank
// runs. The launcher is the MPI found at build time (`mpirun --bind-to none
// --oversubscribe`), or the words of $TUNESCOPE_MPIRUN (say `srun` or `mpirun --hostfile
// H`), followed by `-np N`.
#pragma once

#include <string>
#include <vector>

#include "cli/Commands.h"
#include "core/tuner/Measurement.h"

namespace tunescope::cli {

// Throws Error(usage) naming `flag` when `workers` holds a value above 1 that this
// process cannot launch: a build without MPI, or a tune that is itself one of a
// launcher's ranks.
void check_workers_launchable(const std::vector<std::string>& workers, const std::string& flag);

tuner::WorkerLauncher make_worker_launcher();

Action add_worker_trial_command(CLI::App& command);

}  // namespace tunescope::cli
