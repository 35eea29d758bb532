#include "bench/service_step/tcp_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace maskd::service_bench {
namespace {

constexpr size_t kMessageBytes = 32;

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Reads exactly `size` bytes; false on EOF or error.
bool ReadFully(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t got = read(fd, data, size);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return false;
    }
    data += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t put = write(fd, data, size);
    if (put <= 0) {
      if (put < 0 && errno == EINTR) continue;
      return false;
    }
    data += put;
    size -= static_cast<size_t>(put);
  }
  return true;
}

// The child: echoes every message until the parent closes (system calls
// only, as after a fork in a process with threads).
[[noreturn]] void Echo(int listener) {
  const int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) _exit(1);
  SetNoDelay(fd);
  char buffer[kMessageBytes];
  while (ReadFully(fd, buffer, sizeof(buffer)) && WriteFully(fd, buffer, sizeof(buffer))) {
  }
  _exit(0);
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat("tcp ping-pong: ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<maskbench::LatencySamples> MeasureTcpPingPong(absl::Duration duration) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return Errno("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(listener);
    return Errno("listen");
  }
  const pid_t child = fork();
  if (child < 0) {
    close(listener);
    return Errno("fork");
  }
  if (child == 0) Echo(listener);
  close(listener);

  absl::StatusOr<maskbench::LatencySamples> result = Errno("connect");
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    SetNoDelay(fd);
    maskbench::LatencySamples samples;
    char buffer[kMessageBytes] = {};
    const auto end = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(duration);
    result = std::move(samples);
    for (auto now = std::chrono::steady_clock::now(); now < end;) {
      if (!WriteFully(fd, buffer, sizeof(buffer)) || !ReadFully(fd, buffer, sizeof(buffer))) {
        result = Errno("echo");
        break;
      }
      const auto after = std::chrono::steady_clock::now();
      result->Add(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(after - now).count()));
      now = after;
    }
  }
  if (fd >= 0) close(fd);
  int status = 0;
  waitpid(child, &status, 0);
  return result;
}

}  // namespace maskd::service_bench
