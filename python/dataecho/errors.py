# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho's errors: one exception class per absl::Status code.

Every error the C++ library reports (an ``absl::Status``) is raised as an
instance of the class for its code, a subclass of :class:`StatusError`. The
exception keeps the code (``.code``, the ``absl::StatusCode`` number, and
``.code_name``) and the message, which names the file or URL and the byte
offset where there is one::

    try:
        batch = next(pipeline)
    except dataecho.DataLossError as e:      # a corrupt or truncated record
        print(e.code, e.code_name, e)        # 15 DATA_LOSS corrupted record at /data/x:1234
    except dataecho.StatusError as e:        # any other library error
        ...

Some classes also derive from the matching built-in exception, so code that
catches those keeps working: ``InvalidArgumentError`` is a ``ValueError``,
``NotFoundError`` a ``FileNotFoundError``, ``PermissionDeniedError`` a
``PermissionError``, ``UnimplementedError`` a ``NotImplementedError``.

An exception raised by your own function in a pipeline (``map``) is not
wrapped: ``next()`` raises that exception itself.
"""


class StatusError(Exception):
    """An error the dataecho library reported, with its absl::Status code."""

    code = 2
    code_name = "UNKNOWN"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None and code != type(self).code:
            self.code = code
            self.code_name = _NAMES.get(code, str(code))


# The absl::StatusCode names, codes 1 to 16 in order. The class for NOT_FOUND
# is NotFoundError, and so on.
_CODE_NAMES = (
    "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED")
# The built-in exceptions some classes also derive from.
_BUILTIN_BASES = {"INVALID_ARGUMENT": ValueError, "NOT_FOUND": FileNotFoundError,
                  "PERMISSION_DENIED": PermissionError, "UNIMPLEMENTED": NotImplementedError}
# What a code means here, for the classes' docstrings.
_MEANINGS = {
    "CANCELLED": "the pipeline was cancelled (``cancel()``, ``close()``).",
    "INVALID_ARGUMENT": "a bad option (named in the message) or a bad URI.",
    "NOT_FOUND": "a missing file or object, or a pattern that matched nothing.",
    "PERMISSION_DENIED": "e.g. HTTP 401 or 403.",
    "RESOURCE_EXHAUSTED": "a memory cap (e.g. shuffle max_bytes) was hit.",
    "FAILED_PRECONDITION": "e.g. an object changed while it was read.",
    "UNIMPLEMENTED": "e.g. an IDX element type other than unsigned byte.",
    "UNAVAILABLE": "a transient failure that outlasted the retries.",
    "DATA_LOSS": "corrupt or truncated data; the message names uri:offset.",
}


def _define_class(code, code_name):
    """The StatusError subclass for one code, named after it (DATA_LOSS: DataLossError)."""
    name = "".join(word.capitalize() for word in code_name.split("_")) + "Error"
    builtin = _BUILTIN_BASES.get(code_name)
    bases = (StatusError,) if builtin is None else (StatusError, builtin)
    meaning = _MEANINGS.get(code_name)
    doc = f"{code_name}: {meaning}" if meaning else f"{code_name}."
    return type(name, bases, {
        "__doc__": doc, "__module__": __name__, "__qualname__": name,
        "code": code, "code_name": code_name})


_CLASSES = {code: _define_class(code, name) for code, name in enumerate(_CODE_NAMES, start=1)}
_NAMES = {code: cls.code_name for code, cls in _CLASSES.items()}
globals().update({cls.__name__: cls for cls in _CLASSES.values()})


def error_class(code):
    """The exception class for an absl::StatusCode number (StatusError if unknown)."""
    return _CLASSES.get(code, StatusError)


__all__ = ["StatusError", "error_class"] + [cls.__name__ for cls in _CLASSES.values()]
