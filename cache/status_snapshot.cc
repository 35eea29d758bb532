#include "cache/status_snapshot.h"

#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace maskd {

StatusSnapshot::StatusSnapshot(const absl::Status& status)
    : code_(status.code()), message_(status.message()) {
  status.ForEachPayload([this](absl::string_view type_url, const absl::Cord& payload) {
    payloads_.emplace_back(std::string(type_url), std::string(payload));
  });
}

absl::Status StatusSnapshot::ToStatus() const {
  absl::Status status(code_, message_);
  for (const auto& [type_url, payload] : payloads_) {
    status.SetPayload(type_url, absl::Cord(payload));
  }
  return status;
}

size_t StatusSnapshot::TextBytes() const {
  size_t bytes = message_.size();
  for (const auto& [type_url, payload] : payloads_) bytes += type_url.size() + payload.size();
  return bytes;
}

}  // namespace maskd
