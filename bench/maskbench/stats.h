// Latency samples and their percentiles, as the MaskBench table prints them.
#ifndef MASKD_BENCH_MASKBENCH_STATS_H_
#define MASKD_BENCH_MASKBENCH_STATS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace maskd::maskbench {

class LatencySamples {
 public:
  void Add(uint64_t ns) {
    samples_.push_back(ns);
    sorted_ = false;
  }
  void Merge(const LatencySamples& other) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    sorted_ = false;
  }
  size_t count() const { return samples_.size(); }
  // Nearest-rank percentile in microseconds (p in [0, 100]); 0 when empty.
  double PercentileUs(double p) {
    if (samples_.empty()) return 0;
    Sort();
    size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(samples_.size()));
    if (rank >= samples_.size()) rank = samples_.size() - 1;
    return static_cast<double>(samples_[rank]) / 1000.0;
  }
  double MeanUs() const {
    if (samples_.empty()) return 0;
    long double sum = 0;
    for (uint64_t s : samples_) sum += s;
    return static_cast<double>(sum / samples_.size() / 1000.0);
  }
  double MaxUs() {
    if (samples_.empty()) return 0;
    Sort();
    return static_cast<double>(samples_.back()) / 1000.0;
  }

 private:
  void Sort() {
    if (!sorted_) std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
  std::vector<uint64_t> samples_;
  bool sorted_ = false;
};

}  // namespace maskd::maskbench

#endif  // MASKD_BENCH_MASKBENCH_STATS_H_
