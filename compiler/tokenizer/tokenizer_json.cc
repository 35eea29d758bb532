// Tokenizer::FromJson / FromDirectory: tokenizer.json (+ tokenizer_config.json)
// into BpeTokenizerData. Every refusal names the JSON path it is about. This
// file reads the model (vocabulary, merges, added tokens, EOS); the text
// pipeline's sections (normalizer, pre_tokenizer, decoder) are read by
// tokenizer_json_pipeline.h.
//
// model.vocab and model.merges are read with simdjson's On-Demand API, the
// rest with its DOM API (tokenizer_json_split.h says why). Each member has
// one DOM path as well, taken when the split leaves it in the skeleton: a
// malformed or oddly laid out file is then read, and refused, exactly as a
// whole-document DOM parse would.
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "compiler/tokenizer/bpe_tokenizer.h"
#include "compiler/tokenizer/byte_level.h"
#include "compiler/tokenizer/padded_json.h"
#include "compiler/tokenizer/string_view_compat.h"
#include "compiler/tokenizer/tokenizer.h"
#include "compiler/tokenizer/tokenizer_json_dom.h"
#include "compiler/tokenizer/tokenizer_json_pipeline.h"
#include "compiler/tokenizer/tokenizer_json_split.h"
#include "compiler/tokenizer/utf8.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"

namespace maskd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;
using tokenizer_internal::AbslView;
using tokenizer_internal::AddedToken;
using tokenizer_internal::BoolMember;
using tokenizer_internal::BpeTokenizer;
using tokenizer_internal::BpeTokenizerData;
using tokenizer_internal::DecoderIsByteLevel;
using tokenizer_internal::Invalid;
using tokenizer_internal::kUnknownSymbol;
using tokenizer_internal::Member;
using tokenizer_internal::NormalizerStep;
using tokenizer_internal::PaddedJson;
using tokenizer_internal::ParseNormalizer;
using tokenizer_internal::ParsePreTokenizer;
using tokenizer_internal::PreTokenizer;
using tokenizer_internal::PreTokenizerStep;
using tokenizer_internal::Quote;
using tokenizer_internal::StringMember;
using tokenizer_internal::TokenizerJsonParts;
namespace ondemand = simdjson::ondemand;

// PaddedJson's padding must cover what On-Demand reads past the end.
static_assert(simdjson::SIMDJSON_PADDING <= 64);

// Ids above this are refused rather than sizing tables by them: no real
// vocabulary comes near, and a typo must not allocate gigabytes.
constexpr uint64_t kMaxTokenId = (uint64_t{1} << 24) - 1;

constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";  // U+2581 "▁"

std::string ContentHash(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  std::string hex;
  for (int i = 0; i < 16; ++i) absl::StrAppendFormat(&hex, "%02x", digest[i]);
  return hex;
}

// When simdjson refuses a document, tell a cut-off file from a malformed
// one: a truncated file ends inside a string or an open object/array.
bool LooksTruncated(std::string_view json) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  bool seen_value = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
      seen_value = true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return in_string || depth > 0 || !seen_value;
}

// What every tokenizer.json must be before it is parsed.
absl::Status CheckText(std::string_view json, absl::string_view file) {
  if (json.empty()) return Invalid(file, "the file is empty");
  if (!simdjson::validate_utf8(json.data(), json.size())) {
    return Invalid(file, absl::StrCat("not valid UTF-8 (first bad byte at offset ",
                                      tokenizer_internal::FindInvalidUtf8(json),
                                      "); token strings must be UTF-8"));
  }
  return absl::OkStatus();
}

absl::Status SyntaxErrorMessage(std::string_view json, absl::string_view file,
                                simdjson::error_code error) {
  return Invalid(
      file, absl::StrCat(LooksTruncated(json) ? "truncated JSON (the document ends before it is "
                                                "complete): "
                                              : "malformed JSON: ",
                         simdjson::error_message(error)));
}

