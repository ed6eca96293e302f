# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho: data-echoing input pipelines that run in C++ threads.

Build a pipeline from a source and builder calls that mirror the C++ builder
(keyword arguments are the C++ option fields, with their defaults), then
iterate it::

    import dataecho

    pipeline = (dataecho.from_idx(images_gz, labels_gz)          # Fashion-MNIST
                .prefetch(depth=256)                              # upstream runs ahead
                .echo(factor=2.0, seed=1)                         # every item twice
                .map([dataecho.RandomCrop(height=28, width=28, padding=2, seed=3),
                      dataecho.RandomFlip(seed=4)], parallelism=2)
                .shuffle(buffer_size=10000, seed=2)               # spread the copies
                .batch(batch_size=256, cast="float16", scale=1 / 255,
                       mean=[0.286], stddev=[0.353])
                .prefetch(depth=2))
    with pipeline:
        for batch in pipeline:        # next() releases the GIL while it waits
            x = batch.components[0]   # numpy.float16 [256, 28, 28, 1], a zero-copy view
            y = batch.labels          # int64 [256]
    print(pipeline.format_stats())

Errors are dataecho.StatusError subclasses keeping the absl::Status code
(dataecho.DataLossError, ...; see dataecho.errors). dataecho.torch adapts a
pipeline to torch.utils.data. docs/python.md has the whole story.
"""

import atexit as _atexit

from dataecho import _build_info, _interpreter

_interpreter.check(_build_info)  # ImportError naming the Python it was built for

from dataecho import _dataecho  # noqa: E402
from dataecho._dataecho import (  # noqa: F401,E402
    AdaptiveEchoOptions, AutoEchoOptions, AutoPlacementOptions, Batch, BatchOptions, Cast,
    CheckpointDir,
    DecodeJpeg, EchoOptions,
    EchoedBatchesOptions, EncodedImageRecord, Example, FixedImageDecoder, GcsOptions,
    HttpOptions, ImageRecordDecoder, JpegCropOptions, MapOptions, Normalize, ObjectStore,
    Pipeline, PrefetchOptions, RandomCrop, RandomFlip, RandomResizedCrop, Record, RetryOptions,
    S3Options, Shard, ShuffleOptions, ThrottleOptions, Transform, crc32c, decode_image_record,
    encode_image_record, encoded_image_record, from_arrays, from_examples, from_fixed_length,
    from_idx, from_tfrecord, resolve_shard, shard_uris, write_tfrecord)
from dataecho._dataecho import AUTOTUNE, from_generator, interleave, mix  # noqa: F401,E402
from dataecho._dataecho import format_stats, start_trace, stop_trace  # noqa: F401,E402
from dataecho.errors import *  # noqa: F401,F403,E402
from dataecho.errors import StatusError  # noqa: F401,E402

__version__ = _dataecho.__version__


class trace:  # noqa: N801 (used as a function: `with dataecho.trace("out.json"):`)
    """A timeline of the pipelines run in the block, written to `path` as Chrome
    trace-event JSON (open it in ui.perfetto.dev; docs/stats.md says what to look for)::

        with dataecho.trace("timeline.json"):
            for batch in pipeline.take(200):
                ...
    """

    def __init__(self, path, *, max_events=1 << 20):
        self._path, self._max_events = str(path), max_events

    def __enter__(self):
        start_trace(self._path, max_events=self._max_events)
        return self

    def __exit__(self, *exc):
        stop_trace()
        return False

# Interpreter exit with pipelines alive: cancel them and join their threads
# while Python still runs (a map function may need the GIL to finish).
_atexit.register(_dataecho._close_all)
