"""What every wrapper shares: the file name it claims (inside Warp's package, so Warp's own
"user frame" search skips it) and the per-thread stack of module loads in progress."""

from . import state


def hide(fn):
    """Give a wrapper's code object a file name inside Warp's own source directory.

    Warp finds "the user's frame" in places by skipping frames whose file lies in its package
    (allocation tags, verify_autograd_array_access messages). A wrapper defined here would
    be taken for user code and those messages would point at the shim; under a Warp file
    name the wrapper stays invisible, as if Warp had not been wrapped."""
    if state.hook_filename is not None:
        try:
            fn.__code__ = fn.__code__.replace(co_filename=state.hook_filename)
        except (AttributeError, TypeError, ValueError):
            pass
    return fn


def frame_stack():
    stack = state.tls.__dict__.get("stack")
    if stack is None:
        stack = state.tls.stack = []
    return stack


def top():
    stack = state.tls.__dict__.get("stack")
    return stack[-1] if stack else None
