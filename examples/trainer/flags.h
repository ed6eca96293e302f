// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// flags.h: the command-line flags the example trainers share
// (fashion_mnist_trainer and the data-parallel examples/mpi_trainer): the
// data, the echo, the schedule, the optimizer, the seed and the checkpoints.
// Each program defines the rest in its own file (its batch size among them:
// the defaults differ), and reads these with TrainOptionsFromFlags().
//
//   trainer::ListFlagsInHelp("fashion_mnist_trainer");
//   absl::ParseCommandLine(argc, argv);
//   absl::StatusOr<trainer::TrainOptions> o = trainer::TrainOptionsFromFlags();
//
// Not thread-safe: flags are process-wide; parse and read them once, before
// starting threads.
#ifndef DATAECHO_EXAMPLES_TRAINER_FLAGS_H_
#define DATAECHO_EXAMPLES_TRAINER_FLAGS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "trainer/trainer.h"

namespace trainer {

// The options the shared flags set; the others keep TrainOptions' defaults.
// INVALID_ARGUMENT for an unknown --insert or --prefer. (The values are
// checked by ValidateOptions(), or by the program.)
absl::StatusOr<TrainOptions> TrainOptionsFromFlags();

// Makes --help list the flags of the program's files (those whose path
// contains `program_files`) and these shared ones. (Abseil's default lists
// the flags of a file named after the program only.) Call before
// absl::ParseCommandLine().
void ListFlagsInHelp(std::string_view program_files);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_FLAGS_H_
