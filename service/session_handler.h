// Serves Session streams. Until the engine lands every stream is answered
// UNIMPLEMENTED; the matcher-per-sequence loop plugs in at Run().
#ifndef MASKD_SERVICE_SESSION_HANDLER_H_
#define MASKD_SERVICE_SESSION_HANDLER_H_

#include "grpcpp/server_context.h"
#include "grpcpp/support/sync_stream.h"
#include "maskd/v1/session.pb.h"
#include "service/tokenizer_registry.h"

namespace maskd {

class SessionHandler {
 public:
  explicit SessionHandler(const TokenizerRegistry* tokenizers) : tokenizers_(tokenizers) {}

  // Serves one stream until the client half-closes or the call is cancelled.
  grpc::Status Run(grpc::ServerContext* context,
                   grpc::ServerReaderWriter<v1::StepResponse, v1::StepRequest>* stream) const;

 private:
  [[maybe_unused]] const TokenizerRegistry* tokenizers_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_HANDLER_H_
