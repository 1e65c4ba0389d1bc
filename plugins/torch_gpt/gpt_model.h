// gpt_model.h -- the model and data of the torch_gpt example plugin, shared with its plain-loop
// benchmark twin (bench/torch_gpt_loop.cc): a small decoder-only transformer that predicts the
// next character of a text, in LibTorch's C++ API (1.13 and later).
//
// The data (Corpus): a text of bytes, the default one of default_text.h or a file's. Its
// vocabulary is the sorted distinct bytes of the whole text, and a character's token is its rank
// there. The first 90% of the text (rounded down) is the training split, the rest validation:
// - training record r, 0 <= r < (training characters) - context, is the window of context + 1
//   characters starting at r: every offset is a record;
// - validation record r is the window of context + 1 characters starting at r * context in the
//   validation split: consecutive windows share one character, so every validation character
//   after the first is a target exactly once.
// A window's first `context` characters are the inputs, its last `context` the targets, and the
// loss is the mean next-character cross-entropy over all of them.
//
// The model (Gpt, GPT-2's shape at a small size): token embedding plus learned position
// embedding; `layers` pre-LayerNorm blocks, x + attention(norm(x)) then x + mlp(norm(x)), of
// causal self-attention with `heads` heads and an MLP of 4 x embedding with GELU; a final
// LayerNorm; a linear head over the vocabulary. No dropout, so a batch's loss depends on the
// parameters and records alone. The causal mask is made by each forward call: the module has no
// buffers, only parameters.
//
//   torch_gpt::GptOptions options;  // context 32, embedding 64, 4 heads, 2 layers
//   torch_gpt::Corpus corpus(torch_gpt::kDefaultText /* default_text.h */, options.context,
//                            "the default text");
//   torch_gpt::Gpt gpt = torch_gpt::MakeGpt(options, corpus.vocabulary_size(), /*seed=*/7);
//   torch::Tensor windows = corpus.Windows(COHORT_SPLIT_TRAINING, {0, 5, 9});  // 3 x 33 tokens
//   torch::Tensor loss = torch_gpt::Loss(gpt, windows);
//
// Errors are thrown as cohort::Error (INVALID_ARGUMENT for options and texts, NOT_FOUND for a
// file that cannot be read, OUT_OF_RANGE for a record past its split), each naming its subject.
// Thread-safety: a Corpus is immutable; a Gpt is a torch module, used by one thread at a time.
#ifndef COHORT_PLUGINS_TORCH_GPT_GPT_MODEL_H_
#define COHORT_PLUGINS_TORCH_GPT_GPT_MODEL_H_

#include <torch/torch.h>

#include <array>
#include <cmath>
#include <cohort/plugin.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace torch_gpt {

// The model's size (the plugin's hyperparameters of the same names).
struct GptOptions {
  int64_t context = 32;    // characters of input per record (the attention's length)
  int64_t embedding = 64;  // width of the residual stream; a multiple of `heads`
  int64_t heads = 4;
  int64_t layers = 2;
};

// Throws cohort::Error INVALID_ARGUMENT naming the first option out of range.
inline void Validate(const GptOptions& options) {
  const auto check = [](bool ok, const std::string& message) {
    if (!ok) throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, message);
  };
  check(options.context >= 1 && options.context <= 4096,
        "context: expected 1 .. 4096 characters; got " + std::to_string(options.context));
  check(options.embedding >= 1 && options.embedding <= 8192,
        "embedding: expected 1 .. 8192; got " + std::to_string(options.embedding));
  check(options.heads >= 1 && options.embedding % options.heads == 0,
        "heads: expected a divisor of embedding (" + std::to_string(options.embedding) + "); got " +
            std::to_string(options.heads));
  check(options.layers >= 1 && options.layers <= 64,
        "layers: expected 1 .. 64; got " + std::to_string(options.layers));
}

