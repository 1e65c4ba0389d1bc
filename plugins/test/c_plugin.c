/*
 * A small model written in plain C11 against cohort/plugin.h: it proves the C header is usable
 * from C, serves as the ABI reference plugin, and, built with one COHORT_TEST_DEFECT_* define,
 * becomes one of the defective plugins the loader's tests must refuse.
 *
 * Model: one float32 tensor "x" of 3 elements; record r of either split has the target
 * t_r[j] = (r % 5) + j, and loss = mean over the batch of 0.5 * |x - t_r|^2, so the gradient is
 * x - mean(t_r). It counts the batches it trained and keeps that count as its state.
 *
 * Hyperparameters: `init` (the starting value of x, default 0); `nan_batch` N and `nan_rank` R
 * (tests of the non-finite gradient guard): the gradient of its N-th training batch (counting
 * from 1, across resumes) gets a NaN in x[0], on rank R only when R is given; `hang_batch` N and
 * `hang_rank` R (tests of hang detection): its N-th training batch never returns, on rank R only
 * when R is given (it waits for signals until the process is killed); `float32_loss_offset` C
 * (tests of the gradient check): the loss reported is C plus the true loss, rounded to float32, as
 * a model computing in float32 reports it (C large makes that rounding coarse); `device_metrics`
 * (non-zero; tests of metric_add_device, ABI 1.3): the training loss goes through
 * metric_add_device, pointing at the model's own copy of it, on a host that offers it;
 * `exit_batch` N and `exit_code` C (tests of a plugin that ends its process): its N-th training
 * batch calls exit(C) (C default 0); `eval_writes_gradients` (non-zero; tests of the rule that
 * evaluate_batch leaves the gradients alone): evaluate_batch adds its batch's gradient into them;
 * `ready_twice` and `ready_in_eval` (non-zero; tests of the host's check of gradients_ready):
 * train_batch reports x[2] ready a second time, or evaluate_batch reports x ready, and either
 * drops the error the host returns and goes on as a careless plugin would; `loss_over_no_records`
 * (non-zero): train_batch reports its loss with record_count 0; `log_batch` N (tests of the host's
 * log): its N-th training batch logs "a logged batch trained" at info level through the host;
 * `error_batch` N and `error_rank` R (tests of how a failure is told): its N-th training batch
 * returns an error, "a deliberate error at training batch N", on rank R only when R is given.
 */
#define _POSIX_C_SOURCE 200809L
#include <cohort/plugin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIM 3

struct cohort_model {
  const cohort_host_api* api;
  cohort_host* host;
  cohort_tensor_view x;
  uint64_t batches_trained;
  double nan_batch;           /* 0: never */
  double nan_rank;            /* < 0: every rank */
  double hang_batch;          /* 0: never */
  double hang_rank;           /* < 0: every rank */
  double exit_batch;          /* 0: never */
  double exit_code;           /* what exit_batch exits with */
  double eval_writes_gradients; /* non-zero: evaluate_batch breaks the rule and writes them */
  double float32_loss_offset; /* 0: the loss is reported in double */
  double device_metrics;      /* non-zero: the training loss goes through metric_add_device */
  double ready_twice;         /* non-zero: train_batch reports a range twice, ignoring the error */
  double ready_in_eval;       /* non-zero: evaluate_batch calls gradients_ready, ignoring it */
  double loss_over_no_records; /* non-zero: the training loss is reported over 0 records */
  double log_batch;           /* 0: never */
  double error_batch;         /* 0: never */
  double error_rank;          /* < 0: every rank */
  double reported_loss;       /* what metric_add_device points at */
};

/* Whether training batch `batch` (from 1) on `rank` is the one chosen by (at_batch, at_rank). */
static int chosen(double at_batch, double at_rank, uint64_t batch, double rank) {
  return at_batch > 0 && (double)batch == at_batch && (at_rank < 0 || at_rank == rank);
}

/* `*out` = the double hyperparameter `name`, left alone when it is absent. */
static cohort_error* optional_double(const cohort_host_api* api, cohort_host* host,
                                     const char* name, double* out) {
  const size_t len = strlen(name);
  if (api->hparam_type(host, name, len) == COHORT_HPARAM_ABSENT) return NULL;
  return api->hparam_double(host, name, len, out);
}

static cohort_error* fail(const cohort_host_api* api, cohort_status_code code,
                          const char* message) {
  return api->error_create(code, message, strlen(message));
}

