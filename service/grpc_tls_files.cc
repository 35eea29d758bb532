#include "service/grpc_tls_files.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/openssl_context.h"

namespace maskd {
namespace {

absl::Status WritePrivateFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  chmod(path.c_str(), 0600);
  return absl::OkStatus();
}

}  // namespace

GrpcTlsFiles::GrpcTlsFiles(const TlsOptions& tls, std::string dir)
    : tls_(tls), dir_(std::move(dir)), copies_(tls) {
  copies_.cert_file = dir_ + "/current/cert.pem";
  copies_.key_file = dir_ + "/current/key.pem";
  if (tls.mutual()) copies_.client_ca_file = dir_ + "/current/client_ca.pem";
  copies_.reload_interval_seconds = kWatchSeconds;
}

absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> GrpcTlsFiles::Create(const TlsOptions& tls) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/maskd-tls-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a private directory ", pattern, ": ", strerror(errno)));
  }
  std::unique_ptr<GrpcTlsFiles> files(new GrpcTlsFiles(tls, pattern));
  if (absl::Status copied = files->Refresh(); !copied.ok()) return copied;
  return files;
}

GrpcTlsFiles::~GrpcTlsFiles() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status GrpcTlsFiles::Refresh() {
  // Read once: what is checked is what is copied, even if the operator's
  // files change meanwhile.
  absl::StatusOr<std::string> cert = ReadPemFile(tls_.cert_file, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile(tls_.key_file, "--tls_key");
  if (!key.ok()) return key.status();
  std::string ca;
  if (tls_.mutual()) {
    absl::StatusOr<std::string> read = ReadPemFile(tls_.client_ca_file, "--tls_client_ca");
    if (!read.ok()) return read.status();
    ca = *std::move(read);
  }
  std::lock_guard<std::mutex> lock(mu_);
  const std::string gen = absl::StrCat(dir_, "/gen-", generation_ + 1);
  std::error_code error;
  std::filesystem::create_directory(gen, error);
  if (error) return absl::InternalError(absl::StrCat("cannot create ", gen, ": ", error.message()));
  TlsOptions staged = tls_;
  staged.cert_file = gen + "/cert.pem";
  staged.key_file = gen + "/key.pem";
  staged.client_ca_file = tls_.mutual() ? gen + "/client_ca.pem" : "";
  absl::Status written = WritePrivateFile(staged.cert_file, *cert);
  if (written.ok()) written = WritePrivateFile(staged.key_file, *key);
  if (written.ok() && tls_.mutual()) written = WritePrivateFile(staged.client_ca_file, ca);
  absl::StatusOr<std::shared_ptr<SSL_CTX>> loads =
      written.ok() ? OpenSslServerContext(staged)
                   : absl::StatusOr<std::shared_ptr<SSL_CTX>>(written);
  if (!loads.ok()) {
    std::filesystem::remove_all(gen, error);
    // Name the operator's files, not the copies.
    std::string message(loads.status().message());
    for (const auto& [copy, original] :
         {std::pair{staged.cert_file, tls_.cert_file}, std::pair{staged.key_file, tls_.key_file},
          std::pair{staged.client_ca_file, tls_.client_ca_file}}) {
      if (copy.empty()) continue;
      for (size_t at = message.find(copy); at != std::string::npos; at = message.find(copy, at)) {
        message.replace(at, copy.size(), original);
        at += original.size();
      }
    }
    return absl::Status(loads.status().code(), message);
  }
  // Point `current` at the new generation in one rename.
  const std::string link = dir_ + "/current.next";
  unlink(link.c_str());
  if (symlink(gen.c_str(), link.c_str()) != 0 ||
      std::rename(link.c_str(), (dir_ + "/current").c_str()) != 0) {
    const int saved = errno;
    std::filesystem::remove_all(gen, error);
    return absl::ErrnoToStatus(saved, absl::StrCat("cannot switch ", dir_, "/current"));
  }
  ++generation_;
  // The generation before the previous one is no longer read.
  if (generation_ > 2) {
    std::filesystem::remove_all(absl::StrCat(dir_, "/gen-", generation_ - 2), error);
  }
  return absl::OkStatus();
}

}  // namespace maskd
