#include <cstdlib>

#include "runtime/exchange/compression/compression_form.h"

namespace cohort {

const std::vector<CompressionForm>& CompressionForms() {
  static const std::vector<CompressionForm> forms = {NoneForm(), Fp16Form(), Bf16Form(), TopKForm(),
                                                     PowerSgdForm()};
  return forms;
}

const CompressionForm& CompressionFormOf(CompressionOptions::Kind kind) {
  for (const CompressionForm& form : CompressionForms()) {
    if (form.kind == kind) return form;
  }
  // A Kind without an entry is a build defect that compression_forms_test reports.
  std::abort();
}

}  // namespace cohort
