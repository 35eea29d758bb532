// Runs the real maskd binary as a child process for integration tests and
// benchmarks: reads its stderr log to learn the ports it bound, and stops it
// with a signal.
#ifndef MASKD_HARNESS_MASKD_PROCESS_H_
#define MASKD_HARNESS_MASKD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/data_paths.h"

namespace maskd::testing {

// Path of the maskd binary under test: $MASKD_BINARY (e.g. an older build to
// benchmark against), else the one CMake set.
std::string MaskdBinaryPath();

class MaskdProcess {
 public:
  // Spawns maskd with `args` and waits (up to `timeout`) for both
  // "grpc listening on" and "metrics on" log lines. Fails with the log so
  // far if the process exits first or the lines never come.
  static absl::StatusOr<std::unique_ptr<MaskdProcess>> Start(
      const std::vector<std::string>& args,
      std::chrono::seconds timeout = std::chrono::seconds(120));

  // Spawns maskd and waits for it to exit by itself; returns its exit code.
  static absl::StatusOr<int> RunToExit(const std::vector<std::string>& args, std::string* log,
                                       std::chrono::seconds timeout);

  ~MaskdProcess();

  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }
  pid_t pid() const { return pid_; }

  // Everything the process wrote so far.
  std::string Log() const;

  // Sends `signal` and waits up to `timeout` for exit. Returns the exit code,
  // or an error if it was killed by a signal or did not exit in time (it is
  // then SIGKILLed).
  absl::StatusOr<int> Stop(int signal, std::chrono::seconds timeout);

 private:
  MaskdProcess() = default;
  void ReadLog();
  // Waits until the log matches or the process output ends.
  bool WaitForLogLine(const std::string& marker, std::chrono::seconds timeout, std::string* rest);

  pid_t pid_ = -1;
  int log_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::condition_variable log_changed_;
  std::string log_;         // guarded by mutex_
  bool log_ended_ = false;  // guarded by mutex_
  std::optional<int> exit_status_;
  std::string grpc_address_;
  std::string metrics_address_;
};

}  // namespace maskd::testing

#endif  // MASKD_HARNESS_MASKD_PROCESS_H_
