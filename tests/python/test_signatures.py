# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""help() and inspect.signature() show the real keyword names and defaults,
generated from the one spec per C++ option struct (python/src/options.h)."""

import inspect
import pydoc

import numpy as np
import pytest

import dataecho

# Builder methods and the option class whose fields are their keywords.
METHODS = [("prefetch", dataecho.PrefetchOptions), ("echo", dataecho.EchoOptions),
           ("adaptive_echo", dataecho.AdaptiveEchoOptions),
           ("auto_echo", dataecho.AutoEchoOptions), ("shuffle", dataecho.ShuffleOptions),
           ("batch", dataecho.BatchOptions), ("throttle", dataecho.ThrottleOptions),
           ("map", dataecho.MapOptions), ("echoed_batches", dataecho.EchoedBatchesOptions)]


def as_value(v):
    """An option value as its signature shows it (a nested option as a dict)."""
    if type(v).__module__ == "dataecho._dataecho":
        return {k: as_value(getattr(v, k)) for k in dir(v)
                if not k.startswith("_") and not callable(getattr(v, k))}
    return v


def keywords(fn):
    return {name: p.default for name, p in inspect.signature(fn).parameters.items()
            if p.kind == inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize("method,options", METHODS, ids=[m for m, _ in METHODS])
def test_method_keywords_are_the_option_fields_with_their_defaults(method, options):
    defaults = options()
    got = keywords(getattr(dataecho.Pipeline, method))
    fields = [k for k in dir(defaults) if not k.startswith("_")]
    assert sorted(got) == sorted(fields)
    for name in fields:
        assert as_value(got[name]) == as_value(getattr(defaults, name)), name


def test_map_shows_autotune_by_name():
    sig = inspect.signature(dataecho.Pipeline.map)
    assert list(sig.parameters)[:2] == ["self", "fn"]
    assert sig.parameters["buffer"].default is not None
    assert sig.parameters["buffer"].default == dataecho.AUTOTUNE == -2**31
    assert "buffer=AUTOTUNE" in str(sig)
    assert f"parallelism={dataecho.MapOptions().parallelism!r}" in str(sig)
    text = pydoc.render_doc(dataecho.Pipeline.map, renderer=pydoc.plaintext)
    assert "map(self, fn, *, parallelism=" in text and "buffer=AUTOTUNE" in text
    assert "buffer: int | AUTOTUNE = AUTOTUNE" in text  # the field docs
    assert repr(dataecho.AUTOTUNE) == "AUTOTUNE" and repr(dataecho.MapOptions().buffer) == "AUTOTUNE"
    # AUTOTUNE is accepted where the C++ takes kAutotune.
    p = dataecho.from_arrays(np.zeros((4, 1), np.uint8)).map(
        lambda e: e, parallelism=dataecho.AUTOTUNE, buffer=dataecho.AUTOTUNE)
    assert len(list(p)) == 4


def test_bound_methods_drop_self_and_help_shows_the_signature():
    p = dataecho.from_arrays(np.zeros((4, 1), np.uint8))
    assert str(inspect.signature(p.echo)) == "(*, factor=2.0, seed=0, name='echo')"
    assert str(inspect.signature(p.take)) == "(n)"
    assert str(inspect.signature(p.repeat)) == "(epochs=-1)"
    text = pydoc.render_doc(dataecho.Pipeline.echo, renderer=pydoc.plaintext)
    assert "echo(self, *, factor=2.0, seed=0, name='echo')" in text
    assert "--" not in dataecho.Pipeline.echo.__doc__.splitlines()[0]
    assert dataecho.Pipeline.echo.__doc__.startswith("Data echoing")


def test_sources_and_new_steps():
    sig = inspect.signature(dataecho.from_tfrecord)
    assert list(sig.parameters)[0] == "patterns"
    kw = keywords(dataecho.from_tfrecord)
    assert kw["compression"] == "none" and kw["cycle_length"] == 1
    assert kw["rank"] == -1 and kw["world_size"] == -1 and kw["store"] is None
    assert keywords(dataecho.from_idx)["compression"] == "auto"
    assert keywords(dataecho.Pipeline.cache) == {"max_bytes": 1 << 30, "name": "cache"}
    assert keywords(dataecho.Pipeline.filter) == {"name": "filter"}
    assert keywords(dataecho.Pipeline.interleave) == {
        "cycle_length": 2, "block_length": 1, "name": "interleave", "element_type": None}
    padded = keywords(dataecho.Pipeline.padded_batch)
    assert padded["batch_size"] == 32 and padded["padded_shapes"] == []
    assert padded["masks"] is True and padded["lengths"] is True
    assert str(inspect.signature(dataecho.Pipeline.zip)) == "(self, other, *, name='zip')"
    assert not hasattr(dataecho, "zip")  # `from dataecho import *` keeps Python's zip
    assert str(inspect.signature(dataecho.from_generator)) == "(iterable)"
    assert keywords(dataecho.resolve_shard) == {"rank": -1, "world_size": -1,
                                                "allow_empty": False}


def test_classes_show_their_fields():
    sig = inspect.signature(dataecho.RandomCrop)
    assert list(sig.parameters) == ["height", "width", "padding", "seed", "component"]
    assert str(inspect.signature(dataecho.EchoOptions)) == "(*, factor=2.0, seed=0, name='echo')"
    rrc = keywords(dataecho.RandomResizedCrop)
    assert rrc["jpeg"] == as_value(dataecho.JpegCropOptions())
    assert keywords(dataecho.ObjectStore)["retry"] == as_value(dataecho.RetryOptions())
    text = pydoc.render_doc(dataecho.RandomCrop, renderer=pydoc.plaintext)
    assert "RandomCrop(*, height=0, width=0, padding=0, seed=0, component=0)" in text


def test_keyword_checking_is_unchanged():
    p = dataecho.from_arrays(np.zeros((4, 1), np.uint8))
    with pytest.raises(TypeError, match="unexpected keyword argument 'factr'.*factor"):
        p.echo(factr=2)
    with pytest.raises(TypeError):
        p.echo(2.0)  # keyword-only, as the signature says
