#include "compiler/tokenizer/bpe_tokenizer.h"

#include <deque>
#include <utility>

#include "compiler/tokenizer/string_view_compat.h"
#include "compiler/tokenizer/utf8.h"

namespace maskd::tokenizer_internal {

BpeTokenizer::BpeTokenizer(BpeTokenizerData data)
    : data_(std::move(data)), added_splitter_(data_.added_tokens) {}

std::string_view BpeTokenizer::token_bytes(TokenId id) const {
  if (id + size_t{1} >= data_.bytes_offsets.size()) return {};
  return std::string_view(data_.bytes_arena)
      .substr(data_.bytes_offsets[id], data_.bytes_offsets[id + 1] - data_.bytes_offsets[id]);
}

std::string BpeTokenizer::Decode(std::span<const TokenId> ids) const {
  std::string out;
  for (TokenId id : ids) out.append(token_bytes(id));
  return out;
}

std::vector<TokenId> BpeTokenizer::Encode(std::string_view text) const {
  std::string replaced;
  if (FindInvalidUtf8(text) != std::string_view::npos) {
    replaced = ReplaceInvalidUtf8(text);
    text = replaced;
  }
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  for (const Section& section : added_splitter_.Split(text)) {
    if (section.added.has_value()) {
      out.push_back(*section.added);
    } else if (!section.text.empty()) {
      EncodeSection(section.text, /*at_start=*/section.text.data() == text.data(), out);
    }
  }
  return out;
}

void BpeTokenizer::EncodeSection(std::string_view text, bool at_start,
                                 std::vector<TokenId>& out) const {
  std::string normalized;
  if (!data_.normalizer.empty()) {
    normalized = data_.normalizer.Normalize(std::string(text));
    text = normalized;
    if (text.empty()) return;
  }
  std::vector<std::string_view> pieces;
  std::deque<std::string> storage;
  data_.pre_tokenizer.Split(text, at_start, pieces, storage);
  std::vector<Symbol> symbols;
  const size_t section_start = out.size();
  for (std::string_view piece : pieces) EncodePiece(piece, section_start, symbols, out);
}

void BpeTokenizer::EncodePiece(std::string_view piece, size_t section_start,
                               std::vector<Symbol>& symbols, std::vector<TokenId>& out) const {
  if (data_.ignore_merges) {
    auto it = data_.piece_to_id.find(AbslView(piece));
    if (it != data_.piece_to_id.end()) {
      out.push_back(it->second);
      return;
    }
  }
  symbols.clear();
  if (data_.kind == TokenizerKind::kByteLevelBpe) {
    for (uint32_t i = 0; i < piece.size(); ++i) {
      symbols.push_back({data_.byte_tokens[static_cast<uint8_t>(piece[i])], i, i + 1});
    }
  } else {
    size_t pos = 0;
    while (pos < piece.size()) {
      const size_t begin = pos;
      if (!NextCodePoint(piece, pos).has_value()) pos = begin + 1;  // Input is valid UTF-8.
      auto it = data_.piece_to_id.find(AbslView(piece.substr(begin, pos - begin)));
      symbols.push_back({it == data_.piece_to_id.end() ? kUnknownSymbol : it->second,
                         static_cast<uint32_t>(begin), static_cast<uint32_t>(pos)});
    }
  }
  data_.merger.Merge(symbols);
  for (const Symbol& symbol : symbols) {
    if (symbol.id != kUnknownSymbol) {
      out.push_back(symbol.id);
    } else {
      EmitUnknown(piece.substr(symbol.begin, symbol.end - symbol.begin), section_start, out);
    }
  }
}

void BpeTokenizer::EmitUnknown(std::string_view bytes, size_t section_start,
                               std::vector<TokenId>& out) const {
  if (data_.byte_fallback) {
    bool all_known = true;
    for (char c : bytes) all_known &= data_.byte_tokens[static_cast<uint8_t>(c)] != kUnknownSymbol;
    if (all_known) {
      for (char c : bytes) out.push_back(data_.byte_tokens[static_cast<uint8_t>(c)]);
      return;
    }
  }
  if (!data_.unk.has_value()) return;  // Nothing to stand for it: dropped, as HF does.
  // fuse_unk joins runs of unknowns within one section, never across an
  // added token.
  if (data_.fuse_unk && out.size() > section_start && out.back() == *data_.unk) return;
  out.push_back(*data_.unk);
}

}  // namespace maskd::tokenizer_internal