// Why `id` (read with `error`) is not a token id, or OK.
absl::Status CheckId(simdjson::error_code error, uint64_t id, absl::string_view path) {
  if (error != simdjson::SUCCESS) {
    return Invalid("tokenizer.json", absl::StrCat(path, " is not a non-negative integer id"));
  }
  if (id > kMaxTokenId) {
    return Invalid("tokenizer.json", absl::StrCat(path, " = ", id, " is out of range (ids above ",
                                                  kMaxTokenId, " are refused)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TokenId> ParseId(const element& value, absl::string_view path) {
  uint64_t id = 0;
  if (absl::Status s = CheckId(value.get(id), id, path); !s.ok()) return s;
  return static_cast<TokenId>(id);
}

// The bytes a SentencePiece-style vocabulary entry stands for: `<0xNN>` is
// one raw byte, `▁` a space.
std::string SentencePieceBytes(std::string_view piece) {
  if (piece.size() == 6 && piece.substr(0, 3) == "<0x" && piece[5] == '>' &&
      absl::ascii_isxdigit(piece[3]) && absl::ascii_isxdigit(piece[4]) &&
      !absl::ascii_islower(piece[3]) && !absl::ascii_islower(piece[4])) {
    const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'A' + 10; };
    return std::string(1, static_cast<char>(nibble(piece[3]) * 16 + nibble(piece[4])));
  }
  return absl::StrReplaceAll(AbslView(piece), {{AbslView(kSentencePieceSpace), " "}});
}

// On-Demand strings without escapes (nearly all of them) are read in place
// rather than copied out to be unescaped: for the 128k vocabulary keys and
// 280k merges that is megabytes of fresh pages not touched.

// The text of a string from its raw token (quote, text, quote, maybe spaces),
// when it holds no escape.
std::optional<std::string_view> TextWithoutEscapes(std::string_view token) {
  if (token.empty() || token[0] != '"') return std::nullopt;
  for (size_t i = 1; i < token.size(); ++i) {
    if (token[i] == '"') return token.substr(1, i - 1);
    if (token[i] == '\\') return std::nullopt;
  }
  return std::nullopt;
}

// value.get_string(), without the copy when it can.
simdjson::error_code GetString(ondemand::value& value, std::string_view& text) {
  if (const std::optional<std::string_view> plain = TextWithoutEscapes(value.raw_json_token())) {
    text = *plain;
    return value.get_raw_json_string().error();  // Moves past it.
  }
  return value.get_string().get(text);
}

// field.unescaped_key(), without the copy when it can. The raw key runs from
// after its opening quote to the first quote or backslash before `end`.
simdjson::error_code GetKey(ondemand::field& field, const char* end, std::string_view& key) {
  const char* const begin = reinterpret_cast<const char*>(field.key().raw());
  const char* at = begin;
  while (at < end && *at != '"' && *at != '\\') ++at;
  if (at < end && *at == '"') {
    key = std::string_view(begin, static_cast<size_t>(at - begin));
    return simdjson::SUCCESS;
  }
  return field.unescaped_key().get(key);
}

// Splits the string form of a merges entry, "a b".
absl::Status SplitMergeText(std::string_view text, size_t index, std::string_view& left,
                            std::string_view& right) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos || text.find(' ', space + 1) != std::string_view::npos) {
    return Invalid("tokenizer.json", absl::StrCat("model.merges[", index, "] = ", Quote(text),
                                                  " is not two tokens separated by one space"));
  }
  left = text.substr(0, space);
  right = text.substr(space + 1);
  return absl::OkStatus();
}

absl::Status BadMergeEntry(size_t index) {
  return Invalid("tokenizer.json",
                 absl::StrCat("model.merges[", index, "] is neither \"a b\" nor [\"a\", \"b\"]"));
}

// Splits one merges entry ("a b" or ["a", "b"]) into its two parts.
absl::Status MergeParts(const element& entry, size_t index, std::string_view& left,
                        std::string_view& right) {
  std::string_view text;
  if (entry.get(text) == simdjson::SUCCESS) return SplitMergeText(text, index, left, right);
  array pair;
  if (entry.get(pair) == simdjson::SUCCESS && pair.size() == 2 &&
      pair.at(0).get(left) == simdjson::SUCCESS && pair.at(1).get(right) == simdjson::SUCCESS) {
    return absl::OkStatus();
  }
  return BadMergeEntry(index);
}

// The same for an On-Demand entry. `syntax` receives the parser's error when
// the entry is malformed JSON rather than the wrong shape.
absl::Status MergeParts(ondemand::value entry, size_t index, std::string_view& left,
                        std::string_view& right, simdjson::error_code& syntax) {
  ondemand::json_type type;
  if ((syntax = entry.type().get(type)) != simdjson::SUCCESS) return BadMergeEntry(index);
  if (type == ondemand::json_type::string) {
    std::string_view text;
    if ((syntax = GetString(entry, text)) != simdjson::SUCCESS) return BadMergeEntry(index);
    return SplitMergeText(text, index, left, right);
  }
  ondemand::array pair;
  if (type != ondemand::json_type::array ||
      (syntax = entry.get_array().get(pair)) != simdjson::SUCCESS) {
    return BadMergeEntry(index);
  }
  size_t parts = 0;
  for (auto item : pair) {
    ondemand::value part;
    std::string_view text;
    simdjson::error_code error = std::move(item).get(part);
    if (error == simdjson::SUCCESS) error = GetString(part, text);
    if (error == simdjson::INCORRECT_TYPE || parts == 2) return BadMergeEntry(index);
    if ((syntax = error) != simdjson::SUCCESS) return BadMergeEntry(index);
    (parts++ == 0 ? left : right) = text;
  }
  if (parts != 2) return BadMergeEntry(index);
  return absl::OkStatus();
}

