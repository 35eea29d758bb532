// One benchmark stream: a Session with B sequences, each teacher-forcing
// MaskBench instances one token per step (closing a finished one and
// opening the next instance in the same step), timing every Step().
#ifndef MASKD_BENCH_SERVICE_STEP_STEP_DRIVER_H_
#define MASKD_BENCH_SERVICE_STEP_STEP_DRIVER_H_

#include <atomic>
#include <string>
#include <vector>

#include "bench/maskbench/stats.h"
#include "bench/service_step/workload.h"
#include "clients/cpp/client.h"

namespace maskd::service_bench {

struct StreamStats {
  maskbench::LatencySamples step_ns;
  std::vector<uint32_t> mask_bytes;  // serialized Mask size of every mask received
  // The same masks deflated (zlib level 1), when asked for: what gRPC's
  // transport compression would roughly make of them.
  std::vector<uint32_t> deflated_mask_bytes;
  uint64_t masks = 0;
  uint64_t dictionary_refs = 0;  // masks that came as a dictionary_ref
  uint64_t request_bytes = 0;
  uint64_t response_bytes = 0;
  std::string error;  // first failure; empty when all went well
};

// Runs until `stop` is set and at least `min_steps` steps (and one) are
// done. `first_instance` spreads streams over the workload;
// `dictionary_slots` is the stream's mask dictionary (0: off).
StreamStats DriveStream(const client::MaskdClient& client, const Workload& workload, size_t batch,
                        v1::MaskEncoding encoding, uint32_t dictionary_slots, size_t first_instance,
                        const std::atomic<bool>& stop, bool measure_deflate = false,
                        size_t min_steps = 0);

}  // namespace maskd::service_bench

#endif  // MASKD_BENCH_SERVICE_STEP_STEP_DRIVER_H_
