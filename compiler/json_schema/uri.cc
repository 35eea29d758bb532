#include "compiler/json_schema/uri.h"

#include <vector>

namespace maskd::json_schema {
namespace {

struct UriParts {
  std::string scheme;  // Without ':'; empty if relative.
  bool has_authority = false;
  std::string authority;
  std::string path;
  std::string rest;  // "?query#fragment" as written.
};

bool IsSchemeChar(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

UriParts Parse(std::string_view uri) {
  UriParts p;
  size_t i = 0;
  while (i < uri.size() && IsSchemeChar(uri[i], i == 0)) ++i;
  if (i > 0 && i < uri.size() && uri[i] == ':') {
    p.scheme = std::string(uri.substr(0, i));
    uri.remove_prefix(i + 1);
  }
  if (uri.substr(0, 2) == "//") {
    p.has_authority = true;
    size_t end = uri.find_first_of("/?#", 2);
    if (end == std::string_view::npos) end = uri.size();
    p.authority = std::string(uri.substr(2, end - 2));
    uri.remove_prefix(end);
  }
  size_t end = uri.find_first_of("?#");
  if (end == std::string_view::npos) end = uri.size();
  p.path = std::string(uri.substr(0, end));
  p.rest = std::string(uri.substr(end));
  return p;
}

std::string RemoveDotSegments(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  bool absolute = !path.empty() && path[0] == '/';
  if (absolute) i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string segment = path.substr(i, j - i);
    bool last = j == path.size();
    if (segment == "..") {
      if (!out.empty()) out.pop_back();
      if (last) out.push_back("");
    } else if (segment == ".") {
      if (last) out.push_back("");
    } else {
      out.push_back(segment);
    }
    i = j + 1;
  }
  std::string result = absolute ? "/" : "";
  for (size_t k = 0; k < out.size(); ++k) {
    if (k > 0) result += "/";
    result += out[k];
  }
  return result;
}

std::string Compose(const UriParts& p) {
  std::string s;
  if (!p.scheme.empty()) s += p.scheme + ":";
  if (p.has_authority) s += "//" + p.authority;
  s += p.path;
  s += p.rest;
  return s;
}

}  // namespace

std::string ResolveUri(std::string_view base, std::string_view reference) {
  UriParts r = Parse(reference);
  if (!r.scheme.empty()) {
    r.path = RemoveDotSegments(r.path);
    return Compose(r);
  }
  UriParts b = Parse(base);
  UriParts t;
  t.scheme = b.scheme;
  if (r.has_authority) {
    t.has_authority = true;
    t.authority = r.authority;
    t.path = RemoveDotSegments(r.path);
    t.rest = r.rest;
    return Compose(t);
  }
  t.has_authority = b.has_authority;
  t.authority = b.authority;
  if (r.path.empty()) {
    t.path = b.path;
    if (!r.rest.empty() && r.rest[0] == '?') {
      t.rest = r.rest;
    } else {
      // Keep the base query, replace the fragment.
      std::string base_query = b.rest.substr(0, b.rest.find('#'));
      t.rest = base_query + r.rest;
    }
    return Compose(t);
  }
  if (r.path[0] == '/') {
    t.path = RemoveDotSegments(r.path);
  } else {
    std::string merged;
    if (b.has_authority && b.path.empty()) {
      merged = "/" + r.path;
    } else {
      size_t slash = b.path.rfind('/');
      merged = (slash == std::string::npos ? "" : b.path.substr(0, slash + 1)) + r.path;
    }
    t.path = RemoveDotSegments(merged);
  }
  t.rest = r.rest;
  return Compose(t);
}

void SplitFragment(std::string_view uri, std::string* without_fragment, std::string* fragment) {
  size_t hash = uri.find('#');
  if (hash == std::string_view::npos) {
    *without_fragment = std::string(uri);
    fragment->clear();
    return;
  }
  *without_fragment = std::string(uri.substr(0, hash));
  *fragment = std::string(uri.substr(hash + 1));
}

std::string PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace maskd::json_schema
