// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "padded_cells.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "dataecho/float16.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho::internal {

absl::StatusOr<std::vector<uint8_t>> PaddingCell(DType dtype, double value, size_t component) {
  std::vector<uint8_t> out(DTypeSize(dtype));
  auto integral = [&](double lo, double hi) -> absl::Status {
    if (value != std::floor(value) || value < lo || value > hi) {
      return absl::InvalidArgumentError(
          fmt::format("padded_batch: padding value {} of component {} does not fit {}", value,
                      component, DTypeName(dtype)));
    }
    return absl::OkStatus();
  };
  switch (dtype) {
    case DType::kUInt8: {
      DATAECHO_RETURN_IF_ERROR(integral(0, 255));
      out[0] = static_cast<uint8_t>(value);
      break;
    }
    case DType::kInt32: {
      DATAECHO_RETURN_IF_ERROR(
          integral(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
      const auto v = static_cast<int32_t>(value);
      std::memcpy(out.data(), &v, sizeof(v));
      break;
    }
    case DType::kInt64: {
      DATAECHO_RETURN_IF_ERROR(integral(-9.2e18, 9.2e18));
      const auto v = static_cast<int64_t>(value);
      std::memcpy(out.data(), &v, sizeof(v));
      break;
    }
    case DType::kFloat32: {
      const auto v = static_cast<float>(value);
      std::memcpy(out.data(), &v, sizeof(v));
      break;
    }
    case DType::kFloat16: {
      const uint16_t v = FloatToHalf(static_cast<float>(value));
      std::memcpy(out.data(), &v, sizeof(v));
      break;
    }
    case DType::kBFloat16: {
      const uint16_t v = FloatToBFloat16(static_cast<float>(value));
      std::memcpy(out.data(), &v, sizeof(v));
      break;
    }
  }
  return out;
}

void FillCells(uint8_t* dst, size_t cells, const std::vector<uint8_t>& cell) {
  if (cells == 0) return;
  if (std::all_of(cell.begin(), cell.end(), [&cell](uint8_t b) { return b == cell[0]; })) {
    std::memset(dst, cell[0], cells * cell.size());
    return;
  }
  for (size_t c = 0; c < cells; ++c) std::memcpy(dst + c * cell.size(), cell.data(), cell.size());
}

}  // namespace dataecho::internal
