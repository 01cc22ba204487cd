"""The package itself: what ``import svmscreen`` loads, and what it says
when it is imported from a source tree whose compiled modules are not built."""
import subprocess
import sys

import pytest

from conftest import subprocess_env

import svmscreen


def test_import_svmscreen_loads_its_names_on_first_use(tmp_path):
    code = ("import sys, svmscreen\n"
            "print('numpy' in sys.modules, 'svmscreen.path' in sys.modules)\n"
            "from svmscreen import *\n"
            "print(train_path is svmscreen.path.train_path, sorted(svmscreen.__all__) "
            "== sorted(n for n in dir(svmscreen) if n in svmscreen.__all__))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=subprocess_env(), timeout=120)
    assert done.stdout.split() == ["False", "False", "True", "True"], done.stderr
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        svmscreen.no_such_name


def test_an_unbuilt_source_tree_is_named(monkeypatch):
    # From a clone's root after a plain `pip install .`, `import svmscreen`
    # finds the source directory first, and the first public name failed
    # with "cannot import name '_svmlight' from 'svmscreen'".
    assert not svmscreen._unbuilt()           # the modules under test are built

    def unbuilt_import(name):
        raise ImportError("cannot import name '_svmlight' from 'svmscreen'")
    monkeypatch.setattr(svmscreen.importlib, "import_module", unbuilt_import)
    monkeypatch.delitem(vars(svmscreen), "fit_binary", raising=False)
    with pytest.raises(ImportError, match="cannot import name '_svmlight'"):
        svmscreen.fit_binary                  # a built package: the error as it is
    monkeypatch.setattr(svmscreen, "_unbuilt", lambda: True)
    with pytest.raises(ImportError, match=r"imported from its source tree .* not built: "
                                          r"run from another directory"):
        svmscreen.fit_binary
