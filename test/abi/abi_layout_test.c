/*
 * The released layout of every struct of cohort/plugin.h, checked at compile time, in C11.
 * Compiled by test/abi/meson.build against the current header and against each frozen release
 * (sdk_v1.0 to sdk_v1.4), so appending fields in a minor is fine but moving, retyping or removing
 * one is not. Fields appended in minor N are checked where the header's minor is at least N.
 *
 * At run time it also checks that the installed pkg-config file (argv[1]) announces the version
 * the header defines.
 */
#include <cohort/plugin.h>
#include <stdio.h>
#include <string.h>

#define AT(type, field, offset) \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " moved")
/* `last` ended `type` at `size` bytes when released; a later minor may only append after it. */
#define ENDS_AT(type, last, size)                                                 \
  _Static_assert(COHORT_STRUCT_SIZE(type, last) >= (size), #type " lost fields"); \
  AT(type, last, (size) - sizeof(((type*)0)->last))

#if UINTPTR_MAX == 0xffffffffffffffffu /* LP64 layouts */
AT(cohort_abi_version, major, 0);
AT(cohort_abi_version, minor, 4);
_Static_assert(sizeof(cohort_abi_version) == 8, "cohort_abi_version size");

AT(cohort_extension, struct_size, 0);
AT(cohort_extension, type, 8);
AT(cohort_extension, next, 16);

AT(cohort_device, kind, 0);
AT(cohort_device, ordinal, 4);
_Static_assert(sizeof(cohort_device) == 8, "cohort_device size");

AT(cohort_trial_context, struct_size, 0);
AT(cohort_trial_context, rank, 8);
AT(cohort_trial_context, size, 12);
AT(cohort_trial_context, local_rank, 16);
AT(cohort_trial_context, local_size, 20);
AT(cohort_trial_context, cross_rank, 24);
AT(cohort_trial_context, cross_size, 28);
AT(cohort_trial_context, global_batch_size, 32);
AT(cohort_trial_context, per_slot_batch_size, 40);
AT(cohort_trial_context, trial_seed, 48);
AT(cohort_trial_context, trial_id, 56);
AT(cohort_trial_context, device, 64);
ENDS_AT(cohort_trial_context, stream, 80);

AT(cohort_batch, struct_size, 0);
AT(cohort_batch, split, 8);
AT(cohort_batch, batch_index, 16);
AT(cohort_batch, epoch, 24);
AT(cohort_batch, record_indices, 32);
ENDS_AT(cohort_batch, record_count, 48);

AT(cohort_tensor_spec, struct_size, 0);
AT(cohort_tensor_spec, name, 8);
AT(cohort_tensor_spec, name_len, 16);
AT(cohort_tensor_spec, dtype, 24);
AT(cohort_tensor_spec, device, 28);
ENDS_AT(cohort_tensor_spec, element_count, 48);

AT(cohort_tensor_view, struct_size, 0);
AT(cohort_tensor_view, data, 8);
AT(cohort_tensor_view, grad, 16);
AT(cohort_tensor_view, element_count, 24);
ENDS_AT(cohort_tensor_view, arena_offset, 40);

AT(cohort_step_info, struct_size, 0);
AT(cohort_step_info, step, 8);
ENDS_AT(cohort_step_info, batches_trained, 24);

AT(cohort_host_api, struct_size, 0);
AT(cohort_host_api, abi_version, 8);
AT(cohort_host_api, extensions, 16);
AT(cohort_host_api, error_create, 24);
AT(cohort_host_api, error_destroy, 32);
AT(cohort_host_api, error_code, 40);
AT(cohort_host_api, error_message, 48);
AT(cohort_host_api, log, 56);
AT(cohort_host_api, trial_context, 64);
AT(cohort_host_api, hparam_type, 72);
AT(cohort_host_api, hparam_int, 80);
AT(cohort_host_api, hparam_double, 88);
AT(cohort_host_api, hparam_bool, 96);
AT(cohort_host_api, hparam_string, 104);
AT(cohort_host_api, register_tensors, 112);
AT(cohort_host_api, gradients_ready, 120);
AT(cohort_host_api, metric_add, 128);
AT(cohort_host_api, writer_write, 136);
AT(cohort_host_api, reader_read, 144);
ENDS_AT(cohort_host_api, reader_remaining, 160);

AT(cohort_model_create_args, struct_size, 0);
AT(cohort_model_create_args, host_api, 8);
ENDS_AT(cohort_model_create_args, host, 24);

AT(cohort_plugin_api, struct_size, 0);
AT(cohort_plugin_api, abi_version, 8);
AT(cohort_plugin_api, host_minor_required, 16);
AT(cohort_plugin_api, name, 24);
AT(cohort_plugin_api, name_len, 32);
AT(cohort_plugin_api, extensions, 40);
AT(cohort_plugin_api, model_create, 48);
AT(cohort_plugin_api, model_destroy, 56);
AT(cohort_plugin_api, dataset_size, 64);
AT(cohort_plugin_api, train_batch, 72);
AT(cohort_plugin_api, evaluate_batch, 80);
AT(cohort_plugin_api, optimizer_step, 88);
AT(cohort_plugin_api, save_state, 96);
ENDS_AT(cohort_plugin_api, load_state, 112);

#if COHORT_ABI_VERSION_MINOR >= 1 /* appended in 1.1 */
AT(cohort_tensor_spec, shape, 48);
ENDS_AT(cohort_tensor_spec, shape_len, 64);
#endif
#if COHORT_ABI_VERSION_MINOR >= 3 /* appended in 1.3 */
ENDS_AT(cohort_host_api, metric_add_device, 168);
#endif
#if COHORT_ABI_VERSION_MINOR >= 4 /* appended in 1.4 */
ENDS_AT(cohort_tensor_spec, kind, 68);
#endif
#if COHORT_ABI_VERSION_MINOR >= 5 /* appended in 1.5 */
ENDS_AT(cohort_host_api, hparam_text, 176);
#endif
/* How far apart a spec array's elements lie, which a 1.4 host derives from the plugin's minor. */
#if COHORT_ABI_VERSION_MINOR == 0
_Static_assert(sizeof(cohort_tensor_spec) == 48, "1.0 spec arrays are 48 bytes apart");
#elif COHORT_ABI_VERSION_MINOR <= 3
_Static_assert(sizeof(cohort_tensor_spec) == 64, "1.1 to 1.3 spec arrays are 64 bytes apart");
#else
_Static_assert(sizeof(cohort_tensor_spec) == 72, "1.4 spec arrays are 72 bytes apart");
#endif
#endif

/* Values of released enums never change. */
_Static_assert(COHORT_DTYPE_FLOAT32 == 1 && COHORT_DTYPE_FLOAT16 == 2 &&
                   COHORT_DTYPE_BFLOAT16 == 3 && COHORT_DTYPE_FLOAT64 == 4,
               "dtype values");
_Static_assert(COHORT_DEVICE_CPU == 1 && COHORT_DEVICE_CUDA == 2, "device kinds");
#if COHORT_ABI_VERSION_MINOR >= 4
_Static_assert(COHORT_DTYPE_INT64 == 5, "int64 dtype");
_Static_assert(COHORT_TENSOR_PARAMETER == 0 && COHORT_TENSOR_STATE == 1, "tensor kinds");
#endif
_Static_assert(COHORT_SPLIT_TRAINING == 1 && COHORT_SPLIT_VALIDATION == 2, "splits");
_Static_assert(COHORT_REDUCE_MEAN == 1 && COHORT_REDUCE_SUM == 2 && COHORT_REDUCE_MIN == 3 &&
                   COHORT_REDUCE_MAX == 4,
               "reductions");
_Static_assert(COHORT_HPARAM_ABSENT == 0 && COHORT_HPARAM_INT == 1 && COHORT_HPARAM_DOUBLE == 2 &&
                   COHORT_HPARAM_BOOL == 3 && COHORT_HPARAM_STRING == 4 && COHORT_HPARAM_OTHER == 5,
               "hyperparameter types");
_Static_assert(COHORT_STATUS_INVALID_ARGUMENT == 3 && COHORT_STATUS_NOT_FOUND == 5 &&
                   COHORT_STATUS_INTERNAL == 13,
               "status codes");
_Static_assert(COHORT_ABI_VERSION_MAJOR == 1, "this file describes ABI 1.x");

int main(int argc, char** argv) {
  if (argc < 2) return 0; /* the frozen-header build only needs to compile */
  FILE* pc = fopen(argv[1], "r");
  if (pc == NULL) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  char line[256];
  char expected[64];
  snprintf(expected, sizeof expected, "Version: %d.%d\n", COHORT_ABI_VERSION_MAJOR,
           COHORT_ABI_VERSION_MINOR);
  int found = 0;
  while (fgets(line, sizeof line, pc) != NULL) found |= strcmp(line, expected) == 0;
  fclose(pc);
  if (!found) {
    fprintf(stderr, "%s does not announce '%.*s' as the header does\n", argv[1],
            (int)strlen(expected) - 1, expected);
    return 1;
  }
  printf("layout of ABI %d.%d verified; %s agrees\n", COHORT_ABI_VERSION_MAJOR,
         COHORT_ABI_VERSION_MINOR, argv[1]);
  return 0;
}
