#include "cache/compute_errors.h"

#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace maskd {

bool IsDeterministicError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
      return false;
    default:
      return true;
  }
}

absl::Status InternalErrorFromException(std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return absl::InternalError(absl::StrCat("compute threw an exception: ", ex.what()));
  } catch (...) {
    return absl::InternalError("compute threw a non-standard exception");
  }
  return absl::InternalError("compute failed with an unknown exception");
}

}  // namespace maskd
