// TLS, mutual TLS and bearer tokens on the real maskd binary (issue 13 §2):
// certificates are made for each run by tests/security/make_test_certs.sh
// with Debian's openssl. One server runs with mutual TLS and a token file;
// every way in without the right certificate or token must be refused, on
// gRPC and on /metrics, and the right ones must be served.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cpp/channel.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/maskd_process.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::HasSubstr;

constexpr char kTokenA[] = "tenant-a-token-0123456789abcdef";
constexpr char kTokenB[] = "tenant-b-token-fedcba9876543210";

std::string TempDir() {
  std::string pattern = ::testing::TempDir() + "maskd_security_XXXXXX";
  const char* made = mkdtemp(pattern.data());
  return made == nullptr ? std::string() : std::string(made);
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path) << contents;
}

// GET /metrics over TLS with OpenSSL (no client certificate when `cert` is
// empty). Returns the whole HTTP response, or "" when the connection or
// handshake fails.
std::string HttpsGet(const std::string& address, const std::string& ca, const std::string& cert,
                     const std::string& key) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        &SSL_CTX_free);
  SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!cert.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx.get(), cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM);
  }
  std::unique_ptr<BIO, decltype(&BIO_free_all)> bio(BIO_new_ssl_connect(ctx.get()), &BIO_free_all);
  BIO_set_conn_hostname(bio.get(), address.c_str());
  SSL* ssl = nullptr;
  BIO_get_ssl(bio.get(), &ssl);
  SSL_set_tlsext_host_name(ssl, "localhost");
  std::string response;
  if (BIO_do_connect(bio.get()) == 1 && BIO_do_handshake(bio.get()) == 1) {
    const std::string request =
        absl::StrCat("GET /metrics HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n");
    if (BIO_write(bio.get(), request.data(), static_cast<int>(request.size())) > 0) {
      char buffer[4096];
      int n;
      while ((n = BIO_read(bio.get(), buffer, sizeof(buffer))) > 0) response.append(buffer, n);
    }
  }
  ERR_clear_error();
  return response;
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempDir());
    ASSERT_FALSE(dir_->empty());
    const std::string make =
        absl::StrCat("bash " MASKD_SOURCE_DIR "/tests/security/make_test_certs.sh ", *dir_);
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
    WriteFile(*dir_ + "/tokens",
              absl::StrCat("# tenant token\ntenant-a ", kTokenA, "\n\ntenant-b ", kTokenB, "\n"));
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> started = testing::MaskdProcess::Start(
        {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--shutdown_grace=1s",
         "--tls_cert=" + Path("server.pem"), "--tls_key=" + Path("server.key"),
         "--tls_client_ca=" + Path("ca.pem"), "--auth_token_file=" + Path("tokens")});
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = started->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (dir_ != nullptr) std::system(absl::StrCat("rm -rf ", *dir_).c_str());
    delete dir_;
  }

  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }

  // A channel to the server with the given credentials; "" leaves one out.
  static std::shared_ptr<grpc::Channel> Channel(const std::string& ca, const std::string& cert,
                                                const std::string& token) {
    client::ChannelOptions options;
    options.target = server_->grpc_address();
    if (!ca.empty()) options.tls_ca_file = Path(ca);
    if (!cert.empty()) {
      options.tls_cert_file = Path(cert + ".pem");
      options.tls_key_file = Path(cert + ".key");
    }
    options.bearer_token = token;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = client::CreateChannelOrError(options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return channel.ok() ? *channel : nullptr;
  }

  static grpc::Status ListTokenizers(const std::shared_ptr<grpc::Channel>& channel) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListTokenizersResponse response;
    return v1::Maskd::NewStub(channel)->ListTokenizers(&context, {}, &response);
  }

  static std::string* dir_;
  static testing::MaskdProcess* server_;
};

std::string* SecurityTest::dir_ = nullptr;
testing::MaskdProcess* SecurityTest::server_ = nullptr;

TEST_F(SecurityTest, TrustedCertificateAndTokenAreServed) {
  EXPECT_TRUE(ListTokenizers(Channel("ca.pem", "client", kTokenA)).ok());
  EXPECT_TRUE(ListTokenizers(Channel("ca.pem", "client", kTokenB)).ok());
  EXPECT_THAT(server_->Log(), HasSubstr("(mutual TLS) (2 bearer tokens)"));
}

