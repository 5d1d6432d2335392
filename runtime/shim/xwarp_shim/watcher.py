"""An import watcher: calls back once a named module finished importing, without changing how
it is found or loaded."""

import sys


# -- import watcher ---------------------------------------------------------------------------


class ImportWatcher:
    """A meta-path finder that notices one module's import (`warp`: the hooks; `unittest.case`:
    the test watcher) and calls back right after the module finished importing. It changes
    nothing about how the module is found or loaded: it wraps the real loader's exec_module on
    that one loader instance."""

    def __init__(self, name, installed):
        self.name = name
        self.installed = installed

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(name, path, target)
            except Exception:
                continue
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        real_exec = getattr(loader, "exec_module", None)
        if real_exec is None:
            return spec
        watcher = self

        def exec_module(module):
            real_exec(module)
            try:
                del loader.exec_module
            except Exception:
                pass
            try:
                sys.meta_path.remove(watcher)
            except ValueError:
                pass
            try:
                watcher.installed(module)
            except Exception:
                pass

        try:
            loader.exec_module = exec_module
        except Exception:
            return spec
        return spec
