// A tune's candidates spread over ranks, the trials gathered into rank 0's results DB.
#include "core/tuner/DistributedTune.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/engine/RunConfig.h"
#include "core/tuner/TrialRecordFields.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {

namespace {

// How often a rank waiting for another's message looks for it.
constexpr auto kPollInterval = std::chrono::milliseconds(1);

// The message a rank sends rank 0 for its next candidate: this text, then the length of
// its list. Rank 0 answers with the position (kNoPosition: none left), then the racing
// leader of every rank's trials so far (trial_message; empty: none yet), which the
// rank races its next candidates against when it is faster than its own.
constexpr std::string_view kTakeNext = "next ";
constexpr uint64_t kNoPosition = UINT64_MAX;
// A rank's last message to rank 0: this text, then what its share cost (cost_message).
constexpr std::string_view kDone = "done ";

// Waits for a message from `from` asleep. MPI's blocking receive busy-polls: rank 0's
// intake threads, which wait through the whole sweep, took a third of the core that
// rank 0 measures its own candidates on, slowing rank 0's share and its timings.
void wait_for_message(Communicator& ranks, int from) {
  while (!ranks.has_message(from)) std::this_thread::sleep_for(kPollInterval);
}

// Text between ranks: its length, then its bytes (0 bytes: the end of a stream).
void send_text(Communicator& ranks, const std::string& text, int to) {
  const uint64_t length = text.size();
  ranks.send(std::as_bytes(std::span(&length, 1)), to);
  if (length > 0) ranks.send(std::as_bytes(std::span(text.data(), text.size())), to);
}

std::string receive_text(Communicator& ranks, int from) {
  uint64_t length = 0;
  wait_for_message(ranks, from);
  ranks.receive(std::as_writable_bytes(std::span(&length, 1)), from);
  std::string text(length, '\0');
  if (length > 0) ranks.receive(std::as_writable_bytes(std::span(text.data(), text.size())), from);
  return text;
}

// Rank 0's text on every rank.
std::string broadcast_text(Communicator& ranks, std::string text) {
  uint64_t length = text.size();
  ranks.broadcast(std::as_writable_bytes(std::span(&length, 1)), 0);
  text.resize(length);
  if (length > 0) ranks.broadcast(std::as_writable_bytes(std::span(text.data(), text.size())), 0);
  return text;
}

std::string trial_message(const TrialResult& trial) {
  nlohmann::json message = record_to_json(record_of(trial));
  message["numerics_checked"] = trial.numerics_checked;
  return message.dump();
}

TrialResult trial_of(const std::string& message, const std::string& backend, int rank) {
  const nlohmann::json parsed = nlohmann::json::parse(message);
  TrialResult trial = result_of(record_from_json(parsed, cat("rank ", rank, "'s trial")), backend);
  trial.reused = false;
  trial.numerics_checked = parsed.at("numerics_checked").get<bool>();
  return trial;
}

std::string cost_message(const ShareCost& cost) {
  return nlohmann::json{{"trials", cost.trials},
                        {"reference", {cost.reference.wall_seconds, cost.reference.cpu_seconds}},
                        {"sweep", {cost.sweep.wall_seconds, cost.sweep.cpu_seconds}}}
      .dump();
}

ShareCost cost_of(const std::string& message, int rank) {
  const nlohmann::json parsed = nlohmann::json::parse(message);
  ShareCost cost;
  cost.rank = rank;
  cost.trials = parsed.at("trials").get<size_t>();
  cost.reference = {parsed.at("reference").at(0).get<double>(),
                    parsed.at("reference").at(1).get<double>()};
  cost.sweep = {parsed.at("sweep").at(0).get<double>(), parsed.at("sweep").at(1).get<double>()};
  return cost;
}

ShareCost cost_of(const TuneReport& report, int rank, size_t trials) {
  ShareCost cost;
  cost.rank = rank;
  cost.trials = trials;
  cost.reference = report.cost.reference;
  cost.sweep = report.cost.sweep;
  return cost;
}

class RankPartners final : public RoundsPartners {
 public:
  explicit RankPartners(Communicator& ranks) : ranks_(ranks) {}
  ~RankPartners() override {
    if (started_) return;
    try {
      for (int r = 1; r < ranks_.size(); ++r) send_text(ranks_, "", r);  // no rounds
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tunescope: rank 0: the other ranks not told to stop: %s\n", e.what());
    }
  }
  void start(const std::vector<RunConfig>& leaders) override {
    started_ = true;
    nlohmann::json list = nlohmann::json::array();
    for (const RunConfig& config : leaders) list.push_back(to_json_text(config));
    for (int r = 1; r < ranks_.size(); ++r) send_text(ranks_, list.dump(), r);
  }
  std::optional<std::vector<std::vector<std::vector<double>>>> rounds_if_sent() override {
    for (int r = 1; r < ranks_.size(); ++r)
      if (!ranks_.has_message(r)) return std::nullopt;
    std::vector<std::vector<std::vector<double>>> all;
    for (int r = 1; r < ranks_.size(); ++r) {
      const std::string message = receive_text(ranks_, r);
      try {
        all.push_back(nlohmann::json::parse(message).get<std::vector<std::vector<double>>>());
      } catch (const std::exception& e) {
        fail(ErrorKind::runtime, "rank ", r, "'s rounds of the leaders not read: ", e.what());
      }
    }
    return all;
  }

