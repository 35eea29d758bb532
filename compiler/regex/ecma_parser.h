// ECMA-262 pattern syntax to an AST (the parsing half of ecma_regex.h).
// Character classes, escapes and Unicode properties are resolved to sorted
// code point ranges here; ^ and $ stay as nodes because their meaning depends
// on where the match sits in the whole string (see ecma_regex.cc).
#ifndef MASKD_COMPILER_REGEX_ECMA_PARSER_H_
#define MASKD_COMPILER_REGEX_ECMA_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/regex/expr_set.h"

namespace maskd::regex {

// A node of the pattern's syntax tree; children are indices into
// EcmaAst::nodes.
struct AstNode {
  enum Kind { kSet, kEmpty, kConcat, kAlt, kRepeat, kStart, kEnd };
  explicit AstNode(Kind k, std::vector<CodepointRange> s = {}) : kind(k), set(std::move(s)) {}
  Kind kind;
  std::vector<CodepointRange> set;  // kSet: normalized code points.
  std::vector<int> children;
  uint32_t min = 0, max = 0;
  bool has_anchor = false;
  size_t offset = 0;  // kRepeat: where its quantifier starts (for errors).
};

struct EcmaAst {
  std::vector<AstNode> nodes;
  int root = 0;
};

// Parses `pattern` (UTF-8 text). InvalidArgument naming the construct and
// its offset (in code points) for refused or malformed patterns, and for
// groups nested more than `max_nesting` deep.
absl::StatusOr<EcmaAst> ParseEcmaAst(std::string_view pattern, int max_nesting);

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_ECMA_PARSER_H_
