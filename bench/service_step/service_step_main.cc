// service_step: the Session stream's cost over loopback gRPC, with the real
// maskd (spawned) and the real C++ client. S concurrent streams x B
// sequences per step teacher-force MaskBench dev instances one token per
// step; prints step latency (p50/p99/max), masks per second, CPU per mask
// (server and client), bytes per mask for each encoding, and the engine's
// own in-process per-step time for the B=1 overhead comparison.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/service_step/step_driver.h"
#include "bench/service_step/tcp_floor.h"
#include "bench/service_step/workload.h"
#include "harness/maskd_process.h"

ABSL_FLAG(std::string, data, maskd::testing::MaskBenchPath(), "MaskBench JSON Lines (.jsonl.gz).");
ABSL_FLAG(std::string, tokenizer_dir, "",
          "Directory of the Llama-3 tokenizer.json; empty: the tokenizer cache's llama3.");
ABSL_FLAG(size_t, sample, 100, "MaskBench schemas to sample (deterministically).");
ABSL_FLAG(std::vector<std::string>, streams, std::vector<std::string>({"1", "2"}),
          "Concurrent streams S to measure.");
ABSL_FLAG(std::vector<std::string>, batch, std::vector<std::string>({"1", "16", "64", "256"}),
          "Sequences per step B to measure.");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(3), "Measuring time per configuration.");
ABSL_FLAG(size_t, encoding_batch, 64, "B for the per-encoding bytes and latency table (S=1).");
ABSL_FLAG(uint32_t, dictionary_slots, 256,
          "Mask dictionary slots the client asks for (the C++ client's default); 0: off.");
ABSL_FLAG(std::vector<std::string>, maskd_flags, {},
          "Extra flags for the spawned maskd, comma-separated (e.g. --threads=2).");

namespace maskd::service_bench {
namespace {

double CpuSeconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return CpuSeconds(usage);
}

// utime + stime of `pid` from /proc (clock-tick resolution).
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the parenthesized command name; utime and stime are the
  // 14th and 15th fields of the line, i.e. the 12th and 13th after ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(paren + 2), ' ');
  double utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtod(fields[11], &utime) ||
      !absl::SimpleAtod(fields[12], &stime)) {
    return 0;
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct ConfigResult {
  maskbench::LatencySamples step_ns;
  std::vector<uint32_t> mask_bytes;
  std::vector<uint32_t> deflated_mask_bytes;
  uint64_t masks = 0;
  uint64_t dictionary_refs = 0;
  double wall_s = 0, server_cpu_s = 0, client_cpu_s = 0;
  uint64_t response_bytes = 0;
};

absl::StatusOr<ConfigResult> RunConfig(const std::string& target, const Workload& workload,
                                       size_t streams, size_t batch, v1::MaskEncoding encoding,
                                       uint32_t dictionary_slots, pid_t server_pid,
                                       absl::Duration duration, bool measure_deflate = false) {
  // One connection per stream, as separate workers would have.
  std::vector<std::unique_ptr<client::MaskdClient>> clients;
  for (size_t s = 0; s < streams; ++s) {
    client::ChannelOptions options;
    options.target = target;
    options.own_connection = true;
    clients.push_back(std::make_unique<client::MaskdClient>(options));
  }
  std::atomic<bool> stop{false};
  std::vector<StreamStats> stats(streams);
  const double server_cpu = ProcessCpuSeconds(server_pid);
  const double client_cpu = SelfCpuSeconds();
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (size_t s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] {
      stats[s] = DriveStream(*clients[s], workload, batch, encoding, dictionary_slots,
                             s * workload.instances.size() / streams, stop, measure_deflate);
    });
  }
  absl::SleepFor(duration);
  stop = true;
  for (std::thread& t : threads) t.join();
  ConfigResult result;
  result.wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  result.server_cpu_s = ProcessCpuSeconds(server_pid) - server_cpu;
  result.client_cpu_s = SelfCpuSeconds() - client_cpu;
  for (StreamStats& s : stats) {
    if (!s.error.empty()) return absl::InternalError(s.error);
    result.step_ns.Merge(s.step_ns);
    result.mask_bytes.insert(result.mask_bytes.end(), s.mask_bytes.begin(), s.mask_bytes.end());
    result.deflated_mask_bytes.insert(result.deflated_mask_bytes.end(),
                                      s.deflated_mask_bytes.begin(), s.deflated_mask_bytes.end());
    result.masks += s.masks;
    result.dictionary_refs += s.dictionary_refs;
    result.response_bytes += s.response_bytes;
  }
  return result;
}

double Percentile(std::vector<uint32_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size()));
  return values[std::min(rank, values.size() - 1)];
}

