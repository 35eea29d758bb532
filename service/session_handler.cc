#include "service/session_handler.h"

namespace maskd {

grpc::Status SessionHandler::Run(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<v1::StepResponse, v1::StepRequest>* /*stream*/) const {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "Session: the grammar engine has not landed in this build yet");
}

}  // namespace maskd
