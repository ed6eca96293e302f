# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch.DataLoader resumed on another layout (another num_workers, another
number of ranks): the records of the epoch in flight that the loop did not take are
read by the new workers, so every record of that epoch is taken exactly once across
the runs, in real worker processes. Ranks are the launcher's RANK/WORLD_SIZE."""

import collections

import numpy as np
import pytest

import dataecho
import dataecho.torch as det
from dataecho._torch_elastic import ids_of, runs_of

FILES, PER_FILE = 6, 40
RECORDS = FILES * PER_FILE


@pytest.fixture()
def shards(tmp_path, monkeypatch):
    """TFRecord files train-0..5 (40 records each; a record's pixel says which it is),
    and a single-rank job unless a test places itself elsewhere."""
    for f in range(FILES):
        dataecho.write_tfrecord(str(tmp_path / f"train-{f}.tfrecord"), [
            dataecho.encode_image_record(np.full((2, 2, 1), i % 256, np.uint8), label=f)
            for i in range(PER_FILE)])
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    return str(tmp_path / "train-*")


class Build:
    """build(shard): the shard itself to the source, echo 2 before a shuffle, batches
    (picklable, for spawn)."""

    def __init__(self, pattern, ints=False):
        self.pattern, self.ints = pattern, ints

    def __call__(self, shard):
        where = ({"rank": shard.rank, "world_size": shard.world_size} if self.ints
                 else {"shard": shard})
        return (dataecho.from_tfrecord(self.pattern, cycle_length=1, **where)
                .map(dataecho.decode_image_record)
                .echo(factor=2, seed=1)
                .shuffle(buffer_size=24, seed=2).batch(batch_size=8))


def loader(pattern, num_workers, **kwargs):
    dataset = det.PipelineDataset(Build(pattern), with_indices=True, with_epoch=True)
    return det.DataLoader(dataset, batch_size=None, num_workers=num_workers, **kwargs)


def records(batches):
    """[(epoch, source_index)] of every example of `batches`."""
    return [(int(epoch), s) for _, _, source, _, epoch in batches for s in source.tolist()]


def take(ld, k):
    it = iter(ld)
    batches = [next(it) for _ in range(k)]
    return batches, ld.state_dict()


def every_record_once(*runs):
    """Each run's records of epoch 0 are disjoint from the others', and together they
    are all RECORDS records (echo's copies of one record stay in one run)."""
    sets = [{s for e, s in run if e == 0} for run in runs]
    union = set().union(*sets)
    assert sum(len(s) for s in sets) == len(union), "a record was taken in two runs"
    assert len(union) == RECORDS
    for run in runs:  # at most the echo factor's copies
        assert max(collections.Counter(run).values()) <= 2


@pytest.mark.parametrize("before,after", [(2, 4), (2, 0), (0, 2), (4, 1), (1, 3)])
def test_another_num_workers_takes_every_record_of_the_epoch_once(shards, before, after):
    first, state = take(loader(shards, before), 5)
    assert state["elastic"]["exact"] and state["elastic"]["epoch"] == 0
    again = loader(shards, after)
    again.load_state_dict(state)
    rest = list(again)
    every_record_once(records(first), records(rest))
    assert {e for e, _ in records(rest)} == {0}
    # The next epoch: the new layout, every record twice (echo 2).
    following = collections.Counter(records(list(again)))
    assert set(following.values()) == {2} and len(following) == RECORDS
    assert {e for e, _ in following} == {1}


def test_an_elastic_resume_works_under_spawn_with_persistent_workers(shards):
    first, state = take(loader(shards, 2), 3)
    again = loader(shards, 3, multiprocessing_context="spawn", persistent_workers=True)
    again.load_state_dict(state)
    every_record_once(records(first), records(list(again)))


def test_resumes_chain_across_layouts(shards):
    first, state = take(loader(shards, 2), 4)
    second_loader = loader(shards, 3)
    second_loader.load_state_dict(state)
    second, state = take(second_loader, 6)
    assert not state["elastic"]["exact"]  # the rest of an epoch: never resumed exactly
    third_loader = loader(shards, 3)      # the same layout, still the rest
    third_loader.load_state_dict(state)
    assert third_loader.state_dict()["elastic"] == state["elastic"]
    third, state = take(third_loader, 2)
    last = loader(shards, 0)
    last.load_state_dict(state)
    every_record_once(records(first), records(second), records(third), records(list(last)))


def place(monkeypatch, rank, world):
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", str(world))


def test_another_number_of_ranks_resumes_from_every_ranks_state(shards, monkeypatch):
    first, states = [], []
    for rank, k in ((0, 3), (1, 5)):
        place(monkeypatch, rank, 2)
        batches, state = take(loader(shards, 2), k)
        first += batches
        states.append(state)
    rest = []
    for rank in range(3):  # three ranks now, each given both states
        place(monkeypatch, rank, 3)
        again = loader(shards, 1 + rank % 2)
        again.load_state_dict(states)
        rest += list(again)
    every_record_once(records(first), records(rest))
    place(monkeypatch, 0, 3)
    with pytest.raises(dataecho.InvalidArgumentError, match="needs every rank's state"):
        loader(shards, 2).load_state_dict(states[0])
    with pytest.raises(dataecho.InvalidArgumentError, match=r"ranks \[1\]"):
        loader(shards, 2).load_state_dict(states[1:])


