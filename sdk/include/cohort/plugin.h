/*
 * cohort/plugin.h -- the stable C ABI between the Cohort runtime (the host) and a model plugin.
 *
 * Overview
 * --------
 * A model plugin is a shared library that exports exactly one symbol, `cohort_plugin_entry`.
 * The host dlopen()s the library, calls the entry with the host's service table, and receives the
 * plugin's function table. Both tables start with their size and ABI version, so each side can
 * check what the other offers before touching it.
 *
 *   host                                    plugin
 *   ----                                    ------
 *   cohort_plugin_entry(&host_api)  ----->  returns &plugin_api (static storage)
 *   plugin_api.model_create(&args)  ----->  host_api.register_tensors(...)   (exactly once)
 *                                           writes initial values into the returned views
 *   plugin_api.train_batch(...)     ----->  adds gradients into the gradient views,
 *                                           host_api.gradients_ready(...) as they are final,
 *                                           host_api.metric_add(...) for "loss" and friends
 *                                           (or, 1.3, metric_add_device: a value still on the GPU)
 *   plugin_api.evaluate_batch(...)  ----->  host_api.metric_add(...) with record counts
 *   plugin_api.model_destroy(model)
 *
 * Versioning (major.minor)
 * ------------------------
 * - The major must match exactly; a host refuses a plugin of another major and names both.
 * - A minor only appends: new fields at the end of structs, new functions at the end of tables,
 *   new enum values. Each side reads a newer field only after checking `struct_size` covers it
 *   (COHORT_HAS_FIELD below). A plugin built against 1.N runs on any 1.M host; when it needs a
 *   service added in a later minor it says so in `host_minor_required` and the host refuses with
 *   both versions named. A field an older host may ignore (such as the 1.1 tensor shape) needs no
 *   newer host: an older host reads only the struct_size it knows.
 * - The first two fields of `cohort_host_api` and `cohort_plugin_api` (struct_size, abi_version)
 *   never move, in any major, so a version mismatch can always be reported.
 *
 * General rules
 * -------------
 * - Every struct that crosses the boundary starts with `size_t struct_size`, set by whoever fills
 *   the struct to COHORT_STRUCT_SIZE(type, last_field) of the headers it was built with. 0 is
 *   invalid.
 * - Errors are opaque `cohort_error*` handles; NULL means success. Plugins create them with
 *   `host_api.error_create`; an error returned to the host is owned and freed by the host. An
 *   error a host service returns to the plugin is owned by the plugin until it either returns it
 *   to the host or frees it with `host_api.error_destroy`.
 * - Strings are UTF-8 pointer plus length, never assumed NUL-terminated.
 * - No exception may cross this boundary: every plugin function must catch everything.
 * - Whoever allocates frees. The host owns all tensor memory; the plugin owns its model object.
 * - Threads: the host calls a model's functions from one thread at a time (not always the same
 *   thread). Host services may be called only from inside a call the host made into the plugin,
 *   on that thread, unless a service says otherwise.
 *
 * This header compiles as C11 and as C++11 or later, and mentions no CUDA type: devices are a
 * kind plus an ordinal, streams are opaque handles.
 */
#ifndef COHORT_PLUGIN_H_
#define COHORT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions and helpers
 * ------------------------------------------------------------------------------------------- */

#define COHORT_ABI_VERSION_MAJOR 1
#define COHORT_ABI_VERSION_MINOR 5

/* The size a struct of these headers reports: offset of `last_field` plus its size. */
#define COHORT_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when a struct filled by the other side is large enough to contain `field`. */
#define COHORT_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= COHORT_STRUCT_SIZE(type, field))

/* The one symbol a plugin exports (see cohort_plugin_entry_fn). */
#define COHORT_PLUGIN_ENTRY_SYMBOL "cohort_plugin_entry"

#if defined(_WIN32)
#define COHORT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define COHORT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef struct cohort_abi_version {
  uint32_t major;
  uint32_t minor;
} cohort_abi_version;

/* ---------------------------------------------------------------------------------------------
 * Opaque handles
 * ------------------------------------------------------------------------------------------- */

typedef struct cohort_error cohort_error;     /* an error; NULL means success */
typedef struct cohort_host cohort_host;       /* the host's context for one model */
typedef struct cohort_model cohort_model;     /* the plugin's model object */
typedef struct cohort_metrics cohort_metrics; /* a sink for one batch's metrics */
typedef struct cohort_writer cohort_writer;   /* a byte sink for plugin state */
typedef struct cohort_reader cohort_reader;   /* a byte source for plugin state */
typedef struct cohort_stream cohort_stream;   /* a device stream (a cudaStream_t on CUDA) */

