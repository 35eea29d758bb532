#include "clients/cpp/client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/status.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace maskd::client {

const char* HealthStateName(HealthState state) {
  switch (state) {
    case HealthState::kUnknown:
      return "UNKNOWN";
    case HealthState::kServing:
      return "SERVING";
    case HealthState::kNotServing:
      return "NOT_SERVING";
    case HealthState::kServiceUnknown:
      return "SERVICE_UNKNOWN";
  }
  return "UNKNOWN";
}

MaskdClient::MaskdClient(const ChannelOptions& options)
    : MaskdClient(CreateChannel(options), options.rpc_deadline) {}

MaskdClient::MaskdClient(std::shared_ptr<grpc::Channel> channel, absl::Duration rpc_deadline)
    : channel_(std::move(channel)),
      stub_(v1::Maskd::NewStub(channel_)),
      rpc_deadline_(rpc_deadline) {}

absl::StatusOr<v1::RegisterTokenizerResponse> MaskdClient::RegisterTokenizer(
    const v1::RegisterTokenizerRequest& request) const {
  v1::RegisterTokenizerResponse response;
  const grpc::Status status =
      stub_->RegisterTokenizer(ContextWithTimeout(rpc_deadline_).get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::TokenizerInfo> MaskdClient::RegisterPreloaded(std::string name) const {
  v1::RegisterTokenizerRequest request;
  request.set_preloaded_name(std::move(name));
  absl::StatusOr<v1::RegisterTokenizerResponse> response = RegisterTokenizer(request);
  if (!response.ok()) return response.status();
  return response->tokenizer();
}

absl::StatusOr<std::vector<v1::TokenizerInfo>> MaskdClient::ListTokenizers() const {
  v1::ListTokenizersResponse response;
  const grpc::Status status = stub_->ListTokenizers(ContextWithTimeout(rpc_deadline_).get(),
                                                    v1::ListTokenizersRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<v1::TokenizerInfo>(response.tokenizers().begin(), response.tokenizers().end());
}

absl::StatusOr<bool> MaskdClient::UnregisterTokenizer(const std::string& tokenizer_id) const {
  v1::UnregisterTokenizerRequest request;
  request.set_tokenizer_id(tokenizer_id);
  v1::UnregisterTokenizerResponse response;
  const grpc::Status status =
      stub_->UnregisterTokenizer(ContextWithTimeout(rpc_deadline_).get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.removed();
}

absl::StatusOr<v1::TokenizerInfo> MaskdClient::FindTokenizer(std::string_view name_or_id) const {
  absl::StatusOr<std::vector<v1::TokenizerInfo>> all = ListTokenizers();
  if (!all.ok()) return all.status();
  std::vector<std::string> names;
  for (const v1::TokenizerInfo& info : *all) {
    if (info.name() == name_or_id || info.tokenizer_id() == name_or_id) return info;
    names.push_back(absl::StrCat(info.name(), " (", info.tokenizer_id(), ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      "the server has no tokenizer named or with id '", std::string(name_or_id),
      "'; it has: ", names.empty() ? std::string("none") : absl::StrJoin(names, ", ")));
}

absl::StatusOr<CompileResult> MaskdClient::Compile(const v1::CompileRequest& request) const {
  v1::CompileResponse response;
  const grpc::Status status =
      stub_->Compile(ContextWithTimeout(rpc_deadline_).get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  switch (response.result_case()) {
    case v1::CompileResponse::kGrammar: {
      CompileResult result;
      result.handle = response.grammar().handle();
      result.tokenizer_id = response.grammar().tokenizer_id();
      result.stats = response.grammar().stats();
      if (result.handle.empty()) {
        return absl::InternalError("the server compiled the spec but sent an empty handle");
      }
      spec_book_->Remember(result.handle, request);
      return result;
    }
    case v1::CompileResponse::kError:
      return ErrorToStatus(response.error());
    case v1::CompileResponse::RESULT_NOT_SET:
      break;
  }
  return absl::InternalError("the server's CompileResponse has neither a grammar nor an error");
}

absl::StatusOr<CompileResult> MaskdClient::Compile(std::string tokenizer_id,
                                                   v1::ConstraintSpec spec,
                                                   v1::CompileOptions options) const {
  v1::CompileRequest request;
  request.set_tokenizer_id(std::move(tokenizer_id));
  *request.mutable_spec() = std::move(spec);
  *request.mutable_options() = std::move(options);
  return Compile(request);
}

absl::StatusOr<HealthState> MaskdClient::CheckHealth(const std::string& service) const {
  // grpc.health.v1's generated stub comes with maskd_proto (proto/grpc/health).
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  std::unique_ptr<grpc::ClientContext> context = ContextWithTimeout(rpc_deadline_);
  const grpc::Status status = stub->Check(context.get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  // Enums are open in proto3: a newer server may send a value we do not know.
  const int32_t state = response.status();
  if (state < 0 || state > 3) {
    return absl::InternalError(absl::StrCat("health check: unknown serving status ", state));
  }
  return static_cast<HealthState>(state);
}

std::unique_ptr<Session> MaskdClient::StartSession(const SessionOptions& options) const {
  return std::make_unique<Session>(stub_.get(), options, spec_book_);
}

}  // namespace maskd::client
