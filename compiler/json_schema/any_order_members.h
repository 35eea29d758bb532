// The members of a JSON object whose keys may come in any order: each
// declared key at most once, every required one present, other keys (checked
// by their own key classes) any number of times, member counts within
// min/maxProperties. Exact as a CFG only with one state per SET of declared
// keys written so far (the language of permutations has no small grammar),
// so states are built lazily from the empty set, only where reachable
// (maxProperties prunes them), and past a budget the object is refused by
// name rather than approximated.
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
  // One member per declared key: its key lexeme (with the colon) and value.
  struct Declared {
    Symbol key;
    Symbol value;
    bool required;
  };
  // A class of other keys (a key lexeme matching many keys) and their value.
  struct Extra {
    Symbol key;
    Symbol value;
  };
  std::vector<Declared> declared;
  std::vector<Extra> extras;
  Symbol comma = Symbol::Lexeme(0);
  Symbol close = Symbol::Lexeme(0);    // "}" with its whitespace.
  Symbol nothing = Symbol::Lexeme(0);  // A symbol deriving nothing.
  uint64_t min_properties = 0;
  std::optional<uint64_t> max_properties;
  uint32_t max_states = 4096;
  std::string name;  // Nonterminal name hint ("members/pointer").
};

// Adds the member states to `builder`; returns the nonterminal that derives
// what follows "{": members, then "}". ResourceExhausted when more than spec.max_states states
// would be needed.
absl::StatusOr<NonterminalId> AddAnyOrderMembers(GrammarBuilder& builder,
                                                 const AnyOrderMembersSpec& spec);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_ANY_ORDER_MEMBERS_H_
