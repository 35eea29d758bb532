#include "harness/python_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "compiler/json_schema/json_string.h"
#include "simdjson.h"

namespace maskd::maskbench {
namespace {

namespace od = simdjson::ondemand;

// Python's json module escapes only '"', '\\' and control characters when
// ensure_ascii is off: exactly the engine's canonical string encoding, which
// the MaskBench parity test thereby checks against Python on every instance.
void AppendPythonString(std::string_view s, std::string& out) {
  out += json_schema::JsonQuoteLiteral(s);
}

bool IsJsonInteger(std::string_view token) {
  return token.find_first_of(".eE") == std::string_view::npos;
}

// json.loads turns an integer literal into an exact Python int: the digits are
// kept as written, except that "-0" is the int 0.
std::string PythonIntFromToken(std::string_view token) {
  if (token == "-0") return "0";
  return std::string(token);
}

absl::Status AppendValue(od::value value, std::string& out, int depth);

absl::Status AppendNumber(od::value value, std::string& out) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (IsJsonInteger(token)) {
    out += PythonIntFromToken(token);
    return absl::OkStatus();
  }
  // strtod, unlike from_chars, rounds overflow to +-inf and underflow to +-0
  // exactly as Python's float() does.
  std::string copy(token);
  char* end = nullptr;
  double d = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) {
    return absl::InvalidArgumentError("bad number: " + copy);
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";  // json.dumps of float("1e400")
    return absl::OkStatus();
  }
  out += PythonFloatRepr(d);
  return absl::OkStatus();
}

absl::Status AppendValue(od::value value, std::string& out, int depth) {
  if (depth > 10000) return absl::InvalidArgumentError("JSON nested deeper than 10000");
  od::json_type type;
  if (value.type().get(type)) return absl::InvalidArgumentError("malformed JSON value");
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (value.get_object().get(object)) return absl::InvalidArgumentError("malformed object");
      out.push_back('{');
      bool first = true;
      for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key)) return absl::InvalidArgumentError("malformed key");
        if (!first) out += ", ";
        first = false;
        AppendPythonString(key, out);
        out += ": ";
        od::value member;
        if (field.value().get(member)) return absl::InvalidArgumentError("malformed member");
        if (absl::Status s = AppendValue(member, out, depth + 1); !s.ok()) return s;
      }
      out.push_back('}');
      return absl::OkStatus();
    }
    case od::json_type::array: {
      od::array array;
      if (value.get_array().get(array)) return absl::InvalidArgumentError("malformed array");
      out.push_back('[');
      bool first = true;
      for (auto element : array) {
        od::value item;
        if (element.get(item)) return absl::InvalidArgumentError("malformed array item");
        if (!first) out += ", ";
        first = false;
        if (absl::Status s = AppendValue(item, out, depth + 1); !s.ok()) return s;
      }
      out.push_back(']');
      return absl::OkStatus();
    }
    case od::json_type::string: {
      std::string_view s;
      if (value.get_string().get(s)) return absl::InvalidArgumentError("malformed string");
      AppendPythonString(s, out);
      return absl::OkStatus();
    }
    case od::json_type::number:
      return AppendNumber(value, out);
    case od::json_type::boolean: {
      bool b = false;
      if (value.get_bool().get(b)) return absl::InvalidArgumentError("malformed boolean");
      out += b ? "true" : "false";
      return absl::OkStatus();
    }
    case od::json_type::null:
      if (!value.is_null()) return absl::InvalidArgumentError("malformed null");
      out += "null";
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown JSON type");
}

}  // namespace

std::string PythonFloatRepr(double value) {
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as Python's repr uses, in d.ddde±X form.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view sci(buf, end - buf);
  bool negative = sci.front() == '-';
  if (negative) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = std::stoi(std::string(sci.substr(e + 1)));
  // Python: decpt is where the decimal point falls relative to the digits.
  int decpt = exponent + 1;
  std::string out = negative ? "-" : "";
  if (decpt > 16 || decpt < -3) {
    out += digits[0];
    if (digits.size() > 1) absl::StrAppend(&out, ".", digits.substr(1));
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out += exp_buf;
  } else if (decpt <= 0) {
    absl::StrAppend(&out, "0.", std::string(-decpt, '0'), digits);
  } else if (decpt >= static_cast<int>(digits.size())) {
    absl::StrAppend(&out, digits, std::string(decpt - digits.size(), '0'), ".0");
  } else {
    absl::StrAppend(&out, digits.substr(0, decpt), ".", digits.substr(decpt));
  }
  return out;
}

absl::Status AppendPythonJson(simdjson::ondemand::value value, std::string& out) {
  return AppendValue(value, out, 0);
}

absl::StatusOr<std::string> PythonJsonDumps(std::string_view json_text) {
  // A scalar document cannot be read as an ondemand::value, so wrap the text in
  // an array: the serializer then sees every kind of value the same way.
  simdjson::padded_string wrapped("[" + std::string(json_text) + "]");
  od::parser parser;
  od::document doc;
  od::array array;
  if (auto error = parser.iterate(wrapped).get(doc)) {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", simdjson::error_message(error)));
  }
  if (doc.get_array().get(array)) return absl::InvalidArgumentError("JSON: not a value");
  std::string out;
  size_t values = 0;
  for (auto element : array) {
    od::value value;
    if (auto error = element.get(value)) {
      return absl::InvalidArgumentError(absl::StrCat("JSON: ", simdjson::error_message(error)));
    }
    if (absl::Status s = AppendValue(value, out, 0); !s.ok()) return s;
    ++values;
  }
  if (values != 1) {
    return absl::InvalidArgumentError("JSON: expected exactly one value");
  }
  return out;
}

}  // namespace maskd::maskbench
