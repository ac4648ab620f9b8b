// The engine's knobs, declared in the order labels and `tunescope knobs` list them.
#include "core/engine/RunKnobs.h"

#include <string>

namespace tunescope::knobs {

namespace {

KnobSpec integer(const char* key, const char* label, int64_t min, int64_t max,
                 const char* default_value, const char* help) {
  KnobSpec spec;
  spec.key = key;
  spec.label = label;
  spec.type = KnobType::integer;
  spec.min = min;
  spec.max = max;
  spec.default_value = default_value;
  spec.help = help;
  spec.written_when_default = true;
  return spec;
}

KnobSpec choice(const char* key, const char* label, std::vector<std::string> values,
                const char* help) {
  KnobSpec spec;
  spec.key = key;
  spec.label = label;
  spec.type = KnobType::choice;
  spec.choices = std::move(values);
  spec.default_value = spec.choices.front();
  spec.help = help;
  return spec;
}

}  // namespace

const Knob<Layout> layout{
    [] {
      KnobSpec spec = choice("layout", "", {"nchw", "nhwc"}, "Tensor layout");
      spec.written_when_default = true;
      spec.list_default = "nchw,nhwc";  // a tune tries both
      spec.list_alias = "--layouts";
      return spec;
    }(),
    {[](std::string_view text) { return text == "nhwc" ? Layout::NHWC : Layout::NCHW; },
     [](const Layout& value) { return to_string(value); }},
    true};

const Knob<int> threads{[] {
                          KnobSpec spec = integer(
                              "threads", "threads", 0, kMaxThreads, "0",
                              "Worker threads (0: one per hardware thread), shared out over "
                              "the lanes");
                          spec.list_default = "1";  // a tune tries one thread unless told more
                          return spec;
                        }(),
                        integer_codec(), true};

const Knob<int> streams{
    integer("streams", "streams", 1, 64, "1",
            "Ordered execution lanes per replica: with >= 2, backward-filter and the weight "
            "update run on their own lanes"),
    integer_codec(), true};

const Knob<bool> async_update{[] {
                                KnobSpec spec = choice(
                                    "async_update", "async", {"off", "on"},
                                    "Overlap the weight update of a step with the next step's "
                                    "forward pass (layer L's forward waits only for layer L's "
                                    "update)");
                                spec.type = KnobType::boolean;
                                spec.written_when_default = true;
                                return spec;
                              }(),
                              boolean_codec(), true};

const Knob<int> replicas{
    integer("replicas", "replicas", 1, 256, "1",
            "Data-parallel replicas, each taking batch/replicas examples on its own lanes; "
            "gradients are all-reduced before the update (cuda: one per GPU with NCCL when "
            "several GPUs are visible)"),
    integer_codec(), true};

const Knob<int> micro_batches{
    integer("micro_batches", "micro", 1, 4096, "1",
            "Gradient accumulation: each replica runs its share in this many sequential "
            "micro-batches before one update"),
    integer_codec(), true};

const Knob<int> threads_per_lane{
    integer("threads_per_lane", "threads/lane", 0, kMaxThreads, "0",
            "Threads of each lane's pool (0: threads shared out over the lanes)"),
    integer_codec(), true};

const Knob<UpdateOn> update_on{
    choice("update_on", "update", {"device", "host"},
           "Where SGD runs on a backend with device memory (cuda): device | host "
           "(gradients copied to pinned host memory, updated by host threads, weights "
           "copied back; with async_update beside the next forward pass)"),
    {[](std::string_view text) { return text == "host" ? UpdateOn::host : UpdateOn::device; },
     [](const UpdateOn& value) { return std::string(to_string(value)); }},
    true};

const Knob<bool> fuse{[] {
                        KnobSpec spec = choice(
                            "fuse", "fuse", {"off", "on"},
                            "Fuse batch norm with the ReLU after it, and with the residual add "
                            "between them, and a conv's bias with the ReLU and max pool after "
                            "it, into one kernel each way (off: separate kernels)");
                        spec.type = KnobType::boolean;
                        spec.default_value = "on";
                        return spec;
                      }(),
                      boolean_codec(), true};

// Declared after the first config schema: written into a config only when set.
const Knob<CpuBinding> cpu_binding{
    [] {
      KnobSpec spec = choice(
          "cpu_binding", "bind", {"off", "cores"},
          "Executor threads and CPUs: off (the OS places them) | cores (each lane's threads on "
          "CPUs of their own from the process's allowed set, so two lanes never take turns "
          "on one core while another idles; more threads than allowed CPUs is refused)");
      // A tune tries both: which wins depends on the machine's other load, and unbound
      // threads of one run can share a core for whole seconds (docs/TUNER-MEASUREMENT.md).
      spec.list_default = "off,cores";
      // One executor thread never takes turns with another: binding it only takes its
      // freedom to leave a CPU another program holds.
      spec.applies_to = [](const KnobValues& values) {
        return concurrency_of(values).executor_threads(threads.get(values)) >= 2;
      };
      spec.applies_to_text = "runs of 2 or more executor threads";
      return spec;
    }(),
    {[](std::string_view text) { return parse_cpu_binding(text).value_or(CpuBinding::off); },
     [](const CpuBinding& value) { return std::string(to_string(value)); }},
    true};

// Ranks (mpirun -np N): read only when the run has several ranks. Declared after the
// first config schema: written into a config only when set.
const Knob<int> allreduce_bucket_kb{[] {
                                      KnobSpec spec = integer(
                                          "allreduce_bucket_kb", "bucket", 0, kMaxBucketKb, "512",
                                          "Ranks: gradients are all-reduced across ranks in "
                                          "buckets of at least this many KiB of consecutive "
                                          "layers (0: one bucket per layer)");
                                      spec.written_when_default = false;
                                      return spec;
                                    }(),
                                    integer_codec(), true};

const Knob<bool> allreduce_overlap{[] {
                                     KnobSpec spec = choice(
                                         "allreduce_overlap", "overlap", {"off", "on"},
                                         "Ranks: all-reduce each bucket on a lane of its own as "
                                         "soon as the backward pass has its gradients (off: "
                                         "after the whole backward pass)");
                                     spec.type = KnobType::boolean;
                                     spec.default_value = "on";
                                     return spec;
                                   }(),
                                   boolean_codec(), true};

const Knob<int> workers{[] {
                          KnobSpec spec = integer(
                              "workers", "workers", 1, kMaxWorkers, "1",
                              "Worker processes (MPI ranks), each with its share of the batch "
                              "and its own threads (a tune runs a candidate with more than one "
                              "under mpirun; train and profile run under mpirun -np workers)");
                          spec.written_when_default = false;
                          return spec;
                        }(),
                        integer_codec(), true};

Concurrency concurrency_of(const KnobValues& values) {
  return Concurrency{streams.get(values),          replicas.get(values),
                     micro_batches.get(values),    async_update.get(values),
                     threads_per_lane.get(values), update_on.get(values)};
}

void set_concurrency(KnobValues& values, const Concurrency& c) {
  streams.set(values, c.streams);
  replicas.set(values, c.replicas);
  micro_batches.set(values, c.micro_batches);
  async_update.set(values, c.async_update);
  threads_per_lane.set(values, c.threads_per_lane);
  update_on.set(values, c.update_on);
}

}  // namespace tunescope::knobs
