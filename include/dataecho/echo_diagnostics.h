// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// echo_diagnostics.h: what echoing did to the batches a trainer sees.
//
// A pass-through stage on a pipeline of batches that reports, in its stats
// row ("echo_diagnostics" by default):
//
//   dup_rows_per_batch   rows per batch that repeat an item already in the
//                        same batch (copies a shuffle did not spread)
//   copy_distance_steps  mean distance, in steps (batches), between two
//                        sightings of one item (its fresh read and its copies)
//   fresh_row_fraction   fresh rows / rows: the fraction of fresh rows per step
//
// Items are told apart by (source_index, epoch); the last 65,536 items seen
// are remembered for the distance.
//
//   dataecho::Pipeline<dataecho::Batch> batches = dataecho::WithEchoDiagnostics(
//       dataecho::EchoedBatches(std::move(decoded), Augment, options));
//   ... train ...
//   std::cout << dataecho::FormatStatsTable(batches.Stats());
//
// EchoedBatches (echo_placement.h) adds it with `diagnostics = true`; its
// kAuto and kAdaptive planners report the same figures in their own row.
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_ECHO_DIAGNOSTICS_H_
#define DATAECHO_ECHO_DIAGNOSTICS_H_

#include <string>

#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/pipeline.h"

namespace dataecho {

DATAECHO_EXPORT Pipeline<Batch> WithEchoDiagnostics(Pipeline<Batch> batches,
                                                    std::string name = "echo_diagnostics");

}  // namespace dataecho

#endif  // DATAECHO_ECHO_DIAGNOSTICS_H_
