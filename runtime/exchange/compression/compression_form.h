// CompressionForm: what the host exchange knows of one form of
// `optimizations.gradient_compression`: how to make its reducer, and which bucket plans it cannot
// take. Each form's folder under compression/ defines its entry (none/, wire/ for fp16 and bf16,
// topk/, powersgd/); CompressionForms() lists them, so a new form is a new folder, its entry, and
// its line in compression_forms.cc (besides its options in config/compression_options.h and, for
// GPUs, its CUDA reducer in cuda/cuda_exchange.cc).
//
//   const CompressionForm& form = CompressionFormOf(options.kind);
//   if (absl::Status fits = form.CheckPlan(options, plan); !fits.ok()) return fits;
//   std::unique_ptr<BucketReducer> reducer = form.create(options, plan, arena, backend);
//
// Thread-safety: plain values; the entries never change.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_COMPRESSION_FORM_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_COMPRESSION_FORM_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/config/compression_options.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/exchange/bucket_reducer.h"

namespace cohort {

struct CompressionForm {
  CompressionOptions::Kind kind = CompressionOptions::kNone;
  // The host-memory reducer for `options` over `plan` (a plan of `arena`, which it may read; the
  // arena and the backend outlive it). Called only for a plan CheckPlan accepted.
  std::unique_ptr<BucketReducer> (*create)(const CompressionOptions& options,
                                           const std::vector<GradientBucket>& plan,
                                           const TensorArena& arena,
                                           CollectiveBackend& backend) = nullptr;
  // INVALID_ARGUMENT naming the setting to change when `plan` cannot be exchanged in this form;
  // null for a form that takes every plan.
  absl::Status (*check_plan)(const CompressionOptions& options,
                             const std::vector<GradientBucket>& plan) = nullptr;

  absl::Status CheckPlan(const CompressionOptions& options,
                         const std::vector<GradientBucket>& plan) const {
    return check_plan == nullptr ? absl::OkStatus() : check_plan(options, plan);
  }
};

// Each form's entry, defined in its folder.
CompressionForm NoneForm();      // none/none_form.cc
CompressionForm Fp16Form();      // wire/wire_forms.cc
CompressionForm Bf16Form();      // wire/wire_forms.cc
CompressionForm TopKForm();      // topk/topk_form.cc
CompressionForm PowerSgdForm();  // powersgd/powersgd_form.cc

// Every form, one per CompressionOptions::Kind.
const std::vector<CompressionForm>& CompressionForms();

// The entry of `kind` (every Kind has one; compression_forms_test checks it).
const CompressionForm& CompressionFormOf(CompressionOptions::Kind kind);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_COMPRESSION_FORM_H_
