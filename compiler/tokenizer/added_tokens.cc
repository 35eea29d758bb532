#include "compiler/tokenizer/added_tokens.h"

#include "compiler/tokenizer/utf8.h"

namespace maskd::tokenizer_internal {
namespace {

bool IsJsSpace(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace

std::string_view TrimJsSpaceStart(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    const std::optional<char32_t> cp = NextCodePoint(text, next);
    if (!cp.has_value() || !IsJsSpace(*cp)) break;
    pos = next;
  }
  return text.substr(pos);
}

std::string_view TrimJsSpaceEnd(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    size_t pos = start;
    const std::optional<char32_t> cp = NextCodePoint(text, pos);
    if (!cp.has_value() || pos != end || !IsJsSpace(*cp)) break;
    end = start;
  }
  return text.substr(0, end);
}

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens) {
  terminal_.push_back(0);
  for (const AddedToken& token : tokens) {
    if (token.content.empty()) continue;
    uint32_t node = 0;
    for (char c : token.content) {
      const uint64_t key = (uint64_t{node} << 8) | static_cast<uint8_t>(c);
      auto [it, inserted] = children_.try_emplace(key, static_cast<uint32_t>(terminal_.size()));
      if (inserted) terminal_.push_back(0);
      node = it->second;
    }
    // A content listed twice keeps its first entry.
    if (terminal_[node] == 0) {
      tokens_.push_back({token.id, token.lstrip, token.rstrip});
      terminal_[node] = static_cast<uint32_t>(tokens_.size());
    }
    first_bytes_.set(static_cast<uint8_t>(token.content[0]));
  }
}

std::optional<AddedTokenSplitter::Match> AddedTokenSplitter::LongestAt(std::string_view text,
                                                                       size_t pos) const {
  std::optional<Match> best;
  uint32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    auto it = children_.find((uint64_t{node} << 8) | static_cast<uint8_t>(text[i]));
    if (it == children_.end()) break;
    node = it->second;
    if (terminal_[node] != 0) best = Match{i + 1 - pos, terminal_[node] - 1};
  }
  return best;
}

std::vector<Section> AddedTokenSplitter::Split(std::string_view text) const {
  std::vector<Section> sections;
  if (tokens_.empty()) {
    if (!text.empty()) sections.push_back({text, std::nullopt});
    return sections;
  }
  // Indices into sections of added tokens, for the strip pass.
  std::vector<std::pair<size_t, size_t>> added;  // (section index, token index)
  size_t start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_bytes_.test(static_cast<uint8_t>(text[pos]))) {
      ++pos;
      continue;
    }
    const std::optional<Match> match = LongestAt(text, pos);
    if (!match.has_value()) {
      ++pos;
      continue;
    }
    if (pos > start) sections.push_back({text.substr(start, pos - start), std::nullopt});
    added.emplace_back(sections.size(), match->token);
    sections.push_back({text.substr(pos, match->length), tokens_[match->token].id});
    pos += match->length;
    start = pos;
  }
  if (start < text.size()) sections.push_back({text.substr(start), std::nullopt});
  for (const auto& [index, token] : added) {
    if (tokens_[token].lstrip && index > 0 && !sections[index - 1].added.has_value()) {
      sections[index - 1].text = TrimJsSpaceEnd(sections[index - 1].text);
    }
    if (tokens_[token].rstrip && index + 1 < sections.size() &&
        !sections[index + 1].added.has_value()) {
      sections[index + 1].text = TrimJsSpaceStart(sections[index + 1].text);
    }
  }
  return sections;
}

}  // namespace maskd::tokenizer_internal
