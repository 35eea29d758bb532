#include "harness/maskd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace maskd::testing {
namespace {

// Spawns `binary args...` with stdout and stderr on a pipe; returns the pid
// and the read end.
absl::StatusOr<std::pair<pid_t, int>> Spawn(const std::vector<std::string>& args) {
  int fds[2];
  // Close-on-exec, so that a maskd spawned at the same time by another
  // thread does not inherit this pipe's write end (its reader would then
  // never see the end of the log); the dup2 below clears the flag on the
  // child's stdout and stderr.
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);

  const std::string binary = MaskdBinaryPath();
  std::vector<std::string> all_args = {binary};
  all_args.insert(all_args.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : all_args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int error = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("cannot spawn ", binary, ": error ", error));
  }
  return std::make_pair(pid, fds[0]);
}

// Polls waitpid until the child exits or the deadline passes.
std::optional<int> WaitForExit(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

absl::StatusOr<int> ExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) {
    return absl::AbortedError(absl::StrCat("killed by signal ", WTERMSIG(wait_status)));
  }
  return absl::UnknownError("unexpected wait status");
}

}  // namespace

std::string MaskdBinaryPath() {
#ifndef MASKD_BINARY
#error "MASKD_BINARY must be defined by CMake"
#endif
  if (const char* binary = std::getenv("MASKD_BINARY"); binary != nullptr && binary[0] != '\0') {
    return binary;
  }
  return MASKD_BINARY;
}

absl::StatusOr<std::unique_ptr<MaskdProcess>> MaskdProcess::Start(
    const std::vector<std::string>& args, std::chrono::seconds timeout) {
  absl::StatusOr<std::pair<pid_t, int>> spawned = Spawn(args);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<MaskdProcess> process(new MaskdProcess());
  process->pid_ = spawned->first;
  process->log_fd_ = spawned->second;
  process->reader_ = std::thread([p = process.get()] { p->ReadLog(); });

  if (!process->WaitForLogLine("maskd: grpc listening on ", timeout, &process->grpc_address_) ||
      !process->WaitForLogLine("maskd: metrics on ", timeout, &process->metrics_address_)) {
    return absl::UnavailableError(
        absl::StrCat("maskd did not report its ports; log:\n", process->Log()));
  }
  // "127.0.0.1:41234 (TLS)" -> "127.0.0.1:41234".
  process->grpc_address_ = process->grpc_address_.substr(0, process->grpc_address_.find(' '));
  // "http(s)://127.0.0.1:9464/metrics" -> "127.0.0.1:9464".
  std::string& metrics = process->metrics_address_;
  if (size_t scheme = metrics.find("://"); scheme != std::string::npos)
    metrics.erase(0, scheme + 3);
  metrics = metrics.substr(0, metrics.find('/'));
  return process;
}

absl::StatusOr<int> MaskdProcess::RunToExit(const std::vector<std::string>& args, std::string* log,
                                            std::chrono::seconds timeout) {
  absl::StatusOr<std::pair<pid_t, int>> spawned = Spawn(args);
  if (!spawned.ok()) return spawned.status();
  // Read until EOF (the child exits), then reap it.
  char buffer[4096];
  ssize_t n;
  while ((n = read(spawned->second, buffer, sizeof(buffer))) > 0) log->append(buffer, n);
  close(spawned->second);
  std::optional<int> status =
      WaitForExit(spawned->first, std::chrono::steady_clock::now() + timeout);
  if (!status) {
    kill(spawned->first, SIGKILL);
    waitpid(spawned->first, nullptr, 0);
    return absl::DeadlineExceededError("maskd did not exit");
  }
  return ExitCode(*status);
}

void MaskdProcess::ReadLog() {
  char buffer[4096];
  while (true) {
    const ssize_t n = read(log_fd_, buffer, sizeof(buffer));
    std::lock_guard<std::mutex> lock(mutex_);
    if (n <= 0) {
      log_ended_ = true;
      log_changed_.notify_all();
      return;
    }
    log_.append(buffer, static_cast<size_t>(n));
    log_changed_.notify_all();
  }
}

bool MaskdProcess::WaitForLogLine(const std::string& marker, std::chrono::seconds timeout,
                                  std::string* rest) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool found = log_changed_.wait_for(lock, timeout, [&] {
    const size_t at = log_.find(marker);
    return log_ended_ || (at != std::string::npos && log_.find('\n', at) != std::string::npos);
  });
  const size_t at = log_.find(marker);
  if (!found || at == std::string::npos) return false;
  const size_t begin = at + marker.size();
  const size_t end = log_.find('\n', begin);
  if (end == std::string::npos) return false;
  *rest = log_.substr(begin, end - begin);
  return true;
}

std::string MaskdProcess::Log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

absl::StatusOr<int> MaskdProcess::Stop(int signal, std::chrono::seconds timeout) {
  if (!exit_status_) {
    kill(pid_, signal);
    exit_status_ = WaitForExit(pid_, std::chrono::steady_clock::now() + timeout);
    if (!exit_status_) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      exit_status_ = status;
      return absl::DeadlineExceededError(
          absl::StrCat("maskd did not exit within ", timeout.count(), " s of signal ", signal));
    }
  }
  return ExitCode(*exit_status_);
}

MaskdProcess::~MaskdProcess() {
  if (!exit_status_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (reader_.joinable()) reader_.join();
  if (log_fd_ >= 0) close(log_fd_);
}

}  // namespace maskd::testing
