// A tune over the ranks of a launcher (`mpirun -np N tunescope tune`, issue 22 item 4):
// the candidates spread over the ranks, each rank measuring its share at once, and
// every finished trial gathered into rank 0's results DB as it arrives, so a rank that
// dies loses none of the trials that finished. Rank 0 then settles the leaders alone
// (a resumed tune of the same space, which reuses every gathered trial): the final
// interleaved rounds must see one machine's timings, not several.
#pragma once

#include <functional>
#include <string>

#include "core/base/Ranks.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {

// Throws Error(usage) on every rank, naming the ranks and their signatures, when a
// rank's machine signature (MachineSignature::local: CPU, threads, libraries) differs
// from rank 0's: their timings would not be comparable in one ranking.
void check_same_machines(Communicator& ranks, const std::string& backend);

// The share of rank r of N: the candidates at positions r, r + N, r + 2N, ... of the
// strategy's list (the baseline, first, on rank 0).
std::vector<Candidate> share_of(std::vector<Candidate> candidates, int rank, int size);

// Every rank measures its share of `options`' candidates (exhaustive's list: the
// options' strategy must be exhaustive); the other ranks send each finished trial to
// rank 0 (its record, not its trace), where it goes into `db` at once (rank 0 must have
// one; the others pass null). `finished` is called on rank 0 for each trial, its own
// and the others', from several threads one at a time. Returns on every rank once every
// share is done, with the number of trials rank 0 gathered (0 elsewhere).
using SharedTrialListener = std::function<void(int rank, const TrialResult& trial)>;
size_t sweep_shares(const TuneOptions& options, Communicator& ranks, ResultsDb* db,
                    const SharedTrialListener& finished);

}  // namespace tunescope::tuner
