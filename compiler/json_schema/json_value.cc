#include "compiler/json_schema/json_value.h"

#include <algorithm>
#include <cstdio>

namespace maskd::json_schema {

JsonValue JsonValue::Boolean(bool b) {
  JsonValue v;
  v.kind_ = Kind::kBoolean;
  v.boolean_ = b;
  return v;
}

JsonValue JsonValue::Number(Decimal d) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.number_ = std::move(d);
  return v;
}

JsonValue JsonValue::String(std::string s) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}

JsonValue JsonValue::Array(std::vector<JsonValue> items) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

JsonValue JsonValue::Object(std::vector<std::pair<std::string, JsonValue>> members) {
  JsonValue v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned char>(c));
          out->append(buffer);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void JsonValue::Write(bool sort_keys, std::string* out) const {
  switch (kind_) {
    case Kind::kNull:
      out->append("null");
      return;
    case Kind::kBoolean:
      out->append(boolean_ ? "true" : "false");
      return;
    case Kind::kNumber:
      out->append(number_.ToString());
      return;
    case Kind::kString:
      AppendJsonString(string_, out);
      return;
    case Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out->push_back(',');
        items_[i].Write(sort_keys, out);
      }
      out->push_back(']');
      return;
    case Kind::kObject: {
      std::vector<const std::pair<std::string, JsonValue>*> order;
      for (const auto& m : members_) order.push_back(&m);
      if (sort_keys) {
        std::stable_sort(order.begin(), order.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      }
      out->push_back('{');
      for (size_t i = 0; i < order.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJsonString(order[i]->first, out);
        out->push_back(':');
        order[i]->second.Write(sort_keys, out);
      }
      out->push_back('}');
      return;
    }
  }
}

std::string JsonValue::ToJson() const {
  std::string out;
  Write(false, &out);
  return out;
}

std::string JsonValue::CanonicalKey() const {
  std::string out;
  Write(true, &out);
  return out;
}

int64_t JsonDepthViolation(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return static_cast<int64_t>(i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return -1;
}

}  // namespace maskd::json_schema