def test_a_state_between_epochs_starts_the_next_epoch_on_the_new_layout(shards):
    ld = loader(shards, 2)
    list(ld)
    state = ld.state_dict()
    assert "elastic" not in state
    again = loader(shards, 3)
    again.load_state_dict(state)
    epoch = collections.Counter(records(list(again)))
    assert {e for e, _ in epoch} == {1} and set(epoch.values()) == {2} and len(epoch) == RECORDS


def test_a_source_not_given_the_shard_is_a_clear_error(shards):
    _, state = take(loader(shards, 2), 2)
    ints = det.DataLoader(det.PipelineDataset(Build(shards, ints=True)), batch_size=None,
                          num_workers=0)
    ints.load_state_dict(state)
    with pytest.raises(dataecho.InvalidArgumentError, match=r"shard=shard"):
        list(ints)


def test_files_changed_since_the_state_are_data_loss_naming_the_file(shards):
    _, state = take(loader(shards, 2), 6)
    taken = ids_of(state["elastic"]["taken"])
    file = int(taken.max()) >> 40
    path = shards.replace("*", f"{file}.tfrecord")
    dataecho.write_tfrecord(path, [dataecho.encode_image_record(
        np.zeros((2, 2, 1), np.uint8))])  # one record left
    again = loader(shards, 0)
    again.load_state_dict(state)
    with pytest.raises(dataecho.DataLossError, match=f"train-{file}.tfrecord, which has 1 "):
        list(again)


def test_a_malformed_elastic_section_is_named(shards):
    _, state = take(loader(shards, 0), 2)
    for bad, match in (({"taken": b"123"}, "'taken'"), ({"shards": [5]}, "'shards'"),
                       ({"epoch": -1}, "'epoch'"), ({"exact": 1}, "'exact'")):
        with pytest.raises(dataecho.InvalidArgumentError, match=match):
            loader(shards, 2).load_state_dict(dict(state, elastic=dict(state["elastic"], **bad)))


class RestShard(dataecho.Shard):
    def __init__(self, rest):
        super().__init__(0, 1)
        self.rest = rest


def test_the_source_checks_the_rest_it_is_given(shards):
    good = {"world_size": 2, "shards": [0], "taken": b"", "part": 0, "parts": 1}
    shard = RestShard(good)
    assert len(dataecho.from_tfrecord(shards, shard=shard)) == 3 * PER_FILE  # files 0, 2, 4
    assert shard.rest_taken
    backwards = np.array([[10, 11], [3, 4]], "<u8").tobytes()
    for bad, match in (({"taken": backwards}, "out of order"), ({"part": 1}, "'part' 1"),
                       ({"shards": [2]}, "shard 2 of world_size 2"),
                       ({"taken": np.array([[(1 << 40) - 1, (1 << 40) + 1]], "<u8").tobytes()},
                        "spans two files")):
        with pytest.raises(dataecho.InvalidArgumentError, match=match):
            dataecho.from_tfrecord(shards, shard=RestShard(dict(good, **bad)))
    with pytest.raises(TypeError, match="not both"):
        dataecho.from_tfrecord(shards, shard=dataecho.Shard(0, 2), rank=0, world_size=2)
    with pytest.raises(TypeError, match="must be a dataecho.Shard"):
        dataecho.from_tfrecord(shards, shard=(0, 2))


def test_from_fixed_length_reads_the_rest_too(tmp_path):
    for f in range(3):
        (tmp_path / f"part-{f}.bin").write_bytes(bytes(b for i in range(30) for b in (f, i)))

    def build(shard):
        return (dataecho.from_fixed_length(str(tmp_path / "part-*"), record_bytes=2,
                                           shard=shard)
                .map(dataecho.FixedImageDecoder(height=1, width=1, channels=1))
                .shuffle(buffer_size=8, seed=1).batch(batch_size=4))

    def fixed(n):
        return det.DataLoader(det.PipelineDataset(build, with_indices=True), batch_size=None,
                              num_workers=n)
    first, state = take(fixed(2), 3)
    again = fixed(3)
    again.load_state_dict(state)
    rest = list(again)
    seen = [s for batch in first + rest for s in batch[2].tolist()]
    assert len(seen) == len(set(seen)) == 3 * 30


def test_taken_runs_round_trip():
    ids = np.array([7, 5, 6, 6, 12, (1 << 40) - 1, 1 << 40], np.uint64)
    runs = runs_of(ids)
    assert np.frombuffer(runs, "<u8").reshape(-1, 2).tolist() == [
        [5, 8], [12, 13], [(1 << 40) - 1, 1 << 40], [1 << 40, (1 << 40) + 1]]
    assert ids_of(runs).tolist() == sorted(set(ids.tolist()))
    assert runs_of([]) == b"" and ids_of(b"").size == 0