// Where a model.vocab entry's key and bytes sit in the piece arena.
struct VocabEntry {
  TokenId id;
  uint32_t key_offset;
  uint32_t key_size;
  uint32_t bytes_offset;
  uint32_t bytes_size;
};

class Loader {
 public:
  Loader(const PaddedJson& json, std::string_view config, const TokenizerOptions& options)
      : padded_(json), json_(json.text()), config_(config), options_(options) {}

  absl::StatusOr<std::shared_ptr<const Tokenizer>> Load() {
    if (absl::Status s = CheckText(json_, "tokenizer.json"); !s.ok()) return s;
    absl::StatusOr<std::shared_ptr<const Tokenizer>> loaded = LoadParts();
    if (loaded.ok()) return loaded;
    // A document with a syntax error anywhere is refused for that, whatever
    // else is wrong with it: the DOM parse of the whole document, which used
    // to run first, is run now that it is known to be needed. On-Demand only
    // decides when the DOM finds no error (it is stricter in a few corners).
    simdjson::dom::parser parser;
    element ignored;
    const simdjson::error_code dom_error = parser.parse(json_.data(), json_.size()).get(ignored);
    if (dom_error != simdjson::SUCCESS)
      return SyntaxErrorMessage(json_, "tokenizer.json", dom_error);
    if (syntax_error_ != simdjson::SUCCESS) {
      return SyntaxErrorMessage(json_, "tokenizer.json", syntax_error_);
    }
    return loaded;
  }

 private:
  absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadParts() {
    // The content hash (SHA-256 of 9 MB: ~9 ms) needs only the text: it runs
    // on another core while the rest is parsed. jthread joins on every return.
    std::string content_id;
    std::jthread hasher([this, &content_id] { content_id = ContentHash(json_); });
    parts_ = tokenizer_internal::SplitTokenizerJson(ondemand_, padded_);
    simdjson::dom::parser parser;
    element doc;
    if (const simdjson::error_code error =
            parser.parse(parts_.skeleton.data(), parts_.skeleton.size()).get(doc);
        error != simdjson::SUCCESS) {
      return SyntaxError(error);
    }
    object root;
    if (doc.get(root) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", "the top level is not a JSON object");
    }
    data_.name = options_.name.empty() ? "unnamed" : options_.name;

    const std::optional<element> model_value = Member(root, "model");
    if (!model_value.has_value() || model_value->get(model_) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", "model is missing or not an object");
    }
    if (absl::Status s = CheckModelType(); !s.ok()) return s;
    if (absl::Status s = ParseText(root); !s.ok()) return s;
    if (absl::Status s = ParseVocab(); !s.ok()) return s;
    if (absl::Status s = ParseAddedTokens(root); !s.ok()) return s;
    if (absl::Status s = BuildTokenTable(); !s.ok()) return s;
    if (absl::Status s = ParseMerges(); !s.ok()) return s;
    if (absl::Status s = ParseModelOptions(); !s.ok()) return s;
    if (absl::Status s = ResolveEos(); !s.ok()) return s;
    hasher.join();
    data_.id = std::move(content_id);
    return std::shared_ptr<const Tokenizer>(std::make_shared<BpeTokenizer>(std::move(data_)));
  }

  // Records a syntax error On-Demand met; Load() words the refusal.
  absl::Status SyntaxError(simdjson::error_code error) {
    syntax_error_ = error;
    return Invalid("tokenizer.json", "malformed JSON");
  }

  // An On-Demand document over `part`, a member's text inside padded_.
  simdjson::simdjson_result<ondemand::document> Iterate(std::string_view part) {
    const size_t readable = padded_.capacity() - static_cast<size_t>(part.data() - json_.data());
    return ondemand_.iterate(part.data(), part.size(), readable);
  }
  absl::Status CheckModelType() {
    const std::optional<element> type = Member(model_, "type");
    std::string_view name;
    if (!type.has_value()) {
      // Old files omit the type; a BPE model is the one with merges.
      if (Member(model_, "merges").has_value()) return absl::OkStatus();
      return Invalid("tokenizer.json", "model.type is missing and model has no merges");
    }
    if (type->get(name) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", "model.type is not a string");
    }
    if (name != "BPE") {
      return Invalid("tokenizer.json",
                     absl::StrCat("model.type ", Quote(name),
                                  " is not supported: maskd reads BPE models only (byte-level "
                                  "or SentencePiece-style)"));
    }
    return absl::OkStatus();
  }