/* ---------------------------------------------------------------------------------------------
 * Plain enums (fixed values; new values are only ever appended)
 * ------------------------------------------------------------------------------------------- */

typedef int32_t cohort_status_code; /* canonical codes, same values as absl::StatusCode */
#define COHORT_STATUS_CANCELLED 1
#define COHORT_STATUS_UNKNOWN 2
#define COHORT_STATUS_INVALID_ARGUMENT 3
#define COHORT_STATUS_NOT_FOUND 5
#define COHORT_STATUS_ALREADY_EXISTS 6
#define COHORT_STATUS_FAILED_PRECONDITION 9
#define COHORT_STATUS_OUT_OF_RANGE 11
#define COHORT_STATUS_UNIMPLEMENTED 12
#define COHORT_STATUS_INTERNAL 13
#define COHORT_STATUS_UNAVAILABLE 14
#define COHORT_STATUS_DATA_LOSS 15

typedef int32_t cohort_log_level;
#define COHORT_LOG_DEBUG 0
#define COHORT_LOG_INFO 1
#define COHORT_LOG_WARNING 2
#define COHORT_LOG_ERROR 3

typedef int32_t cohort_dtype;
#define COHORT_DTYPE_FLOAT32 1
#define COHORT_DTYPE_FLOAT16 2
#define COHORT_DTYPE_BFLOAT16 3
#define COHORT_DTYPE_FLOAT64 4
#define COHORT_DTYPE_INT64 5 /* 1.4: state tensors only (a counter such as BatchNorm's) */

typedef int32_t cohort_device_kind;
#define COHORT_DEVICE_CPU 1
#define COHORT_DEVICE_CUDA 2

/* What a registered tensor is (1.4). */
typedef int32_t cohort_tensor_kind;
#define COHORT_TENSOR_PARAMETER 0 /* trained: has a gradient, exchanged and stepped */
#define COHORT_TENSOR_STATE                                      \
  1 /* non-trainable state (BatchNorm's running statistics): no  \
       gradient, never exchanged or stepped; rank 0's values are \
       broadcast when the trial starts, and checkpoints hold them */

typedef int32_t cohort_split;
#define COHORT_SPLIT_TRAINING 1
#define COHORT_SPLIT_VALIDATION 2

/* How the host combines one metric across batches and ranks. */
typedef int32_t cohort_reduction;
/* COHORT_REDUCE_MEAN: the mean weighted by record_count (the default for losses, accuracy). */
#define COHORT_REDUCE_MEAN 1
#define COHORT_REDUCE_SUM 2 /* plain sum; record_count is still summed and reported */
#define COHORT_REDUCE_MIN 3
#define COHORT_REDUCE_MAX 4

typedef int32_t cohort_hparam_type;
#define COHORT_HPARAM_ABSENT 0
#define COHORT_HPARAM_INT 1
#define COHORT_HPARAM_DOUBLE 2
#define COHORT_HPARAM_BOOL 3
#define COHORT_HPARAM_STRING 4
#define COHORT_HPARAM_OTHER 5 /* a list or a map: not readable through the typed getters */

/* A typed extension, for optional features (none are defined up to 1.1). A reader walks the chain,
 * skips types it does not know, and checks struct_size before reading a known type's fields. */
typedef struct cohort_extension {
  size_t struct_size;
  int32_t type;
  const struct cohort_extension* next;
} cohort_extension;

/* ---------------------------------------------------------------------------------------------
 * Data the host hands to the plugin
 * ------------------------------------------------------------------------------------------- */

typedef struct cohort_device {
  cohort_device_kind kind;
  int32_t ordinal; /* 0 for the CPU; the CUDA device ordinal as the worker sees it */
} cohort_device;

/* Where this model runs inside its trial. Valid for the model's whole lifetime. */
typedef struct cohort_trial_context {
  size_t struct_size;
  uint32_t rank;       /* 0 .. size-1, across the whole trial */
  uint32_t size;       /* slots_per_trial */
  uint32_t local_rank; /* rank among this trial's workers on this machine */
  uint32_t local_size;
  uint32_t cross_rank; /* index of this machine among the trial's machines */
  uint32_t cross_size;
  uint64_t global_batch_size;   /* as configured */
  uint64_t per_slot_batch_size; /* global_batch_size / size, remainder dropped */
  uint64_t trial_seed;          /* seed every random choice of the model from this */
  uint64_t trial_id;
  cohort_device device;  /* where this rank's tensors should live */
  cohort_stream* stream; /* the stream to enqueue device work on; NULL on the CPU */
} cohort_trial_context;

