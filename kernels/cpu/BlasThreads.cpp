// OpenBLAS must not start threads of its own: every CPU kernel already parallelises
// over the lane's ThreadPool, and several lanes call sgemm at once. OpenBLAS threads
// on top would oversubscribe the cores and serialise lanes on OpenBLAS's own lock.
#include <cblas.h>

namespace tunescope::cpu {
namespace {

struct SingleThreadedBlas {
  SingleThreadedBlas() { openblas_set_num_threads(1); }
};
const SingleThreadedBlas single_threaded_blas;

}  // namespace
}  // namespace tunescope::cpu
