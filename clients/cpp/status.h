// gRPC statuses and maskd.v1.Error (per-item errors inside successful
// responses) as absl::Status, so every client call reports failures one way:
// the server's code and message, unchanged.
#ifndef MASKD_CLIENTS_CPP_STATUS_H_
#define MASKD_CLIENTS_CPP_STATUS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "maskd/v1/common.pb.h"

namespace maskd::client {

// The payload key under which ErrorToStatus stores the serialized
// maskd.v1.Error (absl::Status payloads are keyed by type URL).
inline constexpr char kItemErrorPayload[] = "type.googleapis.com/maskd.v1.Error";

// Same code (the numbers are shared), same message.
absl::Status FromGrpcStatus(const grpc::Status& status);

// A per-item error from the server. The message is kept verbatim; the whole
// Error (location included) rides along as a payload.
absl::Status ErrorToStatus(const v1::Error& error);

// True for statuses made by ErrorToStatus: the server judged the item (a
// spec, a sequence op) rather than failing the call.
bool IsItemError(const absl::Status& status);

// The location attached by ErrorToStatus, if any.
std::optional<v1::SourceLocation> SourceLocationOf(const absl::Status& status);

// "/properties/age", "line 3, column 7 (byte 41)"; empty when unset.
std::string DescribeLocation(const v1::SourceLocation& location);

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_STATUS_H_
