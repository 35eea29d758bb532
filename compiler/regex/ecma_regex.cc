#include "compiler/regex/ecma_regex.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/regex/ecma_parser.h"

namespace maskd::regex {
namespace {

constexpr uint32_t kInf = ExprSet::kUnbounded;
// A repetition of a group containing ^ or $ is expanded; only small counts.
constexpr uint32_t kMaxAnchoredUnroll = 16;

#define MASKD_ASSIGN_OR_RETURN(lhs, expr)       \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

// Lowers the AST to expressions. ^ and $ are zero-width assertions about the
// position in the WHOLE string, so a subtree containing them is translated
// in a context: whether its match starts at position 0 (s) and whether it
// ends at the end (e). Subtrees without anchors ignore the context.
class Translator {
 public:
  Translator(std::vector<AstNode>& nodes, ExprSet* pool) : nodes_(nodes), pool_(pool) {}

  absl::StatusOr<ExprId> Translate(int n, bool s, bool e) {
    const AstNode& node = nodes_[n];
    if (!node.has_anchor) return Plain(n);
    const uint64_t key = (uint64_t(n) << 2) | (s ? 2 : 0) | (e ? 1 : 0);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    absl::StatusOr<ExprId> r = TranslateAnchored(n, s, e);
    if (r.ok()) memo_.emplace(key, *r);
    return r;
  }

