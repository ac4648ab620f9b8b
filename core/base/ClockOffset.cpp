#include "core/base/ClockOffset.h"

#include <limits>

#include "core/base/Error.h"

namespace tunescope {

namespace {

void send_value(Communicator& communicator, int64_t value, int to) {
  communicator.send(std::as_bytes(std::span<const int64_t>(&value, 1)), to);
}

int64_t receive_value(Communicator& communicator, int from) {
  int64_t value = 0;
  communicator.receive(std::as_writable_bytes(std::span<int64_t>(&value, 1)), from);
  return value;
}

}  // namespace

ClockOffset measure_clock_offset(Communicator& communicator, int rounds,
                                 const std::function<int64_t()>& now) {
  if (rounds < 1) fail(ErrorKind::usage, "clock offset: rounds must be >= 1, got ", rounds);
  ClockOffset result;
  // Rank 0 serves the ranks one after another, so each pair's round trips are not
  // slowed by the others'.
  for (int peer = 1; peer < communicator.size(); ++peer) {
    if (communicator.rank() == 0) {
      for (int i = 0; i < rounds; ++i) {
        receive_value(communicator, peer);
        send_value(communicator, now(), peer);
      }
    } else if (communicator.rank() == peer) {
      int64_t best_rtt = std::numeric_limits<int64_t>::max();
      for (int i = 0; i < rounds; ++i) {
        const int64_t t1 = now();
        send_value(communicator, t1, 0);
        const int64_t t0 = receive_value(communicator, 0);
        const int64_t t2 = now();
        if (t2 - t1 < best_rtt) {
          best_rtt = t2 - t1;
          // t1 + (t2 - t1) / 2 rather than (t1 + t2) / 2: no overflow near the clock's range.
          result.offset_ns = t0 - (t1 + (t2 - t1) / 2);
          result.uncertainty_ns = (t2 - t1 + 1) / 2;
        }
      }
    }
  }
  return result;
}

}  // namespace tunescope
