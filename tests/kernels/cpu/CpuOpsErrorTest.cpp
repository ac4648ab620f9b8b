// The shared op argument errors (OpsErrorCases.h) on the CPU ops.
#include "OpsErrorCases.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::test_support {

INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, OpsErrors, cpu::CpuOps);

}  // namespace tunescope::test_support
