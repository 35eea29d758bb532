#include "service/token_auth.h"

#include <openssl/sha.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace maskd {
namespace {

constexpr size_t kMinTokenBytes = 16;
constexpr size_t kMaxTokenBytes = 4096;

bool IsTokenChar(char c) { return c > ' ' && c < 0x7f; }

}  // namespace

bool TokenAuthenticator::IsValidTenant(absl::string_view tenant) {
  if (tenant.empty() || tenant.size() > 64) return false;
  if (!absl::ascii_isalnum(static_cast<unsigned char>(tenant.front()))) return false;
  return std::all_of(tenant.begin(), tenant.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

TokenAuthenticator::Digest TokenAuthenticator::Sha256(absl::string_view token) {
  Digest digest;
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
  return digest;
}

absl::StatusOr<TokenAuthenticator> TokenAuthenticator::FromFileContents(
    absl::string_view contents) {
  TokenAuthenticator auth;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("token file line ", line_number,
                                                     ": expected `TENANT TOKEN`, found ",
                                                     fields.size(), " fields"));
    }
    if (!IsValidTenant(fields[0])) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file line ", line_number,
                       ": tenant must be 1-64 of [A-Za-z0-9._-] starting with a letter or digit"));
    }
    const absl::string_view token = fields[1];
    if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes ||
        !std::all_of(token.begin(), token.end(), IsTokenChar)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file line ", line_number, ": token must be ", kMinTokenBytes, "-",
                       kMaxTokenBytes, " printable ASCII characters"));
    }
    if (!auth.tenant_by_digest_.emplace(Sha256(token), std::string(fields[0])).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file line ", line_number, ": token given twice"));
    }
  }
  if (auth.tenant_by_digest_.empty()) {
    return absl::InvalidArgumentError("token file holds no `TENANT TOKEN` line");
  }
  return auth;
}

absl::StatusOr<TokenAuthenticator> TokenAuthenticator::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open token file ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  absl::StatusOr<TokenAuthenticator> auth = FromFileContents(contents.str());
  if (!auth.ok()) {
    return absl::Status(auth.status().code(), absl::StrCat(path, ": ", auth.status().message()));
  }
  return auth;
}

absl::StatusOr<std::string> TokenAuthenticator::Authenticate(
    absl::string_view authorization_header) const {
  if (!enabled()) return std::string(kDefaultTenant);
  if (authorization_header.empty()) {
    return absl::UnauthenticatedError(
        "missing `authorization: Bearer TOKEN` metadata (this server requires a token)");
  }
  absl::string_view value = authorization_header;
  // RFC 6750: the scheme is case-insensitive.
  if (value.size() < 7 || !absl::EqualsIgnoreCase(value.substr(0, 7), "Bearer ")) {
    return absl::UnauthenticatedError("authorization metadata is not `Bearer TOKEN`");
  }
  value = absl::StripAsciiWhitespace(value.substr(7));
  auto found = tenant_by_digest_.find(Sha256(value));
  if (found == tenant_by_digest_.end()) {
    return absl::UnauthenticatedError("unknown bearer token");
  }
  return found->second;
}

}  // namespace maskd
