// mlp_network_test.cc -- MlpNetwork against an independent double-precision reference: the loss of
// the forward pass, the backward pass against central finite differences, accumulation into the
// gradient buffers, the order of the layer-ready callbacks, and initialisation.
#include "mlp_network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "counter_rng.h"
#include "synthetic_dataset.h"

namespace mlp {
namespace {

using ::testing::ElementsAre;

// One float buffer per weight and bias of a network, owned by the test.
struct Layers {
  explicit Layers(const MlpNetwork& net) {
    for (size_t l = 0; l < net.layer_count(); ++l) {
      weights.emplace_back(net.weight_count(l), 0.0f);
      biases.emplace_back(net.fan_out(l), 0.0f);
    }
  }
  std::vector<LayerBuffers<float>> Writable() {
    std::vector<LayerBuffers<float>> out;
    for (size_t l = 0; l < weights.size(); ++l) {
      out.push_back({weights[l].data(), biases[l].data()});
    }
    return out;
  }
  std::vector<LayerParams> Readable() const {
    std::vector<LayerParams> out;
    for (size_t l = 0; l < weights.size(); ++l) {
      out.push_back({weights[l].data(), biases[l].data()});
    }
    return out;
  }
  // Plain SGD: this -= rate * grads.
  void Step(const Layers& grads, float rate) {
    for (size_t l = 0; l < weights.size(); ++l) {
      for (size_t i = 0; i < weights[l].size(); ++i) weights[l][i] -= rate * grads.weights[l][i];
      for (size_t i = 0; i < biases[l].size(); ++i) biases[l][i] -= rate * grads.biases[l][i];
    }
  }
  std::vector<std::vector<float>> weights;
  std::vector<std::vector<float>> biases;
};

// The same network written the obvious way, in double: the mean cross-entropy of a batch.
double ReferenceMeanLoss(const std::vector<size_t>& widths,
                         const std::vector<std::vector<double>>& weights,
                         const std::vector<std::vector<double>>& biases,
                         const std::vector<float>& inputs, const std::vector<int32_t>& labels) {
  const size_t layers = widths.size() - 1;
  double total = 0;
  for (size_t b = 0; b < labels.size(); ++b) {
    std::vector<double> x(inputs.begin() + b * widths[0], inputs.begin() + (b + 1) * widths[0]);
    for (size_t l = 0; l < layers; ++l) {
      std::vector<double> y(biases[l]);
      for (size_t j = 0; j < widths[l + 1]; ++j) {
        for (size_t k = 0; k < widths[l]; ++k) y[j] += x[k] * weights[l][k * widths[l + 1] + j];
        if (l + 1 < layers) y[j] = std::max(y[j], 0.0);
      }
      x = y;
    }
    double sum = 0;
    for (double logit : x) sum += std::exp(logit);
    total += std::log(sum) - x[labels[b]];
  }
  return total / static_cast<double>(labels.size());
}

// A tiny network with random parameters (biases too) and a random batch.
class TinyNetworkTest : public ::testing::Test {
 protected:
  static constexpr size_t kBatch = 5;

  TinyNetworkTest() : net_(widths_), params_(net_) {
    net_.Initialize(7, params_.Writable());
    const uint64_t key = rng::DeriveKey(99, 0);
    uint64_t n = 0;
    for (auto& bias : params_.biases) {
      for (float& v : bias) v = rng::UniformFloat(key, n++, -0.5f, 0.5f);
    }
    for (size_t i = 0; i < kBatch * widths_[0]; ++i) {
      inputs_.push_back(rng::UniformFloat(key, n++, -2.0f, 2.0f));
    }
    for (size_t b = 0; b < kBatch; ++b) labels_.push_back(static_cast<int32_t>(b % widths_.back()));
  }

  double ReferenceLoss(const Layers& layers) const {
    std::vector<std::vector<double>> weights, biases;
    for (const auto& w : layers.weights) weights.emplace_back(w.begin(), w.end());
    for (const auto& b : layers.biases) biases.emplace_back(b.begin(), b.end());
    return ReferenceMeanLoss(widths_, weights, biases, inputs_, labels_);
  }

