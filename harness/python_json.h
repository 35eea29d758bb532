// Serializes a JSON value exactly as Python's `json.dumps(json.loads(text),
// ensure_ascii=False)` writes it: one line, ", " between items, ": " after keys,
// keys in document order, non-ASCII kept as UTF-8, integers exact (any size),
// other numbers as Python's float repr. MaskBench tokenizes instances in this
// form, so our numbers are comparable only if the bytes are identical.
#ifndef MASKD_HARNESS_PYTHON_JSON_H_
#define MASKD_HARNESS_PYTHON_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace maskd::maskbench {

// `json_text` is one JSON value (surrounding whitespace allowed).
absl::StatusOr<std::string> PythonJsonDumps(std::string_view json_text);

// The same, appended to `out`, for a value met while iterating a document.
absl::Status AppendPythonJson(simdjson::ondemand::value value, std::string& out);

// Python's repr() of a finite double ("1.0", "1e-05", "1e+16", "-0.0").
std::string PythonFloatRepr(double value);

}  // namespace maskd::maskbench

#endif  // MASKD_HARNESS_PYTHON_JSON_H_
