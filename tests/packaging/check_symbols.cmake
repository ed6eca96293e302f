# Checks what a shared libdataecho exports (ctest: exported_symbols):
#   - only dataecho's own names: functions in namespace dataecho, and the
#     vtables and type information of its classes (no std:: or absl::
#     template copies: cmake/dataecho.map);
#   - nothing from namespace dataecho::internal but the allow-list below;
#   - every allow-listed name, and a few public functions, are there.
# Usage: cmake -DNM=<nm> -DLIBRARY=<libdataecho.so> -P check_symbols.cmake
cmake_minimum_required(VERSION 3.25)

# dataecho::internal functions exported on purpose. Each is declared in an
# installed header; none is part of the API (they may change in any release).
set(allowed_internal
  # Called by inline code in public headers (stats.h, throttle.h and every
  # stage template that times its waits): a user's program calls it.
  # The run-ahead core (internal/run_ahead.h): Prefetch's and Map's inline
  # templates call it, compiled once in the library.
  "dataecho::internal::RunAhead::AwaitReady(long)"
  "dataecho::internal::RunAhead::RefillNeed()"
  "dataecho::internal::RunAhead::Halt()"
  "dataecho::internal::RunAhead::Made(long, long)"
  "dataecho::internal::RunAhead::Took(long)"
  "dataecho::internal::RunAhead::Ended()"
  "dataecho::internal::RunAhead::Pause()"
  "dataecho::internal::RunAhead::Cancel()"
  "dataecho::internal::RunAhead::Pushed(long, long, long)"
  "dataecho::internal::RunAhead::Resume()"
  "dataecho::internal::RunAhead::EndStop()"
  "dataecho::internal::RunAhead::Reserve(long, long)"
  "dataecho::internal::RunAhead::Released(long)"
  "dataecho::internal::RunAhead::SetDepth(long)"
  "dataecho::internal::RunAhead::SetProducers(int)"
  "dataecho::internal::RunAhead::BeginStop()"
  "dataecho::internal::RunAhead::RunAhead(long)"
  "dataecho::internal::RunAhead::TakeRun() const"
  "dataecho::internal::RunAhead::RunLength() const"
  "dataecho::internal::NowNanos()"
  # Called by the inline Repeat stage and Pipeline::Stats() (repeat.h, pipeline.h).
  "dataecho::internal::AddStageStats(std::vector<dataecho::StageStats, std::allocator<dataecho::StageStats> >*, std::vector<dataecho::StageStats, std::allocator<dataecho::StageStats> > const&)"
  "dataecho::internal::MakeStageNamesUnique(std::vector<dataecho::StageStats, std::allocator<dataecho::StageStats> >*)"
  # internal/stage_factories.h: the factories builder.h's inline members call
  # for the stages the library compiles (Map, Filter, Batch, PaddedBatch,
  # Unbatch), so that a program that includes builder.h alone links them.
  "dataecho::internal::FilterFactory<dataecho::Batch>::Make(std::unique_ptr<dataecho::Stage<dataecho::Batch>, std::default_delete<dataecho::Stage<dataecho::Batch> > >, std::function<absl::debian3::StatusOr<bool> (dataecho::Batch const&)>, dataecho::FilterOptions)"
  "dataecho::internal::FilterFactory<dataecho::Example>::Make(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, std::function<absl::debian3::StatusOr<bool> (dataecho::Example const&)>, dataecho::FilterOptions)"
  "dataecho::internal::FilterFactory<dataecho::Record>::Make(std::unique_ptr<dataecho::Stage<dataecho::Record>, std::default_delete<dataecho::Stage<dataecho::Record> > >, std::function<absl::debian3::StatusOr<bool> (dataecho::Record const&)>, dataecho::FilterOptions)"
  "dataecho::internal::MakeBatchStage(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, dataecho::BatchOptions)"
  "dataecho::internal::MakePaddedBatchStage(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, dataecho::PaddedBatchOptions)"
  "dataecho::internal::MapFactory<dataecho::Batch, dataecho::Batch>::Make(std::unique_ptr<dataecho::Stage<dataecho::Batch>, std::default_delete<dataecho::Stage<dataecho::Batch> > >, std::function<absl::debian3::StatusOr<dataecho::Batch> (dataecho::Batch)>, dataecho::MapOptions)"
  "dataecho::internal::MapFactory<dataecho::Example, dataecho::Example>::Make(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, std::function<absl::debian3::StatusOr<dataecho::Example> (dataecho::Example)>, dataecho::MapOptions)"
  "dataecho::internal::MapFactory<dataecho::Record, dataecho::Example>::Make(std::unique_ptr<dataecho::Stage<dataecho::Record>, std::default_delete<dataecho::Stage<dataecho::Record> > >, std::function<absl::debian3::StatusOr<dataecho::Example> (dataecho::Record)>, dataecho::MapOptions)"
  "dataecho::internal::MapFactory<dataecho::Record, dataecho::Record>::Make(std::unique_ptr<dataecho::Stage<dataecho::Record>, std::default_delete<dataecho::Stage<dataecho::Record> > >, std::function<absl::debian3::StatusOr<dataecho::Record> (dataecho::Record)>, dataecho::MapOptions)"
  # crc32c.h: the two implementations behind Crc32cExtend() and the CPU
  # check, compared against each other by crc32c_test and the benchmarks.
  "dataecho::internal::Crc32cExtendPortable(unsigned int, void const*, unsigned long)"
  "dataecho::internal::Crc32cExtendSse42(unsigned int, void const*, unsigned long)"
  "dataecho::internal::Crc32cHardwareAvailable()"
  # internal/echo_core.h: the type-independent half of the echo stages, called
  # by the stage templates (echo.h, adaptive_echo.h, auto_echo.h).
  "dataecho::internal::AdaptiveEchoCore::AdaptiveEchoCore(dataecho::AdaptiveEchoOptions, std::shared_ptr<dataecho::internal::DecisionJournal>)"
  # The adaptive echo stage takes the decision journal of the placement that
  # made it (internal::MakeAdaptiveEcho): its constructor names the type.
  "dataecho::AdaptiveEchoStage<dataecho::Batch>::AdaptiveEchoStage(std::unique_ptr<dataecho::Stage<dataecho::Batch>, std::default_delete<dataecho::Stage<dataecho::Batch> > >, dataecho::AdaptiveEchoOptions, std::shared_ptr<dataecho::internal::DecisionJournal>)"
  "dataecho::AdaptiveEchoStage<dataecho::Example>::AdaptiveEchoStage(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, dataecho::AdaptiveEchoOptions, std::shared_ptr<dataecho::internal::DecisionJournal>)"
  "dataecho::internal::AdaptiveEchoCore::CountWait(dataecho::internal::AdaptiveEchoCore::Action)"
  "dataecho::internal::AdaptiveEchoCore::OnFresh(long, dataecho::internal::EchoCounts&)"
  "dataecho::internal::AdaptiveEchoCore::OnPooled(bool, unsigned long)"
  "dataecho::internal::AdaptiveEchoCore::OnRepeat(long, unsigned long, dataecho::internal::EchoCounts&)"
  "dataecho::internal::AdaptiveEchoCore::OnWaited(long, dataecho::internal::EchoCounts&)"
  "dataecho::internal::AdaptiveEchoCore::ReplayMismatch() const"
  "dataecho::internal::AdaptiveEchoCore::SleepGatePoll() const"
  "dataecho::internal::AdaptiveEchoCore::Stats(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, dataecho::internal::EchoCounts const&) const"
  "dataecho::internal::AdaptiveEchoCore::WithoutFresh(bool, dataecho::internal::EchoCounts const&) const"
  "dataecho::internal::AutoEchoSwitch::AppendStats(dataecho::StageStats*) const"
  "dataecho::internal::DecisionJournal::Anchor(unsigned long)"
  "dataecho::internal::DecisionJournal::Record(char)"
  "dataecho::internal::DecisionJournal::ReplayFrom[abi:cxx11](unsigned long, std::basic_string_view<char, std::char_traits<char> >)"
  "dataecho::internal::DecisionJournal::RestartAt(unsigned long)"
  "dataecho::internal::AutoEchoSwitch::Check(long, dataecho::internal::RateRatioEstimator const&, double)"
  "dataecho::internal::EchoCounts::ToStats(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::initializer_list<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, double> >) const"
  "dataecho::internal::RateRatioEstimator::AddFresh(long)"
  # internal/map_tuning.h: the autotuner a Map with parallelism = kAutotune
  # runs (map.h).
  "dataecho::internal::ChooseMapParallelism(dataecho::internal::MapWarmup const&)"
  "dataecho::internal::MapAutotuner::Enter()"
  "dataecho::internal::MapAutotuner::Leave(long)"
  # internal/mix_core.h: the type-independent half of the Mix stage (mix.h).
  # internal/batching_stage: the base Batch and PaddedBatch share (their
  # sticky error, end flag, restart, counters); the public BatchStage derives
  # from it, so its vtable, type information and members go with it.
  "dataecho::internal::BatchingStage::CountBatch(dataecho::Batch const&)"
  "dataecho::internal::BatchingStage::RestoreOwn(dataecho::StateReader&)"
  "dataecho::internal::BatchingStage::SaveOwn(dataecho::StateWriter&)"
  "dataecho::internal::BatchingStage::OnRestart(unsigned int)"
  # ... and since it runs both stages' Next(), fill loop, columns and
  # references, those too.
  "dataecho::internal::BatchingStage::BatchingStage(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, long, bool, unsigned long)"
  "dataecho::internal::BatchingStage::~BatchingStage()"
  "dataecho::internal::BatchingStage::Next()"
  "dataecho::internal::BatchingStage::GatherRows(absl::debian3::FunctionRef<dataecho::Example* ()>, long*)"
  "dataecho::internal::BatchingStage::MakeColumns(dataecho::Batch*)"
  "dataecho::internal::BatchingStage::MakeBatch()"
  "dataecho::internal::BatchingStage::NoteRow(dataecho::Example const&, long)"
  "dataecho::internal::BatchingStage::Reread(dataecho::StateReader&, unsigned long, std::vector<dataecho::Batch, std::allocator<dataecho::Batch> >*)"
  "dataecho::internal::BatchingStage::SaveRefs(std::span<dataecho::Batch const* const, 18446744073709551615ul>, dataecho::StateWriter&)"
  "dataecho::internal::BatchingStage::BatchStats(std::vector<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, double>, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, double> > >) const"
  "dataecho::internal::BatchingStage::ReadBatchSizes(dataecho::StateReader&, unsigned long, unsigned long*) const"
  "typeinfo for dataecho::internal::BatchingStage"
  "typeinfo name for dataecho::internal::BatchingStage"
  "vtable for dataecho::internal::BatchingStage"
  "dataecho::internal::MixCore::Ended(unsigned long, unsigned int*)"
  "dataecho::internal::MixCore::MixCore(dataecho::MixOptions const&, unsigned long)"
  "dataecho::internal::MixCore::OptionsHashValue() const"
  "dataecho::internal::MixCore::Pick() const"
  "dataecho::internal::MixCore::Report(dataecho::StageStats) const"
  "dataecho::internal::MixCore::Restarted(unsigned long, unsigned int)"
  "dataecho::internal::MixCore::Restore(dataecho::StateReader&)"
  "dataecho::internal::MixCore::Save(dataecho::StateWriter&) const"
  "dataecho::internal::MixCore::StartEpoch(unsigned int)"
  "dataecho::internal::MixCore::Took(unsigned long, long, long, unsigned int)")
