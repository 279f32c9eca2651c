"""Packaging for abc-fairseq, a fairseq ``--user-dir`` plugin implementing ABC
(Attention with Bounded-memory Control, Peng et al.).

The plugin can be used straight from a checkout (``--user-dir abc_fairseq``); installing it
(``pip install -e .``) additionally makes ``import abc_fairseq`` work from anywhere.

Use ``bash scripts/setup_env.sh`` to build a complete environment.
"""

from setuptools import find_packages, setup

setup(
    name="abc-fairseq",
    version="0.1.0",
    description="ABC: Attention with Bounded-memory Control, as a fairseq plugin",
    packages=find_packages(include=["abc_fairseq", "abc_fairseq.*"]),
    license="MIT",
    # The per-architecture compile table the causal launcher picks its chunk from.
    package_data={"abc_fairseq.ops.triton": ["compile_table.json"]},
    python_requires=">=3.10",
    # Kept minimal on purpose. fairseq itself is not listed: the distribution we use on
    # Python >= 3.11 (ve-fairseq) declares torchaudio, which drags in a multi-GB CUDA torch,
    # so scripts/setup_env.sh installs it with `pip install --no-deps` and pins its real
    # dependencies in requirements.txt. Declaring it here would make `pip install -e .`
    # resolve (and download) that whole tree again.
    install_requires=[
        "torch",
        "numpy",
    ],
)
