// mlp_network.h -- a multi-layer perceptron classifier on the CPU, in float32.
//
// The network is a stack of affine layers with ReLU between them and softmax cross-entropy on
// the last layer's outputs (the logits). It owns no parameters: the caller passes pointers to
// each layer's weights and biases (and to their gradients), so they can live in memory the
// Cohort runtime owns. It does own its scratch buffers (activations), which makes an MlpNetwork
// usable from one thread at a time.
//
// Layout of layer l (fan_in = widths[l], fan_out = widths[l + 1]):
//   weight: fan_in x fan_out floats, row-major (row k holds input k's outgoing weights),
//   bias:   fan_out floats.
// Forward:  out[b][j] = bias[j] + sum_k in[b][k] * weight[k][j], then ReLU (not on the logits).
//
// Example:
//   mlp::MlpNetwork net({32, 64, 64, 10});
//   std::vector<float> w0(net.weight_count(0)), b0(net.fan_out(0)), ...;   // or host memory
//   net.Initialize(seed, writable_params);        // LayerBuffers<float> per layer
//   mlp::BatchStats s = net.Train(params, grads, inputs, labels, batch_size, on_layer_ready);
//   // grads now hold (previous contents) + d(mean loss over the batch)/d(parameter).
#ifndef COHORT_PLUGINS_MLP_MLP_NETWORK_H_
#define COHORT_PLUGINS_MLP_MLP_NETWORK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace mlp {

// Where one layer's weight and bias (or their gradients) live. Not owned.
template <class Float>
struct LayerBuffers {
  Float* weight = nullptr;  // fan_in x fan_out, row-major
  Float* bias = nullptr;    // fan_out
};
using LayerParams = LayerBuffers<const float>;
using LayerGrads = LayerBuffers<float>;

// Totals of one batch; loss summed in double.
struct BatchStats {
  size_t records = 0;
  double loss_sum = 0;  // sum over records of the cross-entropy
  size_t correct = 0;   // records whose arg-max logit is the label

  double mean_loss() const { return records == 0 ? 0.0 : loss_sum / static_cast<double>(records); }
  double accuracy() const {
    return records == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(records);
  }
};

class MlpNetwork {
 public:
  // `widths` = {inputs, hidden widths..., classes}: at least two entries, all positive
  // (throws std::invalid_argument otherwise). {784, 10} is multinomial logistic regression.
  explicit MlpNetwork(std::vector<size_t> widths);

  size_t layer_count() const { return widths_.size() - 1; }
  size_t input_size() const { return widths_.front(); }
  size_t class_count() const { return widths_.back(); }
  size_t fan_in(size_t layer) const { return widths_[layer]; }
  size_t fan_out(size_t layer) const { return widths_[layer + 1]; }
  size_t weight_count(size_t layer) const { return fan_in(layer) * fan_out(layer); }

  // Kaiming-uniform weights, U(-sqrt(6 / fan_in), sqrt(6 / fan_in)), and zero biases: a pure
  // function of `seed` and the widths. `params` has one entry per layer.
  void Initialize(uint64_t seed, std::span<const LayerBuffers<float>> params) const;

  // Forward pass only over `batch` records: `inputs` is batch x input_size() floats, `labels`
  // holds values in [0, class_count()). Reads the parameters, writes nothing of the caller's.
  BatchStats Evaluate(std::span<const LayerParams> params, const float* inputs,
                      const int32_t* labels, size_t batch);

  // Forward and backward: ADDS the gradient of the batch-mean cross-entropy into `grads` (never
  // overwrites). Layer l's gradients are final once on_layer_ready(l) is called; that happens
  // from the last layer down to layer 0. `on_layer_ready` may be empty.
  BatchStats Train(std::span<const LayerParams> params, std::span<const LayerGrads> grads,
                   const float* inputs, const int32_t* labels, size_t batch,
                   const std::function<void(size_t layer)>& on_layer_ready);

 private:
  // Fills activations_ and returns the loss totals; leaves d(mean loss)/d(logits) in deltas_.
  BatchStats Forward(std::span<const LayerParams> params, const float* inputs,
                     const int32_t* labels, size_t batch);
  // Input of layer l for the last forward pass.
  const float* LayerInput(size_t layer, const float* inputs) const;

  std::vector<size_t> widths_;
  std::vector<std::vector<float>> activations_;  // [l]: output of layer l, batch x fan_out(l)
  std::vector<float> deltas_;                    // d(mean loss)/d(output of the current layer)
  std::vector<float> next_deltas_;               // the same for the layer below
};

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_MLP_NETWORK_H_