/* One batch of records, chosen by the host's deterministic sampler. */
typedef struct cohort_batch {
  size_t struct_size;
  cohort_split split;
  /* TRAINING: the trial-wide count of training batches before this one; VALIDATION: the batch's
     place in its validation pass (0 at the first batch of every validation) */
  uint64_t batch_index;
  uint64_t epoch;
  const uint64_t* record_indices; /* indices into the split, 0 .. dataset_size-1 */
  uint64_t record_count;          /* may be 0 (a rank with no share of a final partial batch):
                                     then add no gradient and report metrics with count 0 */
} cohort_batch;

/* One tensor the plugin asks the host to hold.
 *
 * Since 1.1 a spec may carry the tensor's shape, for features that treat a tensor as a matrix
 * (PowerSGD gradient compression). The shape is optional: a plugin that sets struct_size to
 * COHORT_STRUCT_SIZE(cohort_tensor_spec, element_count), as a 1.0 plugin does, registers tensors
 * of unknown shape. The host reads `shape` and `shape_len` only when struct_size covers
 * `shape_len`; a 1.0 host reads neither, so setting them never requires a 1.1 host.
 *
 * Since 1.4 a spec may register non-trainable state (`kind`, COHORT_TENSOR_STATE). An older host
 * would train such a tensor, so a plugin that registers one sets host_minor_required to 4.
 *
 * Arrays of specs: the elements lie sizeof(cohort_tensor_spec) apart as the headers of the older
 * side define it (48 bytes in 1.0, 64 from 1.1, 72 from 1.4), whatever each one's struct_size
 * says. A host of 1.4 or later knows the plugin's minor (its table's abi_version), so it reads a
 * plugin of any minor right. A host before 1.4 always steps by its own sizeof: a plugin that may
 * run on one gives it elements of that size (the C++ layer does). */
typedef struct cohort_tensor_spec {
  size_t struct_size;
  const char* name; /* UTF-8, unique within the model */
  size_t name_len;
  cohort_dtype dtype;
  cohort_device device;
  uint64_t element_count; /* > 0 */
  /* 1.1: */
  const uint64_t* shape; /* optional: dimensions, outermost first (row-major); NULL or shape_len 0
                            = unknown. Every dimension > 0 and their product == element_count.
                            Read only during register_tensors. */
  size_t shape_len;      /* number of dimensions; > 0 requires shape != NULL */
  /* 1.4: */
  cohort_tensor_kind kind; /* COHORT_TENSOR_PARAMETER (also when struct_size does not cover it)
                              or COHORT_TENSOR_STATE */
} cohort_tensor_spec;

/* The host's memory for one registered tensor. `data` and `grad` have the same layout. They live
 * in one contiguous arena per (device, dtype), in registration order, and stay valid and at the
 * same address until the model is destroyed. State tensors (1.4) live in an arena of their own,
 * with no gradient. */
typedef struct cohort_tensor_view {
  size_t struct_size;
  void* data;             /* parameter values (or the state's) */
  void* grad;             /* gradient accumulator, zeroed by the host (see train_batch); NULL for
                             a state tensor */
  uint64_t element_count; /* as registered */
  uint64_t arena_offset;  /* element offset of this tensor within its arena */
} cohort_tensor_view;

/* Passed to optimizer_step. */
typedef struct cohort_step_info {
  size_t struct_size;
  uint64_t step; /* optimizer steps taken before this one */
  uint64_t batches_trained;
} cohort_step_info;

/* ---------------------------------------------------------------------------------------------
 * The host's service table
 * ------------------------------------------------------------------------------------------- */