# Public functions that must be exported (a sample: if these are missing, the
# export marks or the version script are broken).
set(required
  "dataecho::Version()"
  "dataecho::OpenObjectStore(dataecho::ObjectStoreOptions const&)"
  "dataecho::BatchStage::Make(std::unique_ptr<dataecho::Stage<dataecho::Example>, std::default_delete<dataecho::Stage<dataecho::Example> > >, dataecho::BatchOptions)"
  "dataecho::TerminalSafe[abi:cxx11](std::basic_string_view<char, std::char_traits<char> >)"
  "typeinfo for dataecho::ObjectStore"
  "vtable for dataecho::BatchStage")

execute_process(COMMAND ${NM} -DC --defined-only ${LIBRARY}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -DC --defined-only ${LIBRARY} failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(errors "")
set(names "")
set(total 0)
set(internal 0)
foreach(line IN LISTS lines)
  # "<address> <type> <demangled name>"
  if(NOT line MATCHES "^[0-9a-f]+ [A-Za-z] (.+)$")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  list(APPEND names "${name}")
  math(EXPR total "${total} + 1")
  if(NOT name MATCHES "^(dataecho::|vtable for dataecho::|typeinfo for dataecho::|typeinfo name for dataecho::)")
    string(APPEND errors "exported, not dataecho's own: ${name}\n")
  elseif(name MATCHES "dataecho::internal::")
    math(EXPR internal "${internal} + 1")
    list(FIND allowed_internal "${name}" found)
    if(found EQUAL -1)
      string(APPEND errors "exported internal symbol (mark it DATAECHO_EXPORT only if public inline code or a tool needs it, then add it to the allow-list in check_symbols.cmake): ${name}\n")
    endif()
  endif()
endforeach()
foreach(name IN LISTS allowed_internal required)
  list(FIND names "${name}" found)
  if(found EQUAL -1)
    string(APPEND errors "not exported: ${name}\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "exported symbols of ${LIBRARY}:\n${errors}")
endif()
message(STATUS "${LIBRARY}: ${total} exported symbols, ${internal} of them allow-listed dataecho::internal")
