#include "tests/e2e/e2e_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"

namespace maskd::e2e {

std::string Llama3Dir() { return testing::TokenizerDir("llama3"); }

absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> StartMaskd(
    const std::vector<std::string>& extra) {
  // A short drain: the tests end their streams before stopping the server,
  // and maskd otherwise waits out the default 5 s grace (the last
  // --shutdown_grace in `extra` wins).
  std::vector<std::string> args = {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                   "--tokenizer=llama3=" + Llama3Dir(), "--shutdown_grace=1s"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::MaskdProcess::Start(args);
}

absl::StatusOr<std::shared_ptr<const Tokenizer>> Llama3() {
  static std::mutex mutex;
  static absl::StatusOr<std::shared_ptr<const Tokenizer>>* loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded == nullptr) {
    loaded =
        new absl::StatusOr<std::shared_ptr<const Tokenizer>>(Tokenizer::FromDirectory(Llama3Dir()));
  }
  return *loaded;
}

std::unique_ptr<client::MaskdClient> ClientOf(const testing::MaskdProcess& process) {
  client::ChannelOptions options;
  options.target = process.grpc_address();
  options.rpc_deadline = absl::Seconds(120);
  return std::make_unique<client::MaskdClient>(options);
}

absl::StatusOr<CompiledSchema> CompileForLlama3(const client::MaskdClient& client,
                                                const std::string& schema) {
  absl::StatusOr<v1::TokenizerInfo> info = client.FindTokenizer("llama3");
  if (!info.ok()) return info.status();
  absl::StatusOr<client::CompileResult> compiled =
      client.Compile(info->tokenizer_id(), client::JsonSchemaSpec(schema));
  if (!compiled.ok()) return compiled.status();
  return CompiledSchema{info->tokenizer_id(), compiled->handle};
}

std::string FetchMetrics(const std::string& metrics_address) {
  const size_t colon = metrics_address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(metrics_address.substr(colon + 1), &port)) {
    return "";
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, metrics_address.substr(0, colon).c_str(), &addr.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    // HTTP/1.0: the server closes the connection when the body is done.
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + metrics_address + "\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[8192];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
        response.append(buffer, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return response;
}

std::optional<double> MetricValue(const std::string& exposition, const std::string& sample) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() <= sample.size() || line.compare(0, sample.size(), sample) != 0 ||
        line[sample.size()] != ' ') {
      continue;
    }
    double value = 0;
    if (absl::SimpleAtod(line.substr(sample.size() + 1), &value)) return value;
  }
  return std::nullopt;
}

std::optional<double> WaitForMetric(const std::string& metrics_address, const std::string& sample,
                                    const std::function<bool(double)>& want, int seconds) {
  std::optional<double> value;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    value = MetricValue(FetchMetrics(metrics_address), sample);
    if (value && want(*value)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return value;
}

}  // namespace maskd::e2e
