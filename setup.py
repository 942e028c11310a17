"""The one thing pyproject.toml cannot say stably: the two C extensions, the scanner that proves journals canonical
and the native fold of clean proven journals into table rows.

``optional``: without a C compiler the package installs all the same, reads on the Python fast path alone
(``journaltools.protocol.native``) and folds every journal in Python (``journaltools.folding.native``).
"""

from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "journaltools.protocol._canonical",
            sources=["journaltools/protocol/_canonical.c"],
            # Its parts, included into the one translation unit: a change to any rebuilds it.
            depends=sorted(glob("journaltools/protocol/_canonical_parts/*.h")),
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
            optional=True,
        ),
        Extension(
            "journaltools.folding._native",
            sources=["journaltools/folding/_native.c"],
            # Its parts, included into the one translation unit: a change to any rebuilds it.
            depends=sorted(glob("journaltools/folding/_native_parts/*.h")),
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
            optional=True,
        ),
    ]
)
