// The grammar IR every front end (JSON Schema, regex, choices, EBNF...) builds:
// a context-free grammar whose terminals are LEXEMES, each a regex held by id
// in the maskd::regex expression pool. A lazy lexer DFA runs the lexemes over
// bytes; the Earley parser (earley_parser.h) runs over lexemes.
//
// GrammarBuilder collects lexemes, nonterminals and rules; Build() validates
// them, trims every unproductive or unreachable symbol (so every symbol that
// remains derives some string and sits in some sentence: that is what makes
// the parser's Allowed() set exact) and precomputes the tables the parser
// needs. A built Grammar is immutable and safe to share between threads.
#ifndef MASKD_COMPILER_GRAMMAR_GRAMMAR_H_
#define MASKD_COMPILER_GRAMMAR_GRAMMAR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/grammar/lexeme_set.h"

namespace maskd {

// An expression id in the maskd::regex pool (maskd::regex::ExprId). The
// grammar only stores it; the lexer compiles it.
using RegexExprId = uint32_t;
using NonterminalId = uint32_t;
using RuleId = uint32_t;

// What a lexeme means to the parser's uniqueness checks (EarleyParser):
// objects and arrays open and close frames, and a kUniqueKey lexeme may be
// scanned at most once per frame (JSON objects whose declared keys come in
// any order, each at most once: a language no small CFG has). A
// kDistinctValue lexeme may be scanned any number of times per frame, but
// never twice with the same bytes up to its first accepting position (JSON
// arrays with uniqueItems over canonically spelled strings: the bytes up to
// the closing quote are the value). The matcher refuses the byte that
// completes a repeated value (matcher/byte_stepper.h); its lexemes must not
// be proper prefixes of another lexeme allowed in the same place.
enum class LexemeRole : uint8_t { kNone, kOpenObject, kCloseObject, kUniqueKey, kDistinctValue };

// What a lexeme is to the parser's item values (Grammar::has_item_values):
// arrays with uniqueItems over objects and arrays, whose items span many
// lexemes. The parser hashes each container as it is written (EarleyParser::
// TrackValue): objects by an order-free sum over (key, value) members,
// arrays in order; a kOpenItemArray `[` opens an array whose items must be
// distinct. kKey: a member key (`"k":`, `,"k":`), its value the hash of its
// quoted string; kScalar: a string, number or literal value, its value the
// hash of its canonical token (strings have one spelling, json_string.h;
// numbers compare by NumberCanon); kNumber marks number scalars.
enum class JsonPart : uint8_t {
  kNone,
  kOpenObject,
  kCloseObject,
  kOpenArray,
  kOpenItemArray,
  kCloseArray,
  kKey,
  kScalar,
  kNumber,
};

struct LexemeFlags {
  // End the lexeme at its first match instead of the longest one (e.g. a
  // string body that stops at the first closing quote even though the regex
  // could go on). The lexer interprets it; the parser does not.
  bool lazy = false;
  // A literal (fixed byte string) lexeme: lets later stages take shortcuts
  // (jump-forward, lexer fast paths) without inspecting the regex.
  bool literal = false;
  LexemeRole role = LexemeRole::kNone;
  // A kDistinctValue lexeme that is a JSON number (an open `number`: no
  // bounds, no multipleOf). Its value is its canonical number (1 == 1.0 ==
  // 1e0, -0 == 0), complete only when the lexeme ends (the next byte cannot
  // continue it), or as soon as every continuation is zero (`0e`, `-0.0E`).
  // The byte stepper canonicalizes its bytes (matcher/number_canon.h).
  bool distinct_number = false;
  // A distinct number that is an integer (`type: integer`): its value is
  // also settled by a leading `0` (`0`, `-0`, `0.0` are all zero) and by a
  // `.` after two or more digits (only `.0+` may follow; one digit may still
  // take an exponent spelling, `1.5e+16`, numeric_regex.h).
  bool distinct_integer = false;
  // Grammars with item values only (JsonPart); kNone elsewhere.
  JsonPart json = JsonPart::kNone;

