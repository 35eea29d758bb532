#include "service/credential_reloader.h"

#include <sys/stat.h>

#include <chrono>
#include <utility>

#include "service/log.h"

namespace maskd {

bool CredentialReloader::Stamp::operator==(const Stamp& other) const {
  return exists == other.exists && device == other.device && inode == other.inode &&
         size == other.size && mtime.tv_sec == other.mtime.tv_sec &&
         mtime.tv_nsec == other.mtime.tv_nsec;
}

CredentialReloader::Stamp CredentialReloader::StampOf(const std::string& path) {
  Stamp stamp;
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return stamp;
  stamp.exists = true;
  stamp.device = info.st_dev;
  stamp.inode = info.st_ino;
  stamp.size = info.st_size;
  stamp.mtime = info.st_mtim;
  return stamp;
}

CredentialReloader::CredentialReloader(absl::Duration interval, prometheus::Registry& registry)
    : interval_(interval),
      reloads_(&prometheus::BuildCounter()
                    .Name("maskd_credential_reloads_total")
                    .Help("Credential reloads (token file, /metrics TLS files) by what was "
                          "reloaded and outcome (ok, error: the previous ones stay in force).")
                    .Register(registry)) {}

CredentialReloader::~CredentialReloader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void CredentialReloader::Watch(std::string what, std::vector<std::string> paths,
                               std::function<absl::Status()> reload) {
  Watched watched{std::move(what), std::move(paths), std::move(reload), {}};
  // What was loaded at start is the baseline.
  for (const std::string& path : watched.paths) watched.stamps.push_back(StampOf(path));
  watched_.push_back(std::move(watched));
}

void CredentialReloader::Start() {
  if (watched_.empty()) return;
  watcher_ = std::thread([this] { Loop(); });
}

void CredentialReloader::ReloadNow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    reload_now_ = true;
  }
  wake_.notify_all();
}

void CredentialReloader::Check(Watched& watched, bool forced) {
  std::vector<Stamp> stamps;
  for (const std::string& path : watched.paths) stamps.push_back(StampOf(path));
  if (!forced && stamps == watched.stamps) return;
  // Recorded even when the reload fails: the next change tries again,
  // instead of logging the same error every interval.
  watched.stamps = std::move(stamps);
  const absl::Status status = watched.reload();
  reloads_->Add({{"what", watched.what}, {"outcome", status.ok() ? "ok" : "error"}}).Increment();
  if (status.ok()) {
    MASKD_LOG(INFO) << "reloaded " << watched.what << (forced ? " (SIGHUP)" : " (files changed)");
  } else {
    MASKD_LOG(ERROR) << "reloading " << watched.what
                     << " failed, the previous credentials stay in force: " << status.message();
  }
}

void CredentialReloader::Loop() {
  // With no interval, wait for ReloadNow only.
  const auto tick = interval_ > absl::ZeroDuration()
                        ? absl::ToChronoMilliseconds(interval_)
                        : std::chrono::milliseconds(std::chrono::hours(24));
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait_for(lock, tick, [this] { return stopping_ || reload_now_; });
    if (stopping_) return;
    const bool forced = reload_now_;
    reload_now_ = false;
    lock.unlock();
    for (Watched& watched : watched_) Check(watched, forced);
    lock.lock();
  }
}

}  // namespace maskd
