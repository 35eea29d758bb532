// The TLS files gRPC's listener serves, reloadable on demand (SIGHUP).
//
// gRPC 1.51 reloads a listener's certificate only through
// FileWatcherCertificateProvider, on the interval it was built with, and has
// no provider that can be told "reload now". So the listener watches private
// copies of the operator's files (a directory of maskd's own, read again
// every kWatchSeconds), and maskd replaces the copies when the operator's
// files change (CredentialReloader's interval) or at once on SIGHUP, after
// checking that they load and that the key matches the certificate. A set
// that fails the check is refused and the copies in force stay.
//
// The copies of one refresh live in a fresh generation directory and a
// symlink (`current`) is renamed onto it, so the watcher sees the key and
// certificate change together.
#ifndef MASKD_SERVICE_GRPC_TLS_FILES_H_
#define MASKD_SERVICE_GRPC_TLS_FILES_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/tls_options.h"

namespace maskd {

class GrpcTlsFiles {
 public:
  // How often gRPC reads the copies again.
  static constexpr unsigned kWatchSeconds = 1;

  // Copies `tls`'s files (checked) into a new private directory under
  // $TMPDIR (else /tmp); FAILED_PRECONDITION when it cannot be created.
  static absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> Create(const TlsOptions& tls);
  // Removes the private directory.
  ~GrpcTlsFiles();

  GrpcTlsFiles(const GrpcTlsFiles&) = delete;
  GrpcTlsFiles& operator=(const GrpcTlsFiles&) = delete;

  // Copies the operator's files again (INVALID_ARGUMENT or NOT_FOUND naming
  // the flag when they do not load; the copies in force then stay).
  absl::Status Refresh();

  // `tls` with the paths of the copies, for GrpcServerCredentials.
  const TlsOptions& copies() const { return copies_; }

 private:
  GrpcTlsFiles(const TlsOptions& tls, std::string dir);

  const TlsOptions tls_;
  const std::string dir_;
  TlsOptions copies_;
  std::mutex mu_;
  int generation_ = 0;  // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_GRPC_TLS_FILES_H_