// The text, its vocabulary and its two splits of records (see the top of this file).
class Corpus {
 public:
  // `source` names the text in errors ("the default text", a file's path). Throws
  // cohort::Error INVALID_ARGUMENT when the text is shorter than 10 x (context + 1) bytes, the
  // least that gives each split one record.
  Corpus(std::string_view text, int64_t context, const std::string& source) : context_(context) {
    const uint64_t least = 10 * static_cast<uint64_t>(context + 1);
    if (text.size() < least) {
      throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                          source + " holds " + std::to_string(text.size()) + " bytes; context " +
                              std::to_string(context) + " needs at least 10 x (context + 1) = " +
                              std::to_string(least) + " (the last 10% is the validation split)");
    }
    std::array<bool, 256> seen{};
    for (char c : text) seen[static_cast<unsigned char>(c)] = true;
    std::array<int64_t, 256> token{};
    for (int byte = 0; byte < 256; ++byte) {
      if (!seen[byte]) continue;
      token[byte] = static_cast<int64_t>(vocabulary_.size());
      vocabulary_.push_back(static_cast<unsigned char>(byte));
    }
    std::vector<int64_t> tokens;
    tokens.reserve(text.size());
    for (char c : text) tokens.push_back(token[static_cast<unsigned char>(c)]);
    tokens_ = torch::tensor(tokens, torch::kInt64);
    training_end_ = text.size() * 9 / 10;
    training_records_ = training_end_ - static_cast<uint64_t>(context);
    validation_records_ = (text.size() - training_end_ - 1) / static_cast<uint64_t>(context);
  }

  int64_t context() const { return context_; }
  // The distinct bytes of the text, in increasing order: token i is vocabulary()[i].
  const std::vector<unsigned char>& vocabulary() const { return vocabulary_; }
  int64_t vocabulary_size() const { return static_cast<int64_t>(vocabulary_.size()); }
  uint64_t records(cohort_split split) const {
    return split == COHORT_SPLIT_TRAINING ? training_records_ : validation_records_;
  }

  // The records' windows, as a (records.size(), context + 1) int64 CPU tensor of tokens. Throws
  // cohort::Error OUT_OF_RANGE for a record at or past records(split).
  torch::Tensor Windows(cohort_split split, const std::vector<uint64_t>& records) const {
    const uint64_t count = this->records(split);
    std::vector<int64_t> starts;
    starts.reserve(records.size());
    for (uint64_t r : records) {
      if (r >= count) {
        throw cohort::Error(COHORT_STATUS_OUT_OF_RANGE, "record " + std::to_string(r) +
                                                            " is past the split's " +
                                                            std::to_string(count) + " records");
      }
      starts.push_back(
          static_cast<int64_t>(split == COHORT_SPLIT_TRAINING ? r : training_end_ + r * context_));
    }
    const torch::Tensor offsets = torch::arange(context_ + 1, torch::kInt64);
    return tokens_.index({torch::tensor(starts, torch::kInt64).unsqueeze(1) + offsets});
  }

 private:
  int64_t context_;
  std::vector<unsigned char> vocabulary_;
  torch::Tensor tokens_;  // the whole text, one int64 token per byte
  uint64_t training_end_ = 0;
  uint64_t training_records_ = 0;
  uint64_t validation_records_ = 0;
};

// The bytes of the file at `path`. Throws cohort::Error NOT_FOUND naming the path when it cannot
// be read, INVALID_ARGUMENT when it is empty.
inline std::string ReadText(const std::string& path) {
  std::error_code error;
  std::ifstream file;
  if (std::filesystem::is_regular_file(path, error)) file.open(path, std::ios::binary);
  std::ostringstream bytes;
  if (file.is_open()) bytes << file.rdbuf();
  if (!file.is_open() || file.bad()) {
    throw cohort::Error(COHORT_STATUS_NOT_FOUND,
                        "data_path: cannot read the text file '" + path +
                            "' (it is missing, unreadable or not a regular file)");
  }
  std::string text = std::move(bytes).str();
  if (text.empty()) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "data_path: the text file '" + path + "' is empty");
  }
  return text;
}

// Causal multi-head self-attention: position t attends to positions 0 .. t.
class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(int64_t embedding, int64_t heads)
      : heads_(heads),
        qkv_(register_module("qkv", torch::nn::Linear(embedding, 3 * embedding))),
        projection_(register_module("projection", torch::nn::Linear(embedding, embedding))) {}

  // x: (batch, time, embedding) -> the same shape.
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t batch = x.size(0), time = x.size(1), embedding = x.size(2);
    const int64_t width = embedding / heads_;
    // (3, batch, heads, time, width): queries, keys and values of every head.
    const torch::Tensor qkv =
        qkv_->forward(x).view({batch, time, 3, heads_, width}).permute({2, 0, 3, 1, 4});
    const torch::Tensor scores =
        torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(width));
    // -inf above the diagonal: a float mask made here, never a module buffer.
    const torch::Tensor mask =
        torch::full({time, time}, -std::numeric_limits<float>::infinity(), x.options()).triu(1);
    const torch::Tensor attended = torch::matmul(torch::softmax(scores + mask, -1), qkv[2]);
    return projection_->forward(attended.transpose(1, 2).reshape({batch, time, embedding}));
  }

 private:
  int64_t heads_;
  torch::nn::Linear qkv_;
  torch::nn::Linear projection_;
};
TORCH_MODULE(CausalSelfAttention);