  int AddNode(AstNode n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

 private:
  ExprId Plain(int n) {
    if (auto it = plain_.find(n); it != plain_.end()) return it->second;
    const AstNode& node = nodes_[n];
    ExprId r = ExprSet::kNothing;
    switch (node.kind) {
      case AstNode::kSet:
        r = pool_->Codepoints(node.set);
        break;
      case AstNode::kEmpty:
        r = ExprSet::kEpsilon;
        break;
      case AstNode::kConcat:
      case AstNode::kAlt: {
        std::vector<ExprId> parts;
        for (int c : node.children) parts.push_back(Plain(c));
        r = node.kind == AstNode::kConcat ? pool_->Concat(parts) : pool_->Or(parts);
        break;
      }
      case AstNode::kRepeat:
        r = pool_->Repeat(Plain(node.children[0]), node.min, node.max);
        break;
      case AstNode::kStart:
      case AstNode::kEnd:
        break;  // Only reached through TranslateAnchored.
    }
    plain_.emplace(n, r);
    return r;
  }

  absl::StatusOr<ExprId> TranslateAnchored(int n, bool s, bool e) {
    const AstNode node = nodes_[n];  // Copy: AddNode may grow nodes_.
    switch (node.kind) {
      case AstNode::kStart:
        return s ? ExprSet::kEpsilon : ExprSet::kNothing;
      case AstNode::kEnd:
        return e ? ExprSet::kEpsilon : ExprSet::kNothing;
      case AstNode::kAlt: {
        std::vector<ExprId> alts;
        for (int c : node.children) {
          MASKD_ASSIGN_OR_RETURN(x, Translate(c, s, e));
          alts.push_back(x);
        }
        return pool_->Or(alts);
      }
      case AstNode::kConcat:
        return AnchoredConcat(node.children, s, e);
      case AstNode::kRepeat:
        return AnchoredRepeat(node, s, e);
      case AstNode::kSet:
      case AstNode::kEmpty:
        break;
    }
    return Plain(n);
  }

  // children[0] children[1] ... in context (s, e), folded from the right:
  // A then B, split by which of them match empty (an empty match sits where
  // the other one starts or ends). A loop, not a recursion per child: `^`
  // followed by a 50,000-character literal is one Concat of 50,001 children.
  // Runs of children without anchors are one plain piece.
  absl::StatusOr<ExprId> AnchoredConcat(const std::vector<int>& children, bool s, bool e) {
    struct Piece {
      int node = -1;  // an anchored child, or -1 for `plain`
      ExprId plain = ExprSet::kEpsilon;
    };
    std::vector<Piece> pieces;
    std::vector<ExprId> run;
    auto flush = [&] {
      if (run.empty()) return;
      pieces.push_back(Piece{-1, pool_->Concat(run)});
      run.clear();
    };
    for (int c : children) {
      if (nodes_[c].has_anchor) {
        flush();
        pieces.push_back(Piece{c, ExprSet::kNothing});
      } else {
        run.push_back(Plain(c));
      }
    }
    flush();
    if (pieces.empty()) return ExprSet::kEpsilon;
    auto translate = [&](const Piece& p, bool ps, bool pe) -> absl::StatusOr<ExprId> {
      if (p.node < 0) return p.plain;
      return Translate(p.node, ps, pe);
    };
    // The suffix from piece i on, starting at position 0 or not (rest_s,
    // rest_n); it always ends where the whole ends (e).
    MASKD_ASSIGN_OR_RETURN(last_s, translate(pieces.back(), s, e));
    MASKD_ASSIGN_OR_RETURN(last_n, translate(pieces.back(), false, e));
    ExprId rest_s = last_s, rest_n = last_n;
    for (size_t i = pieces.size() - 1; i-- > 0;) {
      ExprId next_s = ExprSet::kNothing, next_n = ExprSet::kNothing;
      for (bool start : {true, false}) {
        if (start && !s) continue;
        MASKD_ASSIGN_OR_RETURN(a_sn, translate(pieces[i], start, false));
        MASKD_ASSIGN_OR_RETURN(a_se, translate(pieces[i], start, e));
        const ExprId b_ne = rest_n;
        const ExprId b_se = start ? rest_s : rest_n;
        std::vector<ExprId> alts;
        alts.push_back(pool_->Concat(pool_->NonEmpty(a_sn), pool_->NonEmpty(b_ne)));
        if (pool_->Nullable(a_sn)) alts.push_back(pool_->NonEmpty(b_se));
        if (pool_->Nullable(b_ne)) alts.push_back(pool_->NonEmpty(a_se));
        if (pool_->Nullable(a_se) && pool_->Nullable(b_se)) alts.push_back(ExprSet::kEpsilon);
        (start ? next_s : next_n) = pool_->Or(alts);
      }
      if (!s) next_s = next_n;  // Not at position 0 either way.
      rest_s = next_s;
      rest_n = next_n;
    }
    return s ? rest_s : rest_n;
  }

  absl::StatusOr<ExprId> AnchoredRepeat(const AstNode& node, bool s, bool e) {
    const int body = node.children[0];
    if (node.max == kInf) {
      // A{m,} = A^m A*, with A* = empty | one nonempty iteration | a first,
      // middle ones and a last (only the first may start at position 0 and
      // only the last may end at the end).
      if (node.min > kMaxAnchoredUnroll) {
        return WithByteOffset(
            absl::InvalidArgumentError(absl::StrCat(
                "regex: a repeated group containing ^ or $ with a count above ", kMaxAnchoredUnroll,
                " is not supported (at offset ", node.offset, ")")),
            node.offset);
      }
      AstNode star{AstNode::kRepeat};
      star.children = {body};
      star.min = 0;
      star.max = kInf;
      star.has_anchor = true;
      if (node.min > 0) {
        AstNode seq{AstNode::kConcat};
        seq.children.assign(node.min, body);
        seq.children.push_back(AddNode(std::move(star)));
        seq.has_anchor = true;
        return Translate(AddNode(std::move(seq)), s, e);
      }
      MASKD_ASSIGN_OR_RETURN(whole, Translate(body, s, e));
      MASKD_ASSIGN_OR_RETURN(first, Translate(body, s, false));
      MASKD_ASSIGN_OR_RETURN(middle, Translate(body, false, false));
      MASKD_ASSIGN_OR_RETURN(last, Translate(body, false, e));
      ExprId several = pool_->Concat(std::vector<ExprId>{
          pool_->NonEmpty(first), pool_->Star(pool_->NonEmpty(middle)), pool_->NonEmpty(last)});
      return pool_->Or(std::vector<ExprId>{ExprSet::kEpsilon, pool_->NonEmpty(whole), several});
    }
    if (node.max > kMaxAnchoredUnroll) {
      return WithByteOffset(
          absl::InvalidArgumentError(
              absl::StrCat("regex: a repeated group containing ^ or $ with a count above ",
                           kMaxAnchoredUnroll, " is not supported (at offset ", node.offset, ")")),
          node.offset);
    }
    // A{m,n} = A^m (A|empty)^(n-m).
    AstNode optional{AstNode::kAlt};
    optional.children = {body, AddNode(AstNode{AstNode::kEmpty})};
    optional.has_anchor = true;
    int opt = AddNode(std::move(optional));
    AstNode seq{AstNode::kConcat};
    seq.children.assign(node.min, body);
    seq.children.insert(seq.children.end(), node.max - node.min, opt);
    seq.has_anchor = true;
    if (seq.children.empty()) return ExprSet::kEpsilon;
    return Translate(AddNode(std::move(seq)), s, e);
  }

  std::vector<AstNode>& nodes_;
  ExprSet* pool_;
  absl::flat_hash_map<uint64_t, ExprId> memo_;
  absl::flat_hash_map<int, ExprId> plain_;
};

// In search mode the pattern sits between two runs of "any text", which
// absorb extra repetitions at the pattern's edges:
//   .* X{m,n} P = .* X{m} P   and   P X{m,n} .* = P X{m} .*
// (the surplus iterations are just more text). Trimming them keeps the DFA
// from counting what cannot matter: `\d{1,200}` searched over a long run of
// digits needs 2 states instead of 200. Descends through alternatives and
// into the first (head) or last (tail) element of a sequence; repetitions
// containing ^ or $ are left alone.
int TrimEdge(std::vector<AstNode>& nodes, int n, bool head) {
  AstNode node = nodes[n];
  switch (node.kind) {
    case AstNode::kRepeat:
      if (node.has_anchor || node.max == node.min) return n;
      node.max = node.min;
      break;
    case AstNode::kAlt:
      for (int& c : node.children) c = TrimEdge(nodes, c, head);
      break;
    case AstNode::kConcat: {
      int& edge = head ? node.children.front() : node.children.back();
      edge = TrimEdge(nodes, edge, head);
      break;
    }
    default:
      return n;
  }
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

}  // namespace

absl::StatusOr<ExprId> ParseEcmaRegex(std::string_view pattern, ExprSet* pool, MatchMode mode,
                                      int max_nesting) {
  MASKD_ASSIGN_OR_RETURN(ast, ParseEcmaAst(pattern, max_nesting));
  Translator translator(ast.nodes, pool);
  if (mode == MatchMode::kFullMatch) return translator.Translate(ast.root, true, true);
  // Search: any UTF-8 text, the pattern, any UTF-8 text.
  ast.root = TrimEdge(ast.nodes, TrimEdge(ast.nodes, ast.root, /*head=*/true), /*head=*/false);
  AstNode any{AstNode::kRepeat};
  any.children = {
      translator.AddNode(AstNode{AstNode::kSet, NormalizeCodepointRanges({{0, 0x10FFFF}})})};
  any.min = 0;
  any.max = kInf;
  int any_id = translator.AddNode(std::move(any));
  AstNode whole{AstNode::kConcat};
  whole.children = {any_id, ast.root, any_id};
  whole.has_anchor = ast.nodes[ast.root].has_anchor;
  return translator.Translate(translator.AddNode(std::move(whole)), true, true);
}

}  // namespace maskd::regex
