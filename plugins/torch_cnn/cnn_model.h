// cnn_model.h -- the network of the torch_cnn example: a small ResNet for 28 x 28 grey images and
// 10 classes, shared by the plugin, its plain-LibTorch twin (bench/torch_cnn_loop.cc) and tests.
//
//   input [N, 1, 28, 28]
//   stem:    conv 5x5 (1 -> W, stride 2), BN, ReLU                  -> [N, W, 14, 14]
//   block1:  residual, W -> W, stride 1, identity skip              -> [N, W, 14, 14]
//   block2:  residual, W -> 2W, stride 2, 1x1 projection + BN skip  -> [N, 2W, 7, 7]
//   head:    global average pooling, linear (2W -> 10)              -> logits [N, 10]
//
// A residual block is conv 3x3 - BN - ReLU - conv 3x3 - BN, plus its skip, then ReLU (He et al.,
// 2016). Convolutions have no bias (the BN after each has one). W is the hyperparameter `width`:
// 8 gives 5,250 parameters, 16 gives 19,962 (the head, 2W -> 10, is the only layer that is not
// convolution or BN). TorchModule registers them in named_parameters() order: stem.conv.weight,
// stem.bn.weight, stem.bn.bias, block1.conv1.weight, block1.bn1.weight, ..., block2.conv1.weight,
// ..., block2.projection.weight, block2.projection_bn.weight, block2.projection_bn.bias,
// head.weight, head.bias.
//
// Initial values are LibTorch's defaults drawn after torch::manual_seed(seed) (MakeCnn), so one
// seed gives the same network in the plugin, the loop and a test. The network owns buffers
// (each BN's running_mean, running_var and num_batches_tracked): train() normalises with the
// batch's statistics and updates them, eval() normalises with them.
//
// Thread-safety: a module is not safe to use from several threads at once.
#ifndef COHORT_PLUGINS_TORCH_CNN_CNN_MODEL_H_
#define COHORT_PLUGINS_TORCH_CNN_CNN_MODEL_H_

#include <torch/torch.h>

#include <cstdint>

namespace torch_cnn {

inline constexpr int64_t kImageSide = 28;
inline constexpr int64_t kClasses = 10;

inline torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// conv - BN - ReLU - conv - BN, plus the input (projected by a strided 1x1 conv and BN when the
// shape changes), then ReLU.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", Conv(in, out, 3, stride))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", Conv(out, out, 3, 1))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      projection_ = register_module("projection", Conv(in, out, 1, stride));
      projection_bn_ = register_module("projection_bn", torch::nn::BatchNorm2d(out));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = bn2_->forward(conv2_->forward(y));
    const torch::Tensor skip = projection_ ? projection_bn_->forward(projection_->forward(x)) : x;
    return torch::relu(y + skip);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Conv2d projection_{nullptr};
  torch::nn::BatchNorm2d projection_bn_{nullptr};
};
TORCH_MODULE(ResidualBlock);

class StemImpl : public torch::nn::Module {
 public:
  explicit StemImpl(int64_t width)
      : conv_(register_module("conv", Conv(1, width, 5, 2))),
        bn_(register_module("bn", torch::nn::BatchNorm2d(width))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::relu(bn_->forward(conv_->forward(x)));
  }

 private:
  torch::nn::Conv2d conv_;
  torch::nn::BatchNorm2d bn_;
};
TORCH_MODULE(Stem);

class CnnImpl : public torch::nn::Module {
 public:
  explicit CnnImpl(int64_t width)
      : stem_(register_module("stem", Stem(width))),
        block1_(register_module("block1", ResidualBlock(width, width, 1))),
        block2_(register_module("block2", ResidualBlock(width, 2 * width, 2))),
        head_(register_module("head", torch::nn::Linear(2 * width, kClasses))) {}

  // images [N, 1, 28, 28] -> logits [N, kClasses].
  torch::Tensor forward(const torch::Tensor& images) {
    torch::Tensor x = block2_->forward(block1_->forward(stem_->forward(images)));
    return head_->forward(x.mean({2, 3}));
  }

 private:
  Stem stem_;
  ResidualBlock block1_;
  ResidualBlock block2_;
  torch::nn::Linear head_;
};
TORCH_MODULE(Cnn);

// The network of width `width` (>= 1), initialised from `seed`.
inline Cnn MakeCnn(int64_t width, uint64_t seed) {
  torch::manual_seed(seed);
  return Cnn(width);
}

// The mean cross-entropy of `logits` against `labels`, and the number of records whose largest
// logit is their label.
struct BatchResult {
  torch::Tensor loss;     // a float32 scalar
  torch::Tensor correct;  // an int64 scalar: how many records the network ranks right
};
inline BatchResult Score(const torch::Tensor& logits, const torch::Tensor& labels) {
  return {torch::nn::functional::cross_entropy(logits, labels), logits.argmax(1).eq(labels).sum()};
}

}  // namespace torch_cnn

#endif  // COHORT_PLUGINS_TORCH_CNN_CNN_MODEL_H_
