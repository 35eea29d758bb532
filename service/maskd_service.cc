#include "service/maskd_service.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "service/compile_reactor.h"
#include "service/log.h"
#include "service/refused_stream.h"
#include "service/request_parse.h"
#include "service/status_convert.h"

namespace maskd {
namespace {

// Records one RPC's outcome and latency when the handler returns, and the
// caller's tenant once known ("-": not authenticated).
class RpcRecorder {
 public:
  RpcRecorder(ServiceMetrics* metrics, const char* method)
      : metrics_(metrics), method_(method), start_(std::chrono::steady_clock::now()) {}

  void set_tenant(const std::string& tenant) { tenant_ = tenant; }

  grpc::Status Finish(grpc::Status status) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    metrics_->RecordRpc(method_, status.error_code(), elapsed.count());
    metrics_->CountTenantCall(tenant_, method_, status.error_code());
    if (!status.ok()) metrics_->CountError(static_cast<absl::StatusCode>(status.error_code()));
    return status;
  }

 private:
  ServiceMetrics* metrics_;
  const char* method_;
  std::chrono::steady_clock::time_point start_;
  std::string tenant_ = "-";
};

}  // namespace

void FillTokenizerInfo(const RegisteredTokenizer& entry, v1::TokenizerInfo* info) {
  const Tokenizer& tokenizer = *entry.tokenizer;
  info->set_tokenizer_id(tokenizer.id());
  info->set_name(tokenizer.name());
  switch (tokenizer.kind()) {
    case TokenizerKind::kByteLevelBpe:
      info->set_kind(v1::TOKENIZER_KIND_BYTE_LEVEL_BPE);
      break;
    case TokenizerKind::kSentencePieceBpe:
      info->set_kind(v1::TOKENIZER_KIND_SENTENCEPIECE_BPE);
      break;
  }
  info->set_vocab_size(static_cast<uint32_t>(tokenizer.vocab_size()));
  for (TokenId eos : tokenizer.eos_ids()) info->add_eos_token_ids(eos);
  info->set_special_token_count(static_cast<uint32_t>(entry.special_token_count));
  info->set_preloaded(entry.preloaded);
}

MaskdService::MaskdService(TokenizerRegistry* tokenizers, ServiceMetrics* metrics,
                           const CompileHandler* compile, SessionRegistry* session,
                           const TokenAuthHolder* auth, bool allow_register_tokenizer)
    : tokenizers_(tokenizers),
      metrics_(metrics),
      compile_(compile),
      session_(session),
      auth_(auth),
      allow_register_tokenizer_(allow_register_tokenizer) {}

absl::StatusOr<std::string> MaskdService::Authenticate(
    const grpc::ServerContextBase& context) const {
  const std::shared_ptr<const TokenAuthenticator> auth = auth_->Get();
  if (!auth->enabled()) return std::string(kDefaultTenant);
  const auto& metadata = context.client_metadata();
  auto header = metadata.find("authorization");
  // A repeated header is ambiguous: refuse rather than pick one.
  if (header != metadata.end() && metadata.count("authorization") > 1) {
    return absl::UnauthenticatedError("more than one authorization metadata entry");
  }
  return auth->Authenticate(header == metadata.end()
                                ? absl::string_view()
                                : absl::string_view(header->second.data(), header->second.size()));
}

grpc::ServerUnaryReactor* MaskdService::RegisterTokenizer(grpc::CallbackServerContext* context,
                                                          const grpc::ByteBuffer* request,
                                                          grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto recorder = std::make_shared<RpcRecorder>(metrics_, "RegisterTokenizer");
  absl::StatusOr<std::string> tenant = Authenticate(*context);
  if (!tenant.ok()) {
    reactor->Finish(recorder->Finish(ToGrpcStatus(tenant.status())));
    return reactor;
  }
  recorder->set_tenant(*tenant);
  auto parsed = std::make_shared<v1::RegisterTokenizerRequest>();
  if (absl::Status s = ParseRequest(*request, parsed.get()); !s.ok()) {
    reactor->Finish(recorder->Finish(ToGrpcStatus(s)));
    return reactor;
  }
  auto answer = [this, reactor, recorder, parsed, tenant = *tenant, response] {
    v1::RegisterTokenizerResponse out;
    grpc::Status status = DoRegisterTokenizer(*parsed, tenant, &out);
    if (status.ok()) SerializeResponse(out, response);
    reactor->Finish(recorder->Finish(status));
  };
  if (parsed->source_case() != v1::RegisterTokenizerRequest::kFiles || !allow_register_tokenizer_) {
    answer();  // a lookup or a refusal: cheap
    return reactor;
  }
  if (uploads_in_flight_.fetch_add(1) >= kMaxUploadsInFlight) {
    uploads_in_flight_.fetch_sub(1);
    reactor->Finish(recorder->Finish(
        grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                     absl::StrCat("this server loads at most ", kMaxUploadsInFlight,
                                  " uploaded tokenizers at once; retry later"))));
    return reactor;
  }
  upload_pool_.Submit([this, answer = std::move(answer)] {
    answer();
    uploads_in_flight_.fetch_sub(1);
  });
  return reactor;
}

