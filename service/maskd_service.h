// The maskd.v1.Maskd gRPC service: tokenizer RPCs here, Compile and Session
// delegated to their handlers. Every RPC is counted and timed in
// ServiceMetrics. Session, Compile and the tokenizer RPCs that carry strings
// (Register, Unregister) use the callback API on raw bytes (one reactor per
// call, no thread held while a compile runs; requests parsed by maskd so a
// malformed one is INVALID_ARGUMENT naming the field, not INTERNAL with an
// empty message); tokenizer uploads load on a small pool of their own.
#ifndef MASKD_SERVICE_MASKD_SERVICE_H_
#define MASKD_SERVICE_MASKD_SERVICE_H_

#include <atomic>

#include "maskd/v1/maskd.grpc.pb.h"
#include "service/compile_handler.h"
#include "service/service_metrics.h"
#include "service/session_registry.h"
#include "service/thread_pool.h"
#include "service/token_auth.h"
#include "service/tokenizer_registry.h"

namespace maskd {

// What the service reports about a registered tokenizer.
void FillTokenizerInfo(const RegisteredTokenizer& entry, v1::TokenizerInfo* info);

class MaskdService final
    : public v1::Maskd::WithRawCallbackMethod_RegisterTokenizer<
          v1::Maskd::WithRawCallbackMethod_UnregisterTokenizer<
              v1::Maskd::WithRawCallbackMethod_Compile<
                  v1::Maskd::WithRawCallbackMethod_Session<v1::Maskd::Service>>>> {
 public:
  // All pointers must outlive the service. Every RPC first authenticates
  // its caller with the authenticator `auth` holds then (token_auth.h). Tokenizer uploads are
  // refused (PERMISSION_DENIED) unless `allow_register_tokenizer`.
  MaskdService(TokenizerRegistry* tokenizers, ServiceMetrics* metrics,
               const CompileHandler* compile, SessionRegistry* session, const TokenAuthHolder* auth,
               bool allow_register_tokenizer);

  // Uploads beyond kMaxUploadsInFlight at once are RESOURCE_EXHAUSTED.
  static constexpr int kMaxUploadsInFlight = 8;

  grpc::ServerUnaryReactor* RegisterTokenizer(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* request,
                                              grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* UnregisterTokenizer(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response) override;
  grpc::Status ListTokenizers(grpc::ServerContext* context,
                              const v1::ListTokenizersRequest* request,
                              v1::ListTokenizersResponse* response) override;
  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Session(
      grpc::CallbackServerContext* context) override;

 private:
  grpc::Status DoRegisterTokenizer(const v1::RegisterTokenizerRequest& request,
                                   const std::string& tenant,
                                   v1::RegisterTokenizerResponse* response);

  // The caller's tenant, or UNAUTHENTICATED (counted as the RPC's outcome).
  absl::StatusOr<std::string> Authenticate(const grpc::ServerContextBase& context) const;

  TokenizerRegistry* tokenizers_;
  ServiceMetrics* metrics_;
  const CompileHandler* compile_;
  SessionRegistry* session_;
  const TokenAuthHolder* auth_;
  const bool allow_register_tokenizer_;
  std::atomic<int> uploads_in_flight_{0};
  // Loads uploaded tokenizers (seconds for a large one) off gRPC's callback
  // threads. Last: destroyed first, finishing the calls it holds while
  // everything they use is still there.
  ThreadPool upload_pool_{2};
};

}  // namespace maskd

#endif  // MASKD_SERVICE_MASKD_SERVICE_H_
