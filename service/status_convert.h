// absl::Status (used inside maskd) <-> grpc::Status (on the wire). The codes
// share numbers, so conversion keeps the code and the message (made valid
// UTF-8 and bounded, see bounded_text.h).
#ifndef MASKD_SERVICE_STATUS_CONVERT_H_
#define MASKD_SERVICE_STATUS_CONVERT_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "service/bounded_text.h"

namespace maskd {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), BoundedText(status.message()));
}

}  // namespace maskd

#endif  // MASKD_SERVICE_STATUS_CONVERT_H_
