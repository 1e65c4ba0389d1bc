// mlp_network.cc -- forward and backward passes of MlpNetwork (see mlp_network.h).
//
// Matrix loops run in i-k-j order so the innermost loop walks contiguous rows of both operands.
#include "mlp_network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "counter_rng.h"

namespace mlp {
namespace {

// out[b][:] = bias + in[b][:] * weight, for b in [0, batch).
void AffineForward(const float* in, const LayerParams& layer, size_t fan_in, size_t fan_out,
                   size_t batch, float* out) {
  for (size_t b = 0; b < batch; ++b) {
    const float* x = in + b * fan_in;
    float* y = out + b * fan_out;
    std::copy(layer.bias, layer.bias + fan_out, y);
    for (size_t k = 0; k < fan_in; ++k) {
      const float xk = x[k];
      const float* w = layer.weight + k * fan_out;
      for (size_t j = 0; j < fan_out; ++j) y[j] += xk * w[j];
    }
  }
}

void Relu(float* values, size_t count) {
  for (size_t i = 0; i < count; ++i) values[i] = std::max(values[i], 0.0f);
}

// Cross-entropy of one record's logits against `label`, in double. Writes the softmax
// probabilities minus the one-hot label, times `scale`, into `dlogits`.
double SoftmaxCrossEntropy(const float* logits, size_t classes, int32_t label, double scale,
                           float* dlogits) {
  const double max_logit = *std::max_element(logits, logits + classes);
  double sum = 0;
  for (size_t j = 0; j < classes; ++j) sum += std::exp(logits[j] - max_logit);
  const double log_sum = max_logit + std::log(sum);
  for (size_t j = 0; j < classes; ++j) {
    const double p = std::exp(logits[j] - log_sum);
    const double target = static_cast<size_t>(label) == j ? 1.0 : 0.0;
    dlogits[j] = static_cast<float>((p - target) * scale);
  }
  return log_sum - logits[label];
}

}  // namespace

MlpNetwork::MlpNetwork(std::vector<size_t> widths) : widths_(std::move(widths)) {
  if (widths_.size() < 2) {
    throw std::invalid_argument("an MLP needs at least an input width and a class count");
  }
  for (size_t width : widths_) {
    if (width == 0) throw std::invalid_argument("MLP layer widths must be positive");
  }
  activations_.resize(layer_count());
}

void MlpNetwork::Initialize(uint64_t seed, std::span<const LayerBuffers<float>> params) const {
  assert(params.size() == layer_count());
  for (size_t l = 0; l < layer_count(); ++l) {
    const uint64_t key = rng::DeriveKey(seed, l);
    const float limit = static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in(l))));
    for (size_t i = 0; i < weight_count(l); ++i) {
      params[l].weight[i] = rng::UniformFloat(key, i, -limit, limit);
    }
    std::fill(params[l].bias, params[l].bias + fan_out(l), 0.0f);
  }
}

const float* MlpNetwork::LayerInput(size_t layer, const float* inputs) const {
  return layer == 0 ? inputs : activations_[layer - 1].data();
}

BatchStats MlpNetwork::Forward(std::span<const LayerParams> params, const float* inputs,
                               const int32_t* labels, size_t batch) {
  assert(params.size() == layer_count());
  for (size_t l = 0; l < layer_count(); ++l) {
    std::vector<float>& out = activations_[l];
    out.resize(batch * fan_out(l));
    AffineForward(LayerInput(l, inputs), params[l], fan_in(l), fan_out(l), batch, out.data());
    if (l + 1 < layer_count()) Relu(out.data(), out.size());
  }

  const size_t classes = class_count();
  const float* logits = activations_.back().data();
  deltas_.resize(batch * classes);
  BatchStats stats;
  stats.records = batch;
  for (size_t b = 0; b < batch; ++b) {
    const float* row = logits + b * classes;
    assert(labels[b] >= 0 && static_cast<size_t>(labels[b]) < classes);
    stats.loss_sum += SoftmaxCrossEntropy(row, classes, labels[b], 1.0 / static_cast<double>(batch),
                                          deltas_.data() + b * classes);
    const size_t predicted = static_cast<size_t>(std::max_element(row, row + classes) - row);
    if (predicted == static_cast<size_t>(labels[b])) ++stats.correct;
  }
  return stats;
}

BatchStats MlpNetwork::Evaluate(std::span<const LayerParams> params, const float* inputs,
                                const int32_t* labels, size_t batch) {
  return Forward(params, inputs, labels, batch);
}

BatchStats MlpNetwork::Train(std::span<const LayerParams> params, std::span<const LayerGrads> grads,
                             const float* inputs, const int32_t* labels, size_t batch,
                             const std::function<void(size_t layer)>& on_layer_ready) {
  assert(grads.size() == layer_count());
  const BatchStats stats = Forward(params, inputs, labels, batch);

  // deltas_ holds d(mean loss)/d(output of layer l); walk down from the logits.
  for (size_t l = layer_count(); l-- > 0;) {
    const size_t n_in = fan_in(l);
    const size_t n_out = fan_out(l);
    const float* in = LayerInput(l, inputs);
    for (size_t b = 0; b < batch; ++b) {
      const float* delta = deltas_.data() + b * n_out;
      const float* x = in + b * n_in;
      for (size_t k = 0; k < n_in; ++k) {
        const float xk = x[k];
        float* dw = grads[l].weight + k * n_out;
        for (size_t j = 0; j < n_out; ++j) dw[j] += xk * delta[j];
      }
      for (size_t j = 0; j < n_out; ++j) grads[l].bias[j] += delta[j];
    }
    if (on_layer_ready) on_layer_ready(l);
    if (l == 0) break;

    // Through the weights, then through the ReLU that produced this layer's input (an input of
    // zero means the ReLU was inactive, so no gradient flows).
    next_deltas_.resize(batch * n_in);
    for (size_t b = 0; b < batch; ++b) {
      const float* delta = deltas_.data() + b * n_out;
      const float* x = in + b * n_in;
      float* below = next_deltas_.data() + b * n_in;
      for (size_t k = 0; k < n_in; ++k) {
        if (x[k] <= 0.0f) {
          below[k] = 0.0f;
          continue;
        }
        const float* w = params[l].weight + k * n_out;
        float sum = 0;
        for (size_t j = 0; j < n_out; ++j) sum += delta[j] * w[j];
        below[k] = sum;
      }
    }
    std::swap(deltas_, next_deltas_);
  }
  return stats;
}

}  // namespace mlp
