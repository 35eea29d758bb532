// grpc.health.v1.Health, served by maskd itself instead of gRPC's built-in
// one: on SIGTERM the built-in service (gRPC 1.51) sends NOT_SERVING to its
// Watch calls but keeps them open, and each open call holds the server's
// drain until --shutdown_grace runs out (measured: a load balancer's Watch
// kept maskd alive 20 s under a 20 s grace; SessionLifecycleTest checks it).
//
// Check answers from a table of statuses ("" is the server as a whole;
// unknown services are NOT_FOUND). Watch sends the status, then every change,
// and holds one of the server's synchronous threads while it lasts, so at
// most `max_watches` run at once (beyond: RESOURCE_EXHAUSTED). Shutdown turns
// everything NOT_SERVING and ends the Watch calls, so they do not hold up the
// server's drain.
#ifndef MASKD_SERVICE_HEALTH_SERVICE_H_
#define MASKD_SERVICE_HEALTH_SERVICE_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace maskd {

class HealthService final : public grpc::health::v1::Health::Service {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  // The server as a whole ("") starts SERVING.
  explicit HealthService(int max_watches);

  // Adds or updates `service` ("" is the server as a whole).
  void SetServingStatus(const std::string& service, bool serving);
  // Every known service NOT_SERVING; open Watch calls get that and end.
  // Check keeps answering (NOT_SERVING) until the server stops.
  void Shutdown();

  grpc::Status Check(grpc::ServerContext* context,
                     const grpc::health::v1::HealthCheckRequest* request,
                     grpc::health::v1::HealthCheckResponse* response) override;
  grpc::Status Watch(grpc::ServerContext* context,
                     const grpc::health::v1::HealthCheckRequest* request,
                     grpc::ServerWriter<grpc::health::v1::HealthCheckResponse>* writer) override;

 private:
  // SERVICE_UNKNOWN when `service` is not in the table; requires mu_.
  ServingStatus StatusLocked(const std::string& service) const;

  const int max_watches_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  absl::flat_hash_map<std::string, ServingStatus> statuses_;  // guarded by mu_
  int watches_ = 0;                                           // guarded by mu_
  bool shut_down_ = false;                                    // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_HEALTH_SERVICE_H_
