// Prometheus' standard process_* metrics, read from /proc/self at scrape time
// (prometheus-cpp has no process collector). The parsers are separate pure
// functions so they can be tested on fixed text.
#ifndef MASKD_SERVICE_PROCESS_METRICS_H_
#define MASKD_SERVICE_PROCESS_METRICS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace maskd {

// The fields of /proc/<pid>/stat that process metrics need.
struct ProcStat {
  uint64_t utime_ticks = 0;  // field 14
  uint64_t stime_ticks = 0;  // field 15
  uint64_t start_ticks = 0;  // field 22, since boot
  uint64_t vsize_bytes = 0;  // field 23
  uint64_t rss_pages = 0;    // field 24
};

// Parses /proc/<pid>/stat. The command name (field 2) may contain spaces and
// parentheses, so fields are counted from the last ')'.
absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

// The "btime" line of /proc/stat: boot time in seconds since the epoch.
absl::StatusOr<uint64_t> ParseBootTime(std::string_view proc_stat_text);

// The soft "Max open files" limit from /proc/<pid>/limits (0 if unlimited).
absl::StatusOr<uint64_t> ParseMaxOpenFiles(std::string_view limits_text);

// Exposes process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds and
// process_start_time_seconds. A metric whose source cannot be read is left
// out of that scrape rather than reported wrong.
class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_PROCESS_METRICS_H_
