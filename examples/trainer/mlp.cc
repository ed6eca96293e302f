// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/mlp.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <random>

// The three kernels do nearly all the work. On x86-64 with GCC they are
// compiled twice, for the baseline and for AVX2+FMA (x86-64-v3), and the
// loader picks the best for the machine; elsewhere the compiler's default
// vectorization applies.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define TRAINER_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TRAINER_KERNEL
#endif
// The kernels only touch the model's own buffers on the caller's thread:
// ThreadSanitizer has nothing to find there and would slow training 10x.
#if defined(__SANITIZE_THREAD__)
#define TRAINER_NO_TSAN __attribute__((no_sanitize("thread")))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TRAINER_NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef TRAINER_NO_TSAN
#define TRAINER_NO_TSAN
#endif

namespace trainer {
namespace {

// A vector of 8 floats (GCC/Clang vector extension): one AVX register, or two
// SSE registers in the baseline build.
typedef float Vec8 __attribute__((vector_size(32)));

inline Vec8 Load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof(v)); }

// The inner loop of the products: an R x 16 block of c accumulates the sum
// over t of A(r, t) * B(t, j), where A(r, t) = a[r * a_rs + t * a_ts] and
// B(t, j) = b[t * b_ts + j]. The block lives in registers for the whole sum,
// so every loaded vector of b is used R times.
template <int R>
TRAINER_NO_TSAN inline void Block(const float* __restrict a, size_t a_rs, size_t a_ts,
                                  const float* __restrict b, size_t b_ts, float* __restrict c,
                                  size_t c_rs, int inner, bool accumulate) {
  Vec8 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = accumulate ? Load8(c + r * c_rs) : Vec8{};
    acc[r][1] = accumulate ? Load8(c + r * c_rs + 8) : Vec8{};
  }
  for (int t = 0; t < inner; ++t) {
    const Vec8 b0 = Load8(b + t * b_ts);
    const Vec8 b1 = Load8(b + t * b_ts + 8);
    for (int r = 0; r < R; ++r) {
      const float av = a[r * a_rs + t * a_ts];
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    Store8(c + r * c_rs, acc[r][0]);
    Store8(c + r * c_rs + 8, acc[r][1]);
  }
}

// Same for any block size (the edges), accumulating straight into c.
TRAINER_NO_TSAN inline void EdgeBlock(const float* a, size_t a_rs, size_t a_ts, const float* b,
                                      size_t b_ts, float* c, size_t c_rs, int rows, int cols,
                                      int inner, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    float* c_row = c + r * c_rs;
    if (!accumulate) std::fill(c_row, c_row + cols, 0.0f);
    for (int t = 0; t < inner; ++t) {
      const float av = a[r * a_rs + t * a_ts];
      const float* b_row = b + t * b_ts;
      for (int j = 0; j < cols; ++j) c_row[j] += av * b_row[j];
    }
  }
}

constexpr int kBlockRows = 4;
constexpr int kBlockCols = 16;

// c[rows, cols] (+)= A[rows, inner] * B[inner, cols] with A, B strided as in Block().
TRAINER_KERNEL TRAINER_NO_TSAN void Product(const float* a, size_t a_rs, size_t a_ts,
                                            const float* b, size_t b_ts, float* c, int rows,
                                            int cols, int inner, bool accumulate) {
  const int full_cols = cols - cols % kBlockCols;
  const int full_rows = rows - rows % kBlockRows;
  // Column blocks outermost: the slice of b they read stays in cache while
  // every row block passes over it.
  for (int j0 = 0; j0 < full_cols; j0 += kBlockCols) {
    for (int i0 = 0; i0 < full_rows; i0 += kBlockRows) {
      Block<kBlockRows>(a + i0 * a_rs, a_rs, a_ts, b + j0, b_ts, c + i0 * size_t(cols) + j0, cols,
                        inner, accumulate);
    }
    if (full_rows < rows) {
      EdgeBlock(a + full_rows * a_rs, a_rs, a_ts, b + j0, b_ts, c + full_rows * size_t(cols) + j0,
                cols, rows - full_rows, kBlockCols, inner, accumulate);
    }
  }
  if (full_cols < cols) {
    EdgeBlock(a, a_rs, a_ts, b + full_cols, b_ts, c + full_cols, cols, rows, cols - full_cols,
              inner, accumulate);
  }
}

}  // namespace