static cohort_error* model_create(const cohort_model_create_args* args, cohort_model** out) {
  const cohort_host_api* api = args->host_api;
  cohort_model* m = (cohort_model*)calloc(1, sizeof *m);
  if (m == NULL) return fail(api, COHORT_STATUS_INTERNAL, "out of memory");
  m->api = api;
  m->host = args->host;

  double init = 0.0;
  m->nan_rank = -1.0;
  m->hang_rank = -1.0;
  m->error_rank = -1.0;
  /* Every hyperparameter is optional: absent, its field keeps the default set above. */
  const struct {
    const char* name;
    double* field;
  } hparams[] = {{"init", &init},
                 {"nan_batch", &m->nan_batch},
                 {"nan_rank", &m->nan_rank},
                 {"hang_batch", &m->hang_batch},
                 {"hang_rank", &m->hang_rank},
                 {"exit_batch", &m->exit_batch},
                 {"error_batch", &m->error_batch},
                 {"error_rank", &m->error_rank},
                 {"exit_code", &m->exit_code},
                 {"eval_writes_gradients", &m->eval_writes_gradients},
                 {"float32_loss_offset", &m->float32_loss_offset},
                 {"device_metrics", &m->device_metrics},
                 {"ready_twice", &m->ready_twice},
                 {"ready_in_eval", &m->ready_in_eval},
                 {"loss_over_no_records", &m->loss_over_no_records},
                 {"log_batch", &m->log_batch}};
  cohort_error* hparam_error = NULL;
  for (size_t i = 0; hparam_error == NULL && i < sizeof hparams / sizeof hparams[0]; ++i) {
    hparam_error = optional_double(api, args->host, hparams[i].name, hparams[i].field);
  }
  if (hparam_error != NULL) {
    free(m);
    return hparam_error;
  }
#ifndef COHORT_TEST_DEFECT_NO_TENSORS
  cohort_tensor_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, element_count);
  spec.name = "x";
  spec.name_len = 1;
  spec.dtype = COHORT_DTYPE_FLOAT32;
  spec.device = api->trial_context(args->host)->device;
  spec.element_count = DIM;
  m->x.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_view, arena_offset);
  cohort_error* e = api->register_tensors(args->host, &spec, &m->x, 1);
  if (e != NULL) {
    free(m);
    return e;
  }
  for (int j = 0; j < DIM; ++j) ((float*)m->x.data)[j] = (float)init;
#endif
  *out = m;
  return NULL;
}

static void model_destroy(cohort_model* m) { free(m); }

static cohort_error* dataset_size(cohort_model* m, cohort_split split, uint64_t* records) {
  (void)m;
  *records = split == COHORT_SPLIT_TRAINING ? 10 : 4;
  return NULL;
}

/* Mean loss over the batch; adds the gradient when `grad` is not NULL. */
static double loss_and_grad(const cohort_model* m, const cohort_batch* batch, float* grad) {
  const float* x = (const float*)m->x.data;
  double loss = 0.0;
  for (uint64_t i = 0; i < batch->record_count; ++i) {
    const uint64_t r = batch->record_indices[i];
    for (int j = 0; j < DIM; ++j) {
      const double d = (double)x[j] - (double)(r % 5 + (uint64_t)j);
      loss += 0.5 * d * d;
#ifdef COHORT_TEST_DEFECT_WRONG_GRADIENT
      if (grad != NULL)
        grad[j] += (float)(2.0 * d / (double)batch->record_count); /* twice too big */
#else
      if (grad != NULL) grad[j] += (float)(d / (double)batch->record_count);
#endif
    }
  }
  if (batch->record_count == 0) return 0.0;
  loss /= (double)batch->record_count;
  return m->float32_loss_offset != 0 ? (double)(float)(m->float32_loss_offset + loss) : loss;
}

#if defined(COHORT_TEST_DEFECT_CRASH_IN_TRAIN) || defined(COHORT_TEST_DEFECT_CRASH_ON_LOAD)
/* A plugin bug: a store through NULL, so the process running it dies with SIGSEGV (kept out of
 * the sanitizers' reach so they do not turn the crash into a report and an exit code). */
static int* volatile nowhere = NULL; /* volatile: the compiler cannot see it is NULL */
__attribute__((noinline, no_sanitize("address", "undefined"))) static void crash(void) {
  *nowhere = 1;
}
#endif

static cohort_error* train_batch(cohort_model* m, const cohort_batch* batch,
                                 cohort_metrics* metrics) {
#ifdef COHORT_TEST_DEFECT_CRASH_IN_TRAIN
  crash();
#endif
  const double loss = loss_and_grad(m, batch, (float*)m->x.grad);
  const double rank = (double)m->api->trial_context(m->host)->rank;
  if (chosen(m->nan_batch, m->nan_rank, m->batches_trained + 1, rank)) ((float*)m->x.grad)[0] = NAN;
  if (chosen(m->hang_batch, m->hang_rank, m->batches_trained + 1, rank)) {
    for (;;) pause();
  }
  if (chosen(m->exit_batch, -1.0, m->batches_trained + 1, rank)) exit((int)m->exit_code);
  if (chosen(m->error_batch, m->error_rank, m->batches_trained + 1, rank)) {
    static const char kDeliberate[] = "a deliberate error at training batch %.0f";
    char message[sizeof kDeliberate + 24];
    snprintf(message, sizeof message, kDeliberate, m->error_batch);
    return fail(m->api, COHORT_STATUS_INTERNAL, message);
  }
  if (chosen(m->log_batch, -1.0, m->batches_trained + 1, rank)) {
    static const char kTrained[] = "a logged batch trained";
    m->api->log(m->host, COHORT_LOG_INFO, kTrained, sizeof kTrained - 1);
  }
  cohort_error* e = m->api->gradients_ready(m->host, 0, 0, DIM);
  if (e != NULL) return e;
  if (m->ready_twice != 0) m->api->error_destroy(m->api->gradients_ready(m->host, 0, DIM - 1, 1));
  m->batches_trained += 1;
#ifdef COHORT_TEST_DEFECT_NO_LOSS
  return m->api->metric_add(metrics, "not_loss", 8, loss, batch->record_count, COHORT_REDUCE_MEAN);
#else
#if COHORT_ABI_VERSION_MINOR >= 3
  if (m->device_metrics != 0 && COHORT_HAS_FIELD(m->api, cohort_host_api, metric_add_device)) {
    m->reported_loss = loss;
    return m->api->metric_add_device(metrics, "loss", 4, &m->reported_loss, COHORT_DTYPE_FLOAT64,
                                     batch->record_count, COHORT_REDUCE_MEAN);
  }
#endif
  return m->api->metric_add(metrics, "loss", 4, loss,
                            m->loss_over_no_records != 0 ? 0 : batch->record_count,
                            COHORT_REDUCE_MEAN);
#endif
}

