// An absl::Status copied into plain strings, so that copies share nothing.
//
// Why: absl::Status shares its message through a reference count whose
// decrement lives in the compiled absl library. The system absl is not built
// with ThreadSanitizer, so TSan cannot see that decrement and reports a race
// whenever one Status travels between threads (as a cached error served to
// many callers does). Handing every caller its own freshly built Status keeps
// the cache TSan-clean at the cost of a small allocation per error hit.
#ifndef MASKD_CACHE_STATUS_SNAPSHOT_H_
#define MASKD_CACHE_STATUS_SNAPSHOT_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace maskd {

class StatusSnapshot {
 public:
  StatusSnapshot() = default;
  explicit StatusSnapshot(const absl::Status& status);

  // A new Status with the same code, message and payloads.
  absl::Status ToStatus() const;
  bool ok() const { return code_ == absl::StatusCode::kOk; }
  // Bytes of text held (message and payloads).
  size_t TextBytes() const;

 private:
  absl::StatusCode code_ = absl::StatusCode::kOk;
  std::string message_;
  std::vector<std::pair<std::string, std::string>> payloads_;  // type URL, payload
};

}  // namespace maskd

#endif  // MASKD_CACHE_STATUS_SNAPSHOT_H_