void MatMulAdd(const float* a, const float* b, float* c, int n, int k, int m) {
  Product(a, k, 1, b, m, c, n, m, k, /*accumulate=*/true);
}

void MatMulTransposeA(const float* a, const float* d, float* c, int n, int k, int m) {
  // c[p, j] = sum_i a[i, p] * d[i, j]: A(p, i) = a[i * k + p].
  Product(a, 1, k, d, m, c, k, m, n, /*accumulate=*/false);
}

TRAINER_KERNEL TRAINER_NO_TSAN void MatMulTransposeB(const float* __restrict d,
                                                     const float* __restrict b, float* __restrict c,
                                                     int n, int k, int m) {
  for (int i = 0; i < n; ++i) {
    const float* d_row = d + static_cast<size_t>(i) * m;
    for (int p = 0; p < k; ++p) {
      const float* b_row = b + static_cast<size_t>(p) * m;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int j = 0; j < m; ++j) sum += d_row[j] * b_row[j];
      c[static_cast<size_t>(i) * k + p] = sum;
    }
  }
}

namespace {

// Uniform in [-limit, limit) from the top 24 bits: the same on every platform.
float Uniform(std::mt19937_64& gen, float limit) {
  const float unit = static_cast<float>(gen() >> 40) * (1.0f / 16777216.0f);
  return (2.0f * unit - 1.0f) * limit;
}

}  // namespace

Mlp::Mlp(const std::vector<int>& layer_sizes, uint64_t seed) {
  assert(layer_sizes.size() >= 2);
  std::mt19937_64 gen(seed);
  for (size_t l = 0; l + 1 < layer_sizes.size(); ++l) {
    DenseLayer layer;
    layer.inputs = layer_sizes[l];
    layer.outputs = layer_sizes[l + 1];
    const float limit = 1.0f / std::sqrt(static_cast<float>(layer.inputs));
    layer.weights.resize(static_cast<size_t>(layer.inputs) * layer.outputs);
    for (float& w : layer.weights) w = Uniform(gen, limit);
    layer.bias.resize(static_cast<size_t>(layer.outputs));
    for (float& b : layer.bias) b = Uniform(gen, limit);
    layer.grad_weights.assign(layer.weights.size(), 0.0f);
    layer.grad_bias.assign(layer.bias.size(), 0.0f);
    layers_.push_back(std::move(layer));
  }
  activations_.resize(layers_.size() + 1);
}

void Mlp::Forward(const float* x, int rows) {
  const float* input = x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const DenseLayer& layer = layers_[l];
    std::vector<float>& out = activations_[l + 1];
    out.resize(static_cast<size_t>(rows) * layer.outputs);
    for (int i = 0; i < rows; ++i) {
      std::memcpy(out.data() + static_cast<size_t>(i) * layer.outputs, layer.bias.data(),
                  sizeof(float) * layer.outputs);
    }
    MatMulAdd(input, layer.weights.data(), out.data(), rows, layer.inputs, layer.outputs);
    if (l + 1 < layers_.size()) {
      for (float& v : out) v = std::max(v, 0.0f);  // ReLU
    }
    input = out.data();
  }
}

float Mlp::SoftmaxCrossEntropy(const int64_t* labels, int rows, bool to_gradient,
                               float* row_losses) {
  const int classes = num_classes();
  float* logits = activations_.back().data();
  double total = 0.0;
  const float scale = 1.0f / static_cast<float>(rows);
  for (int i = 0; i < rows; ++i) {
    float* z = logits + static_cast<size_t>(i) * classes;
    const float max_z = *std::max_element(z, z + classes);
    float sum = 0.0f;
    for (int j = 0; j < classes; ++j) {
      z[j] = std::exp(z[j] - max_z);
      sum += z[j];
    }
    const int64_t label = labels[i];
    assert(label >= 0 && label < classes);
    const float loss = -std::log(z[label] / sum);
    total += loss;
    if (row_losses != nullptr) row_losses[i] = loss;
    if (to_gradient) {
      // d(mean loss)/d(logit j) = (softmax_j - [j == label]) / rows.
      const float inv = 1.0f / sum;
      for (int j = 0; j < classes; ++j) z[j] = z[j] * inv * scale;
      z[label] -= scale;
    }
  }
  return static_cast<float>(total / rows);
}

