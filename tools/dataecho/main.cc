// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho: inspect and convert record files. See docs/formats.md.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "dataecho/text.h"
#include "dataecho/version.h"

namespace {

constexpr char kUsage[] =
    R"(Usage: dataecho <command> [options] [arguments]

Inspect and convert the record files of ML input pipelines. URIs may be local
paths, file://, http(s)://, gs:// or s3:// URIs, or globs of them.

Commands:
  stat      count the records of files and checksum their payloads (JSON)
  convert   convert IDX (MNIST-style) images and labels to sharded TFRecord
  shards    show how files split between the ranks of a job (JSON)

Options:
  -h, --help     show this help and exit
  --version      show the version and exit

Run 'dataecho <command> --help' for the options of a command.
Exit status: 0 on success, 1 on a data or storage error, 2 on a usage error.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("dataecho %s\n", std::string(dataecho::Version()).c_str());
    return 0;
  }
  if (command == "stat") return dataecho::tool::StatCommand(args);
  if (command == "convert") return dataecho::tool::ConvertCommand(args);
  if (command == "shards") return dataecho::tool::ShardsCommand(args);
  std::fprintf(stderr,
               "dataecho: unknown command '%s'\nTry 'dataecho --help' for more information.\n",
               dataecho::TerminalSafe(command).c_str());
  return 2;
}