TEST_F(SecurityTest, PlaintextClientIsRefused) {
  const grpc::Status status = ListTokenizers(Channel("", "", kTokenA));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(SecurityTest, ClientWithoutCertificateIsRefused) {
  const grpc::Status status = ListTokenizers(Channel("ca.pem", "", kTokenA));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(SecurityTest, ClientCertificateFromAnotherCaIsRefused) {
  const grpc::Status status = ListTokenizers(Channel("ca.pem", "rogue", kTokenA));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(SecurityTest, ClientThatDistrustsTheServerDoesNotConnect) {
  // The client trusts only the rogue CA, so the server's certificate fails.
  const grpc::Status status = ListTokenizers(Channel("rogue_ca.pem", "client", kTokenA));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(SecurityTest, MissingOrWrongTokenIsUnauthenticatedOnEveryRpc) {
  for (const std::string token : {"", "not-a-token-of-this-server-at-all"}) {
    SCOPED_TRACE(token.empty() ? "no token" : "wrong token");
    std::shared_ptr<grpc::Channel> channel = Channel("ca.pem", "client", token);
    const grpc::Status list = ListTokenizers(channel);
    EXPECT_EQ(list.error_code(), grpc::StatusCode::UNAUTHENTICATED) << list.error_message();
    EXPECT_THAT(list.error_message(), ::testing::Not(HasSubstr(token.empty() ? "@" : token)));

    auto stub = v1::Maskd::NewStub(channel);
    {
      grpc::ClientContext context;
      v1::CompileRequest request;
      request.set_tokenizer_id("any");
      request.mutable_spec()->set_json_schema("{}");
      v1::CompileResponse response;
      EXPECT_EQ(stub->Compile(&context, request, &response).error_code(),
                grpc::StatusCode::UNAUTHENTICATED);
    }
    {
      grpc::ClientContext context;
      v1::RegisterTokenizerRequest request;
      request.set_preloaded_name("llama3");
      v1::RegisterTokenizerResponse response;
      EXPECT_EQ(stub->RegisterTokenizer(&context, request, &response).error_code(),
                grpc::StatusCode::UNAUTHENTICATED);
    }
    {
      grpc::ClientContext context;
      auto stream = stub->Session(&context);
      v1::StepResponse response;
      EXPECT_FALSE(stream->Read(&response));
      const grpc::Status status = stream->Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    }
  }
}

TEST_F(SecurityTest, TokenizerUploadsAreOffByDefault) {
  auto stub = v1::Maskd::NewStub(Channel("ca.pem", "client", kTokenA));
  grpc::ClientContext context;
  v1::RegisterTokenizerRequest request;
  request.mutable_files()->set_tokenizer_json(R"({"model": {"type": "BPE"}})");
  request.set_name("qwen3");
  v1::RegisterTokenizerResponse response;
  const grpc::Status status = stub->RegisterTokenizer(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("--allow_register_tokenizer"));
}

TEST_F(SecurityTest, HealthNeedsNoToken) {
  // kubelet's gRPC probes carry no token; with mutual TLS they need a
  // certificate (the chart's probe command has one).
  client::ChannelOptions options;
  options.target = server_->grpc_address();
  options.tls_ca_file = Path("ca.pem");
  options.tls_cert_file = Path("client.pem");
  options.tls_key_file = Path("client.key");
  client::MaskdClient client(options);
  absl::StatusOr<client::HealthState> health = client.CheckHealth("");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, client::HealthState::kServing);
}

TEST_F(SecurityTest, MetricsNeedTheTrustedClientCertificate) {
  const std::string address = server_->metrics_address();
  EXPECT_EQ(HttpsGet(address, Path("ca.pem"), "", ""), "");
  EXPECT_EQ(HttpsGet(address, Path("ca.pem"), Path("rogue.pem"), Path("rogue.key")), "");
  // Plain HTTP to the TLS port gets no metrics.
  EXPECT_THAT(FetchMetrics(address), ::testing::Not(HasSubstr("maskd_")));

  // Make sure at least one refusal was counted, then read it over mTLS.
  ListTokenizers(Channel("ca.pem", "client", ""));
  const std::string response =
      HttpsGet(address, Path("ca.pem"), Path("client.pem"), Path("client.key"));
  ASSERT_THAT(response, HasSubstr("HTTP/1.1 200 OK"));
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  const std::optional<double> refused =
      MetricValue(body, "maskd_errors_total{code=\"UNAUTHENTICATED\"}");
  ASSERT_TRUE(refused.has_value()) << body.substr(0, 2000);
  EXPECT_GE(*refused, 1);
  // Calls are labelled by tenant; refused ones by "-".
  ASSERT_TRUE(ListTokenizers(Channel("ca.pem", "client", kTokenB)).ok());
  const std::string after =
      HttpsGet(address, Path("ca.pem"), Path("client.pem"), Path("client.key"));
  const std::optional<double> by_b = MetricValue(
      after, "maskd_tenant_calls_total{code=\"OK\",method=\"ListTokenizers\",tenant=\"tenant-b\"}");
  ASSERT_TRUE(by_b.has_value()) << after.substr(0, 3000);
  EXPECT_GE(*by_b, 1);
  const std::optional<double> anonymous = MetricValue(
      after,
      "maskd_tenant_calls_total{code=\"UNAUTHENTICATED\",method=\"ListTokenizers\",tenant=\"-\"}");
  ASSERT_TRUE(anonymous.has_value());
  EXPECT_GE(*anonymous, 1);
}

// Sidecar mode: maskd on a Unix socket, reached by the client at unix://PATH,
// with a bearer token but no TLS (the client sends tokens over plaintext too).
TEST(SidecarTest, ServesOnAUnixSocket) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string socket = "unix://" + dir + "/maskd.sock";
  WriteFile(dir + "/tokens", absl::StrCat("worker ", kTokenA, "\n"));
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
      testing::MaskdProcess::Start({"--listen=" + socket, "--metrics_listen=127.0.0.1:0",
                                    "--shutdown_grace=1s", "--auth_token_file=" + dir + "/tokens"});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->grpc_address(), socket);

  client::ChannelOptions options;
  options.target = socket;
  options.bearer_token = kTokenA;
  client::MaskdClient client(options);
  absl::StatusOr<std::vector<v1::TokenizerInfo>> listed = client.ListTokenizers();
  ASSERT_TRUE(listed.ok()) << listed.status();
  absl::StatusOr<client::HealthState> health = client.CheckHealth("");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, client::HealthState::kServing);

  options.bearer_token = "";
  EXPECT_EQ(client::MaskdClient(options).ListTokenizers().status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<int> exit_code = (*server)->Stop(SIGTERM, std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

// Credentials rotate without a restart (issue 13 §2): a new token file is
// read on SIGHUP and when it changes on disk; a new server certificate is
// served to new connections (gRPC and /metrics). The process stays the same
// throughout.
class CredentialReloadTest : public ::testing::Test {
 protected:
  static constexpr char kOldToken[] = "reload-old-token-0123456789abcdef";
  static constexpr char kNewToken[] = "reload-new-token-fedcba9876543210";
  static constexpr char kNewerToken[] = "reload-newer-token-00112233445566";

  void SetUp() override {
    dir_ = TempDir();
    ASSERT_FALSE(dir_.empty());
    for (const std::string sub : {"", "/next"}) {
      const std::string make =
          absl::StrCat("bash " MASKD_SOURCE_DIR "/tests/security/make_test_certs.sh ", dir_, sub);
      ASSERT_EQ(std::system(make.c_str()), 0) << make;
    }
    ReplaceFile("tokens", absl::StrCat("tenant-a ", kOldToken, "\n"));
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> started = testing::MaskdProcess::Start(
        {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--shutdown_grace=1s",
         "--tls_cert=" + Path("server.pem"), "--tls_key=" + Path("server.key"),
         "--tls_client_ca=" + Path("ca.pem"), "--auth_token_file=" + Path("tokens"),
         "--credentials_reload_interval=" + ReloadInterval()});
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
    }
    std::system(absl::StrCat("rm -rf ", dir_).c_str());
  }

  // --credentials_reload_interval.
  virtual std::string ReloadInterval() const { return "1s"; }

  // Renames the `next/` server key and certificate into place.
  void RotateServerCertificate() {
    std::ifstream cert(Path("next/server.pem"));
    std::ifstream key(Path("next/server.key"));
    std::stringstream cert_pem;
    std::stringstream key_pem;
    cert_pem << cert.rdbuf();
    key_pem << key.rdbuf();
    ReplaceFile("server.key", key_pem.str());
    ReplaceFile("server.pem", cert_pem.str());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Writes `contents` beside `name` and renames it into place, as a
  // Kubernetes secret update or an operator's `mv` does.
  void ReplaceFile(const std::string& name, const std::string& contents) {
    WriteFile(Path(name) + ".tmp", contents);
    ASSERT_EQ(std::rename((Path(name) + ".tmp").c_str(), Path(name).c_str()), 0);
  }

  // ListTokenizers on a connection of its own, trusting `ca` for the server.
  grpc::Status ListOnNewConnection(const std::string& ca, const std::string& token) {
    client::ChannelOptions options;
    options.target = server_->grpc_address();
    options.own_connection = true;
    options.tls_ca_file = Path(ca);
    options.tls_cert_file = Path("client.pem");
    options.tls_key_file = Path("client.key");
    options.bearer_token = token;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = client::CreateChannelOrError(options);
    if (!channel.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "no channel");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ListTokenizersResponse response;
    return v1::Maskd::NewStub(*channel)->ListTokenizers(&context, {}, &response);
  }

  // Polls `ok` for up to 20 s.
  static bool Eventually(const std::function<bool()>& ok) {
    for (int i = 0; i < 200; ++i) {
      if (ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  bool StillTheSameProcess() const {
    return kill(server_->pid(), 0) == 0 &&
           server_->Log().find("received SIGTERM") == std::string::npos;
  }

  std::string dir_;
  std::unique_ptr<testing::MaskdProcess> server_;
};

TEST_F(CredentialReloadTest, RotatedTokenFileIsReadWithoutARestart) {
  ASSERT_TRUE(ListOnNewConnection("ca.pem", kOldToken).ok());
  ASSERT_EQ(ListOnNewConnection("ca.pem", kNewToken).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // SIGHUP: read at once.
  ReplaceFile("tokens", absl::StrCat("tenant-a ", kNewToken, "\n"));
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return ListOnNewConnection("ca.pem", kNewToken).ok(); }));
  const grpc::Status old = ListOnNewConnection("ca.pem", kOldToken);
  EXPECT_EQ(old.error_code(), grpc::StatusCode::UNAUTHENTICATED) << old.error_message();

  // No signal: the changed file is noticed within the reload interval.
  ReplaceFile("tokens", absl::StrCat("tenant-a ", kNewerToken, "\n"));
  EXPECT_TRUE(Eventually([&] { return ListOnNewConnection("ca.pem", kNewerToken).ok(); }));
  EXPECT_EQ(ListOnNewConnection("ca.pem", kNewToken).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // A broken file is refused and the tokens in force stay.
  ReplaceFile("tokens", "tenant-a short\n");
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return server_->Log().find("reloading token_file failed") != std::string::npos;
  })) << server_->Log();
  EXPECT_THAT(server_->Log(), HasSubstr("token must be 16-4096"));
  EXPECT_TRUE(ListOnNewConnection("ca.pem", kNewerToken).ok());
  EXPECT_TRUE(StillTheSameProcess()) << server_->Log();
}

TEST_F(CredentialReloadTest, RotatedServerCertificateIsServedToNewConnections) {
  const std::string metrics = server_->metrics_address();
  ASSERT_TRUE(ListOnNewConnection("ca.pem", kOldToken).ok());
  ASSERT_NE(ListOnNewConnection("next/ca.pem", kOldToken).error_code(), grpc::StatusCode::OK);
  ASSERT_THAT(HttpsGet(metrics, Path("ca.pem"), Path("client.pem"), Path("client.key")),
              HasSubstr("200 OK"));

  // The new certificate is signed by another CA (next/ca.pem); clients keep
  // their certificates, which the unchanged client CA still trusts.
  RotateServerCertificate();

  EXPECT_TRUE(Eventually([&] { return ListOnNewConnection("next/ca.pem", kOldToken).ok(); }))
      << server_->Log();
  const grpc::Status old = ListOnNewConnection("ca.pem", kOldToken);
  EXPECT_EQ(old.error_code(), grpc::StatusCode::UNAVAILABLE) << old.error_message();
  EXPECT_TRUE(Eventually([&] {
    return HttpsGet(metrics, Path("next/ca.pem"), Path("client.pem"), Path("client.key"))
               .find("200 OK") != std::string::npos;
  })) << server_->Log();
  EXPECT_EQ(HttpsGet(metrics, Path("ca.pem"), Path("client.pem"), Path("client.key")), "");
  EXPECT_THAT(server_->Log(), HasSubstr("reloaded metrics_tls"));
  EXPECT_TRUE(StillTheSameProcess()) << server_->Log();
}

// With no reload interval (--credentials_reload_interval=0), a rotated
// certificate is served only after SIGHUP, for gRPC as for /metrics (gRPC's
// own watcher could not be told to reload before: gRPC's listener kept the
// certificate it started with until a restart).
class SighupReloadTest : public CredentialReloadTest {
 protected:
  std::string ReloadInterval() const override { return "0s"; }
};

TEST_F(SighupReloadTest, RotatedServerCertificateIsServedAfterSighup) {
  ASSERT_TRUE(ListOnNewConnection("ca.pem", kOldToken).ok());
  RotateServerCertificate();
  // No signal, no interval: the old certificate stays (past gRPC's own 1 s
  // watch of maskd's copies).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_TRUE(ListOnNewConnection("ca.pem", kOldToken).ok());
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return ListOnNewConnection("next/ca.pem", kOldToken).ok(); }))
      << server_->Log();
  EXPECT_EQ(ListOnNewConnection("ca.pem", kOldToken).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(Eventually([&] {
    return HttpsGet(server_->metrics_address(), Path("next/ca.pem"), Path("client.pem"),
                    Path("client.key"))
               .find("200 OK") != std::string::npos;
  })) << server_->Log();
  EXPECT_THAT(server_->Log(), HasSubstr("reloaded grpc_tls"));

  // A key that does not match the certificate is refused by name; the
  // certificate in force stays.
  std::ifstream old_key(Path("next/ca.key"));
  std::stringstream wrong_key;
  wrong_key << old_key.rdbuf();
  ReplaceFile("server.key", wrong_key.str());
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return server_->Log().find("reloading grpc_tls failed") != std::string::npos;
  })) << server_->Log();
  EXPECT_THAT(server_->Log(), HasSubstr(Path("server.key")));
  EXPECT_TRUE(ListOnNewConnection("next/ca.pem", kOldToken).ok());
  EXPECT_TRUE(StillTheSameProcess()) << server_->Log();
}

