"""The one thing pyproject.toml cannot say stably: the C scanner that proves journals canonical.

``optional``: without a C compiler the package installs all the same and reads on the Python fast path alone
(``journaltools.protocol.native``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "journaltools.protocol._canonical",
            sources=["journaltools/protocol/_canonical.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
            optional=True,
        )
    ]
)
