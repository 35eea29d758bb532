#include "clients/cpp/maskctl/common.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "clients/cpp/channel.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"
#include "clients/cpp/status.h"

namespace maskd::maskctl {

std::unique_ptr<client::MaskdClient> ClientFromFlags() {
  client::ChannelOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.rpc_deadline = absl::GetFlag(FLAGS_deadline);
  options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  if (const std::string token_file = absl::GetFlag(FLAGS_token_file); !token_file.empty()) {
    std::ifstream in(token_file);
    std::getline(in, options.bearer_token);
    options.bearer_token = std::string(absl::StripAsciiWhitespace(options.bearer_token));
    if (!in || options.bearer_token.empty()) {
      std::exit(Fail(
          "connect", kExitUsage,
          absl::StrCat("--token_file ", token_file, ": cannot read a token from its first line")));
    }
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = client::CreateChannelOrError(options);
  if (!channel.ok()) std::exit(Fail("connect", kExitUsage, channel.status().message()));
  return std::make_unique<client::MaskdClient>(*std::move(channel), options.rpc_deadline);
}

int Fail(std::string_view command, int exit_code, absl::string_view message) {
  std::cerr << "maskctl " << command << ": " << message << "\n";
  return exit_code;
}

int FailWithStatus(std::string_view command, const absl::Status& status, int item_exit_code) {
  std::string message =
      absl::StrCat(absl::StatusCodeToString(status.code()), ": ", std::string(status.message()));
  if (std::optional<v1::SourceLocation> location = client::SourceLocationOf(status)) {
    // Servers often name the place in the message already; say it once.
    const std::string where = client::DescribeLocation(*location);
    if (!absl::StrContains(message, where)) absl::StrAppend(&message, " (at ", where, ")");
  }
  return Fail(command, client::IsItemError(status) ? item_exit_code : kExitServerError, message);
}

std::string Printable(std::string_view bytes) { return absl::Utf8SafeCEscape(std::string(bytes)); }

}  // namespace maskd::maskctl
