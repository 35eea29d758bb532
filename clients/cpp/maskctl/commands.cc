#include "clients/cpp/maskctl/commands.h"

namespace maskd::maskctl {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command>* commands = new std::vector<Command>{
      {"compile",
       "compile [SPEC_FILE]",
       "Compiles a spec on the server and prints its handle, compile time and stats, or the\n"
       "server's error naming the offending part (JSON pointer or line:column).\n"
       "The kind comes from --kind or the extension: .json json_schema, .regex/.re regex,\n"
       ".gbnf/.lark/.ebnf grammars, .txt choices (one per line); --kind=builtin_json takes no\n"
       "file.",
       {"server", "deadline", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file",
        "tokenizer", "kind", "start_rule", "whitespace", "property_order", "unknown_formats",
        "default_dialect", "schema_resource"},
       RunCompile},
      {"tools",
       "tools TOOLS_JSON [--format qwen3|llama3_json|llama3_python_tag|harmony] [--require_call] "
       "[--single_call]",
       "Compiles tool calling for a list of tools on the server (maskd builds the structural\n"
       "tag for the model family) and prints what `compile` prints. TOOLS_JSON is an array of\n"
       "{\"name\", \"parameters\"} or OpenAI-style {\"type\":\"function\",\"function\":{...}}.",
       {"server", "deadline", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file",
        "tokenizer", "whitespace", "property_order", "unknown_formats", "format", "require_call",
        "single_call"},
       RunTools},
      {"check",
       "check HANDLE TEXT",
       "Tokenizes TEXT (\"-\": stdin) with a local copy of the server's tokenizer (maskd has\n"
       "no tokenize RPC; the copy's content hash must equal the server's id), runs it\n"
       "through a session on HANDLE and says whether it matches; if not, the byte offset\n"
       "and token index where it leaves the grammar.",
       {"server", "deadline", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file",
        "tokenizer", "tokenizer_dir"},
       RunCheck},
      {"generate",
       "generate [SPEC_FILE] --random [--seed N] [--max_tokens N] [--prompt_tail TEXT]",
       "Constrained random generation through the server: compiles the spec, then samples\n"
       "uniformly among the allowed tokens, taking jump-forward tokens when the grammar\n"
       "forces them, until EOS, MUST_STOP or --max_tokens. Prints the output on stdout and a\n"
       "summary on stderr. The same seed gives the same output. With --prompt_tail (or\n"
       "--prompt_tail_tokens) the open heals the prompt's end: stderr says how many prompt\n"
       "tokens to drop and the bytes the output then starts with.",
       {"server",
        "deadline",
        "tls_ca",
        "tls_cert",
        "tls_key",
        "tls_server_name",
        "token_file",
        "tokenizer",
        "tokenizer_dir",
        "kind",
        "start_rule",
        "whitespace",
        "property_order",
        "unknown_formats",
        "default_dialect",
        "schema_resource",
        "random",
        "seed",
        "max_tokens",
        "prompt_tail",
        "prompt_tail_tokens"},
       RunGenerate},
      {"health",
       "health [--service NAME]",
       "Standard gRPC health check; prints SERVING, NOT_SERVING, ...",
       {"server", "deadline", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file",
        "service"},
       RunHealth},
      {"tokenizers",
       "tokenizers",
       "Lists the server's tokenizers.",
       {"server", "deadline", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file"},
       RunTokenizers},
  };
  return *commands;
}

}  // namespace maskd::maskctl