  friend bool operator==(const LexemeFlags&, const LexemeFlags&) = default;
};

// A token terminal: a lexeme matched by one whole token of the tokenizer
// (e.g. a special token such as <|call|>), never by bytes. `ids` are sorted
// and unique; negated, it matches every token not in `ids` (EOS excepted:
// the grammar's end governs EOS). Its regex is the empty language, so the
// lexer never produces it; the matcher's token pass does.
struct TokenTerminal {
  std::vector<uint32_t> ids;
  bool negated = false;
  bool Contains(uint32_t id) const {
    return std::binary_search(ids.begin(), ids.end(), id) != negated;
  }
  friend bool operator==(const TokenTerminal&, const TokenTerminal&) = default;
};

struct LexemeInfo {
  std::string name;  // For errors and debug output.
  RegexExprId regex = 0;
  LexemeFlags flags;
  // Set for token terminals (then `regex` is the empty language).
  std::shared_ptr<const TokenTerminal> token;
  bool is_token() const { return token != nullptr; }
};

// A grammar symbol: a lexeme or a nonterminal, packed in 32 bits (the top bit
// says nonterminal) so rule bodies are flat arrays of integers.
class Symbol {
 public:
  static constexpr uint32_t kNonterminalBit = 0x80000000u;

  static constexpr Symbol Lexeme(LexemeId id) { return Symbol(id); }
  static constexpr Symbol Nonterminal(NonterminalId id) { return Symbol(id | kNonterminalBit); }
  static constexpr Symbol FromBits(uint32_t bits) { return Symbol(bits); }

  constexpr bool is_nonterminal() const { return (bits_ & kNonterminalBit) != 0; }
  constexpr bool is_lexeme() const { return !is_nonterminal(); }
  // The lexeme or nonterminal id, without the tag bit.
  constexpr uint32_t id() const { return bits_ & ~kNonterminalBit; }
  constexpr uint32_t bits() const { return bits_; }

  friend constexpr bool operator==(Symbol, Symbol) = default;

 private:
  constexpr explicit Symbol(uint32_t bits) : bits_(bits) {}
  uint32_t bits_;
};

struct Rule {
  NonterminalId lhs;
  std::vector<Symbol> rhs;  // Empty: an epsilon rule.
};

class Grammar;

class GrammarBuilder {
 public:
  static constexpr NonterminalId kNoStart = ~NonterminalId{0};

  GrammarBuilder() = default;

  // Adds a lexeme. A lexeme with the same regex and flags as an existing one
  // IS that lexeme (the lexer would always end both on the same bytes), so
  // its id is returned and `name` is ignored.
  LexemeId AddLexeme(std::string_view name, RegexExprId regex, LexemeFlags flags = {});
  // Adds a token terminal (`ids` need not be sorted); one with the same ids
  // and negation IS that terminal. Its regex is `nothing` (the pool's empty
  // language, regex::ExprSet::kNothing).
  LexemeId AddTokenLexeme(std::string_view name, std::vector<uint32_t> ids, bool negated,
                          RegexExprId nothing = 0);
  // Some lexeme is a token terminal.
  bool has_token_lexemes() const { return !lexeme_by_token_.empty(); }
  // Returns the nonterminal called `name`, creating it on first use, so front
  // ends can reference a nonterminal before defining it. A nonterminal that
  // is used but never gets a rule makes Build() fail naming it.
  NonterminalId Nonterminal(std::string_view name);
  // Always creates a fresh nonterminal; `name` is a hint for debug output and
  // is made unique with a numeric suffix if taken.
  NonterminalId FreshNonterminal(std::string_view name_hint);
  void AddRule(NonterminalId lhs, std::vector<Symbol> rhs);
  void SetStart(NonterminalId start) { start_ = start; }
  // kNoStart until SetStart is called.
  NonterminalId start() const { return start_; }

  size_t num_lexemes() const { return lexemes_.size(); }
  const LexemeInfo& lexeme(LexemeId id) const { return lexemes_[id]; }
  size_t num_nonterminals() const { return nonterminal_names_.size(); }
  size_t num_rules() const { return rules_.size(); }
  const std::vector<Rule>& rules() const { return rules_; }
  const std::string& nonterminal_name(NonterminalId id) const { return nonterminal_names_[id]; }

  // Whether `a` derives some string of lexemes (its rules so far; one pass
  // over all rules). Rules naming nonterminals that do not exist are the
  // caller's bug.
  bool DerivesSomething(NonterminalId a) const;

  // Validates, trims and precomputes. Errors (InvalidArgument):
  //  - no start symbol, or a symbol id that was never created;
  //  - "undefined nonterminal(s): a, b" for nonterminals used without rules;
  //  - "grammar matches nothing" when the start symbol derives no string.
  // The builder is left unchanged and can be built again.
  absl::StatusOr<std::shared_ptr<const Grammar>> Build() const;

