// The cache-line round trip between the first two CPUs this process may use
// (core/base/CoreDistance.h), --probes times: whether the host has our vCPUs on cores near
// each other or far apart right now. bench/run-pool-ab.sh labels each timed run with it.
//
// usage: bench_core_distance [--probes N] [--round-trips N]
// prints one line per probe: "cpus A,B round_trip_ns X"
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/CoreDistance.h"
#include "core/base/CpuAffinity.h"
#include "core/base/Error.h"

int main(int argc, char** argv) {
  using namespace tunescope;
  try {
    int probes = 3, round_trips = 20000;
    for (int i = 1; i < argc; ++i) {
      const std::string key = argv[i];
      if (i + 1 >= argc) fail(ErrorKind::usage, key, " needs a value");
      const int value = std::stoi(argv[++i]);
      if (key == "--probes")
        probes = value;
      else if (key == "--round-trips")
        round_trips = value;
      else
        fail(ErrorKind::usage, "unknown option ", key);
    }
    if (probes < 1 || probes > 1000) fail(ErrorKind::usage, "--probes 1..1000, got ", probes);
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.size() < 2)
      fail(ErrorKind::usage, "one CPU allowed (", cpu_list_text(cpus), "): nothing to measure");
    for (int p = 0; p < probes; ++p)
      std::printf("cpus %d,%d round_trip_ns %.0f\n", cpus[0], cpus[1],
                  cache_line_round_trip_ns(cpus[0], cpus[1], round_trips));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_core_distance: %s\n", e.what());
    return 1;
  }
}
