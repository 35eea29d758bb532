#include "service/health_service.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace maskd {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

HealthService::HealthService(int max_watches) : max_watches_(max_watches) {
  statuses_[""] = HealthCheckResponse::SERVING;
}

void HealthService::SetServingStatus(const std::string& service, bool serving) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // After Shutdown nothing turns SERVING again.
    statuses_[service] =
        serving && !shut_down_ ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  changed_.notify_all();
}

void HealthService::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
    for (auto& [service, status] : statuses_) status = HealthCheckResponse::NOT_SERVING;
  }
  changed_.notify_all();
}

HealthService::ServingStatus HealthService::StatusLocked(const std::string& service) const {
  auto it = statuses_.find(service);
  return it == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN : it->second;
}

grpc::Status HealthService::Check(grpc::ServerContext* /*context*/,
                                  const HealthCheckRequest* request,
                                  HealthCheckResponse* response) {
  std::lock_guard<std::mutex> lock(mu_);
  const ServingStatus status = StatusLocked(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    std::vector<std::string> known;
    for (const auto& [service, unused] : statuses_)
      known.push_back(absl::StrCat("'", service, "'"));
    std::sort(known.begin(), known.end());
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no health status for service '", request->service(),
                                     "' (known: ", absl::StrJoin(known, ", "), ")"));
  }
  response->set_status(status);
  return grpc::Status::OK;
}

grpc::Status HealthService::Watch(grpc::ServerContext* context, const HealthCheckRequest* request,
                                  grpc::ServerWriter<HealthCheckResponse>* writer) {
  std::unique_lock<std::mutex> lock(mu_);
  if (watches_ >= max_watches_) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat("too many health Watch calls at once (", max_watches_,
                                     ", each holds a server thread); use Check"));
  }
  ++watches_;
  std::optional<ServingStatus> sent;
  grpc::Status outcome = grpc::Status::OK;
  while (true) {
    const ServingStatus status = StatusLocked(request->service());
    if (status != sent) {
      HealthCheckResponse response;
      response.set_status(status);
      lock.unlock();
      const bool written = writer->Write(response);
      lock.lock();
      if (!written) {
        outcome = grpc::Status(grpc::StatusCode::CANCELLED, "the health Watch call is gone");
        break;
      }
      sent = status;
    }
    if (shut_down_ && sent == StatusLocked(request->service())) break;
    // Wakes on a change; the timeout notices a cancelled call.
    changed_.wait_for(lock, std::chrono::milliseconds(200));
    if (context->IsCancelled()) {
      outcome = grpc::Status(grpc::StatusCode::CANCELLED, "the health Watch call was cancelled");
      break;
    }
  }
  --watches_;
  return outcome;
}

}  // namespace maskd
