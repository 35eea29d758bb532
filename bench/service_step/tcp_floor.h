// The machine's floor under any Session round trip: a loopback TCP ping-pong
// between two processes (blocking reads, TCP_NODELAY, 32-byte messages), no
// gRPC. On a small VM this is mostly the cost of waking a sleeping thread on
// each side, and it moves with the machine's load; service_step prints it
// next to the empty Session step so the two are read together.
#ifndef MASKD_BENCH_SERVICE_STEP_TCP_FLOOR_H_
#define MASKD_BENCH_SERVICE_STEP_TCP_FLOOR_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/maskbench/stats.h"

namespace maskd::service_bench {

// Round trips for `duration` against a forked echo process.
absl::StatusOr<maskbench::LatencySamples> MeasureTcpPingPong(absl::Duration duration);

}  // namespace maskd::service_bench

#endif  // MASKD_BENCH_SERVICE_STEP_TCP_FLOOR_H_