  // Normalizer and pre-tokenizer; they also decide the tokenizer's kind.
  absl::Status ParseText(const object& root) {
    std::vector<NormalizerStep> normalizer_steps;
    if (std::optional<element> n = Member(root, "normalizer"); n.has_value()) {
      if (absl::Status s = ParseNormalizer(*n, "normalizer", normalizer_steps); !s.ok()) return s;
    }
    data_.normalizer = tokenizer_internal::Normalizer(std::move(normalizer_steps));
    std::vector<PreTokenizerStep> steps;
    bool byte_level = false;
    if (std::optional<element> p = Member(root, "pre_tokenizer"); p.has_value()) {
      if (absl::Status s = ParsePreTokenizer(*p, "pre_tokenizer", steps, byte_level); !s.ok()) {
        return s;
      }
    }
    byte_level |= DecoderIsByteLevel(root);
    data_.kind = byte_level ? TokenizerKind::kByteLevelBpe : TokenizerKind::kSentencePieceBpe;
    absl::StatusOr<PreTokenizer> pre_tokenizer = PreTokenizer::Create(std::move(steps));
    if (!pre_tokenizer.ok()) return pre_tokenizer.status();
    data_.pre_tokenizer = std::move(*pre_tokenizer);
    return absl::OkStatus();
  }

