// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Tests of the example trainer's MLP (examples/trainer/mlp.h): the kernels
// against naive loops, the gradients against finite differences, and SGD.
#include "trainer/mlp.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace trainer {
namespace {

std::vector<float> RandomVector(size_t n, std::mt19937& gen, float zero_fraction = 0.0f) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_real_distribution<float> coin(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = coin(gen) < zero_fraction ? 0.0f : value(gen);
  return v;
}

// A matrix read in place: element (r, c) is data[r * row_stride + c * col_stride],
// so a transposed operand is the same data with the strides swapped.
struct MatrixView {
  const float* data;
  int row_stride;
  int col_stride;
  float at(int r, int c) const { return data[r * row_stride + c * col_stride]; }
};

// out[i * cols + j] += a(i, p) * b(p, j) for p = 0 .. inner-1, in that order:
// the definition the kernels must match.
void NaiveMatMulAdd(MatrixView a, MatrixView b, int rows, int inner, int cols,
                    std::vector<float>& out) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      for (int p = 0; p < inner; ++p) out[i * cols + j] += a.at(i, p) * b.at(p, j);
}

void ExpectAllNear(const std::vector<float>& got, const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t t = 0; t < got.size(); ++t) EXPECT_NEAR(got[t], expected[t], 1e-4f) << t;
}

TEST(MlpKernelsTest, MatchNaiveLoops) {
  std::mt19937 gen(3);
  const int n = 7, k = 13, m = 37;  // odd sizes: vector tails matter
  std::vector<float> a = RandomVector(n * k, gen, 0.3f);
  std::vector<float> b = RandomVector(k * m, gen);
  std::vector<float> d = RandomVector(n * m, gen);

  std::vector<float> c = RandomVector(n * m, gen);
  // c (n x m) += a (n x k) * b (k x m)
  std::vector<float> expected = c;
  NaiveMatMulAdd({a.data(), k, 1}, {b.data(), m, 1}, n, k, m, expected);
  MatMulAdd(a.data(), b.data(), c.data(), n, k, m);
  ExpectAllNear(c, expected);

  // ta (k x m) = a^T (k x n) * d (n x m)
  std::vector<float> ta(k * m, 42.0f);  // overwritten, not accumulated
  std::vector<float> expected_ta(k * m, 0.0f);
  NaiveMatMulAdd({a.data(), 1, k}, {d.data(), m, 1}, k, n, m, expected_ta);
  MatMulTransposeA(a.data(), d.data(), ta.data(), n, k, m);
  ExpectAllNear(ta, expected_ta);

  // tb (n x k) = d (n x m) * b^T (m x k)
  std::vector<float> tb(n * k, 42.0f);
  std::vector<float> expected_tb(n * k, 0.0f);
  NaiveMatMulAdd({d.data(), m, 1}, {b.data(), 1, m}, n, m, k, expected_tb);
  MatMulTransposeB(d.data(), b.data(), tb.data(), n, k, m);
  ExpectAllNear(tb, expected_tb);
}

// Central differences of the mean loss against ComputeGradients for every
// weight and bias of a small network.
TEST(MlpTest, GradientsMatchFiniteDifferences) {
  const std::vector<int> sizes = {9, 8, 6, 4};
  const int rows = 5;
  Mlp model(sizes, /*seed=*/11);
  std::mt19937 gen(5);
  std::vector<float> x = RandomVector(rows * sizes[0], gen, 0.2f);
  std::vector<int64_t> labels = {0, 3, 1, 2, 3};

  model.ComputeGradients(x.data(), labels.data(), rows);
  std::vector<std::vector<float>> grad_w, grad_b;
  for (const DenseLayer& layer : model.layers()) {
    grad_w.push_back(layer.grad_weights);
    grad_b.push_back(layer.grad_bias);
  }

  const float eps = 1e-3f;
  int checked = 0, mismatches = 0;
  double max_abs_grad = 0.0;
  auto check = [&](float* param, float analytic) {
    const float saved = *param;
    *param = saved + eps;
    const double plus = model.Loss(x.data(), labels.data(), rows);
    *param = saved - eps;
    const double minus = model.Loss(x.data(), labels.data(), rows);
    *param = saved;
    const double numeric = (plus - minus) / (2.0 * eps);
    max_abs_grad = std::max(max_abs_grad, std::abs(numeric));
    ++checked;
    if (std::abs(numeric - analytic) > 2e-3 + 0.02 * std::abs(numeric)) {
      ++mismatches;
      ADD_FAILURE() << "numeric " << numeric << " vs analytic " << analytic;
    }
  };
  for (size_t l = 0; l < model.layers().size(); ++l) {
    DenseLayer& layer = model.layers()[l];
    for (size_t t = 0; t < layer.weights.size(); ++t) check(&layer.weights[t], grad_w[l][t]);
    for (size_t t = 0; t < layer.bias.size(); ++t) check(&layer.bias[t], grad_b[l][t]);
  }
  EXPECT_EQ(checked, 9 * 8 + 8 + 8 * 6 + 6 + 6 * 4 + 4);
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(max_abs_grad, 0.01);  // the check compared real, non-zero gradients
}

TEST(MlpTest, SameSeedSameModel) {
  Mlp a({5, 4, 3}, 7), b({5, 4, 3}, 7), c({5, 4, 3}, 8);
  EXPECT_EQ(a.layers()[0].weights, b.layers()[0].weights);
  EXPECT_NE(a.layers()[0].weights, c.layers()[0].weights);
  for (float w : a.layers()[0].weights) EXPECT_LE(std::abs(w), 1.0f / std::sqrt(5.0f));
}

// Two Gaussian blobs per class in 20 dimensions: SGD with momentum must fit
// them, and Predict/Accuracy must agree with the labels.
TEST(MlpTest, SgdLearnsSeparableClasses) {
  const int classes = 3, dims = 20, rows = 300;
  std::mt19937 gen(9);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  std::vector<float> centers = RandomVector(classes * dims, gen);
  std::vector<float> x(rows * dims);
  std::vector<int64_t> labels(rows);
  for (int i = 0; i < rows; ++i) {
    labels[i] = i % classes;
    for (int j = 0; j < dims; ++j) x[i * dims + j] = centers[labels[i] * dims + j] + noise(gen);
  }
  Mlp model({dims, 16, classes}, 1);
  Sgd sgd(model, {.learning_rate = 0.05f, .momentum = 0.9f});
  const float initial = model.Loss(x.data(), labels.data(), rows);
  for (int step = 0; step < 100; ++step) {
    const int start = (step * 30) % rows;
    model.ComputeGradients(x.data() + start * dims, labels.data() + start, 30);
    sgd.Step(model);
  }
  const float final_loss = model.Loss(x.data(), labels.data(), rows);
  EXPECT_LT(final_loss, initial * 0.2f) << initial << " -> " << final_loss;
  EXPECT_GE(model.Accuracy(x.data(), labels.data(), rows, /*chunk_rows=*/64), 0.98);
}

}  // namespace
}  // namespace trainer
