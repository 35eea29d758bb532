// Parses a request message from the raw bytes gRPC received, so a request
// protobuf refuses is answered with INVALID_ARGUMENT naming the field at
// fault. With gRPC's generated (non-raw) handlers such a request ended a
// Session stream with OK and no answer, and failed a unary call with
// INTERNAL and an empty message.
#ifndef MASKD_SERVICE_REQUEST_PARSE_H_
#define MASKD_SERVICE_REQUEST_PARSE_H_

#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/byte_buffer.h"

namespace maskd {

// Fills `message` from `bytes`. InvalidArgument when they do not parse: the
// first string field holding invalid UTF-8 (its path, e.g.
// "ops[0].open.compile.spec.json_schema", and the byte offset), or a
// malformed encoding.
absl::Status ParseRequest(std::string_view bytes, google::protobuf::Message* message);
absl::Status ParseRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* message);

// Serializes `message` into `buffer`.
void SerializeResponse(const google::protobuf::Message& message, grpc::ByteBuffer* buffer);

}  // namespace maskd

#endif  // MASKD_SERVICE_REQUEST_PARSE_H_
