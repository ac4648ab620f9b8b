// How long a pool thread spins for its next piece of work before it sleeps: long while the
// machine has a CPU for every thread that wants one, short once more threads want to run
// than there are CPUs (ThreadPool.cpp says why a pool spins at all).
//
// A long spin saves the futex wake-up and, on a VM, the interrupt to a halted vCPU between
// the parallel regions of a step. But a thread spinning on a crowded machine burns CPU
// time that another thread there (another process's, or one of ours on another lane) could
// have used, and the scheduler charges it to us, so that the spinner waits longer for its
// CPU when work does come. docs/BENCHMARKS.md has the measurements behind both spins.
#pragma once

#include <optional>
#include <string_view>

namespace tunescope {

inline constexpr int kShortSpinPauses = 512;
inline constexpr int kLongSpinPauses = 8192;

// The number of threads running or ready to run, from a /proc/loadavg text (its fourth
// field, "running/total"); nullopt when the text is not in that form.
std::optional<int> parse_running_threads(std::string_view loadavg);

// Crowding: an exponential average, over samples, of how many more threads were running or
// ready than the machine has CPUs (0 when there were no more). It averages because one
// sample often catches a short-lived thread (the input thread, a timer) of an otherwise
// uncrowded machine.
double next_crowding(double crowding, int running_threads, int cpus);

// The pauses to spin at a crowding average: long below half a thread too many, else short.
int spin_pauses_for(double crowding);

// The pauses to spin now. The whole process shares one crowding average, sampled from
// /proc/loadavg at most every 10 ms by whichever thread asks first; where /proc/loadavg
// cannot be read the spin stays short.
int spin_pauses_now();

}  // namespace tunescope