grpc::ServerUnaryReactor* MaskdService::UnregisterTokenizer(grpc::CallbackServerContext* context,
                                                            const grpc::ByteBuffer* request,
                                                            grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  RpcRecorder recorder(metrics_, "UnregisterTokenizer");
  absl::StatusOr<std::string> tenant = Authenticate(*context);
  if (!tenant.ok()) {
    reactor->Finish(recorder.Finish(ToGrpcStatus(tenant.status())));
    return reactor;
  }
  recorder.set_tenant(*tenant);
  v1::UnregisterTokenizerRequest parsed;
  if (absl::Status s = ParseRequest(*request, &parsed); !s.ok()) {
    reactor->Finish(recorder.Finish(ToGrpcStatus(s)));
    return reactor;
  }
  absl::StatusOr<bool> removed = tokenizers_->Unregister(parsed.tokenizer_id(), *tenant);
  if (!removed.ok()) {
    reactor->Finish(recorder.Finish(ToGrpcStatus(removed.status())));
    return reactor;
  }
  v1::UnregisterTokenizerResponse out;
  out.set_removed(*removed);
  if (*removed) {
    metrics_->SetTokenizerCount(tokenizers_->size());
    MASKD_LOG(INFO) << "tenant " << *tenant << " unregistered tokenizer " << parsed.tokenizer_id();
  }
  SerializeResponse(out, response);
  reactor->Finish(recorder.Finish(grpc::Status::OK));
  return reactor;
}

grpc::Status MaskdService::DoRegisterTokenizer(const v1::RegisterTokenizerRequest& request,
                                               const std::string& tenant,
                                               v1::RegisterTokenizerResponse* response) {
  switch (request.source_case()) {
    case v1::RegisterTokenizerRequest::kPreloadedName: {
      absl::StatusOr<RegisteredTokenizer> entry =
          tokenizers_->FindByName(request.preloaded_name(), tenant);
      if (!entry.ok()) return ToGrpcStatus(entry.status());
      FillTokenizerInfo(*entry, response->mutable_tokenizer());
      response->set_already_registered(true);
      return grpc::Status::OK;
    }
    case v1::RegisterTokenizerRequest::kFiles: {
      if (!allow_register_tokenizer_) {
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                            "this server accepts no tokenizer uploads (it runs without "
                            "--allow_register_tokenizer); use a preloaded tokenizer by "
                            "preloaded_name (ListTokenizers lists them)");
      }
      const v1::TokenizerFiles& files = request.files();
      std::vector<TokenId> eos(request.eos_token_ids().begin(), request.eos_token_ids().end());
      absl::StatusOr<RegisterOutcome> outcome = tokenizers_->Register(
          files.tokenizer_json(), files.tokenizer_config_json(), request.name(), eos, tenant);
      if (!outcome.ok()) return ToGrpcStatus(outcome.status());
      FillTokenizerInfo(outcome->entry, response->mutable_tokenizer());
      response->set_already_registered(outcome->already_registered);
      if (!outcome->already_registered) {
        metrics_->SetTokenizerCount(tokenizers_->size());
        for (const std::string& evicted : outcome->evicted_ids) {
          MASKD_LOG(INFO) << "evicted unused tokenizer " << evicted << " to make room";
        }
        MASKD_LOG(INFO) << "tenant " << tenant << " registered tokenizer "
                        << outcome->entry.tokenizer->name() << " ("
                        << outcome->entry.tokenizer->id() << ", "
                        << outcome->entry.tokenizer->vocab_size() << " tokens)";
      }
      return grpc::Status::OK;
    }
    case v1::RegisterTokenizerRequest::SOURCE_NOT_SET:
      break;
  }
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      "RegisterTokenizerRequest needs files or preloaded_name");
}

grpc::Status MaskdService::ListTokenizers(grpc::ServerContext* context,
                                          const v1::ListTokenizersRequest* /*request*/,
                                          v1::ListTokenizersResponse* response) {
  RpcRecorder recorder(metrics_, "ListTokenizers");
  absl::StatusOr<std::string> tenant = Authenticate(*context);
  if (!tenant.ok()) return recorder.Finish(ToGrpcStatus(tenant.status()));
  recorder.set_tenant(*tenant);
  for (const RegisteredTokenizer& entry : tokenizers_->List(*tenant)) {
    FillTokenizerInfo(entry, response->add_tokenizers());
  }
  return recorder.Finish(grpc::Status::OK);
}

grpc::ServerUnaryReactor* MaskdService::Compile(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response) {
  absl::StatusOr<std::string> tenant = Authenticate(*context);
  if (!tenant.ok()) {
    RpcRecorder recorder(metrics_, "Compile");
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(recorder.Finish(ToGrpcStatus(tenant.status())));
    return reactor;
  }
  // Counted (RPC outcome, latency, tenant) by the reactor; its compiles
  // take places in the tenant's compile queue.
  return CompileReactor::Start(compile_, metrics_, context, request, response, *tenant);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* MaskdService::Session(
    grpc::CallbackServerContext* context) {
  absl::StatusOr<std::string> tenant = Authenticate(*context);
  if (!tenant.ok()) {
    metrics_->RecordRpc("Session", grpc::StatusCode::UNAUTHENTICATED, 0);
    metrics_->CountTenantCall("-", "Session", grpc::StatusCode::UNAUTHENTICATED);
    metrics_->CountError(absl::StatusCode::kUnauthenticated);
    return new RefusedStream(ToGrpcStatus(tenant.status()));
  }
  metrics_->CountTenantCall(*tenant, "Session", grpc::StatusCode::OK);
  // Counted (active streams, RPC outcome) by the reactor, which outlives
  // this call.
  return session_->Open(context, *tenant);
}

}  // namespace maskd