 private:
  friend class Grammar;
  // Per nonterminal: 1 if it derives some string of lexemes.
  std::vector<uint8_t> ProductiveNonterminals() const;
  std::vector<LexemeInfo> lexemes_;
  std::vector<std::string> nonterminal_names_;
  absl::flat_hash_map<std::string, NonterminalId> nonterminal_by_name_;
  // Per name hint, the next "#N" suffix FreshNonterminal tries: without it a
  // hint used n times costs O(n^2) lookups (a schema with 40k properties).
  absl::flat_hash_map<std::string, size_t> next_fresh_suffix_;
  struct LexemeKey {
    RegexExprId regex;
    bool lazy;
    bool literal;
    LexemeRole role;
    bool distinct_number;
    bool distinct_integer;
    JsonPart json;
    friend bool operator==(const LexemeKey&, const LexemeKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const LexemeKey& k) {
      return H::combine(std::move(h), k.regex, k.lazy, k.literal, static_cast<uint8_t>(k.role),
                        k.distinct_number, k.distinct_integer, static_cast<uint8_t>(k.json));
    }
  };
  absl::flat_hash_map<LexemeKey, LexemeId> lexeme_by_key_;
  absl::flat_hash_map<std::pair<std::vector<uint32_t>, bool>, LexemeId> lexeme_by_token_;
  std::vector<Rule> rules_;
  NonterminalId start_ = kNoStart;
};

// A built, trimmed grammar plus the parser tables. Ids are renumbered densely
// by Build(); `builder_lexeme_id()` maps back.
//
// Nonterminal 0 is the augmented start `<start> -> S` (rule 0), so a complete
// sentence is exactly a completed rule 0 spanning the whole input.
//
// Parser tables are in terms of POSITIONS: a position is a dotted rule (rule,
// dot), numbered so that rule r occupies positions rule_first_pos(r) ..
// rule_first_pos(r) + |rhs|, and advancing the dot is position + 1.
class Grammar {
 public:
  // Position symbol meaning "the dot is at the end of the rule".
  static constexpr uint32_t kEndOfRule = 0xFFFFFFFFu;
  static constexpr NonterminalId kAugmentedStart = 0;

  // --- Symbols ---
  size_t num_lexemes() const { return lexemes_.size(); }
  const LexemeInfo& lexeme(LexemeId id) const { return lexemes_[id]; }
  LexemeId builder_lexeme_id(LexemeId id) const { return builder_lexeme_ids_[id]; }
  size_t num_nonterminals() const { return nonterminal_names_.size(); }
  const std::string& nonterminal_name(NonterminalId id) const { return nonterminal_names_[id]; }
  // The user's start symbol (the augmented start's only child).
  NonterminalId start() const { return start_; }
  // Some lexeme has LexemeRole::kUniqueKey: the parser tracks object frames.
  bool has_unique_keys() const { return !unique_key_group_.empty(); }
  // Some lexeme has LexemeRole::kDistinctValue.
  bool has_distinct_values() const { return has_distinct_values_; }
  // The parser tracks frames (unique keys or distinct values).
  bool has_frames() const { return has_unique_keys() || has_distinct_values_ || has_item_values_; }
  bool is_distinct_value(LexemeId id) const {
    return lexemes_[id].flags.role == LexemeRole::kDistinctValue;
  }
  // A kDistinctValue lexeme that is a number (LexemeFlags::distinct_number).
  bool is_distinct_number(LexemeId id) const {
    return is_distinct_value(id) && lexemes_[id].flags.distinct_number;
  }
  bool is_distinct_integer(LexemeId id) const {
    return is_distinct_number(id) && lexemes_[id].flags.distinct_integer;
  }
  // Some lexeme is a distinct number.
  bool has_distinct_numbers() const { return has_distinct_numbers_; }
  // Some lexeme opens an array of distinct objects/arrays (JsonPart::
  // kOpenItemArray): the parser hashes values (EarleyParser::TrackValue).
  bool has_item_values() const { return has_item_values_; }
  JsonPart json_part(LexemeId id) const { return lexemes_[id].flags.json; }
  // kUniqueKey lexemes with the same name are one key (a key with and
  // without the comma before it): its group number, dense from 0.
  uint32_t unique_key_group(LexemeId id) const { return unique_key_group_[id]; }
  std::span<const LexemeId> unique_key_lexemes(uint32_t group) const {
    return {unique_key_lexemes_.data() + unique_key_start_[group],
            unique_key_start_[group + 1] - unique_key_start_[group]};
  }