static cohort_error* evaluate_batch(cohort_model* m, const cohort_batch* batch,
                                    cohort_metrics* metrics) {
  const double loss =
      loss_and_grad(m, batch, m->eval_writes_gradients != 0 ? (float*)m->x.grad : NULL);
  if (m->ready_in_eval != 0) m->api->error_destroy(m->api->gradients_ready(m->host, 0, 0, DIM));
  return m->api->metric_add(metrics, "loss", 4, loss, batch->record_count, COHORT_REDUCE_MEAN);
}

static cohort_error* save_state(cohort_model* m, cohort_writer* w) {
  return m->api->writer_write(w, &m->batches_trained, sizeof m->batches_trained);
}

static cohort_error* load_state(cohort_model* m, cohort_reader* r) {
  return m->api->reader_read(r, &m->batches_trained, sizeof m->batches_trained);
}

static cohort_plugin_api table;

#ifdef COHORT_TEST_DEFECT_NO_ENTRY
#define ENTRY_NAME cohort_plugin_entry_misspelt
COHORT_PLUGIN_EXPORT const cohort_plugin_api* ENTRY_NAME(const cohort_host_api* host_api);
#else
#define ENTRY_NAME cohort_plugin_entry
#endif

#ifdef COHORT_TEST_DEFECT_EXIT_ON_LOAD
/* A plugin bug: its library ends the process that loads it, as a static initializer calling
 * exit(0) would. */
__attribute__((constructor)) static void exit_on_load(void) { exit(0); }
#endif

COHORT_PLUGIN_EXPORT const cohort_plugin_api* ENTRY_NAME(const cohort_host_api* host_api) {
  (void)host_api;
#ifdef COHORT_TEST_DEFECT_CRASH_ON_LOAD
  crash();
#endif
#ifdef COHORT_TEST_DEFECT_NULL_TABLE
  return NULL;
#endif
  table.struct_size = COHORT_STRUCT_SIZE(cohort_plugin_api, load_state);
  table.abi_version.major = COHORT_ABI_VERSION_MAJOR;
  table.abi_version.minor = COHORT_ABI_VERSION_MINOR;
  table.host_minor_required = 0;
  table.name = "c_quadratic";
  table.name_len = strlen(table.name);
  table.extensions = NULL;
  table.model_create = &model_create;
  table.model_destroy = &model_destroy;
  table.dataset_size = &dataset_size;
  table.train_batch = &train_batch;
  table.evaluate_batch = &evaluate_batch;
  table.optimizer_step = NULL;
  table.save_state = &save_state;
  table.load_state = &load_state;
#if defined(COHORT_TEST_DEFECT_OTHER_MAJOR)
  table.abi_version.major = COHORT_ABI_VERSION_MAJOR + 1;
  table.abi_version.minor = 3;
#elif defined(COHORT_TEST_DEFECT_TINY_TABLE)
  table.struct_size = sizeof(uint32_t);
#elif defined(COHORT_TEST_DEFECT_SMALL_TABLE)
  table.struct_size = COHORT_STRUCT_SIZE(cohort_plugin_api, evaluate_batch);
#elif defined(COHORT_TEST_DEFECT_HUGE_TABLE)
  table.struct_size = 100000; /* no minor up to the host's defines so large a table */
#elif defined(COHORT_TEST_DEFECT_NEWER_HOST)
  table.abi_version.minor = COHORT_ABI_VERSION_MINOR + 7;
  table.host_minor_required = COHORT_ABI_VERSION_MINOR + 7;
#elif defined(COHORT_TEST_DEFECT_MISSING_FUNCTIONS)
  table.train_batch = NULL;
  table.evaluate_batch = NULL;
#elif defined(COHORT_TEST_DEFECT_HALF_STATE)
  table.load_state = NULL;
#elif defined(COHORT_TEST_DEFECT_NO_NAME)
  table.name_len = 0;
#endif
  return &table;
}
