// Internal to the JSON Schema front end: the state of one NormalizeSchema run
// (normalize.h). Its methods live in three files, one job each:
//  * normalize.cc: alias resolution, allOf merging (Conj, Flatten, Merge),
//    contradiction checks and emptiness propagation;
//  * expand.cc: rewriting `not`, if/then/else, dependentRequired and oneOf
//    into anyOf of merged nodes, and distributing a node's other constraints
//    into its anyOf branches, so lowering only meets plain anyOf;
//  * pattern_properties.cc: folding patternProperties into the declared
//    properties whose keys they match;
//  * member_witness.cc: "some member has a key in K and a value in V"
//    (SchemaNode::some_members): declared keys split off, values per key
//    class prepared for lowering; the same for "some item from index i on
//    matches V" (some_items);
//  * negate.cc: the complement of a node as new nodes (De Morgan over the
//    keywords), where the complement is expressible.
#ifndef MASKD_COMPILER_JSON_SCHEMA_NORMALIZER_H_
#define MASKD_COMPILER_JSON_SCHEMA_NORMALIZER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/json_schema/schema.h"
#include "compiler/json_schema/string_disjointness.h"

namespace maskd::json_schema {

class Normalizer {
 public:
  Normalizer(Schema* schema, int max_nodes, bool rewrite_combinators)
      : s_(*schema), max_nodes_(max_nodes), rewrite_combinators_(rewrite_combinators) {}

  absl::Status Run();

 private:
  // ---- normalize.cc ----
  absl::Status ResolveAliases();
  uint8_t& State(NodeId id);
  absl::StatusOr<NodeId> NewNode(const std::string& pointer);
  // A new node holding `node` (not yet flattened).
  absl::StatusOr<NodeId> AddNode(SchemaNode node);
  // The conjunction of two nodes, as a (memoized) new allOf node.
  absl::StatusOr<NodeId> Conj(NodeId a, NodeId b, const std::string& pointer);
  absl::StatusOr<NodeId> ConjAll(const std::vector<NodeId>& parts, const std::string& pointer);
  absl::Status Flatten(NodeId id, int depth);
  // Merges the node's all_of again (after rewriting added entries to it).
  absl::Status Reflatten(NodeId id);
  // Keeps `part` as its own allOf entry of `t`.
  absl::Status Residual(SchemaNode* t, const SchemaNode& part);
  absl::Status Merge(SchemaNode* t, const SchemaNode& b, std::vector<std::string>* reasons);
  // Drops types the node's own constraints exclude, filters the enum, and
  // records why nothing is left.
  absl::Status Check(NodeId id, std::vector<std::string> reasons);
  void PropagateEmptiness();

  // ---- pattern_properties.cc ----
  // Folds the schemas of the patterns a declared (or required) key matches
  // into that key's property schema and sets properties_include_patterns;
  // leaves the node as it is when a pattern cannot be evaluated.
  absl::Status AbsorbPatternProperties(SchemaNode* t);

  // ---- member_witness.cc ----
  // Fills SomeMember::class_values of `t` for its current patternProperties
  // and additionalProperties.
  absl::Status PrepareSomeMembers(SchemaNode* t);
  // Fills pattern_conjunctions (pattern_properties.cc).
  absl::Status PreparePatternConjunctions(SchemaNode* t);
  // Fills SomeItemValue of `t` for its current prefixItems and items.
  absl::Status PrepareSomeItems(SchemaNode* t);
  // Whether the decoded key `key` is a string node `key_node` admits;
  // Unimplemented naming what cannot be decided (formats, oneOf, not).
  absl::StatusOr<bool> KeyMatches(NodeId key_node, const std::string& key, int depth);
  // The first some_members entry whose key language admits a declared key of
  // `n` (properties or required), rewritten into the branches "this declared
  // key is the member" and "another key is" (appended to `branches`) and
  // removed from `n`; false when no entry needs it.
  absl::StatusOr<bool> SplitSomeMember(SchemaNode* n, std::vector<NodeId>* branches);
  void MarkDisjointOneOfs();

  // ---- expand.cc ----
  // Expands every node reachable from the root (see expand.cc).
  absl::Status ExpandReachable();
  absl::Status Expand(NodeId id, int depth);
  // One rewriting round over the combinators of `n` (a copy of node id);
  // true when something was added to its all_of.
  absl::StatusOr<bool> RewriteCombinators(SchemaNode* n);
  absl::Status Distribute(NodeId id, int depth);
  // Sets contains_match/contains_miss of node `id` where its `contains` has
  // a complement (else lowering refuses `contains` with the reason).
  absl::Status SplitContains(NodeId id);

  // ---- negate.cc ----
  // A node matching exactly the instances `id` does not match; Unimplemented
  // (naming the keyword that has no expressible complement) otherwise.
  absl::StatusOr<NodeId> Negate(NodeId id);
  absl::StatusOr<NodeId> NegateAt(NodeId id, int depth);
  // Writes the complement of `id` into the (placeholder) node `out`.
  absl::Status NegateInto(NodeId id, NodeId out, int depth);
  // Instances different from `value` (any type).
  absl::StatusOr<NodeId> NotConst(const JsonValue& value, const std::string& pointer, int depth);

  Schema& s_;
  int max_nodes_;
  bool rewrite_combinators_;
  std::vector<uint8_t> state_;  // 0 new, 1 flattening, 2 done.
  std::map<std::vector<NodeId>, NodeId> conj_cache_;
  absl::flat_hash_map<NodeId, std::vector<NodeId>> conj_parts_;
  // Negations built so far; entries of a failed Negate call are removed.
  absl::flat_hash_map<NodeId, NodeId> negation_;
  std::vector<NodeId> negation_started_;
  std::vector<uint8_t> expanded_;
  // oneOf disjointness of string branches, on one pattern pool per run.
  StringDisjointness strings_;
  size_t nodes_before_expansion_ = 0;
};

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_NORMALIZER_H_
