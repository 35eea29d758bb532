// The members of a JSON object whose keys may come in any order: each
// declared key at most once, every required one present, other keys (checked
// by their own key classes) any number of times, member counts within
// min/maxProperties. The permutations of n keys have no CFG of size
// polynomial in n, so the work is split: that a declared key comes at most
// once is the Earley parser's check on key lexemes (LexemeRole::kUniqueKey,
// which every declared key's lexeme must carry, with "{" and "}" as
// kOpenObject and kCloseObject); the grammar counts the required keys
// written (with no repeats, all are present when the count is full) and the
// members, one state per pair. Past a budget of states the object is
// refused by name rather than approximated.
#ifndef MASKD_COMPILER_JSON_SCHEMA_ANY_ORDER_MEMBERS_H_
#define MASKD_COMPILER_JSON_SCHEMA_ANY_ORDER_MEMBERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar.h"

namespace maskd::json_schema {

struct AnyOrderMembersSpec {
  // One member per declared key: its key lexeme (with the colon, role
  // kUniqueKey) and value.
  struct Declared {
    Symbol key;
    Symbol comma_key;  // "," and the key as one lexeme (see below).
    Symbol value;
    bool required;
  };
  // A class of other keys (a key lexeme matching many keys) and their value.
  struct Extra {
    Symbol key;
    Symbol comma_key;
    Symbol value;
    // Bits of the `witnesses` this member counts for (0: none).
    uint32_t witnesses = 0;
  };
  // Members after the first start with a lexeme that is the comma AND the
  // key: a comma alone would be allowed after the last unused key is
  // written (the parser cannot tell a comma that leads nowhere), and mixing
  // a comma lexeme with comma-key lexemes would break longest-match lexing.
  // The two lexemes of one declared key carry the same name, which is what
  // makes them one key to the parser (Grammar::unique_key_group).
  std::vector<Declared> declared;
  std::vector<Extra> extras;
  Symbol close = Symbol::Lexeme(0);    // "}" with its whitespace.
  Symbol nothing = Symbol::Lexeme(0);  // A symbol deriving nothing.
  uint64_t min_properties = 0;
  // Some members must be present (complements of additionalProperties and
  // the like): "}" only once every one of these many bits was set by an
  // extra member carrying it.
  uint32_t witnesses = 0;
  std::optional<uint64_t> max_properties;
  uint32_t max_states = 100'000;
  std::string name;  // Nonterminal name hint ("members/pointer").
};

// Adds the member states to `builder`; returns the nonterminal that derives
// what follows "{": members, then "}". ResourceExhausted when more than spec.max_states states
// would be needed.
absl::StatusOr<NonterminalId> AddAnyOrderMembers(GrammarBuilder& builder,
                                                 const AnyOrderMembersSpec& spec);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_ANY_ORDER_MEMBERS_H_
