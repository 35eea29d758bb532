// An engine error about a spec, as the wire's maskd.v1.Error: the code and
// the engine's message unchanged, plus the place it names when the message
// names one (a JSON pointer for schemas, a byte offset for regexes).
#ifndef MASKD_SERVICE_SPEC_ERROR_H_
#define MASKD_SERVICE_SPEC_ERROR_H_

#include "absl/status/status.h"
#include "compiler/compile/compile.h"
#include "maskd/v1/common.pb.h"

namespace maskd {

void FillError(const absl::Status& status, v1::Error* error);

// As FillError, and sets error->location from the message when it names a
// place in a spec of `kind`: " at /a/b" (JSON Schema front end) becomes
// json_pointer "/a/b", "offset N" (regex front end) becomes a text position.
void FillSpecError(const absl::Status& status, SpecKind kind, std::string_view spec_text,
                   v1::Error* error);

}  // namespace maskd

#endif  // MASKD_SERVICE_SPEC_ERROR_H_
