#include "compiler/grammar_text/ir_import.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace maskd::grammar_text {
namespace {

struct ExprCopier {
  const regex::ExprSet& from;
  regex::ExprSet& to;
  absl::flat_hash_map<regex::ExprId, regex::ExprId> done;

  regex::ExprId Copy(regex::ExprId e) {
    if (auto it = done.find(e); it != done.end()) return it->second;
    regex::ExprId out = regex::ExprSet::kNothing;
    std::vector<regex::ExprId> args;
    for (regex::ExprId a : from.Args(e)) args.push_back(Copy(a));
    switch (from.kind(e)) {
      case regex::ExprKind::kNothing:
        out = regex::ExprSet::kNothing;
        break;
      case regex::ExprKind::kEpsilon:
        out = regex::ExprSet::kEpsilon;
        break;
      case regex::ExprKind::kByteSet:
        out = to.Bytes(from.GetByteSet(e));
        break;
      case regex::ExprKind::kConcat:
        out = to.Concat(args);
        break;
      case regex::ExprKind::kOr:
        out = to.Or(args);
        break;
      case regex::ExprKind::kAnd:
        out = to.And(args);
        break;
      case regex::ExprKind::kNot:
        out = to.Not(args[0]);
        break;
      case regex::ExprKind::kRepeat:
        out = to.Repeat(args[0], from.RepeatMin(e), from.RepeatMax(e));
        break;
      case regex::ExprKind::kMachine:
        out = to.Machine(from.GetMachine(e), from.MachineState(e));
        break;
    }
    done.emplace(e, out);
    return out;
  }
};

}  // namespace

regex::ExprId CopyExpr(const regex::ExprSet& from, regex::ExprId e, regex::ExprSet& to) {
  ExprCopier copier{from, to, {}};
  return copier.Copy(e);
}

NonterminalId ImportIr(const GrammarIr& from, std::string_view prefix, GrammarIr& to) {
  ExprCopier copier{*from.pool, *to.pool, {}};
  const GrammarBuilder& src = from.builder;
  std::vector<LexemeId> lexemes(src.num_lexemes());
  for (LexemeId id = 0; id < src.num_lexemes(); ++id) {
    const LexemeInfo& info = src.lexeme(id);
    const std::string name = absl::StrCat(std::string(prefix), info.name);
    lexemes[id] = info.is_token()
                      ? to.builder.AddTokenLexeme(name, info.token->ids, info.token->negated)
                      : to.builder.AddLexeme(name, copier.Copy(info.regex), info.flags);
  }
  std::vector<NonterminalId> nonterminals(src.num_nonterminals());
  for (NonterminalId id = 0; id < src.num_nonterminals(); ++id) {
    nonterminals[id] =
        to.builder.FreshNonterminal(absl::StrCat(std::string(prefix), src.nonterminal_name(id)));
  }
  for (const Rule& rule : src.rules()) {
    std::vector<Symbol> rhs;
    rhs.reserve(rule.rhs.size());
    for (Symbol s : rule.rhs) {
      rhs.push_back(s.is_nonterminal() ? Symbol::Nonterminal(nonterminals[s.id()])
                                       : Symbol::Lexeme(lexemes[s.id()]));
    }
    to.builder.AddRule(nonterminals[rule.lhs], std::move(rhs));
  }
  return nonterminals[src.start()];
}

}  // namespace maskd::grammar_text
