#include "clients/cpp/maskctl/flags.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "maskd gRPC address (host:port).");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(30),
          "Deadline of each RPC and of a command's session stream, e.g. 10s, 500ms.");
ABSL_FLAG(std::string, tokenizer, "llama3",
          "Server tokenizer to use, by name or id (`maskctl tokenizers` lists them).");
ABSL_FLAG(std::string, tokenizer_dir, "",
          "Local directory holding the same tokenizer.json as the server's tokenizer (maskd "
          "has no tokenize RPC, so check/generate tokenize and detokenize locally; the "
          "content hash must match the server's id). Empty: "
          "${MASKD_TOKENIZER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers}/NAME.");
ABSL_FLAG(std::string, kind, "",
          "Spec kind: json_schema, regex, gbnf, lark, ebnf, choices (one per line), "
          "structural_tag (XGrammar structural tag JSON) or builtin_json (no file). Empty: from "
          "the file extension (.json, .regex/.re, .gbnf, "
          ".lark, .ebnf, .txt).");
ABSL_FLAG(std::string, format, "qwen3",
          "tools: the tool-call syntax: llama3_json, llama3_python_tag, qwen3 or harmony.");
ABSL_FLAG(bool, require_call, false, "tools: at least one tool call.");
ABSL_FLAG(bool, single_call, false, "tools: the output ends after the first call.");
ABSL_FLAG(std::string, start_rule, "", "Grammar start rule (gbnf/lark/ebnf); empty: default.");
ABSL_FLAG(std::string, whitespace, "",
          "JSON whitespace: compact, flexible or bounded; empty: the server's default.");
ABSL_FLAG(std::string, property_order, "",
          "JSON object members: schema (the schema's order) or any (any order, each declared "
          "key at most once); empty: the server's default (schema).");
ABSL_FLAG(std::string, unknown_formats, "",
          "JSON Schema formats maskd has no exact language for: refuse (the schema fails to "
          "compile, naming the format) or ignore (plain strings, listed in ignored_keywords); "
          "empty: the server's default (refuse).");
ABSL_FLAG(std::string, default_dialect, "",
          "JSON Schema: the $schema URI a schema without one is read as (e.g. "
          "http://json-schema.org/draft-07/schema#); empty: the server's default (2020-12).");
ABSL_FLAG(std::vector<std::string>, schema_resource, {},
          "JSON Schema: URI=FILE,...: documents the schema's $refs may name by URI (nothing is "
          "fetched; the draft metaschemas are built into the server).");
ABSL_FLAG(bool, random, false,
          "generate: sample uniformly among allowed tokens (the only mode; maskctl has no "
          "model), following jump-forward tokens.");
ABSL_FLAG(uint64_t, seed, 0, "generate: random seed (same seed, same output).");
ABSL_FLAG(int32_t, max_tokens, 256, "generate: most tokens to produce, forced ones included.");
ABSL_FLAG(std::string, prompt_tail, "",
          "generate: token healing: the end of the prompt as text (encoded with the local "
          "copy of the server's tokenizer); maskd drops the longest tail a longer token "
          "could cover and the output starts with its bytes. Empty: no healing.");
ABSL_FLAG(std::string, prompt_tail_tokens, "",
          "generate: token healing from the prompt's last token ids (comma-separated), "
          "instead of --prompt_tail.");
ABSL_FLAG(std::string, service, "", "health: service to check; empty: the whole server.");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA bundle that signed the server's certificate: connect over TLS. Empty: "
          "plaintext.");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate for mutual TLS (with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name to check the server certificate against; empty: the host in --server.");
ABSL_FLAG(std::string, token_file, "",
          "File whose first line is the bearer token sent with every call (servers with "
          "--auth_token_file); a file, not a flag value, so the token stays out of ps.");

namespace maskd::maskctl {
namespace {

bool IsBoolFlag(const absl::CommandLineFlag& flag) { return flag.IsOfType<bool>(); }

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseFlags(const std::vector<std::string>& args,
                                                    const std::vector<std::string>& allowed) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<ptrdiff_t>(i) + 1, args.end());
      break;
    }
    // "-" alone (stdin) and non-flags are positional.
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    std::string body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    std::string name = body;
    std::string value;
    bool has_value = false;
    if (const size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    bool negated = false;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr && IsBoolFlag(*flag) && !has_value;
      if (!negated) flag = nullptr;
      if (negated) name = name.substr(2);
    }
    if (flag == nullptr || std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(
          flag == nullptr ? absl::StrCat("unknown flag '", arg, "'")
                          : absl::StrCat("flag --", name, " does not apply to this command"));
    }
    if (negated) {
      value = "false";
    } else if (!has_value) {
      if (IsBoolFlag(*flag)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for --", name, ": ", error));
    }
  }
  return positional;
}

std::string DescribeFlags(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    absl::StrAppend(&text, "  --", name, "=", flag->DefaultValue(), "\n      ", flag->Help(), "\n");
  }
  return text;
}

}  // namespace maskd::maskctl