double Mean(const std::vector<uint32_t>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::vector<size_t> ParseSizes(const std::vector<std::string>& values) {
  std::vector<size_t> sizes;
  for (const std::string& v : values) {
    size_t n = 0;
    if (absl::SimpleAtoi(v, &n) && n > 0) sizes.push_back(n);
  }
  return sizes;
}

int Main() {
  const std::string tokenizer_dir = absl::GetFlag(FLAGS_tokenizer_dir).empty()
                                        ? testing::TokenizerDir("llama3")
                                        : absl::GetFlag(FLAGS_tokenizer_dir);
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer =
      Tokenizer::FromDirectory(tokenizer_dir);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "service_step: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> args = {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                   "--tokenizer=llama3=" + tokenizer_dir};
  for (const std::string& flag : absl::GetFlag(FLAGS_maskd_flags)) args.push_back(flag);
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
      testing::MaskdProcess::Start(args);
  if (!server.ok()) {
    std::fprintf(stderr, "service_step: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const std::string target = (*server)->grpc_address();
  client::ChannelOptions options;
  options.target = target;
  options.rpc_deadline = absl::Minutes(5);
  client::MaskdClient client(options);
  absl::StatusOr<v1::TokenizerInfo> info = client.FindTokenizer("llama3");
  if (!info.ok()) {
    std::fprintf(stderr, "service_step: %s\n", info.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<Workload> workload =
      BuildWorkload(client, info->tokenizer_id(), *tokenizer, absl::GetFlag(FLAGS_data),
                    absl::GetFlag(FLAGS_sample));
  if (!workload.ok()) {
    std::fprintf(stderr, "service_step: %s\n", workload.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "workload: %zu schemas, %zu valid instances, %zu tokens (MaskBench dev sample of "
      "%zu, Llama-3 ids)\n",
      workload->handles.size(), workload->instances.size(), workload->tokens,
      absl::GetFlag(FLAGS_sample));

  // Warm both sides: the first pass over each grammar builds lazy lexer
  // states, which would otherwise be charged to whichever side ran first.
  // The service's warm-up runs every instance to its end once (all in one
  // batch, as many steps as the longest) and for at least a second.
  const EngineBaseline engine = MeasureEngine(*workload, 2);
  {
    const size_t all = workload->instances.size();
    size_t longest = 0;
    for (const Instance& instance : workload->instances) {
      longest = std::max(longest, instance.tokens.size());
    }
    std::atomic<bool> stop{false};
    std::thread stopper([&] {
      absl::SleepFor(absl::Seconds(1));
      stop = true;
    });
    StreamStats warm = DriveStream(client, *workload, all, v1::MASK_ENCODING_AUTO, 0, 0, stop,
                                   /*measure_deflate=*/false, /*min_steps=*/longest + 2);
    stopper.join();
    if (!warm.error.empty()) {
      std::fprintf(stderr, "service_step: warm-up: %s\n", warm.error.c_str());
      return 1;
    }
  }
  maskbench::LatencySamples engine_mask = engine.mask_and_accept_ns;
  maskbench::LatencySamples engine_step = engine.full_step_ns;
  std::printf(
      "engine in process, per sequence step (1 thread, warm): mask+accept p50 %.1f us "
      "mean %.1f us; mask+accept+stop+jump-forward p50 %.1f us mean %.1f us p99 %.1f us\n\n",
      engine_mask.PercentileUs(50), engine_mask.MeanUs(), engine_step.PercentileUs(50),
      engine_step.MeanUs(), engine_step.PercentileUs(99));

  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  {
    absl::StatusOr<maskbench::LatencySamples> tcp = MeasureTcpPingPong(duration);
    if (!tcp.ok()) {
      std::fprintf(stderr, "service_step: %s\n", tcp.status().ToString().c_str());
      return 1;
    }
    std::printf(
        "loopback TCP ping-pong between two processes (no gRPC, 32 B): p50 %.1f us p99 %.1f us\n",
        tcp->PercentileUs(50), tcp->PercentileUs(99));
  }
  {
    // A step with no ops: the stream's round trip alone (gRPC, the server's
    // reactor, no engine work), the floor under every B.
    absl::StatusOr<ConfigResult> empty =
        RunConfig(target, *workload, 1, 0, v1::MASK_ENCODING_AUTO, 0, (*server)->pid(), duration);
    if (!empty.ok()) {
      std::fprintf(stderr, "service_step: empty steps: %s\n", empty.status().ToString().c_str());
      return 1;
    }
    std::printf(
        "empty step (no ops, S=1): p50 %.1f us p99 %.1f us, server CPU %.1f us/step, "
        "client CPU %.1f us/step\n\n",
        empty->step_ns.PercentileUs(50), empty->step_ns.PercentileUs(99),
        empty->server_cpu_s * 1e6 / static_cast<double>(empty->step_ns.count()),
        empty->client_cpu_s * 1e6 / static_cast<double>(empty->step_ns.count()));
  }
  const uint32_t dictionary_slots = absl::GetFlag(FLAGS_dictionary_slots);
  std::printf("mask dictionary: %u slots asked for (0: off), auto encoding\n", dictionary_slots);
  std::printf("%3s %4s %8s %9s %9s %9s %10s %13s %13s %11s %6s\n", "S", "B", "steps", "p50 us",
              "p99 us", "max us", "masks/s", "srv CPU us/m", "cli CPU us/m", "B/mask p50", "refs%");
  double b1_p50 = 0, b1_mean = 0;
  for (size_t streams : ParseSizes(absl::GetFlag(FLAGS_streams))) {
    for (size_t batch : ParseSizes(absl::GetFlag(FLAGS_batch))) {
      absl::StatusOr<ConfigResult> r =
          RunConfig(target, *workload, streams, batch, v1::MASK_ENCODING_AUTO, dictionary_slots,
                    (*server)->pid(), duration);
      if (!r.ok()) {
        std::fprintf(stderr, "service_step: S=%zu B=%zu: %s\n", streams, batch,
                     r.status().ToString().c_str());
        return 1;
      }
      if (streams == 1 && batch == 1) {
        b1_p50 = r->step_ns.PercentileUs(50);
        b1_mean = r->step_ns.MeanUs();
      }
      const double masks = static_cast<double>(r->masks);
      std::printf("%3zu %4zu %8zu %9.1f %9.1f %9.1f %10.0f %13.1f %13.1f %11.0f %6.1f\n", streams,
                  batch, r->step_ns.count(), r->step_ns.PercentileUs(50),
                  r->step_ns.PercentileUs(99), r->step_ns.MaxUs(), masks / r->wall_s,
                  r->server_cpu_s * 1e6 / masks, r->client_cpu_s * 1e6 / masks,
                  Percentile(r->mask_bytes, 50),
                  100.0 * static_cast<double>(r->dictionary_refs) / masks);
    }
  }
  if (b1_p50 > 0) {
    std::printf(
        "\nB=1 overhead over the engine's own per-step time: p50 %.1f us vs %.1f us "
        "(+%.0f%%), mean %.1f us vs %.1f us (+%.0f%%)\n",
        b1_p50, engine_step.PercentileUs(50), 100.0 * (b1_p50 / engine_step.PercentileUs(50) - 1),
        b1_mean, engine_step.MeanUs(), 100.0 * (b1_mean / engine_step.MeanUs() - 1));
  }

  const size_t encoding_batch = absl::GetFlag(FLAGS_encoding_batch);
  std::printf(
      "\nbytes per mask by encoding (S=1, B=%zu; a full Llama-3 bitmask is %u bytes of "
      "words)\n",
      encoding_batch, (info->vocab_size() + 31) / 32 * 4);
  std::printf("%-12s %10s %10s %10s %10s %12s %9s %9s %13s\n", "encoding", "median B", "mean B",
              "p99 B", "resp B/m", "deflated p50", "p50 us", "p99 us", "srv CPU us/m");
  struct EncodingRow {
    const char* name;
    v1::MaskEncoding encoding;
    uint32_t dictionary_slots;
  };
  const EncodingRow encodings[] = {{"auto+dict", v1::MASK_ENCODING_AUTO, dictionary_slots},
                                   {"bitmask+dict", v1::MASK_ENCODING_BITMASK, dictionary_slots},
                                   {"auto", v1::MASK_ENCODING_AUTO, 0},
                                   {"bitmask", v1::MASK_ENCODING_BITMASK, 0},
                                   {"allow", v1::MASK_ENCODING_ALLOW_LIST, 0},
                                   {"deny", v1::MASK_ENCODING_DENY_LIST, 0}};
  for (const auto& [name, encoding, slots] : encodings) {
    if (slots == 0 && std::string(name).ends_with("+dict")) continue;
    absl::StatusOr<ConfigResult> r =
        RunConfig(target, *workload, 1, encoding_batch, encoding, slots, (*server)->pid(), duration,
                  /*measure_deflate=*/true);
    if (!r.ok()) {
      std::fprintf(stderr, "service_step: %s: %s\n", name, r.status().ToString().c_str());
      return 1;
    }
    std::printf("%-12s %10.0f %10.0f %10.0f %10.0f %12.0f %9.1f %9.1f %13.1f\n", name,
                Percentile(r->mask_bytes, 50), Mean(r->mask_bytes), Percentile(r->mask_bytes, 99),
                static_cast<double>(r->response_bytes) / static_cast<double>(r->masks),
                Percentile(r->deflated_mask_bytes, 50), r->step_ns.PercentileUs(50),
                r->step_ns.PercentileUs(99), r->server_cpu_s * 1e6 / static_cast<double>(r->masks));
  }
  return (*server)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(1) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace maskd::service_bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "service_step: Session step latency, throughput, CPU and bytes per mask of a spawned maskd "
      "over loopback gRPC, with MaskBench instances as the token source.");
  absl::ParseCommandLine(argc, argv);
  return maskd::service_bench::Main();
}
