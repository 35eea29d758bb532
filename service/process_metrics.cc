#include "service/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace maskd {
namespace {

std::string ReadWholeFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Entries of /proc/self/fd, minus the descriptor opendir itself holds.
absl::StatusOr<uint64_t> CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return absl::UnavailableError("cannot open /proc/self/fd");
  uint64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count > 0 ? count - 1 : 0;
}

prometheus::MetricFamily Gauge(std::string name, std::string help, double value) {
  prometheus::ClientMetric metric;
  metric.gauge.value = value;
  return {std::move(name), std::move(help), prometheus::MetricType::Gauge, {metric}};
}

prometheus::MetricFamily Counter(std::string name, std::string help, double value) {
  prometheus::ClientMetric metric;
  metric.counter.value = value;
  return {std::move(name), std::move(help), prometheus::MetricType::Counter, {metric}};
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view std_text) {
  // Debian's absl has its own string_view type; convert once at the boundary.
  const absl::string_view text(std_text.data(), std_text.size());
  const size_t close_paren = text.rfind(')');
  if (close_paren == absl::string_view::npos) {
    return absl::InvalidArgumentError("no ')' after the command name");
  }
  // After ')' come fields 3 (state), 4, ...: field N is index N - 3.
  std::vector<absl::string_view> fields =
      absl::StrSplit(text.substr(close_paren + 1), ' ', absl::SkipWhitespace());
  auto field = [&](int number, uint64_t* out) -> bool {
    const size_t index = static_cast<size_t>(number - 3);
    return index < fields.size() && absl::SimpleAtoi(fields[index], out);
  };
  ProcStat stat;
  if (!field(14, &stat.utime_ticks) || !field(15, &stat.stime_ticks) ||
      !field(22, &stat.start_ticks) || !field(23, &stat.vsize_bytes) ||
      !field(24, &stat.rss_pages)) {
    return absl::InvalidArgumentError("malformed /proc/self/stat");
  }
  return stat;
}

absl::StatusOr<uint64_t> ParseBootTime(std::string_view proc_stat_text) {
  const absl::string_view text(proc_stat_text.data(), proc_stat_text.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      uint64_t seconds = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &seconds)) return seconds;
      return absl::InvalidArgumentError("malformed btime line");
    }
  }
  return absl::NotFoundError("no btime line in /proc/stat");
}

absl::StatusOr<uint64_t> ParseMaxOpenFiles(std::string_view limits_text) {
  const absl::string_view text(limits_text.data(), limits_text.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Max open files")) continue;
    std::vector<absl::string_view> columns = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (columns.empty()) break;
    if (columns[0] == "unlimited") return 0;
    uint64_t soft = 0;
    if (absl::SimpleAtoi(columns[0], &soft)) return soft;
    break;
  }
  return absl::InvalidArgumentError("no parsable 'Max open files' line");
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page_bytes = static_cast<double>(sysconf(_SC_PAGESIZE));

  if (absl::StatusOr<ProcStat> stat = ParseProcStat(ReadWholeFile("/proc/self/stat")); stat.ok()) {
    families.push_back(
        Counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks_per_second));
    families.push_back(Gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                             static_cast<double>(stat->rss_pages) * page_bytes));
    families.push_back(Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                             static_cast<double>(stat->vsize_bytes)));
    if (absl::StatusOr<uint64_t> boot = ParseBootTime(ReadWholeFile("/proc/stat")); boot.ok()) {
      families.push_back(Gauge(
          "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
          static_cast<double>(*boot) + static_cast<double>(stat->start_ticks) / ticks_per_second));
    }
  }
  if (absl::StatusOr<uint64_t> fds = CountOpenFds(); fds.ok()) {
    families.push_back(
        Gauge("process_open_fds", "Number of open file descriptors.", static_cast<double>(*fds)));
  }
  if (absl::StatusOr<uint64_t> max_fds = ParseMaxOpenFiles(ReadWholeFile("/proc/self/limits"));
      max_fds.ok() && *max_fds > 0) {
    families.push_back(Gauge("process_max_fds", "Maximum number of open file descriptors.",
                             static_cast<double>(*max_fds)));
  }
  return families;
}

}  // namespace maskd
