#include "core/base/CpuAffinity.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "core/base/Error.h"

namespace tunescope {

namespace {

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace

const char* to_string(CpuBinding binding) { return binding == CpuBinding::cores ? "cores" : "off"; }

std::optional<CpuBinding> parse_cpu_binding(std::string_view text) {
  if (text == "off") return CpuBinding::off;
  if (text == "cores") return CpuBinding::cores;
  return std::nullopt;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    fail(ErrorKind::runtime, "cpu_binding: sched_getaffinity failed: ", std::strerror(errno));
  return cpus_of(set);
}

std::string cpu_binding_refusal(int64_t threads, const std::string& threads_text,
                                const std::vector<int>& cpus) {
  if (threads <= static_cast<int64_t>(cpus.size())) return "";
  return cat("cpu_binding: cores gives each of ", threads, " threads (", threads_text,
             ") a CPU of its own, but this process may run on only ", cpus.size(), " CPUs (",
             cpu_list_text(cpus), "): use off or fewer threads");
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) text += cat('-', cpus[j]);
    i = j + 1;
  }
  return text;
}

void bind_thread_to_cpu(std::thread::native_handle_type thread, int cpu, const std::string& what) {
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    fail(ErrorKind::runtime, "cpu_binding: ", what, ": CPU ", cpu, " is out of range");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // pthread_* return the error number instead of setting errno.
  if (const int error = pthread_setaffinity_np(thread, sizeof set, &set); error != 0)
    fail(ErrorKind::runtime, "cpu_binding: binding ", what, " to CPU ", cpu,
         " failed: ", std::strerror(error));
}

std::vector<int> thread_cpus(std::thread::native_handle_type thread) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (const int error = pthread_getaffinity_np(thread, sizeof set, &set); error != 0)
    fail(ErrorKind::runtime, "cpu_binding: reading a thread's CPUs failed: ", std::strerror(error));
  return cpus_of(set);
}

}  // namespace tunescope