typedef struct cohort_host_api {
  size_t struct_size;
  cohort_abi_version abi_version; /* the headers the host was built with */
  const cohort_extension* extensions;

  /* Errors. error_create copies `message`; the result is never NULL. error_destroy frees an error
   * the plugin decided not to return. error_message's pointer is valid until the error is freed. */
  cohort_error* (*error_create)(cohort_status_code code, const char* message, size_t message_len);
  void (*error_destroy)(cohort_error* error);
  cohort_status_code (*error_code)(const cohort_error* error);
  void (*error_message)(const cohort_error* error, const char** message, size_t* message_len);

  /* Logging, into the trial's log, prefixed with the rank. Callable from any thread. */
  void (*log)(cohort_host* host, cohort_log_level level, const char* message, size_t message_len);

  /* The trial context; never NULL. Check struct_size before reading fields newer than 1.0. */
  const cohort_trial_context* (*trial_context)(cohort_host* host);

  /* Hyperparameters of the trial, by name. A missing name is NOT_FOUND, a value of another type
   * is INVALID_ARGUMENT; both messages name the hyperparameter. An int reads as a double, nothing
   * else converts. A string stays valid for the model's lifetime. hparam_type never fails. */
  cohort_hparam_type (*hparam_type)(cohort_host* host, const char* name, size_t name_len);
  cohort_error* (*hparam_int)(cohort_host* host, const char* name, size_t name_len, int64_t* out);
  cohort_error* (*hparam_double)(cohort_host* host, const char* name, size_t name_len, double* out);
  cohort_error* (*hparam_bool)(cohort_host* host, const char* name, size_t name_len, uint8_t* out);
  cohort_error* (*hparam_string)(cohort_host* host, const char* name, size_t name_len,
                                 const char** out, size_t* out_len);

  /* Registers all of the model's tensors at once; callable exactly once, from model_create.
   * views[i] receives tensor i (the plugin sets each views[i].struct_size first). Parameters start
   * zeroed; the plugin writes its initial values into them before model_create returns. Fails on
   * an empty name, a duplicate name, a zero element count, an unknown dtype or device, or (1.1) a
   * shape with a zero dimension, a product other than element_count, or shape_len > 0 with a
   * NULL shape; (1.4) on an unknown kind, COHORT_DTYPE_INT64 for a parameter, or no parameter at
   * all. The plugin may update a state tensor's values in train_batch (each rank its own, as a
   * BatchNorm does); the host reads them only between batches. */
  cohort_error* (*register_tensors)(cohort_host* host, const cohort_tensor_spec* specs,
                                    cohort_tensor_view* views, size_t count);

  /* During train_batch: elements [offset, offset + count) of tensor `tensor_index` (the order of
   * register_tensors) hold their final gradient for this batch. The host may start exchanging
   * them at once, so the plugin must not write them again in this batch. Optional to call: any
   * range not reported is treated as ready when train_batch returns. On a device, "final" means
   * the work that writes the range is enqueued on context.stream (it need not have finished): the
   * host orders the exchange after that work without waiting for it.
   * Since 1.2 it may be called from any thread while train_batch runs (a framework's backward
   * threads), from several at once; every such call must return before train_batch does. A
   * plugin that calls it off the thread that called train_batch sets host_minor_required to 2:
   * a 1.0 or 1.1 host takes calls on that thread only. INVALID_ARGUMENT for a state tensor, an
   * empty range, one past the tensor's end, or one overlapping a range reported this batch;
   * FAILED_PRECONDITION outside train_batch. A refused call fails the batch (the next one, for a
   * call outside train_batch) even when the plugin drops the error. */
  cohort_error* (*gradients_ready)(cohort_host* host, uint32_t tensor_index, uint64_t offset,
                                   uint64_t count);

  /* Adds a metric of the current batch. `value` is the reduced value over `record_count` records
   * (a mean for COHORT_REDUCE_MEAN). Names are UTF-8; repeating a name in one batch is an error. */
  cohort_error* (*metric_add)(cohort_metrics* metrics, const char* name, size_t name_len,
                              double value, uint64_t record_count, cohort_reduction reduction);

  /* Plugin state. writer_write appends all `size` bytes. reader_read fills all `size` bytes or
   * fails with OUT_OF_RANGE; reader_remaining says how many bytes are left. */
  cohort_error* (*writer_write)(cohort_writer* writer, const void* data, size_t size);
  cohort_error* (*reader_read)(cohort_reader* reader, void* data, size_t size);
  uint64_t (*reader_remaining)(const cohort_reader* reader);

  /* 1.3: */
  /* As metric_add, for a value the plugin's device work is still computing: `device_value` points
   * to one float32 or float64 (`dtype`) in the memory of context.device, written by the work
   * enqueued on context.stream by the time train_batch (or evaluate_batch) returns (it need not
   * have finished). When the call returns, the host enqueues a copy of it on that stream, and
   * reads it only when a report needs it, so a plugin need not wait for its device every batch.
   * The value must stay as it is until the call returns; work enqueued after that may overwrite
   * it. On the CPU the value is read at once. INVALID_ARGUMENT for another dtype or a NULL
   * pointer. A plugin that calls it sets host_minor_required to 3 (older hosts lack it). */
  cohort_error* (*metric_add_device)(cohort_metrics* metrics, const char* name, size_t name_len,
                                     const void* device_value, cohort_dtype dtype,
                                     uint64_t record_count, cohort_reduction reduction);

  /* 1.5: */
  /* Any hyperparameter as YAML text, whatever its type: a list, or a map given as one value (a
   * const's or a categorical's: COHORT_HPARAM_OTHER), in flow style (`[64, 32]`, `{depth: 2}`,
   * null as `~`), a string as it is, an int, a double (shortest round trip) or a bool (`true`,
   * `false`) as YAML writes it. (A plain map in the config is a group: its keys are named
   * `group.key`.) NOT_FOUND for a missing name, naming it. The text stays valid for the model's
   * lifetime. A plugin that calls it sets host_minor_required to 5 (older hosts lack it). */
  cohort_error* (*hparam_text)(cohort_host* host, const char* name, size_t name_len,
                               const char** out, size_t* out_len);
} cohort_host_api;

