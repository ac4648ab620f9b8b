// Binding threads to CPUs: the engine's `cpu_binding` knob gives each executor thread a
// CPU of its own, so the OS cannot run two lanes in turn on one core while another sits
// idle. CPU ids are never assumed: they come from the process's allowed set
// (sched_getaffinity), which taskset, cgroups and mpirun's own binding narrow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tunescope {

// off: the OS places the threads; cores: thread k of the executor (lane by lane, the lane
// thread then its pool's workers) runs only on the k-th allowed CPU.
enum class CpuBinding { off, cores };
inline constexpr const char* kCpuBindingValues = "off, cores";
const char* to_string(CpuBinding binding);
std::optional<CpuBinding> parse_cpu_binding(std::string_view text);

// The CPUs this process may run on, ascending. Throws Error(runtime) when the kernel
// does not say.
std::vector<int> allowed_cpus();

// Why `threads` executor threads (lanes x threads per lane, spelled out in `threads_text`)
// cannot each have a CPU of their own among `cpus`; empty when they can. The one check
// the executor throws on and the tuner's space skips a candidate by.
std::string cpu_binding_refusal(int64_t threads, const std::string& threads_text,
                                const std::vector<int>& cpus);

// "0-3,6": a CPU list as taskset and /proc write it.
std::string cpu_list_text(const std::vector<int>& cpus);

// Restricts `thread` to `cpu`; throws Error(runtime) naming `what` (e.g. "lane 1") and
// the CPU when the OS refuses.
void bind_thread_to_cpu(std::thread::native_handle_type thread, int cpu, const std::string& what);

// The CPUs `thread` may run on, as the OS reports them back.
std::vector<int> thread_cpus(std::thread::native_handle_type thread);

}  // namespace tunescope
