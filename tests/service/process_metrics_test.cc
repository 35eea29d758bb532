#include "service/process_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace maskd {
namespace {

// A real /proc/<pid>/stat line whose command name holds spaces and ')'.
constexpr char kStatLine[] =
    "4242 (my (weird) cmd) S 1 4242 4242 0 -1 4194560 1000 0 0 0 "
    "150 25 0 0 20 0 9 0 123456 987654321 2048 18446744073709551615 1 1 0 0 0 0 0 "
    "4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcessMetricsTest, ParsesStatFieldsAfterTheCommandName) {
  absl::StatusOr<ProcStat> stat = ParseProcStat(kStatLine);
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->utime_ticks, 150u);
  EXPECT_EQ(stat->stime_ticks, 25u);
  EXPECT_EQ(stat->start_ticks, 123456u);
  EXPECT_EQ(stat->vsize_bytes, 987654321u);
  EXPECT_EQ(stat->rss_pages, 2048u);
}

TEST(ProcessMetricsTest, RejectsTruncatedStat) {
  EXPECT_FALSE(ParseProcStat("4242 (cmd) S 1 2 3").ok());
  EXPECT_FALSE(ParseProcStat("no parenthesis").ok());
}

TEST(ProcessMetricsTest, ParsesBootTimeAndMaxOpenFiles) {
  absl::StatusOr<uint64_t> boot =
      ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1763790000\nprocesses 9\n");
  ASSERT_TRUE(boot.ok());
  EXPECT_EQ(*boot, 1763790000u);
  EXPECT_FALSE(ParseBootTime("cpu 1 2 3\n").ok());

  absl::StatusOr<uint64_t> max_fds = ParseMaxOpenFiles(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max open files            1024                 524288               files     \n");
  ASSERT_TRUE(max_fds.ok());
  EXPECT_EQ(*max_fds, 1024u);
}

std::map<std::string, double> CollectByName() {
  std::map<std::string, double> values;
  for (const prometheus::MetricFamily& family : ProcessCollector().Collect()) {
    EXPECT_EQ(family.metric.size(), 1u) << family.name;
    const prometheus::ClientMetric& metric = family.metric.front();
    values[family.name] =
        family.type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return values;
}

TEST(ProcessMetricsTest, CollectsLiveValuesForThisProcess) {
  std::map<std::string, double> values = CollectByName();
  for (const char* name :
       {"process_cpu_seconds_total", "process_resident_memory_bytes",
        "process_virtual_memory_bytes", "process_open_fds", "process_start_time_seconds"}) {
    ASSERT_TRUE(values.count(name)) << name;
  }
  EXPECT_GT(values["process_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(values["process_virtual_memory_bytes"], values["process_resident_memory_bytes"]);
  // Started after 2020 and not in the future.
  EXPECT_GT(values["process_start_time_seconds"], 1.6e9);
  EXPECT_LE(values["process_start_time_seconds"], static_cast<double>(time(nullptr)) + 1);

  // Opening a descriptor shows up in the next scrape.
  const double fds_before = values["process_open_fds"];
  const int fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(CollectByName()["process_open_fds"], fds_before + 1);
  close(fd);
}

}  // namespace
}  // namespace maskd