float Mlp::ComputeGradients(const float* x, const int64_t* labels, int rows, float* row_losses) {
  assert(rows > 0);
  Forward(x, rows);
  const float loss = SoftmaxCrossEntropy(labels, rows, /*to_gradient=*/true, row_losses);
  // delta = d(loss)/d(pre-activation output) of the current layer.
  delta_.assign(activations_.back().begin(), activations_.back().end());
  for (size_t l = layers_.size(); l-- > 0;) {
    DenseLayer& layer = layers_[l];
    const float* input = l == 0 ? x : activations_[l].data();
    MatMulTransposeA(input, delta_.data(), layer.grad_weights.data(), rows, layer.inputs,
                     layer.outputs);
    std::fill(layer.grad_bias.begin(), layer.grad_bias.end(), 0.0f);
    for (int i = 0; i < rows; ++i) {
      const float* d_row = delta_.data() + static_cast<size_t>(i) * layer.outputs;
      for (int j = 0; j < layer.outputs; ++j) layer.grad_bias[j] += d_row[j];
    }
    if (l == 0) break;  // no gradient needed for the input
    next_delta_.resize(static_cast<size_t>(rows) * layer.inputs);
    MatMulTransposeB(delta_.data(), layer.weights.data(), next_delta_.data(), rows, layer.inputs,
                     layer.outputs);
    // Through the ReLU of the previous layer: zero where its output was zero.
    const std::vector<float>& act = activations_[l];
    for (size_t t = 0; t < next_delta_.size(); ++t) {
      if (act[t] <= 0.0f) next_delta_[t] = 0.0f;
    }
    delta_.swap(next_delta_);
  }
  return loss;
}

float Mlp::Loss(const float* x, const int64_t* labels, int rows) {
  Forward(x, rows);
  return SoftmaxCrossEntropy(labels, rows, /*to_gradient=*/false);
}

void Mlp::Predict(const float* x, int rows, int* predicted) {
  Forward(x, rows);
  const int classes = num_classes();
  const float* logits = activations_.back().data();
  for (int i = 0; i < rows; ++i) {
    const float* z = logits + static_cast<size_t>(i) * classes;
    predicted[i] = static_cast<int>(std::max_element(z, z + classes) - z);
  }
}

double Mlp::Accuracy(const float* x, const int64_t* labels, int rows, int chunk_rows) {
  if (rows <= 0) return 0.0;
  std::vector<int> predicted(static_cast<size_t>(std::min(rows, chunk_rows)));
  int64_t correct = 0;
  for (int start = 0; start < rows; start += chunk_rows) {
    const int n = std::min(chunk_rows, rows - start);
    Predict(x + static_cast<size_t>(start) * num_inputs(), n, predicted.data());
    for (int i = 0; i < n; ++i) correct += predicted[i] == labels[start + i] ? 1 : 0;
  }
  return static_cast<double>(correct) / rows;
}

Sgd::Sgd(const Mlp& model, SgdOptions options) : options_(options) {
  for (const DenseLayer& layer : model.layers()) {
    velocity_weights_.emplace_back(layer.weights.size(), 0.0f);
    velocity_bias_.emplace_back(layer.bias.size(), 0.0f);
  }
}

void Sgd::Step(Mlp& model, float learning_rate) {
  const float mu = options_.momentum;
  const float wd = options_.weight_decay;
  for (size_t l = 0; l < model.layers().size(); ++l) {
    DenseLayer& layer = model.layers()[l];
    std::vector<float>& vw = velocity_weights_[l];
    for (size_t t = 0; t < layer.weights.size(); ++t) {
      vw[t] = mu * vw[t] + layer.grad_weights[t] + wd * layer.weights[t];
      layer.weights[t] -= learning_rate * vw[t];
    }
    std::vector<float>& vb = velocity_bias_[l];
    for (size_t t = 0; t < layer.bias.size(); ++t) {
      vb[t] = mu * vb[t] + layer.grad_bias[t];
      layer.bias[t] -= learning_rate * vb[t];
    }
  }
}

}  // namespace trainer
