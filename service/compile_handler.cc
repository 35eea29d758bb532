#include "service/compile_handler.h"

#include <string>

#include "service/status_convert.h"

namespace maskd {

grpc::Status CompileHandler::Compile(const v1::CompileRequest& request,
                                     v1::CompileResponse* /*response*/) const {
  if (absl::StatusOr<RegisteredTokenizer> tokenizer = tokenizers_->FindById(request.tokenizer_id());
      !tokenizer.ok()) {
    return ToGrpcStatus(tokenizer.status());
  }
  if (request.spec().kind_case() == v1::ConstraintSpec::KIND_NOT_SET) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "CompileRequest.spec has no constraint set");
  }
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "Compile: the grammar engine has not landed in this build yet");
}

}  // namespace maskd
