"""Kernel caching, the shape libraries use: a factory is called once per distinct argument set."""
import functools


def cache_kernel(factory):
    """Decorate a kernel factory so that equal arguments give the same kernel object."""
    cached = functools.lru_cache(maxsize=None)(factory)

    @functools.wraps(factory)
    def make(*args, **kwargs):
        return cached(*args, **kwargs)

    return make
