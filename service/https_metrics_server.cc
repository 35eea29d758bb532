#include "service/https_metrics_server.h"

#include <netdb.h>
#include <openssl/err.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"
#include "service/openssl_context.h"

namespace maskd {
namespace {

constexpr int kSocketTimeoutSeconds = 5;
constexpr size_t kMaxRequestHeaderBytes = 8192;

// "host:port" / "[v6]:port" -> a listening socket; the bound port out.
absl::StatusOr<int> Listen(const std::string& listen, int* bound_port) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("'", listen, "' is not host:port"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int error =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      error != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", host, "': ", gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    const int error = errno;
    close(fd);
    return absl::ErrnoToStatus(error, "bind/listen");
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  *bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpsMetricsServer>> HttpsMetricsServer::Start(
    const std::string& listen, const TlsOptions& tls) {
  // A scraper that hangs up mid-answer must not kill maskd: OpenSSL writes
  // with write(2), which raises SIGPIPE (civetweb ignores it the same way).
  signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<HttpsMetricsServer> server(new HttpsMetricsServer());
  server->tls_ = tls;
  absl::StatusOr<std::shared_ptr<SSL_CTX>> ctx = OpenSslServerContext(tls);
  if (!ctx.ok()) return ctx.status();
  server->ctx_ = *std::move(ctx);
  absl::StatusOr<int> fd = Listen(listen, &server->port_);
  if (!fd.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": ", fd.status().message()));
  }
  server->listen_fd_ = *fd;
  server->acceptor_ = std::thread([raw = server.get()] { raw->AcceptLoop(); });
  return server;
}

HttpsMetricsServer::~HttpsMetricsServer() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::unique_lock<std::mutex> lock(mu_);
    connection_ended_.wait(lock, [this] { return connections_ == 0; });
  }
  if (listen_fd_ >= 0) close(listen_fd_);
}

absl::Status HttpsMetricsServer::ReloadTls() {
  absl::StatusOr<std::shared_ptr<SSL_CTX>> ctx = OpenSslServerContext(tls_);
  if (!ctx.ok()) {
    ERR_clear_error();
    return ctx.status();
  }
  std::lock_guard<std::mutex> lock(ctx_mu_);
  ctx_ = *std::move(ctx);
  return absl::OkStatus();
}

std::shared_ptr<SSL_CTX> HttpsMetricsServer::Context() {
  std::lock_guard<std::mutex> lock(ctx_mu_);
  return ctx_;
}

void HttpsMetricsServer::RegisterCollectable(
    const std::weak_ptr<prometheus::Collectable>& collectable) {
  std::lock_guard<std::mutex> lock(mu_);
  collectables_.push_back(collectable);
}

void HttpsMetricsServer::AcceptLoop() {
  while (!stopping_) {
    // Wake up regularly to notice stopping_ (close() does not interrupt a
    // blocked accept).
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (poll(&waiting, 1, 100) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (connections_ >= kMaxConnections) {
        close(fd);
        continue;
      }
      ++connections_;
    }
    std::thread([this, fd] {
      Serve(fd);
      close(fd);
      std::lock_guard<std::mutex> lock(mu_);
      --connections_;
      connection_ended_.notify_all();
    }).detach();
  }
}

std::string HttpsMetricsServer::Exposition() {
  std::vector<prometheus::MetricFamily> families;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::weak_ptr<prometheus::Collectable>& weak : collectables_) {
      if (std::shared_ptr<prometheus::Collectable> collectable = weak.lock()) {
        std::vector<prometheus::MetricFamily> collected = collectable->Collect();
        families.insert(families.end(), std::make_move_iterator(collected.begin()),
                        std::make_move_iterator(collected.end()));
      }
    }
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return std::move(out).str();
}

void HttpsMetricsServer::Serve(int fd) {
  timeval timeout{kSocketTimeoutSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  const std::shared_ptr<SSL_CTX> ctx = Context();
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
  if (ssl == nullptr || SSL_set_fd(ssl.get(), fd) != 1) return;
  // A plaintext client, an untrusted client certificate or none (mutual
  // TLS) fail here: the handshake is refused and nothing is served.
  if (SSL_accept(ssl.get()) != 1) {
    ERR_clear_error();
    return;
  }
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestHeaderBytes) {
    const int n = SSL_read(ssl.get(), buffer, sizeof(buffer));
    if (n <= 0) {
      ERR_clear_error();
      return;
    }
    request.append(buffer, static_cast<size_t>(n));
  }
  std::string status = "200 OK";
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  if (request.find("\r\n\r\n") == std::string::npos) {
    status = "431 Request Header Fields Too Large";
  } else if (!absl::StartsWith(request, "GET ")) {
    status = "405 Method Not Allowed";
  } else if (!absl::StartsWith(request, "GET /metrics ") &&
             !absl::StartsWith(request, "GET /metrics?")) {
    status = "404 Not Found";
  } else {
    body = Exposition();
    content_type = "text/plain; version=0.0.4; charset=utf-8";
  }
  const std::string response =
      absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                   "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
  size_t written = 0;
  while (written < response.size()) {
    const int n = SSL_write(ssl.get(), response.data() + written,
                            static_cast<int>(response.size() - written));
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  SSL_shutdown(ssl.get());
  ERR_clear_error();
}

}  // namespace maskd
