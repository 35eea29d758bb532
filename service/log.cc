#include "service/log.h"

#include <cstdio>
#include <mutex>
#include <string>

namespace maskd {
namespace {

std::mutex& LogMutex() {
  static std::mutex* mutex = new std::mutex;
  return *mutex;
}

const char* SeverityPrefix(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return "";
    case LogSeverity::kWarning:
      return "warning: ";
    case LogSeverity::kError:
      return "error: ";
  }
  return "";
}

}  // namespace

LogLine::~LogLine() {
  std::string line = "maskd: ";
  line += SeverityPrefix(severity_);
  line += stream_.str();
  line += '\n';
  std::lock_guard<std::mutex> lock(LogMutex());
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace maskd