  // --- Rules ---
  size_t num_rules() const { return rule_lhs_.size(); }
  NonterminalId rule_lhs(RuleId r) const { return rule_lhs_[r]; }
  std::span<const Symbol> rule_rhs(RuleId r) const {
    return {rhs_symbols_.data() + rule_first_pos_[r] - r, rule_length(r)};
  }
  size_t rule_length(RuleId r) const { return rule_first_pos_[r + 1] - rule_first_pos_[r] - 1; }
  std::span<const RuleId> rules_of(NonterminalId a) const {
    return {nt_rules_.data() + nt_rules_start_[a], nt_rules_start_[a + 1] - nt_rules_start_[a]};
  }

  // --- Analyses ---
  bool nullable(NonterminalId a) const { return nullable_[a] != 0; }
  // Lexemes that can begin a string derived from `a` (FIRST set). Computed
  // on demand by a walk over left corners: dense FIRST tables would cost
  // nonterminals x lexemes bits, too much for large schema grammars, and
  // the parser does not need them.
  LexemeSet First(NonterminalId a) const;
  // Whether the empty lexeme sequence is a sentence.
  bool accepts_empty() const { return nullable_[start_] != 0; }

  // --- Parser tables ---
  size_t num_positions() const { return pos_symbol_.size(); }
  // Symbol bits after the dot (Symbol::bits()) or kEndOfRule.
  uint32_t pos_symbol(uint32_t pos) const { return pos_symbol_[pos]; }
  RuleId pos_rule(uint32_t pos) const { return pos_rule_[pos]; }
  uint32_t rule_first_pos(RuleId r) const { return rule_first_pos_[r]; }
  // The position of `<start> -> S .`: reaching it with origin 0 = accepting.
  uint32_t accept_pos() const { return rule_first_pos_[0] + 1; }
  // The nonterminals that predicting `a` predicts directly: those after the
  // dot in predicted_positions(a), without repeats. Predicting `a` predicts
  // the transitive closure of this relation; the parser follows it per set
  // (a precomputed closure table would be quadratic on deep precedence
  // chains).
  std::span<const NonterminalId> left_corners(NonterminalId a) const {
    return {left_corners_.data() + left_corners_start_[a],
            left_corners_start_[a + 1] - left_corners_start_[a]};
  }
  // Positions an Earley set gains when `a` itself is predicted: the start of
  // each rule of `a`, plus the positions after each nullable prefix (the
  // Aycock-Horspool treatment of nullable symbols). Includes the end position
  // of rules that derive the empty string.
  std::span<const uint32_t> predicted_positions(NonterminalId a) const {
    return {predicted_.data() + predicted_start_[a], predicted_start_[a + 1] - predicted_start_[a]};
  }
  // Lexemes after the dot among predicted_positions(a), without repeats.
  std::span<const LexemeId> predicted_lexemes(NonterminalId a) const {
    return {predicted_lexemes_.data() + predicted_lexemes_start_[a],
            predicted_lexemes_start_[a + 1] - predicted_lexemes_start_[a]};
  }

  // Approximate heap bytes held (for the compiled-grammar cache).
  size_t ByteSizeEstimate() const;
  // Human-readable listing: lexemes, then rules as `A ::= B "x" ...`.
  std::string DebugString() const;
  std::string SymbolName(Symbol s) const;

 private:
  friend class GrammarBuilder;
  Grammar() = default;
  void ComputeTables();

  std::vector<LexemeInfo> lexemes_;
  std::vector<LexemeId> builder_lexeme_ids_;
  std::vector<std::string> nonterminal_names_;
  NonterminalId start_ = 0;
  // Empty when no lexeme is a unique key; else per lexeme (~0u: not one).
  std::vector<uint32_t> unique_key_group_;
  std::vector<uint32_t> unique_key_start_;  // Groups + 1 entries.
  std::vector<LexemeId> unique_key_lexemes_;
  bool has_distinct_values_ = false;
  bool has_distinct_numbers_ = false;
  bool has_item_values_ = false;

  std::vector<NonterminalId> rule_lhs_;
  std::vector<Symbol> rhs_symbols_;       // All bodies, concatenated.
  std::vector<uint32_t> rule_first_pos_;  // num_rules + 1 entries.
  std::vector<RuleId> nt_rules_;
  std::vector<uint32_t> nt_rules_start_;

  std::vector<uint8_t> nullable_;

  std::vector<uint32_t> pos_symbol_;
  std::vector<RuleId> pos_rule_;
  std::vector<NonterminalId> left_corners_;
  std::vector<uint32_t> left_corners_start_;
  std::vector<uint32_t> predicted_;
  std::vector<uint32_t> predicted_start_;
  std::vector<LexemeId> predicted_lexemes_;
  std::vector<uint32_t> predicted_lexemes_start_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_GRAMMAR_H_
