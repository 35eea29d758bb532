// Serves the Compile RPC. Until the engine lands it validates the call
// (known tokenizer, a spec present) and answers UNIMPLEMENTED; the engine
// plugs in at Compile() without changing the service around it.
#ifndef MASKD_SERVICE_COMPILE_HANDLER_H_
#define MASKD_SERVICE_COMPILE_HANDLER_H_

#include "grpcpp/support/status.h"
#include "maskd/v1/compile.pb.h"
#include "service/tokenizer_registry.h"

namespace maskd {

class CompileHandler {
 public:
  explicit CompileHandler(const TokenizerRegistry* tokenizers) : tokenizers_(tokenizers) {}

  grpc::Status Compile(const v1::CompileRequest& request, v1::CompileResponse* response) const;

 private:
  const TokenizerRegistry* tokenizers_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_COMPILE_HANDLER_H_