  absl::Status ParseVocab() {
    // Keys and bytes go to one arena first (no allocation per token); the
    // map's views are taken once it stops growing.
    arena_.reserve(json_.size() / 4);
    if (!parts_.vocab.empty()) {
      if (absl::Status s = ParseVocabOnDemand(); !s.ok()) return s;
    } else {
      const std::optional<element> vocab_value = Member(model_, "vocab");
      object vocab;
      if (!vocab_value.has_value() || vocab_value->get(vocab) != simdjson::SUCCESS) {
        return Invalid("tokenizer.json", "model.vocab is missing or not an object");
      }
      vocab_entries_.reserve(vocab.size());
      for (auto [key, value] : vocab) {
        uint64_t id = 0;
        const simdjson::error_code error = value.get(id);
        if (absl::Status s = AddVocabEntry(key, error, id); !s.ok()) return s;
      }
    }
    if (vocab_entries_.empty()) return Invalid("tokenizer.json", "model.vocab is empty");
    data_.piece_arena =
        std::make_unique<const tokenizer_internal::HugePageString>(std::move(arena_));
    const absl::string_view pieces = *data_.piece_arena;
    data_.piece_to_id.reserve(vocab_entries_.size());
    for (const VocabEntry& entry : vocab_entries_) {
      auto [it, inserted] =
          data_.piece_to_id.try_emplace(pieces.substr(entry.key_offset, entry.key_size), entry.id);
      if (!inserted) {
        return Invalid("tokenizer.json",
                       absl::StrCat("model.vocab: token ", Quote(std::string(it->first)),
                                    " is listed twice (ids ", it->second, " and ", entry.id, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ParseVocabOnDemand() {
    ondemand::document doc;
    ondemand::object vocab;
    size_t count = 0;
    simdjson::error_code error = Iterate(parts_.vocab).get(doc);
    if (error == simdjson::SUCCESS) error = doc.get_object().get(vocab);
    if (error == simdjson::SUCCESS) error = vocab.count_fields().get(count);
    if (error != simdjson::SUCCESS) return SyntaxError(error);
    vocab_entries_.reserve(count);
    for (auto member : vocab) {
      ondemand::field field;
      std::string_view key;
      if ((error = std::move(member).get(field)) != simdjson::SUCCESS ||
          (error = GetKey(field, json_.data() + json_.size(), key)) != simdjson::SUCCESS) {
        return SyntaxError(error);
      }
      uint64_t id = 0;
      error = field.value().get_uint64().get(id);
      // A string, a negative or fractional number, or one above 2^64 is the
      // wrong type (as for the DOM); anything else is malformed JSON.
      if (error != simdjson::SUCCESS && error != simdjson::INCORRECT_TYPE &&
          error != simdjson::NUMBER_OUT_OF_RANGE) {
        return SyntaxError(error);
      }
      if (absl::Status s = AddVocabEntry(key, error, id); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // One model.vocab member: `key` spelled as in the file, its id as read.
  absl::Status AddVocabEntry(std::string_view key, simdjson::error_code id_error, uint64_t raw_id) {
    if (id_error != simdjson::SUCCESS || raw_id > kMaxTokenId) {
      // The path is only spelled out on error: this runs per token.
      return CheckId(id_error, raw_id, absl::StrCat("model.vocab[", Quote(key), "]"));
    }
    const auto id = static_cast<TokenId>(raw_id);
    VocabEntry entry{id, static_cast<uint32_t>(arena_.size()), 0, 0, 0};
    if (data_.kind == TokenizerKind::kByteLevelBpe) {
      if (!tokenizer_internal::DecodeByteLevelInto(key, scratch_)) {
        return Invalid("tokenizer.json",
                       absl::StrCat("model.vocab[", Quote(key), "] (id ", id,
                                    ") has a character outside the GPT-2 byte-level alphabet, "
                                    "so its bytes are unknown"));
      }
      arena_.append(scratch_);
      entry.key_size = static_cast<uint32_t>(scratch_.size());
      entry.bytes_offset = entry.key_offset;
      entry.bytes_size = entry.key_size;
    } else {
      arena_.append(key);
      entry.key_size = static_cast<uint32_t>(key.size());
      const std::string bytes = SentencePieceBytes(key);
      entry.bytes_offset = static_cast<uint32_t>(arena_.size());
      entry.bytes_size = static_cast<uint32_t>(bytes.size());
      arena_.append(bytes);
    }
    vocab_entries_.push_back(entry);
    max_id_ = std::max<int64_t>(max_id_, id);
    return absl::OkStatus();
  }

  // The bytes and the piece-space key of vocab_entries_[index].
  std::string_view EntryBytes(uint32_t index) const {
    const VocabEntry& entry = vocab_entries_[index];
    return std::string_view(*data_.piece_arena).substr(entry.bytes_offset, entry.bytes_size);
  }
  std::string_view EntryKey(uint32_t index) const {
    const VocabEntry& entry = vocab_entries_[index];
    return std::string_view(*data_.piece_arena).substr(entry.key_offset, entry.key_size);
  }

  absl::Status ParseAddedTokens(const object& root) {
    const std::optional<element> value = Member(root, "added_tokens");
    if (!value.has_value()) return absl::OkStatus();
    array list;
    if (value->get(list) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", "added_tokens is not an array");
    }
    size_t i = 0;
    for (element entry : list) {
      const std::string path = absl::StrCat("added_tokens[", i++, "]");
      object obj;
      if (entry.get(obj) != simdjson::SUCCESS) {
        return Invalid("tokenizer.json", absl::StrCat(path, " is not an object"));
      }
      const std::optional<element> id_value = Member(obj, "id");
      if (!id_value.has_value())
        return Invalid("tokenizer.json", absl::StrCat(path, ".id is missing"));
      absl::StatusOr<TokenId> id = ParseId(*id_value, absl::StrCat(path, ".id"));
      if (!id.ok()) return id.status();
      absl::StatusOr<std::string_view> content = StringMember(obj, "content", path);
      if (!content.ok()) return content.status();
      if (content->empty()) {
        return Invalid("tokenizer.json", absl::StrCat(path, ".content is empty"));
      }
      AddedToken token{*id, std::string(*content)};
      absl::StatusOr<bool> special = BoolMember(obj, "special", false, path);
      absl::StatusOr<bool> lstrip = BoolMember(obj, "lstrip", false, path);
      absl::StatusOr<bool> rstrip = BoolMember(obj, "rstrip", false, path);
      for (const auto* flag : {&special, &lstrip, &rstrip}) {
        if (!flag->ok()) return flag->status();
      }
      token.special = *special;
      token.lstrip = *lstrip;
      token.rstrip = *rstrip;
      max_id_ = std::max<int64_t>(max_id_, *id);
      data_.added_tokens.push_back(std::move(token));
    }
    return absl::OkStatus();
  }

  // Per-id bytes and special flags; refuses two different tokens on one id.
  absl::Status BuildTokenTable() {
    const size_t size = static_cast<size_t>(max_id_ + 1);
    token_source_.assign(size, kNoToken);
    for (uint32_t i = 0; i < vocab_entries_.size(); ++i) {
      const TokenId id = vocab_entries_[i].id;
      if (token_source_[id] != kNoToken) {
        return Invalid("tokenizer.json", absl::StrCat("model.vocab: duplicate id ", id, " (tokens ",
                                                      Quote(SourceBytes(token_source_[id])),
                                                      " and ", Quote(EntryBytes(i)), ")"));
      }
      token_source_[id] = i;
    }
    data_.special.assign(size, false);
    for (uint32_t i = 0; i < data_.added_tokens.size(); ++i) {
      const AddedToken& token = data_.added_tokens[i];
      const uint32_t source = token_source_[token.id];
      if (source != kNoToken && (source & kFromAdded) != 0) {
        return Invalid("tokenizer.json", absl::StrCat("added_tokens: duplicate id ", token.id, " (",
                                                      Quote(token.content), " and ",
                                                      Quote(SourceBytes(source)), ")"));
      }
      // An added token may restate a vocabulary entry (Llama 2's <s>); its
      // own content is what the text must contain, so it wins.
      token_source_[token.id] = kFromAdded | i;
      data_.special[token.id] = token.special;
    }
    size_t total = 0;
    for (const uint32_t source : token_source_) {
      if (source != kNoToken) total += SourceBytes(source).size();
    }
    data_.bytes_arena.reserve(total);
    data_.bytes_offsets.reserve(size + 1);
    data_.bytes_offsets.push_back(0);
    for (size_t id = 0; id < size; ++id) {
      if (token_source_[id] != kNoToken) {
        data_.bytes_arena.append(SourceBytes(token_source_[id]));
      } else {
        data_.special[id] = true;  // A hole: no token has this id.
      }
      data_.bytes_offsets.push_back(static_cast<uint32_t>(data_.bytes_arena.size()));
    }
    return absl::OkStatus();
  }

  std::string_view SourceBytes(uint32_t source) const {
    if ((source & kFromAdded) != 0) return data_.added_tokens[source & ~kFromAdded].content;
    return EntryBytes(source);
  }

  // A vocabulary entry by its tokenizer.json spelling; `key` receives its
  // piece-space key (the bytes, for byte-level). nullopt when unknown.
  std::optional<TokenId> LookupVocab(std::string_view spelled, std::string& key) const {
    if (!ToPieceKey(spelled, key)) return std::nullopt;
    return LookupPiece(key);
  }

  // A vocabulary spelling's piece-space key; false when it has none.
  bool ToPieceKey(std::string_view spelled, std::string& key) const {
    if (data_.kind == TokenizerKind::kByteLevelBpe) {
      return tokenizer_internal::DecodeByteLevelInto(spelled, key);
    }
    key.assign(spelled);
    return true;
  }

  std::optional<TokenId> LookupPiece(std::string_view key) const {
    auto it = data_.piece_to_id.find(AbslView(key));
    if (it == data_.piece_to_id.end()) return std::nullopt;
    return it->second;
  }

  absl::Status ParseMerges() {
    if (!parts_.merges.empty()) return ParseMergesOnDemand();
    const std::optional<element> value = Member(model_, "merges");
    if (!value.has_value()) return absl::OkStatus();
    array merges;
    if (value->get(merges) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", "model.merges is not an array");
    }
    data_.merger.Reserve(merges.size());
    for (element entry : merges) {
      std::string_view left, right;
      if (absl::Status s = MergeParts(entry, next_rank_ + queued_, left, right); !s.ok()) return s;
      if (absl::Status s = QueueMerge(left, right); !s.ok()) return s;
    }
    return FlushMerges();
  }

  absl::Status ParseMergesOnDemand() {
    ondemand::document doc;
    ondemand::array merges;
    size_t count = 0;
    simdjson::error_code error = Iterate(parts_.merges).get(doc);
    if (error == simdjson::SUCCESS) error = doc.get_array().get(merges);
    if (error == simdjson::SUCCESS) error = merges.count_elements().get(count);
    if (error != simdjson::SUCCESS) return SyntaxError(error);
    data_.merger.Reserve(count);
    for (auto entry : merges) {
      ondemand::value value;
      if ((error = std::move(entry).get(value)) != simdjson::SUCCESS) return SyntaxError(error);
      std::string_view left, right;
      const absl::Status parts = MergeParts(value, next_rank_ + queued_, left, right, error);
      if (error != simdjson::SUCCESS) return SyntaxError(error);
      if (!parts.ok()) return parts;
      if (absl::Status s = QueueMerge(left, right); !s.ok()) return s;
    }
    return FlushMerges();
  }

  // Merges are resolved in batches: looking up 280k merges' tokens one by
  // one waits on two or three cache misses each in a row; a batch's lookups
  // are prefetched first, so their misses overlap.
  struct QueuedMerge {
    std::string_view left, right;     // As spelled in the file, for errors.
    std::string left_key, right_key;  // In piece space (ToPieceKey).
    bool spelled_ok = false;          // Both keys could be decoded.
    TokenId left_id = 0, right_id = 0;
  };
  static constexpr size_t kMergeBatch = 32;

  // Takes merge number next_rank_ + queued_; `left` and `right` must stay
  // valid until FlushMerges.
  absl::Status QueueMerge(std::string_view left, std::string_view right) {
    QueuedMerge& merge = merge_batch_[queued_++];
    merge.left = left;
    merge.right = right;
    merge.spelled_ok = ToPieceKey(left, merge.left_key) && ToPieceKey(right, merge.right_key);
    if (merge.spelled_ok) {
      data_.piece_to_id.prefetch(AbslView(merge.left_key));
      data_.piece_to_id.prefetch(AbslView(merge.right_key));
    }
    return queued_ == kMergeBatch ? FlushMerges() : absl::OkStatus();
  }

  // Resolves and adds the queued merges, in rank order.
  absl::Status FlushMerges() {
    for (size_t i = 0; i < queued_; ++i) {
      QueuedMerge& merge = merge_batch_[i];
      const uint32_t rank = next_rank_ + static_cast<uint32_t>(i);
      const std::optional<TokenId> left_id =
          merge.spelled_ok ? LookupPiece(merge.left_key) : std::nullopt;
      const std::optional<TokenId> right_id =
          merge.spelled_ok ? LookupPiece(merge.right_key) : std::nullopt;
      if (!left_id.has_value() || !right_id.has_value()) {
        // Name the first part that is unknown, as spelled in the file.
        std::string key;
        const bool left_known = ToPieceKey(merge.left, key) && LookupPiece(key).has_value();
        return Invalid(
            "tokenizer.json",
            absl::StrCat("model.merges[", rank, "] references unknown token ",
                         Quote(left_known ? merge.right : merge.left), " (not in model.vocab)"));
      }
      merge.left_id = *left_id;
      merge.right_id = *right_id;
      data_.merger.Prefetch(*left_id, *right_id);
    }
    for (size_t i = 0; i < queued_; ++i) {
      const QueuedMerge& merge = merge_batch_[i];
      const uint32_t rank = next_rank_ + static_cast<uint32_t>(i);
      merged_key_.assign(merge.left_key);
      merged_key_.append(merge.right_key);
      const std::optional<TokenId> merged = LookupMerged(merged_key_);
      if (!merged.has_value()) {
        return Invalid(
            "tokenizer.json",
            absl::StrCat("model.merges[", rank, "] produces ",
                         Quote(absl::StrCat(AbslView(merge.left), AbslView(merge.right))),
                         ", which is not in model.vocab (unknown token)"));
      }
      data_.merger.Add(merge.left_id, merge.right_id, rank, *merged);
    }
    next_rank_ += static_cast<uint32_t>(queued_);
    queued_ = 0;
    return absl::OkStatus();
  }

  // LookupPiece for a merge's result. Files list merges by rank and tokens
  // by id, and a merge's result is usually the token the previous merge
  // made or the one after it: checking those two first (a sequential read)
  // spares most lookups in the 128k-entry map (two cache misses each).
  std::optional<TokenId> LookupMerged(std::string_view key) {
    for (const TokenId guess : {last_merged_, last_merged_ + 1}) {
      if (guess >= token_source_.size()) break;
      const uint32_t source = token_source_[guess];
      if ((source & kFromAdded) == 0 && EntryKey(source) == key) return last_merged_ = guess;
    }
    const std::optional<TokenId> merged = LookupPiece(key);
    if (merged.has_value()) last_merged_ = *merged;
    return merged;
  }

  absl::Status ParseModelOptions() {
    absl::StatusOr<bool> ignore_merges = BoolMember(model_, "ignore_merges", false, "model");
    absl::StatusOr<bool> byte_fallback = BoolMember(model_, "byte_fallback", false, "model");
    absl::StatusOr<bool> fuse_unk = BoolMember(model_, "fuse_unk", false, "model");
    for (const auto* flag : {&ignore_merges, &byte_fallback, &fuse_unk}) {
      if (!flag->ok()) return flag->status();
    }
    data_.ignore_merges = *ignore_merges;
    data_.byte_fallback = *byte_fallback;
    data_.fuse_unk = *fuse_unk;
    if (Member(model_, "dropout").has_value()) {
      double dropout = 0;
      if (model_["dropout"].get(dropout) == simdjson::SUCCESS && dropout > 0) {
        return Invalid("tokenizer.json", "model.dropout > 0 makes encoding random; refused");
      }
    }
    if (std::optional<element> unk = Member(model_, "unk_token"); unk.has_value()) {
      std::string_view spelled;
      if (unk->get(spelled) != simdjson::SUCCESS) {
        return Invalid("tokenizer.json", "model.unk_token is not a string");
      }
      std::string key;
      data_.unk = LookupVocab(spelled, key);
    }
    data_.byte_tokens.fill(kUnknownSymbol);
    for (int b = 0; b < 256; ++b) {
      const std::string key = data_.kind == TokenizerKind::kByteLevelBpe
                                  ? std::string(1, static_cast<char>(b))
                                  : absl::StrFormat("<0x%02X>", b);
      auto it = data_.piece_to_id.find(AbslView(key));
      if (it != data_.piece_to_id.end()) data_.byte_tokens[b] = it->second;
    }
    return absl::OkStatus();
  }

  // The id of a token named by its text (tokenizer_config.json's spelling).
  std::optional<TokenId> FindTokenByContent(std::string_view content) const {
    for (const AddedToken& token : data_.added_tokens) {
      if (token.content == content) return token.id;
    }
    std::string scratch;
    std::string_view key = content;
    if (data_.kind == TokenizerKind::kByteLevelBpe) {
      // The config writes special tokens as text; in the vocabulary they are
      // byte-level spelled, which for ASCII is the text's own bytes.
      key = content;
    }
    auto it = data_.piece_to_id.find(AbslView(key));
    if (it != data_.piece_to_id.end()) return it->second;
    return std::nullopt;
  }

  absl::Status ResolveEos() {
    if (!options_.eos_override.empty()) {
      for (TokenId id : options_.eos_override) {
        if (id >= data_.special.size()) {
          return absl::InvalidArgumentError(absl::StrCat("eos_override: id ", id,
                                                         " is outside the vocabulary (size ",
                                                         data_.special.size(), ")"));
        }
      }
      data_.eos_ids = options_.eos_override;
      return absl::OkStatus();
    }
    if (config_.empty()) return absl::OkStatus();
    // nlohmann, not simdjson: configs hold integers beyond 64 bits
    // (model_max_length = 1e30) that simdjson refuses; the file is small.
    const nlohmann::json config =
        nlohmann::json::parse(config_, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded()) {
      return Invalid("tokenizer_config.json",
                     LooksTruncated(config_) ? "truncated JSON" : "malformed JSON");
    }
    if (!config.is_object())
      return Invalid("tokenizer_config.json", "the top level is not an object");
    auto eos = config.find("eos_token");
    if (eos == config.end() || eos->is_null()) return absl::OkStatus();
    std::string content;
    if (eos->is_string()) {
      content = eos->get<std::string>();
    } else if (eos->is_object() && eos->contains("content") && (*eos)["content"].is_string()) {
      content = (*eos)["content"].get<std::string>();
    } else {
      return Invalid("tokenizer_config.json",
                     "eos_token is neither a string nor an object with a string content");
    }
    const std::optional<TokenId> id = FindTokenByContent(content);
    if (!id.has_value()) {
      return Invalid("tokenizer_config.json", absl::StrCat("eos_token ", Quote(content),
                                                           " is not a token of tokenizer.json"));
    }
    data_.eos_ids = {*id};
    return absl::OkStatus();
  }

  const PaddedJson& padded_;
  std::string_view json_;
  std::string_view config_;
  const TokenizerOptions& options_;
  // Holds buffers sized for the whole document, reused by every part.
  ondemand::parser ondemand_;
  TokenizerJsonParts parts_;
  simdjson::error_code syntax_error_ = simdjson::SUCCESS;
  object model_;
  BpeTokenizerData data_;
  tokenizer_internal::HugePageString arena_;  // Becomes data_.piece_arena.
  std::vector<VocabEntry, tokenizer_internal::HugePageAllocator<VocabEntry>> vocab_entries_;
  // Per id: the index of its vocab_entries_ entry, kFromAdded | the index of
  // its added token, or kNoToken.
  static constexpr uint32_t kFromAdded = 0x80000000u;
  static constexpr uint32_t kNoToken = 0xFFFFFFFFu;
  std::vector<uint32_t> token_source_;
  TokenId last_merged_ = 0;  // The token the previous merge produced.
  int64_t max_id_ = -1;
  std::string scratch_, merged_key_;  // Reused per entry.
  std::array<QueuedMerge, kMergeBatch> merge_batch_;
  size_t queued_ = 0;
  uint32_t next_rank_ = 0;  // The rank of merge_batch_[0].
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": missing file"));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return std::move(contents).str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Tokenizer>> Tokenizer::FromJson(
    std::string_view tokenizer_json, std::string_view tokenizer_config_json,
    const TokenizerOptions& options) {
  const PaddedJson json = PaddedJson::Copy(tokenizer_json);
  return Loader(json, tokenizer_config_json, options).Load();
}

absl::StatusOr<std::shared_ptr<const Tokenizer>> Tokenizer::FromDirectory(
    const std::string& dir, const TokenizerOptions& options) {
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  // Read straight into padded memory: no copy of a 9-28 MB file.
  absl::StatusOr<PaddedJson> json = PaddedJson::ReadFile(base + "/tokenizer.json");
  if (!json.ok()) return json.status();
  std::string config;
  if (std::ifstream(base + "/tokenizer_config.json").good()) {
    absl::StatusOr<std::string> read = ReadFile(base + "/tokenizer_config.json");
    if (!read.ok()) return read.status();
    config = std::move(*read);
  }
  TokenizerOptions named = options;
  if (named.name.empty()) {
    const size_t slash = base.find_last_of('/');
    named.name = slash == std::string::npos ? base : base.substr(slash + 1);
  }
  return Loader(*json, config, named).Load();
}

}  // namespace maskd