  BatchStats Train(Layers& grads, const std::function<void(size_t)>& on_ready = {}) {
    return net_.Train(params_.Readable(), grads.Writable(), inputs_.data(), labels_.data(), kBatch,
                      on_ready);
  }

  const std::vector<size_t> widths_{6, 5, 4, 3};
  MlpNetwork net_;
  Layers params_;
  std::vector<float> inputs_;
  std::vector<int32_t> labels_;
};

TEST_F(TinyNetworkTest, ForwardLossMatchesDoubleReference) {
  const BatchStats stats =
      net_.Evaluate(params_.Readable(), inputs_.data(), labels_.data(), kBatch);
  EXPECT_EQ(stats.records, kBatch);
  EXPECT_NEAR(stats.mean_loss(), ReferenceLoss(params_), 1e-5);
}

TEST_F(TinyNetworkTest, BackwardMatchesCentralDifferences) {
  Layers grads(net_);
  Train(grads);

  // d(loss)/d(p) by central differences of the double reference, for every parameter p.
  const double h = 1e-4;
  std::vector<std::vector<double>> weights, biases;
  for (const auto& w : params_.weights) weights.emplace_back(w.begin(), w.end());
  for (const auto& b : params_.biases) biases.emplace_back(b.begin(), b.end());
  auto check = [&](double& p, float analytic, const char* what, size_t l, size_t i) {
    const double saved = p;
    p = saved + h;
    const double up = ReferenceMeanLoss(widths_, weights, biases, inputs_, labels_);
    p = saved - h;
    const double down = ReferenceMeanLoss(widths_, weights, biases, inputs_, labels_);
    p = saved;
    const double numeric = (up - down) / (2 * h);
    EXPECT_NEAR(analytic, numeric, 1e-5 + 1e-3 * std::abs(numeric))
        << what << " of layer " << l << ", element " << i;
    return std::abs(numeric);
  };
  double largest = 0;
  for (size_t l = 0; l < net_.layer_count(); ++l) {
    for (size_t i = 0; i < weights[l].size(); ++i) {
      largest = std::max(largest, check(weights[l][i], grads.weights[l][i], "weight", l, i));
    }
    for (size_t i = 0; i < biases[l].size(); ++i) {
      largest = std::max(largest, check(biases[l][i], grads.biases[l][i], "bias", l, i));
    }
  }
  EXPECT_GT(largest, 1e-2);  // the check compared real gradients, not zeros
}

TEST_F(TinyNetworkTest, TrainAddsToTheGradientsInsteadOfOverwriting) {
  Layers once(net_);
  Train(once);
  Layers twice(net_);
  for (auto& w : twice.weights) std::fill(w.begin(), w.end(), 1.0f);
  for (auto& b : twice.biases) std::fill(b.begin(), b.end(), 1.0f);
  Train(twice);
  Train(twice);
  for (size_t l = 0; l < net_.layer_count(); ++l) {
    for (size_t i = 0; i < once.weights[l].size(); ++i) {
      EXPECT_NEAR(twice.weights[l][i], 1.0f + 2 * once.weights[l][i], 1e-5);
    }
    for (size_t i = 0; i < once.biases[l].size(); ++i) {
      EXPECT_NEAR(twice.biases[l][i], 1.0f + 2 * once.biases[l][i], 1e-5);
    }
  }
}

TEST_F(TinyNetworkTest, LayersAreReadyLastFirstAndNotWrittenAfterwards) {
  Layers grads(net_);
  std::vector<size_t> order;
  Layers at_ready(net_);
  Train(grads, [&](size_t l) {
    order.push_back(l);
    at_ready.weights[l] = grads.weights[l];
    at_ready.biases[l] = grads.biases[l];
  });
  EXPECT_THAT(order, ElementsAre(2, 1, 0));
  EXPECT_EQ(at_ready.weights, grads.weights);
  EXPECT_EQ(at_ready.biases, grads.biases);
}

TEST_F(TinyNetworkTest, TrainReportsTheSameLossAsEvaluate) {
  Layers grads(net_);
  const BatchStats trained = Train(grads);
  const BatchStats evaluated =
      net_.Evaluate(params_.Readable(), inputs_.data(), labels_.data(), kBatch);
  EXPECT_DOUBLE_EQ(trained.loss_sum, evaluated.loss_sum);
  EXPECT_EQ(trained.correct, evaluated.correct);
}

TEST(MlpNetworkTest, LossAndAccuracyOfKnownLogits) {
  // No hidden layer and identity weights: the logits are the inputs.
  MlpNetwork net({2, 2});
  const std::vector<float> weight{1, 0, 0, 1};
  const std::vector<float> bias{0, 0};
  const std::vector<LayerParams> params{{weight.data(), bias.data()}};
  const std::vector<float> inputs{0, 0, 3, 1, 3, 1};
  const std::vector<int32_t> labels{1, 0, 1};
  const BatchStats stats = net.Evaluate(params, inputs.data(), labels.data(), 3);
  const double tail = std::log(1 + std::exp(-2.0));  // -log softmax of the larger of (3, 1)
  EXPECT_NEAR(stats.loss_sum, std::log(2.0) + tail + (2 + tail), 1e-6);
  EXPECT_EQ(stats.correct, 1u);  // record 1; record 0 is a tie, which goes to class 0
  EXPECT_NEAR(stats.accuracy(), 1.0 / 3, 1e-12);
}

TEST(MlpNetworkTest, InitializationIsKaimingUniformAndSeeded) {
  MlpNetwork net({24, 16, 10});
  Layers a(net), b(net), c(net);
  for (auto& bias : a.biases) std::fill(bias.begin(), bias.end(), 5.0f);
  net.Initialize(1, a.Writable());
  net.Initialize(1, b.Writable());
  net.Initialize(2, c.Writable());
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_NE(a.weights, c.weights);
  for (size_t l = 0; l < net.layer_count(); ++l) {
    const float limit = std::sqrt(6.0f / static_cast<float>(net.fan_in(l)));
    float largest = 0;
    for (float w : a.weights[l]) largest = std::max(largest, std::abs(w));
    EXPECT_LE(largest, limit);
    EXPECT_GT(largest, 0.8f * limit);
    EXPECT_THAT(a.biases[l], ::testing::Each(0.0f));
  }
}

TEST(MlpNetworkTest, RejectsImpossibleShapes) {
  EXPECT_THROW(MlpNetwork({10}), std::invalid_argument);
  EXPECT_THROW(MlpNetwork({10, 0, 3}), std::invalid_argument);
}

// End to end on the pure classes: plain SGD on the synthetic data learns, but not at once (see
// the difficulty figures in synthetic_dataset.h).
TEST(MlpNetworkTest, SgdLearnsSyntheticDataGradually) {
  const size_t dim = 32, classes = 10, batch = 32, eval_records = 1000;
  SyntheticDataset train(COHORT_SPLIT_TRAINING, 60000, dim, classes);
  SyntheticDataset validation(COHORT_SPLIT_VALIDATION, eval_records, dim, classes);
  MlpNetwork net({dim, 64, 64, classes});
  Layers params(net);
  net.Initialize(1, params.Writable());

  std::vector<float> eval_inputs(eval_records * dim);
  std::vector<int32_t> eval_labels(eval_records);
  for (size_t i = 0; i < eval_records; ++i) {
    eval_labels[i] = validation.Read(i, &eval_inputs[i * dim]);
  }
  auto accuracy = [&] {
    return net.Evaluate(params.Readable(), eval_inputs.data(), eval_labels.data(), eval_records)
        .accuracy();
  };
  const double before = accuracy();

  std::vector<float> inputs(batch * dim);
  std::vector<int32_t> labels(batch);
  for (size_t step = 0; step < 500; ++step) {
    for (size_t i = 0; i < batch; ++i) {
      labels[i] = train.Read(step * batch + i, &inputs[i * dim]);
    }
    Layers grads(net);
    net.Train(params.Readable(), grads.Writable(), inputs.data(), labels.data(), batch, {});
    params.Step(grads, 0.1f);
  }
  const double after = accuracy();
  EXPECT_LT(before, 0.3);
  EXPECT_GT(after, 0.6);
  EXPECT_LT(after, 0.9);  // 500 batches are far from enough to fit the teacher
}

}  // namespace
}  // namespace mlp
