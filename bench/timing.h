// Timing helpers shared by the engine benches: a microsecond clock that is
// either the wall clock or the calling thread's CPU clock (comparable numbers
// on a machine other work keeps busy), and percentiles of samples.
#ifndef MASKD_BENCH_TIMING_H_
#define MASKD_BENCH_TIMING_H_

#include <time.h>

#include <algorithm>
#include <vector>

namespace maskd::bench {

// Now in microseconds, by the monotonic wall clock or this thread's CPU clock.
inline double NowMicros(bool thread_cpu) {
  timespec ts{};
  clock_gettime(thread_cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// The p-quantile (0 <= p <= 1) of v by rank; 0 for no samples.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace maskd::bench

#endif  // MASKD_BENCH_TIMING_H_
