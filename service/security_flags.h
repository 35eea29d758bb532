// maskd's security flags in one block: TLS for both listeners, mutual TLS,
// bearer tokens and RegisterTokenizer policy. main.cc reads them through
// SecurityOptionsFromFlags.
#ifndef MASKD_SERVICE_SECURITY_FLAGS_H_
#define MASKD_SERVICE_SECURITY_FLAGS_H_

#include "absl/status/statusor.h"
#include "service/security_options.h"

namespace maskd {

// Reads and validates the flags (the TLS files and the token file are read
// now, so a bad path stops the start with a message naming the flag).
absl::StatusOr<SecurityOptions> SecurityOptionsFromFlags();

}  // namespace maskd

#endif  // MASKD_SERVICE_SECURITY_FLAGS_H_
