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

namespace trainer {

TRAINER_KERNEL
void MatMulAdd(const float* __restrict a, const float* __restrict b, float* __restrict c, int n,
               int k, int m) {
  for (int i = 0; i < n; ++i) {
    const float* a_row = a + static_cast<size_t>(i) * k;
    float* c_row = c + static_cast<size_t>(i) * m;
    for (int p = 0; p < k; ++p) {
      const float av = a_row[p];
      if (av == 0.0f) continue;  // pixels and ReLU outputs are often exactly zero
      const float* b_row = b + static_cast<size_t>(p) * m;
      for (int j = 0; j < m; ++j) c_row[j] += av * b_row[j];
    }
  }
}

TRAINER_KERNEL
void MatMulTransposeA(const float* __restrict a, const float* __restrict d, float* __restrict c,
                      int n, int k, int m) {
  std::fill(c, c + static_cast<size_t>(k) * m, 0.0f);
  // Row p of c is the sum over i of a[i, p] * d[i, :]: keep that row in cache
  // and stream the (small) d once per p.
  for (int p = 0; p < k; ++p) {
    float* c_row = c + static_cast<size_t>(p) * m;
    for (int i = 0; i < n; ++i) {
      const float av = a[static_cast<size_t>(i) * k + p];
      if (av == 0.0f) continue;
      const float* d_row = d + static_cast<size_t>(i) * m;
      for (int j = 0; j < m; ++j) c_row[j] += av * d_row[j];
    }
  }
}

TRAINER_KERNEL
void MatMulTransposeB(const float* __restrict d, const float* __restrict b, float* __restrict c,
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

float Mlp::SoftmaxCrossEntropy(const int64_t* labels, int rows, bool to_gradient) {
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
    total += -std::log(z[label] / sum);
    if (to_gradient) {
      // d(mean loss)/d(logit j) = (softmax_j - [j == label]) / rows.
      const float inv = 1.0f / sum;
      for (int j = 0; j < classes; ++j) z[j] = z[j] * inv * scale;
      z[label] -= scale;
    }
  }
  return static_cast<float>(total / rows);
}

float Mlp::ComputeGradients(const float* x, const int64_t* labels, int rows) {
  assert(rows > 0);
  Forward(x, rows);
  const float loss = SoftmaxCrossEntropy(labels, rows, /*to_gradient=*/true);
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
