// A tune over the ranks of a launcher (`mpirun -np N tunescope tune`, issue 22 item 4):
// the candidates spread over the ranks, each rank measuring its share at once, and
// every finished trial gathered into rank 0's results DB as it arrives, so a rank that
// dies loses none of the trials that finished. Rank 0 then settles the leaders alone
// (a resumed tune of the same space, which reuses every gathered trial): the final
// interleaved rounds must see one machine's timings, not several.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "core/base/Ranks.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {

// Throws Error(usage) on every rank, naming the ranks and their signatures, when a
// rank's machine signature (MachineSignature::local: CPU, threads, libraries) differs
// from rank 0's: their timings would not be comparable in one ranking.
void check_same_machines(Communicator& ranks, const std::string& backend);

// The candidates' positions handed out to the ranks: rank r's first is r (every rank
// starts at once, without asking), then each rank that finishes a candidate takes the
// next position no rank has taken. A rank with quicker candidates takes more of them,
// and the ranks finish within about one candidate of each other. Rank 0 holds it (its
// own sweep and the threads that answer the other ranks take from it at once).
class SharedPositions {
 public:
  explicit SharedPositions(int ranks) : next_(static_cast<size_t>(ranks)) {}
  // The next position not taken; none once they reach `count`.
  std::optional<size_t> take(size_t count) {
    const size_t position = next_.fetch_add(1);
    return position < count ? std::optional(position) : std::nullopt;
  }

 private:
  std::atomic<size_t> next_;
};

// Where a rank's share of the sweep went: its own reference and its trials (TuneCost's
// phases), and on rank 0 how long it then waited for the others' last trials.
struct ShareCost {
  int rank = 0;
  size_t trials = 0;
  PhaseCost reference, sweep;
  double waited_seconds = 0;
};
// "rank 1's share: reference 0.31 s, 3 trials in 4.20 s" (rank 0: ", then waited 0.12 s").
std::string to_string(const ShareCost& cost);

struct SweepOutcome {
  size_t gathered = 0;            // rank 0: the trials of every rank; 0 elsewhere
  std::vector<ShareCost> shares;  // rank 0: every rank's, in rank order; empty elsewhere
};

// Every rank measures its share of `options`' candidates (exhaustive's list: the
// options' strategy must be exhaustive), taken from SharedPositions as it goes (the
// other ranks ask rank 0 for each), racing them against the fastest of every rank's
// trials so far (TuneOptions::shared_leader; rank 0 sends it with each position); the other ranks
// send each finished trial to rank 0 (its record, not its trace), where it goes into `db` at once
// (rank 0 must have one; the others pass null), and at the end what their share cost. `finished` is
// called on rank 0 for each trial, its own and the others', from several threads one at a time.
// Returns on every rank once every share is done.
using SharedTrialListener = std::function<void(int rank, const TrialResult& trial)>;
SweepOutcome sweep_shares(const TuneOptions& options, Communicator& ranks, ResultsDb* db,
                          const SharedTrialListener& finished);

// The final rounds over the ranks. Rank 0 settles the leaders as a tune does; the other
// ranks race the same leaders at the same time, each on its own machine, for their
// share of the minimum rounds (MeasureOptions::rounds_ranks), and rank 0's looks pool
// everyone's paired rounds (pooled_rounds) once they have come (rank 0 races on alone
// until then, and a rank that never sends leaves rank 0 its full minimum alone). Each round is one
// machine's step of every leader, so every paired ratio compares the leaders on one machine; the
// leaders' figures stay rank 0's own. Rank 0: the partners for TuneOptions::rounds_partners.
// Destroyed without having started rounds, it tells the others that there are none.
std::unique_ptr<RoundsPartners> rank_partners(Communicator& ranks);
// Every other rank, after its share: makes its reference at once, waits for rank 0's
// leaders, races them for its share of the rounds and sends them to rank 0. Returns
// when it has, or when rank 0 has no rounds to race.
void race_beside_rank0(const TuneOptions& options, Communicator& ranks);

}  // namespace tunescope::tuner
