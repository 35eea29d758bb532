// What every grammar-text front end needs to write grammar IR: named rules
// remembered with where they were used and defined (undefined, duplicate,
// unreachable and empty rules are reported by position), and the EBNF
// operators (groups, ? * +, counted repetition) lowered to fresh
// nonterminals, within a size limit.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_IR_WRITER_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_IR_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "compiler/grammar/grammar_ir.h"

namespace maskd::grammar_text {

using SymbolSeq = std::vector<Symbol>;
using Alternatives = std::vector<SymbolSeq>;

inline constexpr uint32_t kUnboundedRepeat = std::numeric_limits<uint32_t>::max();

class IrWriter {
 public:
  IrWriter(GrammarIr& ir, std::string_view text, size_t max_symbols)
      : ir_(ir), text_(text), max_symbols_(max_symbols) {}

  GrammarIr& ir() { return ir_; }
  std::string_view text() const { return text_; }

  // The nonterminal named `name`, used at `offset`.
  NonterminalId Use(std::string_view name, size_t offset);
  // Starts the definition of `name` at `offset`; InvalidArgument when it was
  // defined before.
  absl::StatusOr<NonterminalId> Define(std::string_view name, size_t offset);
  bool IsDefined(std::string_view name) const;

  // Adds `lhs -> seq` for each alternative, counting symbols against the
  // limit (`offset` is blamed when it is passed).
  absl::Status AddRules(NonterminalId lhs, const Alternatives& alternatives, size_t offset);
  // One symbol standing for the alternatives: the symbol itself when there is
  // one alternative of one symbol, else a fresh nonterminal.
  absl::StatusOr<Symbol> Group(const Alternatives& alternatives, size_t offset);
  // `x{min,max}` (max kUnboundedRepeat: no bound) as a symbol sequence.
  absl::StatusOr<SymbolSeq> Repeat(Symbol x, uint32_t min, uint32_t max, size_t offset);

  // Checks every used rule is defined and the start rule exists and derives
  // some string, then sets it as the start. Rules the start cannot reach are
  // listed in ir().warnings.
  absl::Status Finish(std::string_view start_name, bool start_given);

 private:
  struct RuleInfo {
    NonterminalId id;
    size_t first_use = std::string_view::npos;
    size_t definition = std::string_view::npos;
  };
  absl::Status CountSymbols(size_t n, size_t offset);

  GrammarIr& ir_;
  std::string_view text_;
  size_t max_symbols_;
  size_t symbols_ = 0;
  std::vector<std::string> names_;  // in order of first mention
  absl::flat_hash_map<std::string, RuleInfo> rules_;
  // Fresh nonterminal for x* per symbol, shared by every use.
  absl::flat_hash_map<uint32_t, NonterminalId> star_of_;
};

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_IR_WRITER_H_
