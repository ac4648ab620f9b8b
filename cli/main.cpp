// `tunescope`: the headless front end. Parses the command line, runs one subcommand
// and maps failures to one clear line and an exit code: 0 ok, 2 usage or input error,
// 1 runtime failure, 128 + signal for an interrupted command.
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/Commands.h"
#include "cli/FlagNames.h"
#include "cli/WorkerTrials.h"
#include "core/base/Error.h"
#include "core/base/Ranks.h"

int main(int argc, char** argv) {
  using namespace tunescope;
  CLI::App app{"tunescope: profiler and auto-tuner for convolutional-network training"};
  app.require_subcommand(1);
  struct Command {
    const char* name;
    const char* help;
    cli::Action (*add)(CLI::App&);
  };
  const Command commands[] = {
      {"train", "Train a model for some epochs; print throughput and test accuracy",
       cli::add_train_command},
      {"profile", "Time training steps with the tracer on; print the kernel table, write a trace",
       cli::add_profile_command},
      {"tune",
       "Measure layout x threads x conv algorithm candidates; write the fastest correct config",
       cli::add_tune_command},
      {"list-algorithms", "List backends and convolution algorithms",
       cli::add_list_algorithms_command},
      {"knobs",
       "List the knobs a config sets and a tune varies: config key, flags, values, defaults",
       cli::add_knobs_command},
      {"export",
       "Convert a trace (tunescope/PyTorch JSON, nsys SQLite) to chrome, kineto or nsys-sqlite",
       cli::add_export_command},
      {"merge-traces", "Merge the ranks' own traces of an MPI run into one trace on rank 0's clock",
       cli::add_merge_traces_command},
      {"report",
       "Print the kernel table, lane utilisation and concurrency of any supported trace, "
       "or the ranking of each tune in a results DB",
       cli::add_report_command},
      {"analyze",
       "Critical path of each step and what bounds it; predict step times with --what-if",
       cli::add_analyze_command},
      {"machine", "Measure (once, cached with --db) the machine's FMA peak and memory bandwidth",
       cli::add_machine_command},
      {"worker-trial", "", cli::add_worker_trial_command},  // a tune's ranks (cli/WorkerTrials.h)
  };
  std::map<CLI::App*, cli::Action> actions;
  for (const Command& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    actions[sub] = command.add(*sub);
    if (!*command.help) sub->group("");  // hidden: not for users to run
  }

  // Started by mpirun or srun as one of several ranks: MPI starts here (and says so when
  // this build lacks it). Rank 0 prints; the others' standard output is dropped.
  std::unique_ptr<RankWorld> world;
  try {
    world = std::make_unique<RankWorld>(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "tunescope: error: %s\n", e.what());
    return 2;
  }
  Communicator* ranks = world->communicator();
  const bool several_ranks = ranks && ranks->size() > 1;
  if (several_ranks && ranks->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
    std::fprintf(stderr, "tunescope: rank %d: cannot silence standard output\n", ranks->rank());
  // A failure on one rank ends them all: the others would wait in a collective for it.
  auto failed = [&](int code) {
    if (several_ranks) world->abort_others(code);
    return code;
  };
  const std::string rank_prefix = several_ranks ? cat("rank ", ranks->rank(), ": ") : "";

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tunescope: %s\nRun with --help for usage.\n", e.what());
    return 2;  // every rank parses the same command line: all of them stop here
  }

  try {
    for (CLI::App* command : app.get_subcommands()) {
      const std::string name = command->get_name();
      if (several_ranks && name != "train" && name != "profile" && name != "tune" &&
          name != "worker-trial")
        fail(ErrorKind::usage, "tunescope ", name, " runs as one process; over ", ranks->size(),
             " ranks only train, profile and tune run");
      actions.at(command)();
    }
    return 0;
  } catch (const cli::ExitCode& e) {
    return failed(e.code);
  } catch (const Error& e) {
    std::fprintf(stderr, "tunescope: %serror: %s\n", rank_prefix.c_str(),
                 cli::with_flag_names(e.what()).c_str());
    return failed(e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input ? 2 : 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunescope: %serror: %s\n", rank_prefix.c_str(), e.what());
    return failed(1);
  }
}
