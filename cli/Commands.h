// The subcommands of the `tunescope` CLI. Each adds its options to the subcommand it
// is given and returns the action to run after parsing; actions throw
// tunescope::Error on failure.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace tunescope::cli {

using Action = std::function<void()>;

// Thrown by an action that has printed its own outcome and must end the process with a
// particular status (e.g. 130 after an interrupted tune printed its best so far).
struct ExitCode {
  int code;
};

Action add_train_command(CLI::App& command);
Action add_profile_command(CLI::App& command);
Action add_list_algorithms_command(CLI::App& command);
Action add_knobs_command(CLI::App& command);
Action add_tune_command(CLI::App& command);
Action add_export_command(CLI::App& command);
Action add_merge_traces_command(CLI::App& command);
Action add_report_command(CLI::App& command);
Action add_analyze_command(CLI::App& command);
Action add_machine_command(CLI::App& command);

}  // namespace tunescope::cli
