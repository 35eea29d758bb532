#include "clients/cpp/status.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace maskd::client {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::Status ErrorToStatus(const v1::Error& error) {
  // Code 0 on an Error would be a server bug; never turn it into success.
  const absl::StatusCode code =
      error.code() == 0 ? absl::StatusCode::kUnknown : static_cast<absl::StatusCode>(error.code());
  absl::Status status(code, error.message());
  status.SetPayload(kItemErrorPayload, absl::Cord(error.SerializeAsString()));
  return status;
}

bool IsItemError(const absl::Status& status) {
  return status.GetPayload(kItemErrorPayload).has_value();
}

std::optional<v1::SourceLocation> SourceLocationOf(const absl::Status& status) {
  auto payload = status.GetPayload(kItemErrorPayload);
  if (!payload) return std::nullopt;
  v1::Error error;
  if (!error.ParseFromString(std::string(*payload)) || !error.has_location()) return std::nullopt;
  return error.location();
}

std::string DescribeLocation(const v1::SourceLocation& location) {
  switch (location.where_case()) {
    case v1::SourceLocation::kJsonPointer:
      // The root pointer is the empty string; show it as "/" would be wrong
      // (that names the key ""), so say what it is.
      return location.json_pointer().empty() ? "the schema root" : location.json_pointer();
    case v1::SourceLocation::kText:
      return absl::StrCat("line ", location.text().line(), ", column ", location.text().column(),
                          " (byte ", location.text().byte_offset(), ")");
    case v1::SourceLocation::WHERE_NOT_SET:
      break;
  }
  return "";
}

}  // namespace maskd::client
