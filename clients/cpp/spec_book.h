// The compile requests behind the handles a MaskdClient compiled, so that a
// sequence opened by handle can be reopened on another replica (which may
// not hold that grammar) with the spec inline.
#ifndef MASKD_CLIENTS_CPP_SPEC_BOOK_H_
#define MASKD_CLIENTS_CPP_SPEC_BOOK_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "maskd/v1/compile.pb.h"

namespace maskd::client {

// Thread-safe; one per MaskdClient, shared with its sessions. One entry per
// distinct spec compiled (handles are content addresses).
class SpecBook {
 public:
  void Remember(const std::string& handle, const v1::CompileRequest& request) {
    absl::MutexLock lock(&mutex_);
    auto& entry = by_handle_[handle];
    if (entry == nullptr) entry = std::make_shared<const v1::CompileRequest>(request);
  }
  // Null when this client never compiled `handle`.
  std::shared_ptr<const v1::CompileRequest> Find(const std::string& handle) const {
    absl::MutexLock lock(&mutex_);
    auto it = by_handle_.find(handle);
    return it == by_handle_.end() ? nullptr : it->second;
  }

 private:
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const v1::CompileRequest>> by_handle_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SPEC_BOOK_H_
