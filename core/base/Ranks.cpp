#include "core/base/Ranks.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "core/base/Error.h"
#include "core/base/ExecContext.h"
#include "core/base/Tensor.h"
#include "profiler/Tracer.h"

namespace tunescope {

namespace {

class HostRankReducer final : public RankReducer {
 public:
  explicit HostRankReducer(Communicator& communicator) : communicator_(communicator) {}

  void allreduce_sum(const ExecContext& exec, std::span<Tensor* const> tensors,
                     const char* label) override {
    size_t total = 0;
    for (const Tensor* t : tensors) {
      if (!t->on_host())
        fail(ErrorKind::unsupported, label,
             ": the host all-reduce across ranks needs tensors "
             "in host memory");
      total += static_cast<size_t>(t->size());
    }
    // One message per bucket: latency, not bandwidth, dominates small layers' gradients.
    buffer_.resize(total);
    profiler::KernelScope kernel(exec.tracer, label, exec.device, exec.lane, 0,
                                 static_cast<double>(2 * total * sizeof(float)));
    size_t at = 0;
    for (const Tensor* t : tensors) {
      std::memcpy(buffer_.data() + at, t->data(), t->bytes());
      at += static_cast<size_t>(t->size());
    }
    communicator_.allreduce_sum(std::span<float>(buffer_));
    at = 0;
    for (Tensor* t : tensors) {
      std::memcpy(t->data(), buffer_.data() + at, t->bytes());
      at += static_cast<size_t>(t->size());
    }
  }

 private:
  Communicator& communicator_;
  std::vector<float> buffer_;
};

std::optional<RankRuntime>& registered_runtime() {
  static std::optional<RankRuntime> runtime;
  return runtime;
}

Communicator*& world_pointer() {
  static Communicator* world = nullptr;
  return world;
}

}  // namespace

std::unique_ptr<RankReducer> make_host_rank_reducer(Communicator& communicator) {
  return std::make_unique<HostRankReducer>(communicator);
}

LauncherRanks launcher_ranks() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    const char* text = std::getenv(variable);
    if (!text || !*text) continue;
    char* end = nullptr;
    const long size = std::strtol(text, &end, 10);
    if (*end != '\0' || size < 1)
      fail(ErrorKind::usage, "environment variable ", variable, "='", text,
           "' is not a number of ranks");
    return {static_cast<int>(size), variable};
  }
  return {};
}

RankRuntimeRegistration::RankRuntimeRegistration(RankRuntime runtime) {
  registered_runtime() = std::move(runtime);
}

const RankRuntime* rank_runtime() {
  const auto& runtime = registered_runtime();
  return runtime ? &*runtime : nullptr;
}

RankWorld::RankWorld(int& argc, char**& argv) {
  const LauncherRanks launched = launcher_ranks();
  if (launched.size == 0) return;
  const RankRuntime* runtime = rank_runtime();
  if (!runtime) {
    if (launched.size == 1) return;  // one rank is a single process
    fail(ErrorKind::usage, "started as one of ", launched.size, " ranks (", launched.variable,
         ") but this tunescope was built without MPI: install libopenmpi-dev "
         "(scripts/install-deps.sh) and configure with -DTUNESCOPE_MPI=ON");
  }
  communicator_ = runtime->start(argc, argv);
  world_pointer() = communicator_.get();
}

RankWorld::~RankWorld() {
  if (!communicator_) return;
  world_pointer() = nullptr;
  communicator_.reset();
  if (const RankRuntime* runtime = rank_runtime(); runtime && runtime->finish) runtime->finish();
}

void RankWorld::abort_others(int code) {
  if (communicator_ && communicator_->size() > 1) communicator_->abort(code);
}

Communicator* world_communicator() { return world_pointer(); }

}  // namespace tunescope
