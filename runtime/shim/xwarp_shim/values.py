"""Values turned into what a record may hold: JSON-ready data, texts without lone surrogates,
hex digests, and Warp's types and call arguments as short names or data."""

import sys


def jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    name = getattr(value, "name", None)  # enums
    if isinstance(name, str) and hasattr(value, "value"):
        return name
    return repr(value)


def without_lone_surrogates(value):
    """The value with every lone surrogate of its texts written out as an escape: a byte that was
    not UTF-8 (U+DC80..U+DCFF, from os.fsdecode) as "\\xNN", any other as "\\uNNNN"."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return "".join(
                c if not 0xD800 <= ord(c) <= 0xDFFF
                else f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}"
                for c in value)
    if isinstance(value, dict):
        return {without_lone_surrogates(str(k)): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_lone_surrogates(v) for v in value]
    return value


def hex_of(value, n=None):
    if isinstance(value, (bytes, bytearray)):
        h = bytes(value).hex()
        return h[:n] if n else h
    return None


def type_name(t):
    cls, dtype, ndim = t
    name = getattr(cls, "__name__", str(cls))
    if dtype is not None:
        dname = getattr(dtype, "__name__", None) or str(dtype)
        return f"{name}[{dname},{ndim}]" if ndim is not None else f"{name}[{dname}]"
    return name


def describe_arg(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe_arg(v) for v in value]
    name = getattr(value, "name", None) or getattr(value, "__name__", None) or getattr(value, "alias", None)
    return str(name) if name is not None else repr(value)[:200]


def type_spec(t):
    """A generic instance's argument type as data the replay can turn back into the type."""
    if not isinstance(t, type) and getattr(t, "dtype", None) is not None and hasattr(t, "ndim"):
        kind = type(t).__name__
        # wp.array(dtype=...) in an annotation is a private class; the public name builds it
        return {"array": "array" if kind.startswith("_") else kind, "dtype": type_spec(t.dtype), "ndim": t.ndim}
    name = getattr(t, "__name__", repr(t))
    spec = {"type": name}
    # A vector or matrix of a shape Warp's namespace has no name for (wp.types.vector(length=5, ...)):
    # its class is named vec_t or mat_t, so its shape and scalar say what to build
    shape, scalar = getattr(t, "_shape_", None), getattr(t, "_wp_scalar_type_", None)
    if isinstance(shape, tuple) and scalar is not None and getattr(sys.modules.get("warp"), name, None) is not t:
        spec["shape"] = list(shape)
        spec["scalar"] = type_spec(scalar)
    # A @wp.struct is Warp's Struct around the class it was made from: a warm-up imports the
    # class by where it lives
    cls = getattr(t, "cls", None)
    if isinstance(cls, type) and isinstance(getattr(t, "vars", None), dict):
        spec["struct"] = f"{cls.__module__}:{cls.__qualname__}"
    return spec