/* ---------------------------------------------------------------------------------------------
 * The plugin's function table
 * ------------------------------------------------------------------------------------------- */

typedef struct cohort_model_create_args {
  size_t struct_size;
  const cohort_host_api* host_api; /* outlives the model */
  cohort_host* host;               /* pass to every host service; outlives the model */
} cohort_model_create_args;

typedef struct cohort_plugin_api {
  size_t struct_size;
  cohort_abi_version abi_version; /* the headers the plugin was built with */
  uint32_t host_minor_required;   /* lowest host minor (same major) this plugin can run on */
  const char* name;               /* the model's name, UTF-8 */
  size_t name_len;
  const cohort_extension* extensions;

  /* Required. Creates a model: reads hyperparameters and the trial context, registers its
   * tensors, and initialises the parameters deterministically from the trial seed. On error
   * *model is left unset and nothing needs destroying. */
  cohort_error* (*model_create)(const cohort_model_create_args* args, cohort_model** model);

  /* Required. Frees everything model_create allocated. Never fails. */
  void (*model_destroy)(cohort_model* model);

  /* Required. Number of records in a split (validation may be 0). */
  cohort_error* (*dataset_size)(cohort_model* model, cohort_split split, uint64_t* records);

  /* Required. Runs forward and backward on the batch and ADDS the gradient of the metric "loss"
   * (the mean loss over the batch's records) into the gradient views. The host zeroes the
   * gradients after the optimizer consumed them, so several batches may accumulate. Reports at
   * least the metric "loss" through metric_add. */
  cohort_error* (*train_batch)(cohort_model* model, const cohort_batch* batch,
                               cohort_metrics* metrics);

  /* Required. Runs forward only and reports metrics with their record counts. Must not change
   * parameters or gradients. */
  cohort_error* (*evaluate_batch)(cohort_model* model, const cohort_batch* batch,
                                  cohort_metrics* metrics);

  /* Optional (NULL: the host's built-in optimizer runs). Updates the parameter views from the
   * (already exchanged and averaged) gradient views. */
  cohort_error* (*optimizer_step)(cohort_model* model, const cohort_step_info* step);

  /* Optional (both NULL, or both set). State outside the registered tensors, written into and
   * read back from a checkpoint. load_state gets exactly the bytes save_state wrote; from 1.5 it
   * is called once the parameter and state tensors hold the checkpoint's values, so it may derive
   * caches from them (hosts before 1.5 call it before: a plugin relying on it sets
   * host_minor_required to 5). */
  cohort_error* (*save_state)(cohort_model* model, cohort_writer* writer);
  cohort_error* (*load_state)(cohort_model* model, cohort_reader* reader);
} cohort_plugin_api;

/* The entry point, exported under the name COHORT_PLUGIN_ENTRY_SYMBOL. Called once per load with
 * the host's table (valid until the library is unloaded). Returns the plugin's table in static
 * storage; it must return it even for a host of another major, so the host can name both versions.
 * Returns NULL only when the plugin cannot describe itself at all. */
typedef const cohort_plugin_api* (*cohort_plugin_entry_fn)(const cohort_host_api* host_api);

/* A plugin defines this function (the C++ layer's COHORT_PLUGIN macro does it for you). */
COHORT_PLUGIN_EXPORT const cohort_plugin_api* cohort_plugin_entry(const cohort_host_api* host_api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* COHORT_PLUGIN_H_ */
