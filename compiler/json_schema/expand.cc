// Rewrites the combinators lowering cannot take as they are into plain anyOf
// lists of merged nodes, exactly:
//  * not S                  -> allOf [complement of S]        (negate.cc)
//  * if I then T else E     -> anyOf [I and T, (not I) and E]
//  * dependentRequired k: D -> anyOf [k absent, object with k and D]
//  * some member (K, V)     -> anyOf [declared k in K is it, another key is]
//                              (member_witness.cc)
//  * oneOf [B1..Bn]         -> anyOf [Bi and not Bj for every j != i whose
//                              branch may overlap Bi] (plain anyOf when the
//                              branches are provably disjoint)
//  * {C, anyOf [B1..Bn]}    -> anyOf [C and B1, ..., C and Bn] (the node's
//                              other constraints C, including allOf parts
//                              that hold a second anyOf, distributed)
// Only nodes reachable from the root are rewritten. A combinator whose
// rewriting would need a complement the node table cannot state stays as it
// is, with the reason in SchemaNode::unsupported for lowering to report.
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/normalize.h"
#include "compiler/json_schema/normalizer.h"

namespace maskd::json_schema {
namespace {

constexpr int kMaxExpandDepth = 32;
constexpr int kMaxRounds = 16;
// Distribution multiplies nodes; past this many new ones the schema is
// refused rather than compiled slowly.
constexpr size_t kMaxExpansionNodes = 50'000;
// A oneOf branch minus the others becomes the product of the others'
// complements (each an anyOf); wider products are refused.
constexpr size_t kMaxOneOfProduct = 256;
constexpr size_t kMaxOneOfBranches = 64;
constexpr size_t kMaxAnyOfBranches = 1024;

std::string At(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

bool HasRewritableCombinator(const SchemaNode& n) {
  return n.not_schema != kNoNode || n.if_schema != kNoNode || !n.one_of.empty() ||
         !n.dependent_required.empty();
}

}  // namespace

absl::Status Normalizer::ExpandReachable() {
  std::deque<NodeId> work = {s_.root};
  std::vector<uint8_t> seen;
  while (!work.empty()) {
    const NodeId id = work.front();
    work.pop_front();
    if (id < 2) continue;
    if (seen.size() < s_.nodes.size()) seen.resize(s_.nodes.size(), 0);
    if (seen[id]) continue;
    seen[id] = 1;
    if (absl::Status st = Flatten(id, 0); !st.ok()) return st;
    if (absl::Status st = Expand(id, 0); !st.ok()) return st;
    if (absl::Status st = SplitContains(id); !st.ok()) return st;
    if (s_.nodes.size() - nodes_before_expansion_ > kMaxExpansionNodes) {
      return WithJsonPointer(
          absl::ResourceExhaustedError(absl::StrCat("rewriting not/if/oneOf/anyOf needs more than ",
                                                    kMaxExpansionNodes, " schema nodes at ",
                                                    At(s_.nodes[id].pointer))),
          At(s_.nodes[id].pointer));
    }
    SchemaNode copy = s_.nodes[id];
    ForEachChildId(copy, [&](NodeId& child) { work.push_back(child); });
  }
  return absl::OkStatus();
}

absl::Status Normalizer::SplitContains(NodeId id) {
  const SchemaNode& n = s_.nodes[id];
  if (n.contains == kNoNode || n.contains_match != kNoNode || !(n.types & kArrayType)) {
    return absl::OkStatus();
  }
  const NodeId contains = n.contains, items = n.items;
  const std::string ptr = n.pointer;
  absl::StatusOr<NodeId> miss = Negate(contains);
  if (!miss.ok()) {
    if (miss.status().code() != absl::StatusCode::kUnimplemented) return miss.status();
    SchemaNode& m = s_.nodes[id];
    if (m.unsupported.empty()) {
      m.unsupported = absl::StrCat("\"contains\": ", miss.status().message());
      m.unsupported_pointer = JsonPointerOf(miss.status()).value_or("");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<NodeId> match = Conj(items, contains, ptr);
  if (!match.ok()) return match.status();
  absl::StatusOr<NodeId> other = Conj(items, *miss, ptr);
  if (!other.ok()) return other.status();
  s_.nodes[id].contains_match = *match;
  s_.nodes[id].contains_miss = *other;
  return absl::OkStatus();
}

absl::Status Normalizer::Expand(NodeId id, int depth) {
  if (id < 2) return absl::OkStatus();
  if (expanded_.size() < s_.nodes.size()) expanded_.resize(s_.nodes.size(), 0);
  if (expanded_[id]) return absl::OkStatus();
  expanded_[id] = 1;
  if (depth > kMaxExpandDepth) return absl::OkStatus();  // Lowering refuses what is left.
  for (int round = 0; round < kMaxRounds; ++round) {
    if (absl::Status st = Flatten(id, 0); !st.ok()) return st;
    SchemaNode n = s_.nodes[id];
    if (n.types == 0) return absl::OkStatus();
    absl::StatusOr<bool> changed = RewriteCombinators(&n);
    if (!changed.ok()) return changed.status();
    // Parts that could not be merged may hold combinators of their own.
    for (NodeId part : n.all_of) {
      if (part < 2 || !HasRewritableCombinator(s_.nodes[part])) continue;
      if (expanded_.size() > static_cast<size_t>(part) && expanded_[part]) continue;
      if (absl::Status st = Expand(part, depth + 1); !st.ok()) return st;
      *changed = true;
    }
    s_.nodes[id] = std::move(n);
    if (!*changed) break;
    if (absl::Status st = Reflatten(id); !st.ok()) return st;
  }
  return Distribute(id, depth);
}

absl::StatusOr<bool> Normalizer::RewriteCombinators(SchemaNode* n) {
  bool changed = false;
  const std::string ptr = n->pointer;
  auto add_any_of = [&](std::vector<NodeId> branches) -> absl::Status {
    SchemaNode x;
    x.pointer = ptr;
    x.any_of = std::move(branches);
    absl::StatusOr<NodeId> id = AddNode(std::move(x));
    if (!id.ok()) return id.status();
    n->all_of.push_back(*id);
    changed = true;
    return absl::OkStatus();
  };
  // Unimplemented from Negate is a reason to keep the combinator; anything
  // else (node limits) is an error.
  auto refused = [&](const absl::Status& st, std::string_view what) {
    if (st.code() != absl::StatusCode::kUnimplemented) return false;
    if (n->unsupported.empty()) {
      n->unsupported = absl::StrCat(std::string(what), st.message());
      n->unsupported_pointer = JsonPointerOf(st).value_or("");
    }
    return true;
  };

  if (n->not_schema != kNoNode) {
    absl::StatusOr<NodeId> complement = Negate(n->not_schema);
    if (complement.ok()) {
      n->all_of.push_back(*complement);
      n->not_schema = kNoNode;
      changed = true;
    } else if (!refused(complement.status(), "")) {
      return complement.status();
    }
  }

  if (n->if_schema != kNoNode) {
    const NodeId if_id = n->if_schema, then_id = n->then_schema, else_id = n->else_schema;
    absl::StatusOr<NodeId> not_if = Negate(if_id);
    if (not_if.ok()) {
      absl::StatusOr<NodeId> yes = Conj(if_id, then_id, ptr);
      if (!yes.ok()) return yes.status();
      absl::StatusOr<NodeId> no = Conj(*not_if, else_id, ptr);
      if (!no.ok()) return no.status();
      n->if_schema = kNoNode;
      n->then_schema = n->else_schema = kTrueNode;
      if (absl::Status st = add_any_of({*yes, *no}); !st.ok()) return st;
    } else if (!refused(not_if.status(), "if/then/else: ")) {
      return not_if.status();
    }
  }

  if (!n->dependent_required.empty()) {
    if (n->types & kObjectType) {
      for (const auto& [key, deps] : n->dependent_required) {
        SchemaNode absent;
        absent.pointer = ptr;
        absent.properties = {{key, kFalseNode}};
        SchemaNode present;
        present.pointer = ptr;
        present.types = kObjectType;
        present.required = {key};
        for (const std::string& d : deps) {
          if (!present.IsRequired(d)) present.required.push_back(d);
        }
        absl::StatusOr<NodeId> a = AddNode(std::move(absent));
        if (!a.ok()) return a.status();
        absl::StatusOr<NodeId> p = AddNode(std::move(present));
        if (!p.ok()) return p.status();
        if (absl::Status st = add_any_of({*a, *p}); !st.ok()) return st;
      }
    }
    n->dependent_required.clear();
    changed = true;
  }

  // "Some member has a key in K": declared keys in K become branches of
  // their own (member_witness.cc); lowering takes the other keys.
  while (!n->some_members.empty()) {
    std::vector<NodeId> branches;
    absl::StatusOr<bool> split = SplitSomeMember(n, &branches);
    if (!split.ok()) {
      if (!refused(split.status(), "")) return split.status();
      break;
    }
    if (!*split) break;
    if (absl::Status st = add_any_of(std::move(branches)); !st.ok()) return st;
  }

  if (!n->one_of.empty()) {
    const std::vector<NodeId> branches = n->one_of;
    if (branches.size() == 1) {
      n->all_of.push_back(branches[0]);
      n->one_of.clear();
      changed = true;
    } else if (branches.size() > kMaxOneOfBranches) {
      if (n->unsupported.empty()) {
        n->unsupported = absl::StrCat("oneOf with more than ", kMaxOneOfBranches,
                                      " branches that may overlap at ", At(ptr));
        n->unsupported_pointer = At(ptr);
      }
    } else {
      for (NodeId b : branches) {
        if (absl::Status st = Flatten(b, 0); !st.ok()) return st;
      }
      // Branch i, minus every branch that may overlap it on the types this
      // node admits.
      const TypeSet parent_types = n->types;
      std::vector<NodeId> exclusive;
      bool ok = true;
      for (size_t i = 0; ok && i < branches.size(); ++i) {
        std::vector<NodeId> parts = {branches[i]};
        size_t product = 1;
        for (size_t j = 0; j < branches.size(); ++j) {
          if (j == i || ProvablyDisjoint(s_, branches[i], branches[j], 0, parent_types, &strings_))
            continue;
          absl::StatusOr<NodeId> other = Negate(branches[j]);
          if (!other.ok()) {
            if (!refused(other.status(), "oneOf whose branches may overlap: ")) {
              return other.status();
            }
            ok = false;
            break;
          }
          parts.push_back(*other);
          product *= std::max<size_t>(1, s_.nodes[*other].any_of.size());
          if (product > kMaxOneOfProduct) {
            if (n->unsupported.empty()) {
              n->unsupported = absl::StrCat(
                  "oneOf whose branches may overlap (telling them apart needs more than ",
                  kMaxOneOfProduct, " cases) at ", At(ptr));
              n->unsupported_pointer = At(ptr);
            }
            ok = false;
            break;
          }
        }
        if (!ok) break;
        absl::StatusOr<NodeId> branch = ConjAll(parts, ptr);
        if (!branch.ok()) return branch.status();
        exclusive.push_back(*branch);
      }
      if (ok) {
        n->one_of.clear();
        if (absl::Status st = add_any_of(std::move(exclusive)); !st.ok()) return st;
      }
    }
  }
  return changed;
}

absl::Status Normalizer::Distribute(NodeId id, int depth) {
  (void)depth;
  SchemaNode n = s_.nodes[id];
  if (n.types == 0 || HasRewritableCombinator(n)) return absl::OkStatus();
  // Without an anyOf of its own, take one from a part that could not be
  // merged (a second anyOf).
  if (n.any_of.empty()) {
    for (NodeId& part : n.all_of) {
      SchemaNode rest = s_.nodes[part];
      if (rest.any_of.empty() || HasRewritableCombinator(rest)) continue;
      n.any_of = std::move(rest.any_of);
      rest.any_of.clear();
      absl::StatusOr<NodeId> rest_id = AddNode(std::move(rest));
      if (!rest_id.ok()) return rest_id.status();
      part = *rest_id;
      break;
    }
  }
  if (n.any_of.empty()) return absl::OkStatus();
  if (!n.HasOwnConstraints() && n.all_of.empty()) {
    s_.nodes[id] = std::move(n);
    return absl::OkStatus();  // Already a plain anyOf.
  }
  if (n.any_of.size() > kMaxAnyOfBranches) return absl::OkStatus();
  SchemaNode rest = n;
  rest.any_of.clear();
  absl::StatusOr<NodeId> rest_id = AddNode(std::move(rest));
  if (!rest_id.ok()) return rest_id.status();
  SchemaNode out;
  out.pointer = n.pointer;
  for (NodeId branch : n.any_of) {
    if (branch == kFalseNode) continue;
    absl::StatusOr<NodeId> c = Conj(*rest_id, branch, n.pointer);
    if (!c.ok()) return c.status();
    out.any_of.push_back(*c);
  }
  if (out.any_of.empty()) {
    out.types = 0;
    out.unsatisfiable = absl::StrCat("every anyOf branch is false at ", At(n.pointer));
    out.unsatisfiable_pointer = At(n.pointer);
  }
  s_.nodes[id] = std::move(out);
  State(id) = 2;
  return absl::OkStatus();
}

}  // namespace maskd::json_schema
