#include "dataecho/dataecho.h"
#include <cstdio>
int main() {
  using namespace dataecho;
  std::vector<Example> v;
  for (int i = 0; i < 1000; ++i) { Example e; e.components.push_back(*Tensor::Make(DType::kUInt8, {4}, Buffer::CopyOf("abcd"))); e.source_index = i; e.label = i % 10; v.push_back(e); }
  auto p = FromVector(std::move(v)).Map([](Example e) { return e; }, {.parallelism = 2}).Prefetch({.depth = 8}).Echo({.factor = 2.5, .seed = 1})
     .Shuffle({.buffer_size = 100, .seed = 2}).Batch({.batch_size = 64, .cast = DType::kFloat16}).Echo({.factor = 2});
  if (!p.status().ok()) { std::puts(p.status().ToString().c_str()); return 1; }
  int n = 0;
  while (true) { auto b = p.Next(); if (!b.ok()) { std::puts(b.status().ToString().c_str()); return 1;} if (!b->has_value()) break; n++; }
  std::printf("%d batches\n%s", n, FormatStatsTable(p.Stats()).c_str());
}
