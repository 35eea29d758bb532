// Reloads credentials without a restart: the bearer-token file and the TLS
// files of the /metrics listener, when they change on disk (checked every
// interval by mtime, size and inode, so renaming a new file into place
// counts) or at once on SIGHUP (ReloadNow); gRPC's listener is given the TLS
// files through private copies this refreshes (grpc_tls_files.h). A file that fails to load is
// logged and counted, and the previous credentials stay in force.
#ifndef MASKD_SERVICE_CREDENTIAL_RELOADER_H_
#define MASKD_SERVICE_CREDENTIAL_RELOADER_H_

#include <sys/types.h>

#include <condition_variable>
#include <ctime>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace maskd {

class CredentialReloader {
 public:
  // `interval` zero or less: files are reloaded only by ReloadNow.
  // Registers maskd_credential_reloads_total{what,outcome} on `registry`.
  CredentialReloader(absl::Duration interval, prometheus::Registry& registry);
  ~CredentialReloader();

  CredentialReloader(const CredentialReloader&) = delete;
  CredentialReloader& operator=(const CredentialReloader&) = delete;

  // Before Start: `reload` runs when one of `paths` changes; `what` names it
  // in the log and the metric ("token_file", "metrics_tls").
  void Watch(std::string what, std::vector<std::string> paths,
             std::function<absl::Status()> reload);
  void Start();

  // Reloads everything watched now (asynchronously, on the watcher thread).
  void ReloadNow();

 private:
  struct Stamp {
    bool exists = false;
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec mtime{};
    bool operator==(const Stamp& other) const;
  };
  struct Watched {
    std::string what;
    std::vector<std::string> paths;
    std::function<absl::Status()> reload;
    std::vector<Stamp> stamps;
  };
  static Stamp StampOf(const std::string& path);
  void Loop();
  // Reloads `watched` if forced or a file changed; records the new stamps.
  void Check(Watched& watched, bool forced);

  const absl::Duration interval_;
  prometheus::Family<prometheus::Counter>* reloads_;
  std::vector<Watched> watched_;  // touched by the watcher thread once started

  std::mutex mu_;
  std::condition_variable wake_;
  bool reload_now_ = false;  // guarded by mu_
  bool stopping_ = false;    // guarded by mu_
  std::thread watcher_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_CREDENTIAL_RELOADER_H_
