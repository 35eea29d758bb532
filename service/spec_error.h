// An engine error about a spec, as the wire's maskd.v1.Error: the code and
// the engine's message unchanged, plus the place the front end attached to
// the status (compiler/errors/spec_location.h): a JSON pointer for schemas, a
// text position for regexes and grammars.
#ifndef MASKD_SERVICE_SPEC_ERROR_H_
#define MASKD_SERVICE_SPEC_ERROR_H_

#include "absl/status/status.h"
#include "compiler/compile/compile.h"
#include "maskd/v1/common.pb.h"

namespace maskd {

void FillError(const absl::Status& status, v1::Error* error);

// As FillError, and sets error->location from the status's location payload
// that fits a spec of `kind`: maskd/json-pointer for a JSON Schema,
// maskd/byte-offset for a regex, maskd/line-column for a grammar.
void FillSpecError(const absl::Status& status, SpecKind kind, std::string_view spec_text,
                   v1::Error* error);

}  // namespace maskd

#endif  // MASKD_SERVICE_SPEC_ERROR_H_
