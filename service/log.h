// A tiny stderr logger (absl/log is not in Debian's absl 20220623). Lines are
// written whole under a lock so concurrent threads never interleave, and are
// prefixed "maskd: " so operators and tests can grep them.
//
//   MASKD_LOG(INFO) << "grpc listening on " << address;
//   -> "maskd: grpc listening on 127.0.0.1:50051"
#ifndef MASKD_SERVICE_LOG_H_
#define MASKD_SERVICE_LOG_H_

#include <sstream>

namespace maskd {

enum class LogSeverity { kInfo, kWarning, kError };

// Collects one line and writes it to stderr when destroyed.
class LogLine {
 public:
  explicit LogLine(LogSeverity severity) : severity_(severity) {}
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  ~LogLine();

  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  LogSeverity severity_;
  std::ostringstream stream_;
};

}  // namespace maskd

#define MASKD_LOG_SEVERITY_INFO ::maskd::LogSeverity::kInfo
#define MASKD_LOG_SEVERITY_WARNING ::maskd::LogSeverity::kWarning
#define MASKD_LOG_SEVERITY_ERROR ::maskd::LogSeverity::kError
#define MASKD_LOG(severity) ::maskd::LogLine(MASKD_LOG_SEVERITY_##severity)

#endif  // MASKD_SERVICE_LOG_H_
