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


class CancelledError(StatusError):
    """CANCELLED: the pipeline was cancelled (``cancel()``, ``close()``)."""

    code, code_name = 1, "CANCELLED"


class UnknownError(StatusError):
    """UNKNOWN."""

    code, code_name = 2, "UNKNOWN"


class InvalidArgumentError(StatusError, ValueError):
    """INVALID_ARGUMENT: a bad option (named in the message) or a bad URI."""

    code, code_name = 3, "INVALID_ARGUMENT"


class DeadlineExceededError(StatusError):
    """DEADLINE_EXCEEDED."""

    code, code_name = 4, "DEADLINE_EXCEEDED"


class NotFoundError(StatusError, FileNotFoundError):
    """NOT_FOUND: a missing file or object, or a pattern that matched nothing."""

    code, code_name = 5, "NOT_FOUND"


class AlreadyExistsError(StatusError):
    """ALREADY_EXISTS."""

    code, code_name = 6, "ALREADY_EXISTS"


class PermissionDeniedError(StatusError, PermissionError):
    """PERMISSION_DENIED: e.g. HTTP 401 or 403."""

    code, code_name = 7, "PERMISSION_DENIED"


class ResourceExhaustedError(StatusError):
    """RESOURCE_EXHAUSTED: a memory cap (e.g. shuffle max_bytes) was hit."""

    code, code_name = 8, "RESOURCE_EXHAUSTED"


class FailedPreconditionError(StatusError):
    """FAILED_PRECONDITION: e.g. an object changed while it was read."""

    code, code_name = 9, "FAILED_PRECONDITION"


class AbortedError(StatusError):
    """ABORTED."""

    code, code_name = 10, "ABORTED"


class OutOfRangeError(StatusError):
    """OUT_OF_RANGE."""

    code, code_name = 11, "OUT_OF_RANGE"


class UnimplementedError(StatusError, NotImplementedError):
    """UNIMPLEMENTED: e.g. an IDX element type other than unsigned byte."""

    code, code_name = 12, "UNIMPLEMENTED"


class InternalError(StatusError):
    """INTERNAL."""

    code, code_name = 13, "INTERNAL"


class UnavailableError(StatusError):
    """UNAVAILABLE: a transient failure that outlasted the retries."""

    code, code_name = 14, "UNAVAILABLE"


class DataLossError(StatusError):
    """DATA_LOSS: corrupt or truncated data; the message names uri:offset."""

    code, code_name = 15, "DATA_LOSS"


class UnauthenticatedError(StatusError):
    """UNAUTHENTICATED."""

    code, code_name = 16, "UNAUTHENTICATED"


_CLASSES = {
    cls.code: cls
    for cls in (
        CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
        NotFoundError, AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
        FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError,
        InternalError, UnavailableError, DataLossError, UnauthenticatedError)
}
_NAMES = {code: cls.code_name for code, cls in _CLASSES.items()}


def error_class(code):
    """The exception class for an absl::StatusCode number (StatusError if unknown)."""
    return _CLASSES.get(code, StatusError)


__all__ = ["StatusError", "error_class"] + [cls.__name__ for cls in _CLASSES.values()]
