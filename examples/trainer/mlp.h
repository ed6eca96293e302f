// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// mlp.h: a small multilayer perceptron for the example trainer.
//
// A fully connected network (e.g. 784-256-128-10) with ReLU between layers,
// softmax cross-entropy on the last layer, and SGD with momentum. Everything is
// float32, batched and row-major: inputs are [rows, inputs], weights are
// [inputs, outputs], so every inner loop runs over contiguous memory and the
// compiler vectorizes it. No ML framework; the point is to be short and
// readable.
//
//   trainer::Mlp model({784, 256, 128, 10}, /*seed=*/1);
//   trainer::Sgd sgd(model, {.learning_rate = 0.02f, .momentum = 0.9f});
//   float loss = model.ComputeGradients(images, labels, rows);   // fills grads
//   sgd.Step(model, /*learning_rate=*/0.02f);
//   std::vector<int> predicted(rows);
//   model.Predict(images, rows, predicted.data());
//
// Thread safety: not thread-safe (the model keeps per-batch scratch buffers).
#ifndef DATAECHO_EXAMPLES_TRAINER_MLP_H_
#define DATAECHO_EXAMPLES_TRAINER_MLP_H_

#include <cstdint>
#include <vector>

namespace trainer {

// One fully connected layer: y = x * weights + bias.
struct DenseLayer {
  int inputs = 0;
  int outputs = 0;
  std::vector<float> weights;       // [inputs, outputs], row-major
  std::vector<float> bias;          // [outputs]
  std::vector<float> grad_weights;  // same shapes: d(mean loss)/d(parameter)
  std::vector<float> grad_bias;
};

class Mlp {
 public:
  // `layer_sizes` = {inputs, hidden..., classes}; at least two entries.
  // Weights and biases are drawn from U(-1/sqrt(inputs), 1/sqrt(inputs)) (the
  // usual default for linear layers) with a generator seeded by `seed`.
  Mlp(const std::vector<int>& layer_sizes, uint64_t seed);

  // Forward and backward pass on `rows` examples: `x` is [rows, inputs],
  // `labels[i]` in [0, classes). Sets every layer's gradients to those of the
  // mean softmax cross-entropy over the rows and returns that mean loss;
  // `row_losses` (if not null, `rows` of them): each row's loss.
  // REQUIRES: rows > 0, labels in range.
  float ComputeGradients(const float* x, const int64_t* labels, int rows,
                         float* row_losses = nullptr);

  // Mean softmax cross-entropy only (no gradients).
  float Loss(const float* x, const int64_t* labels, int rows);

  // Writes the arg-max class of each row to `predicted[0, rows)`.
  void Predict(const float* x, int rows, int* predicted);

  // Fraction of `rows` examples classified correctly; evaluates in chunks of
  // `chunk_rows` rows to bound scratch memory.
  double Accuracy(const float* x, const int64_t* labels, int rows, int chunk_rows = 1000);

  int num_inputs() const { return layers_.front().inputs; }
  int num_classes() const { return layers_.back().outputs; }
  std::vector<DenseLayer>& layers() { return layers_; }
  const std::vector<DenseLayer>& layers() const { return layers_; }

 private:
  // Fills activations_[l + 1] for every layer; the last holds logits.
  void Forward(const float* x, int rows);
  // Softmax of the logits in place; returns the mean cross-entropy. If
  // `to_gradient`, turns the probabilities into d(mean loss)/d(logits).
  float SoftmaxCrossEntropy(const int64_t* labels, int rows, bool to_gradient,
                            float* row_losses = nullptr);

  std::vector<DenseLayer> layers_;
  // activations_[0] is unused (the input is read in place); activations_[l]
  // is the output of layer l - 1 after ReLU (logits for the last layer).
  std::vector<std::vector<float>> activations_;
  std::vector<float> delta_, next_delta_;  // backward scratch
};

struct SgdOptions {
  float learning_rate = 0.02f;  // used when Step() is given no rate
  float momentum = 0.9f;        // 0 = plain SGD
  float weight_decay = 0.0f;    // L2 coefficient added to each weight gradient (not bias)
};

// SGD with (heavy-ball) momentum, as in PyTorch: v = momentum * v + g;
// p -= learning_rate * v.
class Sgd {
 public:
  Sgd(const Mlp& model, SgdOptions options);
  void Step(Mlp& model) { Step(model, options_.learning_rate); }
  void Step(Mlp& model, float learning_rate);

  // The momentum buffers, one per layer (what a checkpoint saves with the model).
  std::vector<std::vector<float>>& velocity_weights() { return velocity_weights_; }
  std::vector<std::vector<float>>& velocity_bias() { return velocity_bias_; }

 private:
  SgdOptions options_;
  std::vector<std::vector<float>> velocity_weights_, velocity_bias_;
};

// The kernels, exposed for tests. All matrices are row-major and dense.
// c[n, m] += a[n, k] * b[k, m]
void MatMulAdd(const float* a, const float* b, float* c, int n, int k, int m);
// c[k, m] = a[n, k]^T * d[n, m]
void MatMulTransposeA(const float* a, const float* d, float* c, int n, int k, int m);
// c[n, k] = d[n, m] * b[k, m]^T
void MatMulTransposeB(const float* d, const float* b, float* c, int n, int k, int m);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_MLP_H_
