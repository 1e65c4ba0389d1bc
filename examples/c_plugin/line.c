/*
 * A model plugin in plain C11, built with nothing but the installed SDK (see the Makefile beside
 * it): a straight line y = w * x + b fitted by least squares.
 *
 * Record r of either split is the point x_r = (r % 200) / 100 - 1 on the line y = 3 x + 0.5 (the
 * hyperparameters `slope` and `intercept` choose another line). The loss is the batch mean of
 * 0.5 * (w x + b - y)^2, so its gradient is the mean of (w x + b - y) * (x, 1). The host holds w
 * and b in its arena, exchanges their gradients and steps them with the experiment's optimizer.
 *
 *   make && cohort plugin check ./line.so
 */
#include <cohort/plugin.h>
#include <stdlib.h>
#include <string.h>

struct cohort_model {
  const cohort_host_api* api;
  cohort_host* host;
  cohort_tensor_view line; /* float32 [w, b] */
  double slope;
  double intercept;
};

static cohort_error* fail(const cohort_host_api* api, cohort_status_code code, const char* text) {
  return api->error_create(code, text, strlen(text));
}

/* `*value` = the hyperparameter `name` when the experiment sets it; left as it is otherwise. */
static cohort_error* hparam_or(const cohort_host_api* api, cohort_host* host, const char* name,
                               double* value) {
  if (api->hparam_type(host, name, strlen(name)) == COHORT_HPARAM_ABSENT) return NULL;
  return api->hparam_double(host, name, strlen(name), value);
}

static cohort_error* model_create(const cohort_model_create_args* args, cohort_model** out) {
  const cohort_host_api* api = args->host_api;
  cohort_model* m = (cohort_model*)calloc(1, sizeof *m);
  if (m == NULL) return fail(api, COHORT_STATUS_INTERNAL, "out of memory");
  m->api = api;
  m->host = args->host;
  m->slope = 3.0;
  m->intercept = 0.5;
  cohort_error* e = hparam_or(api, args->host, "slope", &m->slope);
  if (e == NULL) e = hparam_or(api, args->host, "intercept", &m->intercept);

  /* One tensor of two values. struct_size says which fields of the spec this plugin fills. */
  const uint64_t shape[1] = {2};
  cohort_tensor_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, shape_len);
  spec.name = "line";
  spec.name_len = 4;
  spec.dtype = COHORT_DTYPE_FLOAT32;
  spec.device = api->trial_context(args->host)->device;
  spec.element_count = 2;
  spec.shape = shape;
  spec.shape_len = 1;
  m->line.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_view, arena_offset);
  if (e == NULL) e = api->register_tensors(args->host, &spec, &m->line, 1);
  if (e != NULL) {
    free(m);
    return e;
  }
  /* The arena starts zeroed: w = b = 0 is this model's initialization. */
  *out = m;
  return NULL;
}

static void model_destroy(cohort_model* m) { free(m); }

static cohort_error* dataset_size(cohort_model* m, cohort_split split, uint64_t* records) {
  (void)m;
  *records = split == COHORT_SPLIT_TRAINING ? 2000 : 200;
  return NULL;
}

/* The batch's mean loss; adds the mean gradient into `grad` unless it is NULL. */
static double loss_of(const cohort_model* m, const cohort_batch* batch, float* grad) {
  const float* line = (const float*)m->line.data;
  double loss = 0.0, dw = 0.0, db = 0.0;
  for (uint64_t i = 0; i < batch->record_count; ++i) {
    const double x = (double)(batch->record_indices[i] % 200) / 100.0 - 1.0;
    const double error = line[0] * x + line[1] - (m->slope * x + m->intercept);
    loss += 0.5 * error * error;
    dw += error * x;
    db += error;
  }
  if (batch->record_count == 0) return 0.0;
  const double n = (double)batch->record_count;
  if (grad != NULL) {
    grad[0] += (float)(dw / n);
    grad[1] += (float)(db / n);
  }
  return loss / n;
}

static cohort_error* train_batch(cohort_model* m, const cohort_batch* batch,
                                 cohort_metrics* metrics) {
  const double loss = loss_of(m, batch, (float*)m->line.grad);
  /* The gradient is final: the host may start exchanging it now. */
  cohort_error* e = m->api->gradients_ready(m->host, 0, 0, 2);
  if (e != NULL) return e;
  return m->api->metric_add(metrics, "loss", 4, loss, batch->record_count, COHORT_REDUCE_MEAN);
}

static cohort_error* evaluate_batch(cohort_model* m, const cohort_batch* batch,
                                    cohort_metrics* metrics) {
  const double loss = loss_of(m, batch, NULL);
  return m->api->metric_add(metrics, "loss", 4, loss, batch->record_count, COHORT_REDUCE_MEAN);
}

COHORT_PLUGIN_EXPORT const cohort_plugin_api* cohort_plugin_entry(const cohort_host_api* host_api) {
  (void)host_api;
  static cohort_plugin_api table;
  table.struct_size = COHORT_STRUCT_SIZE(cohort_plugin_api, load_state);
  table.abi_version.major = COHORT_ABI_VERSION_MAJOR;
  table.abi_version.minor = COHORT_ABI_VERSION_MINOR;
  table.host_minor_required = 0; /* shapes are ignored by a 1.0 host, and nothing else is newer */
  table.name = "line";
  table.name_len = 4;
  table.model_create = &model_create;
  table.model_destroy = &model_destroy;
  table.dataset_size = &dataset_size;
  table.train_batch = &train_batch;
  table.evaluate_batch = &evaluate_batch;
  /* optimizer_step, save_state and load_state stay NULL: the host steps and checkpoints the
   * arena, and this model keeps no other state. */
  return &table;
}