 private:
  Communicator& ranks_;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<RoundsPartners> rank_partners(Communicator& ranks) {
  return std::make_unique<RankPartners>(ranks);
}

void race_beside_rank0(const TuneOptions& options, Communicator& ranks) {
  // The reference now, while rank 0 takes in the last trials and makes its own.
  std::unique_ptr<TrialRunner> runner;
  std::string failure;
  try {
    runner = reference_runner(options);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const std::string message = receive_text(ranks, 0);
  if (message.empty()) return;
  std::vector<RunConfig> leaders;
  for (const auto& text : nlohmann::json::parse(message))
    leaders.push_back(run_config_from_json_text(text.get<std::string>(), "rank 0's leaders",
                                                options.base.backend));
  // Each member's rounds (none when this rank could not time them all).
  std::vector<std::vector<double>> mine(leaders.size());
  if (runner) {
    try {
      // Its share of the minimum, then no more: the first look ends them.
      const std::vector<TrialResult> results = runner->measure_interleaved(
          leaders, [](const std::vector<std::vector<double>>&) { return true; });
      // Every leader's rounds or none: a leader missing here would misalign the pooled
      // pairs (pooled_rounds); rank 0 then races alone.
      const bool all_timed = results.size() == leaders.size() &&
                             std::all_of(results.begin(), results.end(), [&](const TrialResult& t) {
                               return t.status == TrialStatus::ok &&
                                      t.step_seconds.size() == results.front().step_seconds.size();
                             });
      if (all_timed)
        for (size_t k = 0; k < results.size(); ++k) mine[k] = results[k].step_seconds;
      else
        failure = "a leader could not be timed here";
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (!failure.empty())
    std::fprintf(stderr, "tunescope: rank %d: the leaders' rounds not raced here: %s\n",
                 ranks.rank(), failure.c_str());
  send_text(ranks, nlohmann::json(mine).dump(), 0);
}

std::string to_string(const ShareCost& cost) {
  char line[160];
  std::snprintf(line, sizeof line, "rank %d's share: reference %.2f s, %zu trials in %.2f s",
                cost.rank, cost.reference.wall_seconds, cost.trials, cost.sweep.wall_seconds);
  std::string text = line;
  if (cost.rank == 0) {
    std::snprintf(line, sizeof line, ", then waited %.2f s", cost.waited_seconds);
    text += line;
  }
  return text;
}

void check_same_machines(Communicator& ranks, const std::string& backend) {
  const std::string mine = MachineSignature::local(backend).str();
  std::string verdict;
  if (ranks.rank() == 0) {
    for (int r = 1; r < ranks.size(); ++r) {
      const std::string theirs = receive_text(ranks, r);
      if (theirs != mine)
        verdict += cat(verdict.empty() ? "" : "; ", "rank ", r, " runs on '", theirs, "'");
    }
    if (!verdict.empty())
      verdict = cat("the ranks' machines differ from rank 0's ('", mine, "'): ", verdict,
                    ". A distributed tune ranks the timings of identical machines only: run it "
                    "on machines of one kind (or tune each kind apart)");
  } else {
    send_text(ranks, mine, 0);
  }
  verdict = broadcast_text(ranks, verdict);
  if (!verdict.empty()) fail(ErrorKind::usage, verdict);
}

SweepOutcome sweep_shares(const TuneOptions& options, Communicator& ranks, ResultsDb* db,
                          const SharedTrialListener& finished) {
  if (options.strategy != Strategy::exhaustive)
    fail(ErrorKind::usage, "strategy: a tune over ranks spreads exhaustive's candidates; got ",
         to_string(options.strategy));
  const int rank = ranks.rank(), size = ranks.size();
  if (rank == 0 && !db)
    fail(ErrorKind::usage, "db: a tune over ", size,
         " ranks gathers its trials into rank 0's results DB: give one");
  // One stream per sending rank, each on its own communicator (one thread each on rank
  // 0); duplicate() is collective, so every rank makes all of them, in order.
  std::vector<std::unique_ptr<Communicator>> streams;
  for (int r = 1; r < size; ++r) streams.push_back(ranks.duplicate());

  TuneOptions share = options;
  share.sweep_only = true;
  if (rank != 0) {
    share.resume = false;  // only rank 0 has the DB
    Communicator& to_rank0 = *streams[static_cast<size_t>(rank - 1)];
    bool first = true;
    std::optional<TrialResult> leader;  // of every rank's trials, as rank 0 last said
    share.next_candidate = [&](size_t count) -> std::optional<size_t> {
      if (std::exchange(first, false))
        return static_cast<size_t>(rank) < count ? std::optional<size_t>(rank) : std::nullopt;
      send_text(to_rank0, cat(kTakeNext, count), 0);
      uint64_t position = kNoPosition;
      wait_for_message(to_rank0, 0);
      to_rank0.receive(std::as_writable_bytes(std::span(&position, 1)), 0);
      if (const std::string message = receive_text(to_rank0, 0); !message.empty())
        leader = trial_of(message, options.base.backend, 0);
      return position < count ? std::optional<size_t>(position) : std::nullopt;
    };
    share.shared_leader = [&] { return leader; };
    size_t sent = 0;
    const TuneReport mine = Tuner(share, nullptr).run([&](const TuneProgress& p) {
      if (!p.last) return;
      send_text(to_rank0, trial_message(*p.last), 0);
      ++sent;
    });
    send_text(to_rank0, cat(kDone, cost_message(cost_of(mine, rank, sent))), 0);
    return {};
  }

  // Rank 0: its own share here, the others' trials taken in by one thread per rank, each
  // with a connection of its own to the DB (which takes several writers), recorded as
  // they come. The problem's row needs the reference's input shape: known once rank 0's
  // reference ran.
  std::promise<ProblemKey> problem_known;
  std::shared_future<ProblemKey> problem = problem_known.get_future().share();
  bool problem_set = false;
  std::mutex report_mutex;
  size_t gathered = 0;
  std::vector<TrialResult> seen;  // every rank's trials so far, without their traces
  auto report = [&](int from, const TrialResult& trial) {
    const std::lock_guard lock(report_mutex);
    ++gathered;
    seen.push_back(trial);
    seen.back().trace.reset();
    if (finished) finished(from, trial);
  };
  const auto leader_now = [&]() -> std::optional<TrialResult> {
    const std::lock_guard lock(report_mutex);
    const std::optional<size_t> i = racing_leader_of(seen);
    return i ? std::optional<TrialResult>(seen[*i]) : std::nullopt;
  };
  share.shared_leader = leader_now;
  SharedPositions positions(size);
  bool first = true;
  share.next_candidate = [&](size_t count) {
    return std::exchange(first, false) ? std::optional<size_t>(0) : positions.take(count);
  };
  std::vector<std::string> errors(static_cast<size_t>(size));
  SweepOutcome outcome;
  outcome.shares.resize(static_cast<size_t>(size));
  std::vector<std::thread> intake;
  for (int r = 1; r < size; ++r)
    intake.emplace_back([&, r] {
      Communicator& from = *streams[static_cast<size_t>(r - 1)];
      std::optional<ResultsDb> mine;
      int64_t problem_id = 0, machine_id = 0;
      for (;;) {
        const std::string message = receive_text(from, r);
        if (message.starts_with(kDone)) {
          try {
            outcome.shares[static_cast<size_t>(r)] = cost_of(message.substr(kDone.size()), r);
          } catch (const std::exception& e) {
            errors[static_cast<size_t>(r)] = cat("rank ", r, "'s share cost not read: ", e.what());
          }
          return;
        }
        if (message.starts_with(kTakeNext)) {
          const std::optional<size_t> taken =
              positions.take(std::stoull(message.substr(kTakeNext.size())));
          const uint64_t position = taken ? *taken : kNoPosition;
          from.send(std::as_bytes(std::span(&position, 1)), r);
          const std::optional<TrialResult> leader = leader_now();
          send_text(from, leader ? trial_message(*leader) : std::string(), r);
          continue;
        }
        try {
          const TrialResult trial = trial_of(message, options.base.backend, r);
          if (!mine) {
            mine.emplace(db->path());
            problem_id = mine->problem_id(problem.get());
            machine_id = mine->machine_id(MachineSignature::local(options.base.backend));
          }
          mine->add_trial(problem_id, machine_id, trial);
          report(r, trial);
        } catch (const std::exception& e) {  // keep taking the stream in: the rank waits on it
          if (errors[static_cast<size_t>(r)].empty())
            errors[static_cast<size_t>(r)] = cat("rank ", r, "'s trial not recorded: ", e.what());
        }
      }
    });
  size_t own = 0;
  try {
    const TuneReport mine = Tuner(share, db).run([&](const TuneProgress& p) {
      if (!problem_set && p.problem) {
        problem_known.set_value(*p.problem);
        problem_set = true;
      }
      if (!p.last) return;
      report(0, *p.last);
      ++own;
    });
    outcome.shares[0] = cost_of(mine, 0, own);
  } catch (const Error& e) {
    // The others' streams would be waited for forever: end every rank now.
    std::fprintf(stderr, "tunescope: rank 0: error: %s\n", e.what());
    ranks.abort(e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input ? 2 : 1);
  }
  if (!problem_set) problem_known.set_value(ProblemKey{});  // no trial of its own ran
  const auto own_share_done = std::chrono::steady_clock::now();
  for (std::thread& t : intake) t.join();
  outcome.shares[0].waited_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - own_share_done).count();
  for (const std::string& e : errors)
    if (!e.empty()) fail(ErrorKind::runtime, e);
  outcome.gathered = gathered;
  return outcome;
}

}  // namespace tunescope::tuner