// One pre-LayerNorm transformer block.
class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(int64_t embedding, int64_t heads)
      : attention_norm_(register_module(
            "attention_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({embedding})))),
        attention_(register_module("attention", CausalSelfAttention(embedding, heads))),
        mlp_norm_(register_module("mlp_norm",
                                  torch::nn::LayerNorm(torch::nn::LayerNormOptions({embedding})))),
        expand_(register_module("expand", torch::nn::Linear(embedding, 4 * embedding))),
        contract_(register_module("contract", torch::nn::Linear(4 * embedding, embedding))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = x + attention_->forward(attention_norm_->forward(x));
    return x + contract_->forward(torch::gelu(expand_->forward(mlp_norm_->forward(x))));
  }

 private:
  torch::nn::LayerNorm attention_norm_;
  CausalSelfAttention attention_;
  torch::nn::LayerNorm mlp_norm_;
  torch::nn::Linear expand_;
  torch::nn::Linear contract_;
};
TORCH_MODULE(Block);

class GptImpl : public torch::nn::Module {
 public:
  GptImpl(const GptOptions& options, int64_t vocabulary)
      : token_embedding_(register_module("token_embedding",
                                         torch::nn::Embedding(vocabulary, options.embedding))),
        position_embedding_(register_module(
            "position_embedding", torch::nn::Embedding(options.context, options.embedding))),
        blocks_(register_module("blocks", torch::nn::ModuleList())),
        final_norm_(register_module(
            "final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embedding})))),
        head_(register_module("head", torch::nn::Linear(options.embedding, vocabulary))) {
    for (int64_t l = 0; l < options.layers; ++l) {
      Block block(options.embedding, options.heads);
      blocks_->push_back(block);
      layers_.push_back(std::move(block));
    }
  }

  // tokens: (batch, time) int64, time <= context -> logits (batch, time, vocabulary).
  torch::Tensor forward(const torch::Tensor& tokens) {
    const torch::Tensor positions = torch::arange(tokens.size(1), tokens.options());
    torch::Tensor x = token_embedding_->forward(tokens) + position_embedding_->forward(positions);
    for (Block& block : layers_) x = block->forward(x);
    return head_->forward(final_norm_->forward(x));
  }

 private:
  torch::nn::Embedding token_embedding_;
  torch::nn::Embedding position_embedding_;
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm final_norm_;
  torch::nn::Linear head_;
  std::vector<Block> layers_;  // blocks_'s members, typed
};
TORCH_MODULE(Gpt);

// A Gpt over `vocabulary` tokens. After torch::manual_seed(seed) the modules are built (each
// drawing its LibTorch default initialization) and then, in named_parameters() order, every
// 2-dimensional parameter (embeddings, linear weights) is redrawn from N(0, 0.02) and every bias
// set to zero, as GPT-2 starts; LayerNorm weights stay 1. The same seed gives the same values.
inline Gpt MakeGpt(const GptOptions& options, int64_t vocabulary, uint64_t seed) {
  Validate(options);
  torch::manual_seed(seed);
  Gpt gpt(options, vocabulary);
  torch::NoGradGuard no_grad;
  for (auto& item : gpt->named_parameters(/*recurse=*/true)) {
    torch::Tensor& p = item.value();
    if (p.dim() == 2) {
      p.normal_(0.0, 0.02);
    } else if (item.key().size() >= 4 && item.key().substr(item.key().size() - 4) == "bias") {
      p.zero_();
    }
  }
  return gpt;
}

// The inputs (batch, context) and targets (batch, context) of windows from Corpus::Windows.
inline torch::Tensor Inputs(const torch::Tensor& windows) {
  return windows.slice(1, 0, windows.size(1) - 1);
}
inline torch::Tensor Targets(const torch::Tensor& windows) { return windows.slice(1, 1); }

// The mean next-character cross-entropy of `logits` (batch, time, vocabulary) against `targets`
// (batch, time).
inline torch::Tensor CrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              targets.reshape({-1}));
}

// The fraction of `targets` that are the most likely token of `logits`.
inline torch::Tensor Accuracy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return logits.argmax(-1).eq(targets).to(torch::kFloat64).mean();
}

// The model's mean loss on windows from Corpus::Windows.
inline torch::Tensor Loss(Gpt& gpt, const torch::Tensor& windows) {
  return CrossEntropy(gpt->forward(Inputs(windows)), Targets(windows));
}

}  // namespace torch_gpt

#endif  // COHORT_PLUGINS_TORCH_GPT_GPT_MODEL_H_