// Exit code of `maskctl health` against SOCKET run as user nobody (65534): the
// worker in a sidecar pod is another user than maskd.
int HealthAsNobody(const std::string& socket) {
  const int status = std::system(
      absl::StrCat("setpriv --reuid=65534 --regid=65534 --clear-groups ", MASKCTL_BINARY,
                   " health --deadline=5s --server=", socket, " >/dev/null 2>&1")
          .c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Connecting to a Unix socket needs write access to it; gRPC creates it under
// the umask (0755), which left a worker running as another user unable to
// connect. --unix_socket_mode sets the bits (default 0660, owner and group).
TEST(SidecarTest, UnixSocketModeDecidesWhichUsersMayConnect) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);  // nobody may reach the directory
  for (const auto& [flag, mode, nobody_exit] :
       std::vector<std::tuple<std::string, mode_t, int>>{{"", 0660, 3}, {"0666", 0666, 0}}) {
    const std::string path = dir + "/maskd" + flag + ".sock";
    std::vector<std::string> args = {"--listen=unix://" + path, "--metrics_listen=127.0.0.1:0",
                                     "--shutdown_grace=1s"};
    if (!flag.empty()) args.push_back("--unix_socket_mode=" + flag);
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        testing::MaskdProcess::Start(args);
    ASSERT_TRUE(server.ok()) << server.status();
    struct stat info {};
    ASSERT_EQ(stat(path.c_str(), &info), 0);
    EXPECT_TRUE(S_ISSOCK(info.st_mode));
    EXPECT_EQ(info.st_mode & 0777, mode) << "flag '" << flag << "'";
    EXPECT_EQ(HealthAsNobody("unix://" + path), nobody_exit) << "flag '" << flag << "'";
    absl::StatusOr<int> exit_code = (*server)->Stop(SIGTERM, std::chrono::seconds(30));
    ASSERT_TRUE(exit_code.ok()) << exit_code.status();
    EXPECT_EQ(*exit_code, 0);
  }
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

TEST(SecurityFlagsTest, BadSettingsStopTheStartNamingTheFlag) {
  const std::string dir = TempDir();
  WriteFile(dir + "/empty_tokens", "# nothing\n");
  WriteFile(dir + "/short_tokens", "tenant-a short\n");
  WriteFile(dir + "/cert.pem", "not a certificate");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--tls_cert=" + dir + "/cert.pem"}, "--tls_cert and --tls_key must be given together"},
      {{"--tls_client_ca=" + dir + "/cert.pem"}, "--tls_client_ca (mutual TLS) needs"},
      {{"--tls_cert=" + dir + "/missing.pem", "--tls_key=" + dir + "/cert.pem"},
       "cannot read --tls_cert file"},
      {{"--auth_token_file=" + dir + "/missing"}, "--auth_token_file: cannot open token file"},
      {{"--auth_token_file=" + dir + "/empty_tokens"}, "holds no `TENANT TOKEN` line"},
      {{"--auth_token_file=" + dir + "/short_tokens"}, "line 1: token must be 16-4096"},
  };
  for (const Case& test : cases) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"};
    args.insert(args.end(), test.args.begin(), test.args.end());
    std::string log;
    absl::StatusOr<int> exit_code =
        testing::MaskdProcess::RunToExit(args, &log, std::chrono::seconds(30));
    ASSERT_TRUE(exit_code.ok()) << exit_code.status();
    EXPECT_EQ(*exit_code, EXIT_FAILURE) << log;
    EXPECT_THAT(log, HasSubstr(test.message));
  }
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

}  // namespace
}  // namespace maskd::e2e
