// How the cache treats failed computes: which errors are worth remembering,
// and how an exception escaping a compute becomes a status.
#ifndef MASKD_CACHE_COMPUTE_ERRORS_H_
#define MASKD_CACHE_COMPUTE_ERRORS_H_

#include <exception>

#include "absl/status/status.h"

namespace maskd {

// True for errors that say something about the input (a malformed or
// unsupported spec, an internal bug on that input) and so will recur if the
// same key is computed again. False for transient conditions (cancelled,
// deadline exceeded, overloaded, unavailable, aborted), which a retry may cure.
bool IsDeterministicError(const absl::Status& status);

// INTERNAL status describing the exception `e` (its what() when it is a
// std::exception). Call from a catch block with std::current_exception().
absl::Status InternalErrorFromException(std::exception_ptr e);

}  // namespace maskd

#endif  // MASKD_CACHE_COMPUTE_ERRORS_H_
